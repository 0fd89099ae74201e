"""The order of play, as a committee runs it in a real Chromium: a game scheduled from the
games form with its start time and four officials by name, another set up through the API
in a second arena and a third with no time yet; the order of play lists the day by arena and
start time with the officials' names, in English and Spanish; a referee changed in place
reaches the game's roster; the day sheet mints one pairing code per named official, each
named; and the printed page is the order of play alone. Screenshots: committee-order-*.png."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from playwright.async_api import Browser, expect

from ..live.conftest import Server
from .conftest import Console, open_console, shot
from .test_committee import EVENT, committee_token, shot_page, sign_in

pytestmark = pytest.mark.browser

DAY = "2026-12-05"
AT_1500 = int(datetime(2026, 12, 5, 15, 0, tzinfo=UTC).timestamp() * 1000)


@pytest.fixture
async def console(browser: Browser) -> AsyncIterator[Console]:
    # The committee's laptop keeps UTC here, so that the times the test sets read back as given.
    async for c in open_console(browser, timezone_id="UTC", locale="en-GB"):
        yield c


async def rosters(server: Server) -> None:
    status, ack = await server.api("POST", "/api/events", {
        "event": EVENT, "name": "Copa de Otoño", "class": "club", "handicap": 8, "teams": []})
    assert status == 201, ack
    for team, name, color in (("aiken", "Aiken Arena", "#1f4fb4"), ("palm", "Palm Beach", "#b3471b"),
                              ("wellington", "Wellington", "#0b3d91"), ("houston", "Houston", "#7a1f5c")):
        status, ack = await server.api("POST", "/api/teams", {
            "team": team, "name": name, "short": team[:3].upper(), "event": EVENT,
            "colors": {"primary": color, "secondary": "#ffffff"}})
        assert status == 201, ack
        for n in range(1, 4):
            await server.api("POST", "/api/players", {"player": f"{team}{n}", "name": f"{name} {n}",
                                                      "number": n, "team": team})


def sheet(home: str, away: str) -> dict[str, object]:
    return {"home": {"team": home, "players": [f"{home}{n}" for n in (1, 2, 3)]},
            "away": {"team": away, "players": [f"{away}{n}" for n in (1, 2, 3)]}}


async def test_the_order_of_play_lists_the_day_names_its_officials_and_prints_their_codes(
        server: Server, console: Console) -> None:
    await rosters(server)
    # A game in the north arena at 15:00, set up before the console opens; one with no time yet.
    status, ack = await server.api("POST", "/api/games", {
        "game": "cup-2", "event": EVENT, "handicap": 8, "arena": "north",
        "teams": sheet("wellington", "houston"),
        "starts_at": AT_1500, "officials": {"umpires": ["Lee Park"], "timekeeper": "Ana Soto"}})
    assert status == 201, ack
    status, ack = await server.api("POST", "/api/games", {
        "game": "cup-3", "event": EVENT, "handicap": 8, "arena": "north", "teams": sheet("aiken", "houston")})
    assert status == 201, ack
    page = console.page
    await sign_in(console, server, await committee_token(server), header="Copa de Otoño")

    # 1. The games form schedules a game at 14:00 in the main arena, with four officials.
    await console.tab("games")
    form = page.locator("#game-form")
    await form.locator("[name=home_team]").select_option("aiken")
    await form.locator("[name=away_team]").select_option("palm")
    await form.locator("[name=game]").fill("cup-1")
    await form.locator("[name=arena]").fill("main")
    await form.locator("[name=starts_at]").fill(f"{DAY}T14:00")
    for name, who in (("umpire1", "Marta Pérez"), ("umpire2", "J. Lee"), ("referee", "Ana Gómez"),
                      ("timekeeper", "Raúl Díaz")):
        await form.locator(f"[name={name}]").fill(who)
    await page.click("#game-form [type=submit]")
    await expect(form.locator(".form-msg.ok")).to_be_visible()
    _, doc = await server.api("GET", "/api/games/cup-1")
    sched = doc["roster"]["schedule"]
    assert sched["starts_at"] == int(datetime(2026, 12, 5, 14, 0, tzinfo=UTC).timestamp() * 1000)
    assert sched["officials"] == {"umpires": ["Marta Pérez", "J. Lee"], "referee": "Ana Gómez",
                                  "timekeeper": "Raúl Díaz"}

    # 2. The order of play: by arena, then time; the officials by name; the untimed game apart.
    await console.tab("order")
    await expect(page.locator("#order-day")).to_have_value(DAY)
    await expect(page.locator("#order-title")).to_contain_text("Copa de Otoño · order of play")
    arenas = page.locator("#order-arenas .order-arena")
    await expect(arenas).to_have_count(2)
    assert await arenas.evaluate_all("(xs) => xs.map((x) => x.dataset.arena)") == ["main", "north"]
    first = page.locator('#order-arenas tr[data-game="cup-1"]')
    await expect(first.locator(".time")).to_have_text("14:00")
    await expect(first.locator(".officials")).to_have_text(
        "Umpires: Marta Pérez, J. Lee · Referee: Ana Gómez · Timekeeper: Raúl Díaz")
    await expect(first).to_contain_text("Aiken Arena – Palm Beach")
    await expect(page.locator('#order-arenas tr[data-game="cup-2"] .time')).to_have_text("15:00")
    await expect(page.locator('#order-untimed li[data-game="cup-3"]')).to_be_visible()
    await shot_page(page, "order-day")

    # 3. The referee of cup-1 changes, in place: the game's roster has it at once.
    await first.locator("[data-act=edit]").click()
    edit = page.locator('#order-edit form[data-game="cup-1"]')
    await edit.locator("[name=referee]").fill("Lucía Vega")
    await edit.locator("[type=submit]").click()
    await expect(edit.locator(".form-msg.ok")).to_be_visible()
    officials = page.locator('#order-arenas tr[data-game="cup-1"] .officials')
    await expect(officials).to_contain_text("Referee: Lucía Vega")
    _, doc = await server.api("GET", "/api/games/cup-1")
    assert doc["roster"]["schedule"]["officials"]["referee"] == "Lucía Vega"
    assert doc["roster"]["schedule"]["revision"] == 2

    # 4. The day sheet: a code per named official (4 for cup-1, 2 for cup-2), each under its name.
    await page.click("#order-sheet-make")
    # (Each read of the sheet is an assertion that waits: the console reads again meanwhile.)
    codes = page.locator("#order-sheet figure.qr")
    await expect(codes).to_have_count(6)
    await expect(page.locator("#order-sheet .sheet-game")).to_have_count(2)
    for game, named in (("cup-1", ["Umpire · Marta Pérez", "Umpire · J. Lee", "Referee · Lucía Vega",
                                   "Timekeeper · Raúl Díaz"]),
                        ("cup-2", ["Umpire · Lee Park", "Timekeeper · Ana Soto"])):
        captions = page.locator(f'#order-sheet .sheet-game[data-game="{game}"] figure.qr figcaption')
        await expect(captions).to_have_text(named)
    status, tokens = await server.api("GET", "/api/tokens?game=cup-2")
    assert status == 200
    rows = tokens if isinstance(tokens, list) else tokens["tokens"]
    assert sorted((r["claims"]["role"], r["claims"]["official"]) for r in rows) == [
        ("timekeeper", "Ana Soto"), ("umpire", "Lee Park")]

    # 5. Printed, the page is the order of play and the sheet: no tabs, no buttons, no forms.
    await page.emulate_media(media="print")
    await expect(page.locator("#tabs")).to_be_hidden()
    await expect(page.locator("#order-sheet-make")).to_be_hidden()
    await expect(page.locator("#order-arenas")).to_be_visible()
    await expect(page.locator("#order-sheet figure.qr").first).to_be_visible()
    await page.screenshot(path=shot("committee-order-print"), full_page=True)
    await page.emulate_media(media="screen")

    # 6. In Spanish.
    await page.click("#lang")
    await expect(page.locator("#order-title")).to_contain_text("orden de juego")
    await expect(page.locator('#order-arenas tr[data-game="cup-1"] .officials')).to_contain_text(
        "Árbitros: Marta Pérez, J. Lee")
