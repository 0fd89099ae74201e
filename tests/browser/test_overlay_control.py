"""The broadcast operator's control page (/overlay/control) driving overlays in a real
Chromium against the real service: take, hide and replay the score bug, the box panel and
the lower third; queue two lower thirds and skip one; switch to Spanish and cite the rule;
two overlays follow one control; an anonymous socket's command is refused with a typed
error; lower thirds read like broadcast graphics ("SECOND YELLOW · #2 ORTEGA · 2:00 IN THE
BOX"); the overlay draws in the bundled typeface, loaded from the service, and its Spanish
labels sit on one line at 1920×1080. Screenshots go to ``artifacts/screenshots``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from stream.live.ops.wallclock import now_ms

from ..live.conftest import Server, admin_device
from .conftest import shot

ORTEGA = "SECOND YELLOW · #2 ORTEGA · 2:00 IN THE BOX"
ORTEGA_ES = "SEGUNDA AMARILLA · #2 ORTEGA · 2:00 EN EL ÁREA"


@pytest.fixture
async def screens(browser: Browser) -> AsyncIterator[Any]:
    """Pages of their own contexts (the operator's laptop, the vision mixer's browser sources)."""
    made: list[Any] = []
    errors: list[str] = []

    async def new(width: int, height: int) -> Page:
        context = await browser.new_context(viewport={"width": width, "height": height})
        made.append(context)
        pg = await context.new_page()
        pg.on("pageerror", lambda err: errors.append(str(err)))
        return pg

    yield new
    for c in made:
        await c.close()
    assert not errors, errors


async def ready(page: Page) -> None:
    await expect(page.locator("body")).to_have_attribute("data-ready", "true", timeout=10_000)


async def registered_game(server: Server) -> None:
    await server.setup_game()
    admin = await admin_device(server)
    await admin.send({"type": "player.registered", "player": "h2", "name": "Ortega", "number": 2})
    await admin.close()


def graphic(control: Page, name: str, action: str) -> Any:
    return control.locator(f'.graphic[data-graphic="{name}"] .buttons [data-action="{action}"]')


async def test_the_operator_drives_two_overlays(server: Server, screens: Any) -> None:
    await registered_game(server)
    token = server.token("display", "ops-desk", game="g1")
    control = await screens(1440, 900)
    program = await screens(1920, 1080)
    backup = await screens(1280, 720)
    await control.goto(f"{server.http}/overlay/control?game=g1#pair={token}")
    assert token not in control.url
    for ov in (program, backup):
        await ov.goto(f"{server.http}/overlay?game=g1&control=1")
        await ready(ov)
    await ready(control)
    overlays = (program, backup)
    await expect(control.locator("#conn")).to_have_attribute("data-state", "open")
    await expect(control.locator('.graphic[data-graphic="bug"]')).to_have_attribute("data-on", "true")

    # The score bug: hide, then take (its entrance runs), on both overlays.
    await graphic(control, "bug", "hide").click()
    for ov in overlays:
        await expect(ov.locator("#bug")).to_have_attribute("data-on", "false")
        await expect(ov.locator("#bug")).to_be_hidden()
    await expect(control.locator('.graphic[data-graphic="bug"] .state')).to_have_text("OFF")
    await graphic(control, "bug", "take").click()
    for ov in overlays:
        await expect(ov.locator("#bug")).to_be_visible()
        await expect(ov.locator("#bug")).to_have_class("bug enter")

    # Two cards: a first yellow to a1, a second to #2 Ortega.
    ump = await server.device("umpire")
    tk = await server.device("timekeeper")
    await tk.send({"type": "clock.start", "game": "g1"})
    first = await ump.send({"type": "card", "game": "g1", "player": "a1", "color": "yellow",
                            "conduct": "arguing"})
    await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow", "conduct": "arguing"})
    second = await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow",
                             "conduct": "rough_play"})
    # Nothing airs by itself: the operator decides.
    await asyncio.sleep(0.5)
    for ov in overlays:
        assert await ov.locator("#lower .lt").count() == 0
    # The control page lists them in broadcast words.
    a1_row = control.locator(f'#events li[data-cause="{first["log_id"]}"][data-type="card.recorded"]')
    h2_row = control.locator(f'#events li[data-cause="{second["log_id"]}"][data-type="card.recorded"]')
    await expect(a1_row.locator(".headline")).to_have_text("YELLOW CARD · A1 · PENALTY TO G1 HOME")
    await expect(h2_row.locator(".headline")).to_have_text(ORTEGA)

    # Queue two lower thirds, skip one, take the next.
    await a1_row.locator('[data-action="queue"]').click()
    await h2_row.locator('[data-action="queue"]').click()
    queue = control.locator("#queue li")
    await expect(queue).to_have_count(2)
    await expect(queue.nth(0).locator(".headline")).to_have_text("YELLOW CARD · A1 · PENALTY TO G1 HOME")
    await control.screenshot(path=shot("overlay-control-queue"))
    await queue.nth(0).locator('[data-action="skip"]').click()
    await expect(queue).to_have_count(1)
    await expect(queue.nth(0).locator(".headline")).to_have_text(ORTEGA)
    await graphic(control, "lower", "take").click()
    for ov in overlays:
        lower = ov.locator("#lower .lt.in")
        await expect(lower.locator(".lt-headline")).to_have_text(ORTEGA)
        await expect(lower.locator(".lt-team")).to_have_text("G1 Home")
        await expect(lower.locator(".lt-cite")).to_have_count(0)
    await expect(queue).to_have_count(0)
    await expect(control.locator("#on-air")).to_have_text(ORTEGA)

    # The box panel: hide it, take it; Ortega counts down in it.
    await graphic(control, "box", "hide").click()
    for ov in overlays:
        await expect(ov.locator("#box")).to_be_hidden()
    await graphic(control, "box", "take").click()
    for ov in overlays:
        await expect(ov.locator('#box .row[data-player="h2"] .who')).to_have_text("#2 ORTEGA")
        await expect(ov.locator("#box")).to_be_visible()

    # Hide the lower third, then replay it.
    await graphic(control, "lower", "hide").click()
    for ov in overlays:
        await expect(ov.locator("#lower .lt")).to_have_count(0)
    await graphic(control, "lower", "replay").click()
    for ov in overlays:
        await expect(ov.locator("#lower .lt.in .lt-headline")).to_have_text(ORTEGA)

    # The rule cited, then Spanish: the lower third on air changes its words in place.
    await control.locator("#cite").check()
    for ov in overlays:
        await expect(ov.locator("#lower .lt.in .lt-cite")).to_have_text(
            "Rule 14 · Second yellow: penalty box")
    await control.locator('[data-lang="es"]').click()
    for ov in overlays:
        await expect(ov.locator("html")).to_have_attribute("lang", "es")
        await expect(ov.locator("#lower .lt.in .lt-headline")).to_have_text(ORTEGA_ES)
        await expect(ov.locator("#lower .lt.in .lt-cite")).to_have_text(
            "Regla 14 · Segunda amarilla: área de castigo")
    await expect(control.locator('[data-lang="es"]')).to_have_attribute("aria-pressed", "true")
    await expect(h2_row.locator(".headline")).to_have_text(ORTEGA_ES)
    # The program preview on the control page is an overlay too, following the same state.
    preview = control.frame_locator("#program")
    await expect(preview.locator("#lower .lt.in .lt-headline")).to_have_text(ORTEGA_ES)
    await control.screenshot(path=shot("overlay-control"))
    await program.screenshot(path=shot("overlay-controlled-1080p-es"), omit_background=True)
    await backup.screenshot(path=shot("overlay-controlled-720p-es"), omit_background=True)

    # Straight to air from the event list, past the queue.
    await control.locator('[data-lang="en"]').click()
    await a1_row.locator('[data-action="take"]').click()
    for ov in overlays:
        await expect(ov.locator("#lower .lt.in .lt-headline")).to_have_text(
            "YELLOW CARD · A1 · PENALTY TO G1 HOME")
    await ump.close()
    await tk.close()


async def test_an_anonymous_socket_may_not_drive_the_graphics(server: Server, screens: Any) -> None:
    """A page with no token sends a command on its own socket: a typed error, and the overlays
    don't move. The control page without a token asks for one; with an official's token, its
    first command is refused (forbidden) and it asks again."""
    await registered_game(server)
    overlay = await screens(1280, 720)
    await overlay.goto(f"{server.http}/overlay?game=g1&control=1")
    await ready(overlay)
    reply = await overlay.evaluate("""(url) => new Promise((resolve, reject) => {
        const ws = new WebSocket(url);
        setTimeout(() => reject(new Error("no answer")), 5000);
        ws.onmessage = (e) => {
          const m = JSON.parse(e.data);
          const hide = {type: "graphics", game: "g1", action: "hide", graphic: "bug", id: "anon-1"};
          if (m.type === "graphics") ws.send(JSON.stringify(hide));
          if (m.type === "error") { resolve(m); ws.close(); }
        };
      })""", f"{server.watch_url}?game=g1&graphics=1")
    assert (reply["code"], reply["id"], reply["retry"]) == ("auth_required", "anon-1", False)
    assert "display, committee or admin token" in reply["detail"]
    await asyncio.sleep(0.3)
    await expect(overlay.locator("#bug")).to_have_attribute("data-on", "true")
    await expect(overlay.locator("#bug")).to_be_visible()

    control = await screens(1280, 800)
    await control.goto(f"{server.http}/overlay/control?game=g1")
    await expect(control.locator("#token-form")).to_be_visible()
    await expect(control.locator("#desk")).to_be_hidden()
    await control.locator("#token-input").fill(server.token("umpire", "ump-9", game="g1"))
    await control.locator("#token-entry button").click()
    await expect(control.locator("#desk")).to_be_visible()
    await graphic(control, "bug", "hide").click()
    await expect(control.locator("#token-error")).to_have_text(
        "forbidden: a umpire token may not control the graphics")
    await expect(control.locator("#token-form")).to_be_visible()
    await expect(overlay.locator("#bug")).to_be_visible()
    await control.screenshot(path=shot("overlay-control-refused"))


MEASURE = """(selectors) => {
  const out = [];
  for (const sel of selectors) {
    for (const node of document.querySelectorAll(sel)) {
      const range = document.createRange();
      range.selectNodeContents(node);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0);
      const tops = new Set(rects.map((r) => Math.round(r.top)));
      out.push({ sel, text: node.textContent, lines: tops.size,
        clipped: node.scrollWidth > node.clientWidth + 1,
        right: node.getBoundingClientRect().right, font: getComputedStyle(node).fontFamily });
    }
  }
  return out;
}"""


async def test_the_bundled_face_and_spanish_labels_on_one_line_at_1080p(server: Server, screens: Any) -> None:
    await registered_game(server)
    admin = await admin_device(server, "admin-teams")
    await admin.send({"type": "team.registered", "team": "g1-away", "name": "Wellington Blue", "short": "WEL",
                      "colors": {"primary": "#f4f7fc", "secondary": "#1c4fd8"}})
    await admin.close()
    ump = await server.device("umpire")
    tk = await server.device("timekeeper")
    await asyncio.sleep(0.3)  # clock sync: the devices' own times are used
    now = now_ms()
    await tk.send({"type": "clock.start", "game": "g1", "at": now - 119_700})
    card = await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow", "count": 2,
                           "conduct": "striking", "at": now - 119_700})
    red = await ump.send({"type": "card", "game": "g1", "player": "a2", "color": "red",
                          "conduct": "striking"})
    ops = server.token("admin", "ops-admin")
    control = await screens(1440, 900)
    await control.goto(f"{server.http}/overlay/control?game=g1#pair={ops}")
    await ready(control)
    overlay = await screens(1920, 1080)
    await overlay.goto(f"{server.http}/overlay?game=g1&control=1")
    await ready(overlay)
    await control.locator('[data-lang="es"]').click()
    await control.locator("#cite").check()
    row = control.locator(f'#events li[data-cause="{card["log_id"]}"][data-type="card.recorded"]')
    await expect(row.locator(".headline")).to_have_text("2 TARJETAS AMARILLAS · #2 ORTEGA · 2:00 EN EL ÁREA")
    eligible = overlay.locator('#box .row[data-player="h2"] .countdown')
    await expect(eligible).to_have_text("vuelve en la próxima detención", timeout=5000)
    # the longest line a lower third says: time served, back at the next stoppage
    served = control.locator('#events li[data-type="box.eligible"]')
    await expect(served.locator(".headline")).to_have_text(
        "TIEMPO CUMPLIDO · #2 ORTEGA · VUELVE EN LA PRÓXIMA DETENCIÓN", timeout=5000)
    await served.locator('[data-action="take"]').click()
    lower = overlay.locator("#lower .lt.in")
    await expect(lower.locator(".lt-headline")).to_have_text(
        "TIEMPO CUMPLIDO · #2 ORTEGA · VUELVE EN LA PRÓXIMA DETENCIÓN")
    await expect(lower.locator(".lt-cite")).not_to_be_empty()
    await expect(overlay.locator('#box .row[data-player="a2"]')).to_be_visible()
    await asyncio.sleep(0.8)  # the entrances are over
    await overlay.screenshot(path=shot("overlay-es-1080p-one-line"), omit_background=True)

    # The face: Barlow Condensed, loaded from this service (not a system font).
    faces = await overlay.evaluate("""() => [...document.fonts].filter((f) => f.status === "loaded")
        .map((f) => `${f.family.replace(/"/g, "")} ${f.weight}`)""")
    assert {"Barlow Condensed 700", "Barlow Condensed 600"} <= set(faces), faces
    assert await overlay.evaluate("""() => document.fonts.check('700 40px "Barlow Condensed"', "ÁREA")""")
    fonts = await overlay.evaluate("""() => performance.getEntriesByType("resource").map((e) => e.name)
        .filter((n) => n.endsWith(".woff2"))""")
    assert f"{server.http}/clients/shared/fonts/barlow-condensed-latin-700-normal.woff2" in fonts, fonts
    assert all(f.startswith(f"{server.http}/clients/shared/fonts/") for f in fonts), fonts

    # Every label on one line box, nothing clipped, inside the frame; all in the bundled face.
    measured = await overlay.evaluate(MEASURE, [
        "#lower .lt.in .lt-headline", "#lower .lt.in .lt-team", "#lower .lt.in .lt-cite",
        "#bug .name", "#bug-period", "#bug-clock", "#box .row .who", "#box .row .countdown"])
    assert len(measured) >= 10, measured
    for m in measured:
        assert m["lines"] == 1, m
        assert not m["clipped"], m
        assert m["right"] <= 1920 - 60, m
        assert m["font"].startswith('"Barlow Condensed"'), m
    assert {m["text"] for m in measured} >= {"vuelve en la próxima detención", "#2 ORTEGA",
                                             "TIEMPO CUMPLIDO · #2 ORTEGA · VUELVE EN LA PRÓXIMA DETENCIÓN"}
    # The red card's lower third, and the bug's short letters, in Spanish too.
    await control.locator(f'#events li[data-cause="{red["log_id"]}"] [data-action="take"]').click()
    await expect(lower.locator(".lt-headline")).to_have_text("TARJETA ROJA · A2 · EXPULSADO")
    await expect(overlay.locator("#bug-away-name")).to_have_text("WEL")
    await ump.close()
    await tk.close()
