"""The pages under their Content-Security-Policy (stream/live/http/headers.py) in a real Chromium
against the real service: each page loads and works (its data shown, the teams' colours and
logo, the bundled typeface, the handheld online, the committee's QR codes) with not one
violation; an inline script, an inline handler, a style attribute and a style element put
into the page afterwards are refused, each with a ``securitypolicyviolation`` event. The
committee, the handheld and the overlay control refuse to be framed by another site; the
scoreboard and the overlay are embedded (a producer's page, as OBS and vMix load them)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from playwright.async_api import Browser, Frame, Page, expect

from ..live.conftest import Server, free_port
from .test_scoreboard_overlay import AIKEN, WELLINGTON, png, rgb, upload_logo

#: Before any script of the page: every violation, in every frame, is kept in window.__csp.
RECORD = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push({ directive: e.effectiveDirective, blocked: e.blockedURI, sample: e.sample,
                      disposition: e.disposition });
}, true);
"""

#: What an injected tag would try: a script element, an inline handler, a style attribute and
#: a style element. Without a policy the first two set window.__pwned and the styles apply.
INJECT = """() => {
  document.body.insertAdjacentHTML("beforeend",
    '<img id="inj-img" src="data:," onerror="window.__pwned = \\'handler\\'">' +
    '<p id="inj-styled" style="outline-color: rgb(1, 2, 3)">x</p>');
  const script = document.createElement("script");
  script.textContent = "window.__pwned = 'script';";
  document.body.append(script);
  const style = document.createElement("style");
  style.textContent = "#inj-styled { color: rgb(4, 5, 6) }";
  document.head.append(style);
}"""
INJECTED = {"script-src-elem", "script-src-attr", "style-src-attr", "style-src-elem"}


async def violations(frame: Page | Frame) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = await frame.evaluate("() => window.__csp")
    return got


async def refuses_injection(frame: Page | Frame, *, styles: bool = True) -> None:
    """Inline script and (``styles``) inline style put into the page don't take, each refused
    with a violation event."""
    before = len(await violations(frame))
    await frame.evaluate(INJECT)
    expected = INJECTED if styles else {"script-src-elem", "script-src-attr"}
    await frame.wait_for_function(
        f"() => new Set(window.__csp.slice({before}).map((v) => v.directive)).size >= {len(expected)}")
    new = (await violations(frame))[before:]
    assert {v["directive"] for v in new} == expected, new
    assert all(v["disposition"] == "enforce" for v in new)
    assert await frame.evaluate("() => window.__pwned") is None
    styled = await frame.evaluate("() => { const s = getComputedStyle(document.getElementById('inj-styled'));"
                                  " return [s.outlineColor, s.color]; }")
    if styles:
        assert "rgb(1, 2, 3)" not in styled and "rgb(4, 5, 6)" not in styled, styled
    else:
        assert styled == ["rgb(1, 2, 3)", "rgb(4, 5, 6)"], styled


Open = Callable[..., Awaitable[Page]]


@pytest.fixture
async def open_page(browser: Browser) -> AsyncIterator[Open]:
    """A page in its own context, recording CSP violations (in each of its frames) from before
    its first script, and failing the test on any error a page throws."""
    contexts: list[Any] = []
    errors: list[str] = []

    async def _open(url: str, **context: Any) -> Page:
        ctx = await browser.new_context(**{"viewport": {"width": 1280, "height": 720}, **context})
        contexts.append(ctx)
        await ctx.add_init_script(RECORD)
        page = await ctx.new_page()
        page.on("pageerror", lambda err: errors.append(str(err)))
        if url:
            await page.goto(url)
        return page

    yield _open
    for ctx in contexts:
        await ctx.close()
    assert not errors, errors


@pytest.fixture
async def game(server: Server) -> Server:
    """Game g1 of the event "cup", both teams registered in their colours, the home team with
    its logo (served from /logos/)."""
    status, _ = await server.api("POST", "/api/events", {"event": "cup", "class": "club", "handicap": 8,
                                                         "teams": []})
    assert status == 201
    await server.setup_game()
    logo = await upload_logo(server, "g1-home", png(24, 16, (242, 194, 48, 255)))
    for team, more in ((AIKEN, {"logo": logo}), (WELLINGTON, {})):
        body = {**team, **more, "event": "cup", "revision": 0}
        status, reply = await server.api("POST", "/api/teams", body)
        assert status == 201, reply
    return server


