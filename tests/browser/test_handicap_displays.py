"""Goals on handicap on every display, in a real Chromium against the real service: a game of
a handicap event (the USPA arena matrix; the home starters rated 4, the away ones 7: home
starts with 1½ over 3 periods) shows its score as people write it ("1½") and says the goals
on handicap it includes: the arena scoreboard at 1080p and on a phone, in English and
Spanish, big enough and in contrast as the rest of the board, live when the committee
changes them or a goal is scored; the livestream overlay's score bug (a small "1½ HCP") and
its goal lower third; the overlay's control page; the officials' handheld. Screenshots go
to ``artifacts/screenshots``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from playwright.async_api import Browser, Page, ViewportSize, expect

from ..live.conftest import Server, admin_device
from .conftest import shot
from .test_scoreboard_board import audit, ready

MATRIX = [{"periods": 2, "goals_per_goal": 0.5}, {"periods": 3, "goals_per_goal": 0.5},
          {"periods": 4, "goals_per_goal": 1}]
#: Each player's registered handicap: home's starters 4 in all, away's 7 (a difference of 3).
HANDICAPS = {"h1": ("Ortega", 2, 2), "h2": ("Pieres", 3, 1), "h3": ("Heguy", 4, 1), "h4": ("Paz", 6, 0),
             "a1": ("Núñez", 7, 3), "a2": ("Salas", 5, 2), "a3": ("Beck", 8, 2), "a4": ("Ruiz", 9, 0)}
HD: ViewportSize = {"width": 1920, "height": 1080}
PHONE: ViewportSize = {"width": 390, "height": 844}


async def handicap_game(server: Server) -> None:
    """g1, of a handicap event with the USPA arena matrix, 3 periods: home starts with 1½."""
    status, reply = await server.api("POST", "/api/events", {
        "id": "ev", "event": "cup", "name": "Copa de Otoño", "class": "uspa", "handicap": 8,
        "teams": ["g1-home", "g1-away"], "handicap_matrix": MATRIX})
    assert status == 201, reply
    admin = await admin_device(server)
    await admin.send({"type": "team.registered", "team": "g1-home", "name": "Aiken Arena", "short": "aik",
                      "colors": {"primary": "#0b3d91", "secondary": "#ffd21f"}})
    await admin.send({"type": "team.registered", "team": "g1-away", "name": "Wellington Blue", "short": "wel",
                      "colors": {"primary": "#f4f7fc", "secondary": "#1c4fd8"}})
    for player, (name, number, handicap) in HANDICAPS.items():
        await admin.send({"type": "player.registered", "player": player, "name": name, "number": number,
                          "handicap": handicap})
    await admin.close()
    await server.setup_game("g1", periods=3)
    status, doc = await server.api("GET", "/api/games/g1")
    assert status == 200, doc
    view = doc["view"]
    assert view["goals_on_handicap"]["home"] == 1.5 and view["score"] == {"home": 1.5, "away": 0}, view


async def goal(server: Server, side: str) -> None:
    ump = await server.device("umpire", "g1")
    try:
        reply = await ump.send({"type": "goal", "game": "g1", "team": side})
        assert reply["type"] == "ack", reply
    finally:
        await ump.close()


async def start_clock(server: Server) -> None:
    tk = await server.device("timekeeper", "g1")
    try:
        await tk.send({"type": "clock.start", "game": "g1"})
    finally:
        await tk.close()


Opener = Callable[..., Awaitable[Page]]


@pytest.fixture
async def screens(browser: Browser) -> AsyncIterator[Opener]:
    """Pages, each in its own browser context; none may have had a page error or a console error."""
    contexts: list[Any] = []
    errors: list[str] = []

    async def new(viewport: ViewportSize, **options: Any) -> Page:
        context = await browser.new_context(viewport=viewport, **options)
        contexts.append(context)
        page = await context.new_page()
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        return page

    yield new
    for c in contexts:
        await c.close()
    assert not errors, errors


#: The score's and the marker's text boxes, the team panel around them (which clips), the
#: viewport, and the font sizes of the marker and of the board's secondary text.
MEASURE = """(side) => {
  const box = (id) => {
    const node = document.getElementById(id), r = document.createRange();
    r.selectNodeContents(node);
    const b = r.getBoundingClientRect();
    return { left: b.left, top: b.top, right: b.right, bottom: b.bottom, width: b.width, height: b.height,
             cut: node.scrollWidth > node.clientWidth + 1 };
  };
  const team = document.getElementById(side).getBoundingClientRect();
  return { score: box(`${side}-score`), hcp: box(`${side}-hcp`),
           team: { left: team.left, top: team.top, right: team.right, bottom: team.bottom },
           vw: innerWidth, vh: innerHeight,
           hcpSize: parseFloat(getComputedStyle(document.getElementById(`${side}-hcp`)).fontSize),
           secondary: parseFloat(getComputedStyle(document.getElementById(`${side}-strength`)).fontSize) };
}"""


async def measured(page: Page, label: str) -> None:
    """The home score and its handicap line: whole, inside the team's panel and the screen, the
    line no smaller than the board's secondary text; and every text on the board reads from
    the stands (test_scoreboard_board's audit: size, 7:1 contrast, inside the screen)."""
    m = await page.evaluate(MEASURE, "home")
    for part in ("score", "hcp"):
        b = m[part]
        assert b["width"] > 0 and b["height"] > 0, (label, part, m)
        assert not b["cut"], (label, part, "clipped", m)
        assert m["team"]["left"] - 1 <= b["left"] and b["right"] <= m["team"]["right"] + 1, (label, part, m)
        assert m["team"]["top"] - 1 <= b["top"] and b["bottom"] <= m["team"]["bottom"] + 1, (label, part, m)
        assert b["right"] <= m["vw"] + 1 and b["bottom"] <= m["vh"] + 1, (label, part, m)
    assert m["hcpSize"] >= m["secondary"], (label, m)
    await audit(page, label)


async def test_the_scoreboard_shows_halves_and_the_goals_on_handicap(server: Server, screens: Opener) -> None:
    """1080p and a phone, English and Spanish; the committee's change and a goal, live."""
    await handicap_game(server)
    boards = {}
    for name, viewport, lang in (("1080p", HD, "en"), ("phone", PHONE, "es")):
        page = await screens(viewport)
        await page.goto(f"{server.http}/scoreboard?game=g1&lang={lang}")
        await ready(page)
        boards[name] = page
    hd, phone = boards["1080p"], boards["phone"]
    for page, words in ((hd, "incl. 1½ on handicap"), (phone, "incl. 1½ de hándicap")):
        await expect(page.locator("#home-score")).to_have_text("1½")
        await expect(page.locator("#away-score")).to_have_text("0")
        await expect(page.locator("#home-hcp")).to_have_text(words)
        await expect(page.locator("#home-hcp")).to_be_visible()
        await expect(page.locator("#away-hcp")).to_be_hidden()
    sizes = [t["size"] for t in await audit(hd, "1080p") if t["text"] == "1½"]
    assert len(sizes) == 2 and max(sizes) > 5 * min(sizes), sizes  # the score, the line's figure
    await measured(hd, "1080p")
    await measured(phone, "phone")
    await hd.screenshot(path=shot("scoreboard-handicap-1080p"))
    await phone.screenshot(path=shot("scoreboard-handicap-phone-es"))

    # The committee changes them before the game begins: the boards follow, a long score too.
    for given in (10.5, 0.5):
        status, reply = await server.api("POST", "/api/games/g1/handicap", {
            "goals": {"home": given, "away": 0}, "by": "Host Committee",
            "reason": "a late change of starters"})
        assert status in (200, 201), reply
        if given == 10.5:
            await expect(hd.locator("#home-score")).to_have_text("10½")
            await expect(phone.locator("#home-hcp")).to_have_text("incl. 10½ de hándicap")
            await measured(hd, "1080p, 10½")
            await measured(phone, "phone, 10½")
            await hd.screenshot(path=shot("scoreboard-handicap-1080p-long"))
            await phone.screenshot(path=shot("scoreboard-handicap-phone-es-long"))
    await expect(hd.locator("#home-score")).to_have_text("½")
    await expect(hd.locator("#home-hcp")).to_have_text("incl. ½ on handicap")
    await expect(phone.locator("#home-hcp")).to_have_text("incl. ½ de hándicap")

    # Goals count on top of them: the score, the last event.
    await start_clock(server)
    await goal(server, "home")
    await goal(server, "away")
    await goal(server, "home")
    for page in (hd, phone):
        await expect(page.locator("#home-score")).to_have_text("2½")
        await expect(page.locator("#away-score")).to_have_text("1")
        await expect(page.locator("#last-event")).to_contain_text("2½–1")
        await expect(page.locator("#home-hcp")).to_be_visible()
    await measured(hd, "1080p, after the goals")
    await measured(phone, "phone, after the goals")
    await hd.screenshot(path=shot("scoreboard-handicap-1080p-goals"))
    await phone.screenshot(path=shot("scoreboard-handicap-phone-es-goals"))


async def test_the_overlay_and_its_control_page_say_the_half(server: Server, screens: Opener) -> None:
    """The score bug: "1½" in the bundled face and a small "1½ HCP" before it; the goal's lower
    third "2½–0"; the control page's match line."""
    await handicap_game(server)
    overlay = await screens(HD)
    await overlay.goto(f"{server.http}/overlay?game=g1")
    await expect(overlay.locator("body")).to_have_attribute("data-ready", "true", timeout=10_000)
    await expect(overlay.locator("#bug-home-score")).to_have_text("1½")
    await expect(overlay.locator("#bug-away-score")).to_have_text("0")
    marker = overlay.locator("#bug-home-hcp")
    await expect(marker).to_be_visible()
    await expect(marker.locator("b")).to_have_text("1½")
    await expect(marker.locator("small")).to_have_text("HCP")
    await expect(marker).to_have_attribute("title", "incl. 1½ on handicap")
    await expect(overlay.locator("#bug-away-hcp")).to_be_hidden()
    # The half is drawn in the bundled face (it has the glyph): the same width whatever face
    # would stand in for a missing glyph, and not the width a stand-in draws.
    widths = await overlay.evaluate("""() => {
      const node = document.getElementById("bug-home-score");
      const width = (family) => {
        const copy = node.cloneNode(true);
        copy.removeAttribute("id");
        if (family) copy.style.fontFamily = family;
        node.after(copy);
        const range = document.createRange(); range.selectNodeContents(copy);
        const w = range.getBoundingClientRect().width;
        copy.remove();
        return w;
      };
      return { drawn: width(null), mono: width('"Barlow Condensed", monospace'),
               serif: width('"Barlow Condensed", serif'), standIn: width("monospace"),
               size: parseFloat(getComputedStyle(node).fontSize), vh: innerHeight };
    }""")
    assert widths["drawn"] == widths["mono"] == widths["serif"] != widths["standIn"], widths
    assert widths["size"] >= 0.04 * widths["vh"], widths
    small = await marker.locator("small").evaluate("(n) => parseFloat(getComputedStyle(n).fontSize)")
    assert small >= 0.014 * widths["vh"], small
    await asyncio.sleep(0.6)
    await overlay.screenshot(path=shot("overlay-handicap-bug"), omit_background=True)
    await overlay.locator("#bug").screenshot(path=shot("overlay-handicap-bug-close"))

    await start_clock(server)
    await goal(server, "home")
    await expect(overlay.locator("#bug-home-score")).to_have_text("2½")
    lower = overlay.locator("#lower .lt.in .lt-headline")
    await expect(lower).to_have_text("GOAL · AIK · AIK 2½–0 WEL")
    await asyncio.sleep(0.8)  # the entrance is over
    await overlay.screenshot(path=shot("overlay-handicap-goal"), omit_background=True)

    control = await screens({"width": 1440, "height": 900})
    token = server.token("display", "ops-desk", game="g1")
    await control.goto(f"{server.http}/overlay/control?game=g1#pair={token}")
    await expect(control.locator("body")).to_have_attribute("data-ready", "true", timeout=10_000)
    await expect(control.locator("#match")).to_have_text("AIK 2½–0 WEL (AIK incl. 1½ hcp)")
    await expect(control.locator('#events li[data-type="goal.scored"] .headline')).to_have_text(
        "GOAL · AIK · AIK 2½–0 WEL")


async def test_the_handheld_shows_the_half_and_the_goals_on_handicap(server: Server, screens: Opener) -> None:
    await handicap_game(server)
    page = await screens(PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    token = server.token("umpire", "ump-1", game="g1", official="A. Rivera")
    await page.goto(f"{server.http}/handheld#token={token}")
    await expect(page.locator("[data-score=home]")).to_have_text("1½", timeout=10_000)
    await expect(page.locator("[data-score=away]")).to_have_text("0")
    marker = page.locator("#scoreline .side.home .hcp")
    await expect(marker).to_have_text("incl. 1½ hcp")
    await expect(marker).to_be_visible()
    await expect(page.locator("#scoreline .side.away .hcp")).to_have_count(0)
    box = await marker.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    # the team's letters keep their room: not cut for the marker
    letters = page.locator("#scoreline .side.home .tname")
    await expect(letters).to_have_text("AIK")
    assert await letters.evaluate("(n) => n.scrollWidth <= n.clientWidth")
    assert await marker.evaluate(
        "(n) => n.scrollWidth <= n.clientWidth + 1 && parseFloat(getComputedStyle(n).fontSize) >= 12")
    await start_clock(server)
    await goal(server, "home")
    await expect(page.locator("[data-score=home]")).to_have_text("2½")
    await expect(marker).to_have_text("incl. 1½ hcp")
    await page.screenshot(path=shot("handheld-handicap"))
    # in Spanish the marker says it in Spanish, as the committee's console does
    await page.goto(f"{server.http}/handheld?lang=es#token={token}")
    await expect(page.locator("[data-score=home]")).to_have_text("2½", timeout=10_000)
    await expect(page.locator("#scoreline .side.home .hcp")).to_have_text("incl. 1½ hándicap")
