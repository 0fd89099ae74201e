"""The committee console reading again, over and over, as it does all day (a tab switch, the
page showing, the slow poll: committee-live.js): a session logs no error in the browser and
asks for nothing the service refuses, even for an event not drawn yet (the event's `drawn`,
docs/protocol-http.md), and a draw made meanwhile still shows; and a read that changes
nothing leaves the order of play, the day sheet and the day view as they are, the very same
nodes, while a game whose schedule changed has its own line drawn again, and no other; a read
landing while a member types never writes into their field (docs/clients.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from playwright.async_api import Browser, expect

from ..live.conftest import Server
from .conftest import Console, open_console
from .test_committee import EVENT, committee_token

pytestmark = pytest.mark.browser

TEAMS = ["aiken", "palm", "wellington", "houston"]
AT_1400 = int(datetime(2026, 12, 5, 14, 0, tzinfo=UTC).timestamp() * 1000)
AT_1500 = int(datetime(2026, 12, 5, 15, 0, tzinfo=UTC).timestamp() * 1000)


@pytest.fixture
async def console(browser: Browser) -> AsyncIterator[Console]:
    async for c in open_console(browser, timezone_id="UTC", locale="en-GB"):
        yield c


async def entered(server: Server) -> None:
    """The event, its four teams entered, each with three players."""
    status, ack = await server.api("POST", "/api/events", {
        "event": EVENT, "name": "Copa de Otoño", "class": "club", "handicap": 8, "teams": []})
    assert status == 201, ack
    for team in TEAMS:
        status, ack = await server.api("POST", "/api/teams", {
            "team": team, "name": team.title(), "short": team[:3].upper(), "event": EVENT,
            "colors": {"primary": "#1f4fb4", "secondary": "#ffffff"}})
        assert status == 201, ack
        for n in (1, 2, 3):
            status, ack = await server.api("POST", "/api/players", {
                "player": f"{team}{n}", "name": f"{team.title()} {n}", "number": n, "team": team})
            assert status == 201, ack


async def signed_in(c: Console, server: Server) -> None:
    """The committee member signs in with a good token straight away."""
    page = c.page
    await page.goto(f"{server.http}/committee")
    await page.fill("#token-input", await committee_token(server))
    await page.click("#signin-form [type=submit]")
    await expect(page.locator("body")).to_have_attribute("data-ready", "true")


async def read_again(c: Console, tab: str) -> None:
    """One of the console's reads: the tab shown (clicked, as a member does), then everything
    read again; it is done once the ledger, which reads after the rest, has asked for its own."""
    async with c.page.expect_request(lambda r: "/api/obligations" in r.url):
        await c.page.click(f"#tabs [data-tab={tab}]")


async def test_a_session_with_no_draw_yet_logs_no_error_and_a_draw_made_later_shows(
        server: Server, console: Console) -> None:
    await entered(server)
    page = console.page
    logged: list[str] = []
    refused: list[str] = []
    page.on("console", lambda m: logged.append(m.text) if m.type == "error" else None)
    page.on("requestfailed", lambda r: refused.append(f"failed {r.url}"))
    page.on("response", lambda r: refused.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    await signed_in(console, server)
    for tab in ("games", "order", "day", "ledger", "export", "games"):
        await read_again(console, tab)
    await expect(page.locator("#draw-empty")).to_be_visible()
    assert logged == [], logged
    assert refused == [], refused

    # The event is drawn elsewhere (the admin, over the API): the next read shows it here.
    status, ack = await server.api("POST", f"/api/events/{EVENT}/draw",
                                   {"format": "knockout", "teams": TEAMS})
    assert status == 201, ack
    await read_again(console, "games")
    await expect(page.locator("#draw-bracket .draw-game")).to_have_count(3)
    await expect(page.locator("#draw-empty")).to_be_hidden()
    for tab in ("order", "games"):
        await read_again(console, tab)
    await expect(page.locator("#draw-bracket .draw-game")).to_have_count(3)
    assert logged == [], logged
    assert refused == [], refused


def team_sheet(home: str, away: str) -> dict[str, object]:
    return {"home": {"team": home, "players": [f"{home}{n}" for n in (1, 2, 3)]},
            "away": {"team": away, "players": [f"{away}{n}" for n in (1, 2, 3)]}}


HELD = """() => {
  const q = (sel) => [...document.querySelectorAll(sel)];
  window.held = { rows: q('#order-arenas tr[data-game]'), sheet: q('#order-sheet .sheet-game'),
                  tiles: q('#day-games article[data-game]') };
  return Object.fromEntries(Object.entries(window.held).map(([k, v]) => [k, v.map((n) => n.dataset.game)]));
}"""

# For each part held: per game, whether the node shown now is the very node held (and connected).
SAME = """() => {
  const now = { rows: '#order-arenas tr[data-game]', sheet: '#order-sheet .sheet-game',
                tiles: '#day-games article[data-game]' };
  return Object.fromEntries(Object.entries(window.held).map(([k, held]) => [k, Object.fromEntries(
    held.map((n) => [n.dataset.game, n.isConnected
      && document.querySelector(`${now[k]}[data-game="${CSS.escape(n.dataset.game)}"]`) === n]))]));
}"""


async def test_a_read_that_changes_nothing_keeps_the_day_s_nodes_and_a_changed_game_redraws_its_own(
        server: Server, console: Console) -> None:
    await entered(server)
    for game, home, away, at, officials in (
            ("cup-1", "aiken", "palm", AT_1400,
             {"umpires": ["Marta Pérez", "J. Lee"], "referee": "Ana Gómez"}),
            ("cup-2", "wellington", "houston", AT_1500, {"umpires": ["Lee Park"], "timekeeper": "Ana Soto"})):
        status, ack = await server.api("POST", "/api/games", {
            "game": game, "event": EVENT, "handicap": 8, "arena": "main", "teams": team_sheet(home, away),
            "starts_at": at, "officials": officials})
        assert status == 201, ack
    page = console.page
    await signed_in(console, server)
    for game in ("cup-1", "cup-2"):     # the day view has each game's own state, not "connecting"
        await expect(page.locator(f"#day-games article[data-game={game}] .scoreline")).to_have_count(1)
    await console.tab("order")
    await expect(page.locator("#order-arenas tr[data-game]")).to_have_count(2)
    await page.click("#order-sheet-make")
    await expect(page.locator("#order-sheet figure.qr")).to_have_count(5)
    assert await page.evaluate(HELD) == {"rows": ["cup-1", "cup-2"], "sheet": ["cup-1", "cup-2"],
                                         "tiles": ["cup-1", "cup-2"]}

    for tab in ("order", "day", "order"):
        await read_again(console, tab)
    all_same = {"cup-1": True, "cup-2": True}
    assert await page.evaluate(SAME) == {"rows": all_same, "sheet": all_same, "tiles": all_same}

    # cup-2's referee is named (elsewhere, over the API): its row, and its part of the sheet only.
    status, ack = await server.api("POST", "/api/games/cup-2/schedule", {
        "starts_at": AT_1500, "officials": {"umpires": ["Lee Park"], "referee": "Raúl Díaz",
                                            "timekeeper": "Ana Soto"}})
    assert status == 201, ack
    await read_again(console, "order")
    await expect(page.locator("#order-arenas tr[data-game=cup-2] .officials")).to_contain_text(
        "Referee: Raúl Díaz")
    await expect(page.locator("#order-sheet .sheet-game[data-game=cup-2]")).to_have_attribute(
        "data-changed", "true")
    await expect(page.locator("#order-sheet .sheet-game[data-game=cup-1]")).to_have_attribute(
        "data-changed", "false")
    same = await page.evaluate(SAME)
    assert (same["rows"], same["sheet"], same["tiles"]["cup-1"]) == (
        {"cup-1": True, "cup-2": False}, {"cup-1": True, "cup-2": False}, True), same
    # The codes made stay on the sheet, cup-2's with them: only a new sheet mints new ones.
    await expect(page.locator("#order-sheet figure.qr")).to_have_count(5)


async def test_a_read_landing_while_a_member_types_a_game_s_id_never_writes_into_the_field(
        server: Server, console: Console) -> None:
    """The games form offers the next game's id (`<event>-gN`) and reads again whenever the
    day changes. A member who has emptied the field to type their own id, and is typing when
    another member's game arrives, gets what they typed, not the offer spliced before it; what
    they typed stays through later reads; a field left empty is offered the next id again."""
    await entered(server)
    page = console.page
    await signed_in(console, server)
    await console.tab("games")
    field = page.locator("#game-form [name=game]")
    await expect(field).to_have_value(f"{EVENT}-g1")
    await field.fill("")                                  # in the field, about to type
    status, ack = await server.api("POST", "/api/games", {   # meanwhile, from another console
        "game": "cup-1", "event": EVENT, "handicap": 8, "arena": "main",
        "teams": team_sheet("aiken", "palm")})
    assert status == 201, ack
    await expect(page.locator("#games-table tbody tr[data-game=cup-1]")).to_have_count(1)  # read again
    assert await field.evaluate("f => f === document.activeElement")
    await page.keyboard.type("final-a")
    await expect(field).to_have_value("final-a")

    await page.keyboard.press("Tab")                      # away from it: still what was typed
    for tab in ("order", "games"):
        await read_again(console, tab)
    await expect(field).to_have_value("final-a")

    await field.fill("")                                  # emptied and left: the next id is offered
    await page.keyboard.press("Tab")
    await read_again(console, "order")
    await read_again(console, "games")
    await expect(field).to_have_value(f"{EVENT}-g2")
    status, ack = await server.api("POST", "/api/games", {
        "game": "cup-2", "event": EVENT, "handicap": 8, "arena": "main",
        "teams": team_sheet("wellington", "houston")})
    assert status == 201, ack
    await expect(field).to_have_value(f"{EVENT}-g3")      # an offer untouched follows the games