async def test_the_probe_runs_where_there_is_no_policy(open_page: Open) -> None:
    """The injection does run on a page with no policy: its refusal below means something."""
    page = await open_page("")
    await page.set_content("<body><p>no policy</p></body>")
    await page.evaluate(INJECT)
    await page.wait_for_function("() => window.__pwned === 'handler'")
    assert await violations(page) == []
    assert await page.evaluate("() => getComputedStyle(document.getElementById('inj-styled')).color") == \
        "rgb(4, 5, 6)"


async def test_the_scoreboard_works_under_its_policy(game: Server, open_page: Open) -> None:
    page = await open_page(f"{game.http}/scoreboard?game=g1")
    await expect(page.locator("body")).to_have_attribute("data-ready", "true", timeout=10_000)
    await expect(page.locator("body")).to_have_attribute("data-stale", "false")
    await expect(page.locator("#home-name")).to_have_text("Aiken Arena")
    await expect(page.locator("#away-name")).to_have_text("Wellington Blue")
    assert await page.locator("#home").evaluate("n => getComputedStyle(n).backgroundColor") == rgb("#0b3d2e")
    await page.wait_for_function("() => document.getElementById('home-logo').naturalWidth === 24")
    assert await violations(page) == []
    await refuses_injection(page)


async def test_the_overlay_works_under_its_policy(game: Server, open_page: Open) -> None:
    page = await open_page(f"{game.http}/overlay?game=g1", viewport={"width": 1920, "height": 1080})
    await expect(page.locator("body")).to_have_attribute("data-ready", "true", timeout=10_000)
    await expect(page.locator("#bug-home-name")).to_have_text("AIK")
    assert await page.locator("#bug-home-name").evaluate("n => getComputedStyle(n).backgroundColor") == \
        rgb("#0b3d2e")
    await page.wait_for_function("() => document.getElementById('bug-home-logo').naturalWidth === 24")
    await page.evaluate("() => document.fonts.ready")
    assert await page.evaluate("""() => [...document.fonts].some((f) => f.family.includes("Barlow Condensed")
                                                                  && f.status === "loaded")""")
    assert await violations(page) == []
    await refuses_injection(page)


async def test_the_overlay_control_works_under_its_policy(game: Server, open_page: Open) -> None:
    token = game.token("display", "ops-desk", game="g1")
    page = await open_page(f"{game.http}/overlay/control?game=g1#pair={token}")
    await expect(page.locator("body")).to_have_attribute("data-ready", "true", timeout=10_000)
    await expect(page.locator("body")).to_have_attribute("data-token", "true")
    # Its preview: the overlay in an <iframe> of the same origin, ready under its own policy.
    program = page.frame_locator("#program")
    await expect(program.locator("body")).to_have_attribute("data-ready", "true", timeout=10_000)
    await page.click(".graphic[data-graphic=bug] [data-action=take]")
    await expect(page.locator(".graphic[data-graphic=bug]")).to_have_attribute("data-on", "true")
    frames = page.frames
    assert len(frames) == 2
    for frame in frames:
        assert await violations(frame) == [], frame.url
    await refuses_injection(page)


