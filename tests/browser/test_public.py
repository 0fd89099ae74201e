"""The tournament in public, walked in real headless Chromium at a phone's viewport
(390×844) and at 1920×1080 (docs/public.md): the front door and an event's page drawn by the
server; a goal a device sends appears live on both (and is said to screen readers); a game
that ends moves its winner into the final of the bracket; a team's page names its next
game; the language switch; a private event's page is a 404; no console error; and axe-core
finds no serious or critical violation (WCAG A, AA and AAA rules) on any public page."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Browser, Page, ViewportSize, expect

from ..live.conftest import Server, admin_device

pytestmark = pytest.mark.browser

HD: ViewportSize = {"width": 1920, "height": 1080}
PHONE: ViewportSize = {"width": 390, "height": 844}
TEAMS = ["aiken", "bayou", "cedar", "delta"]
NAMES = {"aiken": "Aiken Arena", "bayou": "Bayou Blue", "cedar": "Cedar Run", "delta": "Delta Polo"}
START = 1_827_684_000_000   # 2027-12-01 18:00 UTC: a day to come
Opener = Callable[..., Awaitable[Page]]


@pytest.fixture
async def screens(browser: Browser) -> AsyncIterator[Opener]:
    """Pages, each in its own context; none may have had a page error or a console error."""
    contexts: list[Any] = []
    errors: list[str] = []

    async def new(viewport: ViewportSize, **options: Any) -> Page:
        context = await browser.new_context(viewport=viewport, **options)
        contexts.append(context)
        page = await context.new_page()
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.on("response", lambda r: errors.append(f"404 {r.url}") if r.status == 404 else None)
        page.on("console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None)
        return page

    yield new
    for c in contexts:
        await c.close()
    assert not errors, "\n".join(errors)


def sheet(team: str) -> dict[str, Any]:
    return {"team": team, "players": [f"{team}-1", f"{team}-2", f"{team}-3"], "subs": [f"{team}-4"]}


async def a_drawn_cup(server: Server) -> dict[str, Any]:
    """"Copa de Otoño": four registered teams drawn as a knockout, both semi-finals set up."""
    status, ack = await server.api("POST", "/api/events", {
        "id": "cup", "event": "cup", "name": "Copa de Otoño", "class": "uspa", "handicap": 8, "teams": TEAMS})
    assert status == 201, ack
    admin = await admin_device(server)
    for t in TEAMS:
        await admin.send({"type": "team.registered", "team": t, "name": NAMES[t], "short": t[:3],
                          "colors": {"primary": "#0b3d91", "secondary": "#ffd21f"}})
    await admin.close()
    status, ack = await server.api("POST", "/api/events/cup/draw", {"format": "knockout", "teams": TEAMS})
    assert status == 201, ack
    _, drawn = await server.api("GET", "/api/events/cup/draw")
    bracket: dict[str, Any] = drawn
    first = [g for g in bracket["games"] if g["round"] == 1]
    for i, g in enumerate(first):
        status, ack = await server.api("POST", "/api/games", {
            "game": g["game"], "event": "cup", "kind": g["kind"], "handicap": 8, "arena": "main",
            "starts_at": START + i * 3_600_000,
            "teams": {"home": sheet(g["home"]["team"]), "away": sheet(g["away"]["team"])}})
        assert status == 201, ack
    return bracket


async def test_a_spectator_follows_the_cup_live_on_a_phone_and_the_big_screen(server: Server,
                                                                            screens: Opener) -> None:
    bracket = await a_drawn_cup(server)
    semi = next(g for g in bracket["games"] if g["round"] == 1)
    final = next(g for g in bracket["games"] if g["name"] == "final")
    phone, hd = await screens(PHONE), await screens(HD)
    asked: list[str] = []
    for page in (phone, hd):
        page.on("request", lambda r: asked.append(r.url))
        page.on("websocket", lambda ws: asked.append(ws.url))
    await phone.goto(f"{server.http}/events/cup")
    await hd.goto(f"{server.http}/")
    card = f'article.game[data-game="{semi["game"]}"]'
    for page in (phone, hd):
        await expect(page.locator(card).first).to_contain_text(NAMES[semi["home"]["team"]])
        await expect(page.locator(f"{card} [data-score=away]").first).to_have_text("0")
    await expect(phone.locator("h1")).to_have_text("Copa de Otoño")
    await expect(phone.locator("section.draw")).to_contain_text("winner of")

    tk = await server.device("timekeeper", semi["game"])
    ump = await server.device("umpire", semi["game"])
    try:
        await tk.send({"type": "clock.start", "game": semi["game"]})
        await ump.send({"type": "goal", "game": semi["game"], "team": "away"})
        for page in (phone, hd):   # live, without a reload
            await expect(page.locator(f"{card} [data-score=away]").first).to_have_text("1", timeout=10_000)
            await expect(page.locator(f"{card} .status").first).to_have_text("live")
        await expect(phone.locator(".announce")).to_contain_text("Goal:")
        ack = await ump.send({"type": "game.end", "game": semi["game"]})
        assert ack["type"] == "ack", ack
    finally:
        await tk.close()
        await ump.close()
    winner = NAMES[semi["away"]["team"]]
    final_box = phone.locator(f'ol.match[data-game="{final["game"]}"]')
    await expect(final_box).to_contain_text(winner, timeout=10_000)   # moved on, live
    await expect(phone.locator("section.results")).to_contain_text(winner)

    # the socket drops (the phone goes offline): the page says since when it is current,
    # and takes up again by itself
    await phone.context.set_offline(True)
    await expect(phone.locator("header .conn")).to_contain_text("as of ", timeout=10_000)
    await phone.context.set_offline(False)
    await expect(phone.locator("header .conn")).to_have_text("", timeout=15_000)
    # no request to another host, the sockets included
    own = (server.http, server.http.replace("http", "ws", 1))
    assert asked and all(u.startswith(own) for u in asked), asked
    # the team's page names its next game; the language switch; a private event is a 404
    await phone.goto(f"{server.http}/teams/{semi['home']['team']}")
    await expect(phone.locator("h1")).to_contain_text(NAMES[semi["home"]["team"]])
    await phone.goto(f"{server.http}/events/cup")
    await phone.click("header .lang")
    await expect(phone.locator("h2").nth(1)).to_have_text("Orden de juego")
    await expect(phone.locator("html")).to_have_attribute("lang", "es")
    status, ack = await server.api("POST", "/api/events", {
        "id": "club", "event": "club", "class": "uspa", "handicap": 8, "teams": ["x1", "x2"],
        "private": True})
    assert status == 201, ack
    status, problem = await server.api("GET", "/events/club")
    assert status == 404 and problem["code"] == "unknown_event", problem


AXE = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag2aaa", "wcag21a", "wcag21aa"]},
       "resultTypes": ["violations"]}


async def test_no_public_page_has_a_serious_accessibility_violation(server: Server, screens: Opener) -> None:
    bracket = await a_drawn_cup(server)
    semi = next(g for g in bracket["games"] if g["round"] == 1)
    tk = await server.device("timekeeper", semi["game"])
    await tk.send({"type": "clock.start", "game": semi["game"]})
    await tk.close()
    axe = Axe()
    for viewport in (PHONE, HD):
        # axe-core injects its own script and styles: the page's policy is set aside for it
        page = await screens(viewport, bypass_csp=True)
        for path in ("/", "/events/cup", f"/teams/{semi['home']['team']}", f"/games/{semi['game']}/public",
                     "/events/cup?lang=es", "/events/cup/scores"):
            await page.goto(f"{server.http}{path}")
            results = await axe.run(page, options=AXE)
            bad = [(v["id"], v["impact"], v["help"], len(v["nodes"])) for v in results.response["violations"]
                   if v["impact"] in ("serious", "critical")]
            assert bad == [], (path, viewport, bad)


async def test_a_team_page_gives_the_next_game_s_expected_start_once_a_game_overruns(
        server: Server, screens: Opener) -> None:
    """The first game on the arena begins half an hour late: the next one's teams read, on a
    phone, when it is now expected (register A35), beside its planned time."""
    now = int(time.time() * 1000)
    status, ack = await server.api("POST", "/api/events", {
        "id": "day", "event": "day", "name": "Sunday Cup", "class": "uspa", "handicap": 8, "teams": TEAMS})
    assert status == 201, ack
    for i, (home, away) in enumerate((("aiken", "bayou"), ("cedar", "delta"))):
        status, ack = await server.api("POST", "/api/games", {
            "game": f"day{i}", "event": "day", "handicap": 8, "arena": "main",
            "starts_at": now - 30 * 60_000 + i * 3_600_000,
            "teams": {"home": sheet(home), "away": sheet(away)}})
        assert status == 201, ack
    tk = await server.device("timekeeper", "day0")
    await tk.send({"type": "clock.start", "game": "day0"})
    await tk.close()
    phone = await screens(PHONE)
    await phone.goto(f"{server.http}/teams/cedar")
    await expect(phone.locator("p.next")).to_contain_text("Next: ")
    await expect(phone.locator("p.next")).to_contain_text("(not before about ")
    late = phone.locator('article.game[data-game="day1"] .late')
    await expect(late).to_contain_text("not before about ")