async def test_the_handheld_works_under_its_policy(game: Server, open_page: Open) -> None:
    token = game.token("umpire", "ump-1", game="g1", official="A. Rivera")
    page = await open_page(f"{game.http}/handheld#token={token}",
                           viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    await expect(page.locator("[data-conn=device]")).to_have_attribute("data-state", "online", timeout=10_000)
    assert page.url.startswith(f"{game.http}/clients/handheld.html")   # its service worker's scope
    await expect(page.locator("body")).to_have_attribute("data-offline-ready", "yes", timeout=10_000)
    # The teams' colours, set through the CSSOM (no style attribute in its markup).
    side = page.locator("#scoreline .side.home[data-colors=true]")
    await expect(side).to_have_count(1)
    assert await side.evaluate("n => getComputedStyle(n).getPropertyValue('--team-bg').trim()") == "#0b3d2e"
    head = page.locator("#roster .col.home .teamhead")
    assert await head.evaluate("n => getComputedStyle(n).backgroundColor") == rgb("#0b3d2e")
    assert await violations(page) == []
    await refuses_injection(page)


async def test_the_committee_works_under_its_policy(game: Server, open_page: Open) -> None:
    page = await open_page(f"{game.http}/committee", viewport={"width": 1024, "height": 768})
    await page.fill("#token-input", game.admin)
    await page.click("#signin-form [type=submit]")
    await expect(page.locator("#console")).to_be_visible()
    await expect(page.locator("body")).to_have_attribute("data-ready", "true")
    await expect(page.locator("#event-name")).to_have_text("cup")
    # The teams' swatches (colours set through the CSSOM).
    swatch = page.locator("#teams-table tr[data-team=g1-home] .swatch")
    await expect(swatch).to_be_visible()
    assert await swatch.evaluate("n => getComputedStyle(n).getPropertyValue('--c1').trim()") == "#0b3d2e"
    # A pairing's QR code: the SVG, shown as a blob: image.
    await page.click("#tabs [data-tab=pair]")
    card = page.locator("details.game-pair[data-game=g1]")
    if await card.evaluate("n => !n.open"):
        await card.locator("summary").click()
    await card.locator("button[data-role=umpire]").click()
    img = card.locator("figure.qr[data-role=umpire] img")
    await expect(img).to_be_visible()
    assert (await img.get_attribute("src") or "").startswith("blob:")
    await page.wait_for_function(
        "() => document.querySelector('figure.qr[data-role=umpire] img').naturalWidth > 0")
    assert await violations(page) == []
    await refuses_injection(page)


async def test_the_report_runs_no_script(game: Server, open_page: Open) -> None:
    """A generated document: its inline styles apply, no script runs at all."""
    page = await open_page(f"{game.http}/games/g1/report")
    await expect(page.locator("h1")).to_be_visible()
    assert await violations(page) == []
    await refuses_injection(page, styles=False)


async def test_only_the_scoreboard_and_the_overlay_may_be_framed_by_another_site(
        game: Server, open_page: Open) -> None:
    """A producer's page on another origin frames each page: the scoreboard and the overlay
    load and show the game; the committee, the handheld and the overlay control are refused."""
    embedded = {"scoreboard": "/scoreboard?game=g1", "overlay": "/overlay?game=g1"}
    refused = {"committee": "/committee", "handheld": "/clients/handheld.html",
               "control": "/overlay/control?game=g1"}
    frames = "".join(f'<iframe name="{name}" src="{game.http}{path}" width="640" height="360"></iframe>'
                     for name, path in {**embedded, **refused}.items())
    page = await open_page("")

    async def producer(request: web.Request) -> web.Response:
        return web.Response(text=f"<!doctype html><title>Producer</title><body>{frames}</body>",
                            content_type="text/html")

    # The producer's page, served by a server of its own: another origin (another port).
    app = web.Application()
    app.router.add_get("/", producer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        await page.goto(f"http://127.0.0.1:{port}/")
        await embedded_and_refused(page, refused)
    finally:
        await runner.cleanup()


async def embedded_and_refused(page: Page, refused: dict[str, str]) -> None:
    await expect(page.frame_locator("iframe[name=scoreboard]").locator("#home-name")).to_have_text(
        "Aiken Arena", timeout=10_000)
    await expect(page.frame_locator("iframe[name=overlay]").locator("#bug-home-name")).to_have_text(
        "AIK", timeout=10_000)
    for name in refused:
        # Chromium puts its error page in the frame instead: none of the page is there.
        deadline = time.monotonic() + 10
        while (frame := page.frame(name=name)) is None or not frame.url.startswith("chrome-error:"):
            assert time.monotonic() < deadline, f"{name}: {frame.url if frame else None}"
            await asyncio.sleep(0.05)
        assert await frame.evaluate("() => document.getElementById('top') === null"), name
