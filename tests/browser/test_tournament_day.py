"""The committee's whole tournament day, walked in a real Chromium against the real service:
16 games in two arenas, run from the console.

The committee signs in with its token, creates "Copa de Otoño" with its team handicap
limits and imports eight teams (accented names, numbers, handicaps) from a CSV; draws an
8-team knockout with a consolation bracket (7 + 3 games) and sets the first round up from
the draw, each game with its day, time, arena and four officials by name. The admin runs a
second event on the same day from its own console: a 4-team round robin (6 games) in the
same two arenas, its teams also in the cup. The committee reads the order of play by arena
and time, prints it, and makes the day sheet: a QR code per named official. One umpire's
phone scans its code (decoded from the picture) and pairs; in the first game the umpire
cards a player red on it; the other games are played by the officials' devices. Each result
advances the bracket (read from the console's own feed, no reload); a knockout loss with no
game left is proposed for elimination, the proposals match the results, and the committee
confirms each, then the event's completion. The red card's suspension passes over the
consolation game (R16) and is served in the player's team's next qualifying game, the round
robin's; another suspension is rescinded with a reason and stays, struck through, with who,
when and why, in the ledger and in the decisions' export. Every screen in names, in English
then in Spanish: the day view, the ledger, the order of play, a game's scoreboard and
overlay (the event's name, the teams' names, the kit chosen for a clash); the game report
and its export (text_en, text_es). Screenshots: artifacts/screenshots/tournament-day-*.png.

And a kit chosen for one game's clash is not carried into the next game set up."""

from __future__ import annotations

import base64
import csv
import io
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest
import zxingcpp
from playwright.async_api import Browser, FilePayload, Locator, Page, expect

from ..live.conftest import Server
from .conftest import TABLET, Console, shot
from .test_committee import EVENT, PHONE, committee_token, sign_in

pytestmark = pytest.mark.browser

DAY = "2026-10-17"
CUP = "Copa de Otoño"
NORTH, NORTH_NAME = "copa-arena-norte", "Copa Arena Norte"
# team, name, short, colours (Cedar and Hacienda clash: both green), players (name, number, handicap)
TEAMS: list[tuple[str, str, str, str, str, list[tuple[str, int, int]]]] = [
    ("aiken", "Aiken Arena", "AIK", "#1f4fb4", "#ffffff",
     [("Martín Ruiz", 1, 3), ("Ignacio Ortega", 2, 2), ("Kate Mahoney", 3, 1), ("José Díaz", 4, 1)]),
    ("bayou", "Bayou Polo", "BAY", "#c8102e", "#ffffff",
     [("Sam Beck", 1, 2), ("Tomás Salas", 2, 3), ("Ana Kerr", 3, 1), ("Lou Frey", 4, 0)]),
    ("cedar", "Cedar Ridge", "CED", "#2e7d32", "#f2c200",
     [("Iñaki Núñez", 1, 2), ("Eli Grant", 2, 3), ("Raúl Soto", 3, 1), ("Kit Moss", 4, 0)]),
    ("delta", "Delta Farms", "DEL", "#f2c200", "#1a1a1a",
     [("Lucía Vega", 1, 2), ("Ty Brook", 2, 3), ("Jo Lane", 3, 1), ("Andrés Cruz", 4, 0)]),
    ("estancia", "Estancia Peña", "EST", "#6a1b9a", "#ffffff",
     [("Begoña Ibarra", 1, 2), ("Nicolás Peña", 2, 2), ("Zoë Hart", 3, 1), ("Ramón Ocaña", 4, 1)]),
    ("flores", "Las Flores", "FLO", "#ef6c00", "#ffffff",
     [("Sofía Flores", 1, 3), ("Agustín Mañé", 2, 2), ("Cy Dunn", 3, 1), ("Inés Ávila", 4, 0)]),
    ("granja", "La Granja", "GRA", "#00838f", "#ffffff",
     [("Joaquín Gómez", 1, 2), ("Lía Ortúzar", 2, 2), ("Max Rey", 3, 2), ("Dolores Güemes", 4, 0)]),
    ("hacienda", "Hacienda Ibáñez", "HAC", "#2f6b34", "#ffffff",
     [("Facundo Ibáñez", 1, 3), ("Valentín Sáenz", 2, 1), ("Íñigo Ibáñez", 3, 2), ("Teo Luna", 4, 0)]),
]
NAME = {t[0]: t[1] for t in TEAMS}
SEEDS = [t[0] for t in TEAMS]          # entry order is seed order: Aiken 1st … Hacienda 8th
NORTH_TEAMS = ["estancia", "flores", "granja", "hacienda"]   # in seed order
CARDED, CARDED_NAME = "hacienda3", "#3 Íñigo Ibáñez (Hacienda Ibáñez)"
RESCINDED = "delta2"                    # Ty Brook: red in qf-2, shown to the wrong player

# The day: game (a cup game's round name, or a north game's), arena, time, winner's side, officials.
OFFICIALS = ["Marta Pérez", "Joaquín Lee", "Ana Gómez", "Raúl Díaz", "Lucía Vega Ruiz", "Pedro Ñancú",
             "Sara Bosch", "Tomás Ávila", "Elena Müller", "Iván Orozco"]

ROLES, FIELDS = ("umpire", "umpire", "referee", "timekeeper"), ("umpire1", "umpire2", "referee", "timekeeper")


def cup(name: str) -> str:
    return f"{EVENT}-{name}"


def north(name: str) -> str:
    return f"{NORTH}-{name}"


DAY_PLAN: list[tuple[str, str, str, str]] = [   # game, arena, start, the side that wins
    (cup("qf-1"), "main", "09:00", "home"), (cup("qf-3"), "north", "09:00", "home"),
    (cup("qf-2"), "main", "10:00", "home"), (cup("qf-4"), "north", "10:00", "away"),
    (cup("c-sf-1"), "main", "11:00", "home"), (cup("c-sf-2"), "north", "11:00", "away"),
    (cup("sf-1"), "main", "12:00", "home"), (cup("sf-2"), "north", "12:00", "away"),
    (north("rr1-1"), "main", "13:00", "home"), (north("rr1-2"), "north", "13:00", "away"),
    (north("rr2-1"), "main", "14:00", "home"), (north("rr2-2"), "north", "14:00", "away"),
    (cup("c-final"), "main", "15:00", "away"), (cup("final"), "main", "16:00", "home"),
    (north("rr3-1"), "main", "17:00", "home"), (north("rr3-2"), "north", "17:00", "home"),
]
PLAN = {g: (arena, at, won) for g, arena, at, won in DAY_PLAN}


def officials_of(game: str) -> list[str]:
    i = [g for g, *_ in DAY_PLAN].index(game)
    return [OFFICIALS[(i + k) % len(OFFICIALS)] for k in range(4)]


def roster_csv(teams: list[str]) -> bytes:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["team", "team_name", "short", "primary", "secondary", "player", "player_name", "number",
                "handicap"])
    for team, name, short, primary, secondary, players in TEAMS:
        if team in teams:
            for pname, number, hcp in players:
                w.writerow([team, name, short, primary, secondary, f"{team}{number}", pname, number, hcp])
    return out.getvalue().encode()


async def shot_page(page: Page, name: str, full: bool = True) -> None:
    await page.evaluate("scrollTo(0, 0)")
    await page.screenshot(path=shot(f"tournament-day-{name}"), full_page=full)


async def new_console(browser: Browser) -> Console:
    # The committee's laptops keep UTC here, so that the times set read back as given.
    context = await browser.new_context(**TABLET, timezone_id="UTC", locale="en-GB", accept_downloads=True)
    return Console(context, await context.new_page())


@pytest.fixture
async def console(browser: Browser) -> AsyncIterator[Console]:
    c = await new_console(browser)
    try:
        yield c
    finally:
        await c.context.close()
    assert not c.errors, c.errors


# ------------------------------------------------------------------ the console's steps


async def import_rosters(page: Page, teams: list[str], count: str) -> None:
    await page.set_input_files("#csv-form [name=file]", files=[
        FilePayload(name="rosters.csv", mimeType="text/csv", buffer=roster_csv(teams))])
    await page.click("#csv-form [type=submit]")
    await expect(page.locator("#csv-result [data-result=imported]")).to_contain_text(count)


async def make_draw(page: Page, fmt: str, consolation: bool, seeds: list[str]) -> None:
    form = page.locator("#draw-form")
    await form.locator("[name=format]").select_option(fmt)
    order = await form.locator(".seeds li").evaluate_all("xs => xs.map(x => x.dataset.team)")
    assert order == seeds, order                       # the entry order, as the CSV gave it
    if consolation:
        await form.locator("[name=consolation]").check()
    await form.locator("[type=submit]").click()
    await expect(form.locator(".form-msg.ok")).to_be_visible()


async def set_up(page: Page, game: str) -> None:
    """"Set up this game" in the bracket, then its place in the day: arena, time, four officials."""
    arena, at, _ = PLAN[game]
    box = page.locator(f"#draw-bracket .draw-game[data-game='{game}']")
    await box.get_by_role("button", name="Set up this game").click()
    form = page.locator("#game-form")
    await expect(form.locator("[name=game]")).to_have_value(game)
    await form.locator("[name=arena]").fill(arena)
    await form.locator("[name=starts_at]").fill(f"{DAY}T{at}")
    await form.locator("[name=period]").fill("2:00")
    for field, who in zip(FIELDS, officials_of(game), strict=True):
        await form.locator(f"[name={field}]").fill(who)
    await form.locator("[type=submit]").click()
    await expect(form.locator(".form-msg.ok")).to_contain_text(game)
    await expect(box).to_have_attribute("data-state", "set_up")


async def start_clock(server: Server, game: str) -> None:
    tk = await server.device("timekeeper", game)
    try:
        await tk.send({"type": "clock.start", "game": game})
    finally:
        await tk.close()


async def play(server: Server, game: str, *, cards: tuple[dict[str, Any], ...] = (),
               started: bool = False) -> None:
    """The officials' devices play ``game``: the clock, the cards, a goal or two to the side
    that wins by the plan, the end."""
    won = PLAN[game][2]
    tk, ump = await server.device("timekeeper", game), await server.device("umpire", game)
    try:
        if not started:
            await tk.send({"type": "clock.start", "game": game})
        for card in cards:
            await ump.send({"type": "card", "game": game, **card})
        await ump.send({"type": "goal", "game": game, "team": won})
        await ump.send({"type": "goal", "game": game, "team": won})
        await ump.send({"type": "goal", "game": game, "team": "away" if won == "home" else "home"})
        await ump.send({"type": "game.end", "game": game})
    finally:
        await tk.close()
        await ump.close()


async def bracket_ended(page: Page, *games: str) -> None:
    """The console (no reload: its feed) shows each game ended in the bracket."""
    for game in games:
        await expect(page.locator(f"#draw-bracket .draw-game[data-game='{game}']")).to_have_attribute(
            "data-state", "ended")


async def confirm_proposals(page: Page, server: Server, expected: dict[str, str]) -> None:
    """The draw's proposals are the eliminations the results call for (team → reason), no more;
    the committee confirms each in the console."""
    proposals = page.locator("#draw-proposals .draw-proposal[data-action=eliminate]")
    await expect(proposals).to_have_count(len(expected))
    shown = await proposals.evaluate_all("xs => xs.map(x => x.dataset.team)")
    assert sorted(shown) == sorted(expected), shown
    _, drawn = await server.api("GET", f"/api/events/{EVENT}/draw")
    assert {p["team"]: p["reason"] for p in drawn["proposals"] if p["action"] == "eliminate"} == expected
    for team in expected:
        text = proposals.locator(f"xpath=self::*[@data-team='{team}']")
        await expect(text).to_contain_text(NAME[team])
        await text.get_by_role("button", name="Confirm").click()
    await expect(proposals).to_have_count(0)


async def scan(code: Locator) -> str:
    """Read a QR code as a phone's camera would: the picture drawn large, decoded."""
    pixels = await code.locator("img").evaluate("""async (img) => {
        await img.decode();
        const n = 640, c = document.createElement('canvas');
        c.width = c.height = n;
        const x = c.getContext('2d');
        x.fillStyle = '#fff'; x.fillRect(0, 0, n, n);
        x.drawImage(img, 0, 0, n, n);
        const d = x.getImageData(0, 0, n, n).data;
        let s = '';
        for (let i = 0; i < n * n; i++) s += String.fromCharCode(d[4 * i]);
        return btoa(s);
    }""")
    image = np.frombuffer(base64.b64decode(pixels), dtype=np.uint8).reshape(640, 640)
    # A phone's camera app set to QR codes: a QR code's modules can also read, by chance, as
    # a short linear barcode (Codabar), which such an app never reports.
    (found,) = zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormats(zxingcpp.BarcodeFormat.QRCode))
    return str(found.text)


def winner_loser(drawn: dict[str, Any], game: str) -> tuple[str, str]:
    g = next(x for x in drawn["games"] if x["game"] == game)
    return g["winner"], g["loser"]


# ------------------------------------------------------------------ the day


async def test_a_committee_runs_a_sixteen_game_two_arena_day_from_the_console(
        browser: Browser, server: Server, console: Console) -> None:
    c, page = console, console.page
    token = await committee_token(server)

    # 1. Sign in; the event with its name and team handicap limits; eight teams from a CSV.
    await sign_in(c, server, token)
    form = page.locator("#event-form")
    await form.locator("[name=name]").fill(CUP)
    await form.locator("[name=handicap]").fill("8")
    await form.locator("[name=team_min]").fill("4")
    await form.locator("[name=team_max]").fill("8")
    await form.locator("[type=submit]").click()
    await expect(page.locator("#event-summary h3")).to_have_text(CUP)
    await expect(page.locator("#event-summary [data-limits]")).to_have_text("4–8")
    await import_rosters(page, SEEDS, "8 teams and 32 players")
    await expect(page.locator("#players-table tr[data-player=hacienda3]")).to_contain_text("Íñigo Ibáñez")
    await expect(page.locator("#event-summary")).to_contain_text("Hacienda Ibáñez")
    await shot_page(page, "01-event-and-rosters")

    # 2. The draw: an 8-team knockout with a consolation bracket, 7 + 3 games.
    await c.tab("games")
    await make_draw(page, "knockout", True, SEEDS)
    bracket = page.locator("#draw-bracket")
    await expect(bracket.locator(".draw-game")).to_have_count(10)
    await expect(bracket.locator(".draw-round")).to_have_count(5)   # qf, sf, final; consolation sf, final
    await expect(bracket.locator(f".draw-game[data-game='{cup('qf-1')}']")).to_contain_text("Hacienda Ibáñez")
    await expect(bracket.locator(f".draw-game[data-game='{cup('c-sf-1')}']")).to_contain_text("Consolation")

    # 3. The first round set up from the draw: day, time, arena, four officials each.
    for game in (cup("qf-1"), cup("qf-3"), cup("qf-2"), cup("qf-4")):
        await set_up(page, game)
    _, doc = await server.api("GET", f"/api/games/{cup('qf-1')}")
    assert doc["roster"]["schedule"]["officials"] == {
        "umpires": officials_of(cup("qf-1"))[:2], "referee": officials_of(cup("qf-1"))[2],
        "timekeeper": officials_of(cup("qf-1"))[3]}
    assert (doc["view"]["kind"], doc["view"]["arena"], doc["view"]["teams"]["away"]["team"]) == (
        "regular", "main", "hacienda")
    await shot_page(page, "02-draw-first-round-set-up")

    # The second event, run by the admin from the console: a round robin in both arenas.
    admin = await new_console(browser)
    try:
        await north_event(server, admin)
        await order_of_play(server, c, 4, {"main": 2, "north": 2})
        umpire_link = await day_sheet(c)
        await first_round(browser, server, c, admin, umpire_link)
        await later_rounds(browser, server, c, admin)
        assert not admin.errors, admin.errors
    finally:
        await admin.context.close()

    await decisions_export(c)
    await in_names_in_two_languages(browser, server, c)
    assert not [u for u in c.urls if token in u or token[-20:] in u]   # the token: never in a URL


async def north_event(server: Server, admin: Console) -> None:
    """The admin creates the round robin's event, enters four teams (one CSV) and sets its six
    games up from its draw."""
    page = admin.page
    await page.goto(f"{server.http}/committee")
    await page.fill("#token-input", server.admin)
    await page.click("#signin-form [type=submit]")
    await expect(page.locator("body")).to_have_attribute("data-ready", "true")
    await page.select_option("#event-pick", "")                       # "New event…"
    await page.fill("#event-form [name=name]", NORTH_NAME)
    await expect(page.locator("#event-form [name=event]")).to_have_value(NORTH)
    await page.fill("#event-form [name=handicap]", "8")
    await page.click("#event-form [type=submit]")
    await expect(page.locator("#event-summary h3")).to_have_text(NORTH_NAME)
    await import_rosters(page, NORTH_TEAMS, "4 teams")
    await admin.tab("games")
    await make_draw(page, "round_robin", False, NORTH_TEAMS)
    await expect(page.locator("#draw-bracket .draw-game")).to_have_count(6)
    for game in [g for g, *_ in DAY_PLAN if g.startswith(NORTH)]:
        await set_up(page, game)
    await expect(page.locator("#draw-bracket .draw-standings tbody tr")).to_have_count(4)
    await shot_page(page, "03-north-round-robin")


async def order_of_play(server: Server, c: Console, n: int, arenas: dict[str, int]) -> None:
    page = c.page
    await c.tab("order")
    await expect(page.locator("#order-day")).to_have_value(DAY)
    await expect(page.locator("#order-title")).to_contain_text(f"{CUP} · order of play")
    rows = page.locator("#order-arenas tr[data-game]")
    await expect(rows).to_have_count(n)
    shown = await page.locator("#order-arenas .order-arena").evaluate_all(
        "xs => xs.map(x => [x.dataset.arena, x.querySelectorAll('tr[data-game]').length])")
    assert dict(shown) == arenas, shown
    # Each arena's games in time order, with their officials by name.
    for arena in arenas:
        times = await page.locator(f".order-arena[data-arena={arena}] .time").all_inner_texts()
        assert times == sorted(times), times
    first = page.locator(f"#order-arenas tr[data-game='{cup('qf-1')}']")
    await expect(first.locator(".time")).to_have_text("09:00")
    await expect(first).to_contain_text("Aiken Arena – Hacienda Ibáñez")
    u1, u2, ref, tk = officials_of(cup("qf-1"))
    await expect(first.locator(".officials")).to_have_text(
        f"Umpires: {u1}, {u2} · Referee: {ref} · Timekeeper: {tk}")


async def day_sheet(c: Console) -> str:
    """The order of play printed, and the day sheet: a code per named official. Returns the
    link the first game's first umpire's code holds."""
    page = c.page
    await page.emulate_media(media="print")
    await expect(page.locator("#tabs")).to_be_hidden()
    await expect(page.locator("#order-arenas")).to_be_visible()
    await page.screenshot(path=shot("tournament-day-04-order-of-play-printed"), full_page=True)
    await page.emulate_media(media="screen")
    await page.click("#order-sheet-make")
    # (Each read of the sheet is an assertion that waits: the console reads again meanwhile.)
    codes = page.locator("#order-sheet figure.qr")
    await expect(codes).to_have_count(16)
    for g in (cup("qf-1"), cup("qf-2"), cup("qf-3"), cup("qf-4")):
        captions = page.locator(f"#order-sheet .sheet-game[data-game='{g}'] figure.qr figcaption")
        await expect(captions).to_have_text(
            [f"{role.title()} · {who}" for role, who in zip(ROLES, officials_of(g), strict=True)])
    await page.emulate_media(media="print")
    await expect(codes.first).to_be_visible()
    await page.screenshot(path=shot("tournament-day-05-day-sheet-printed"), full_page=True)
    await page.emulate_media(media="screen")
    umpire = page.locator(f"#order-sheet [data-game='{cup('qf-1')}'] figure.qr[data-role=umpire]").first
    await expect(umpire).to_have_attribute("data-official", officials_of(cup("qf-1"))[0])
    return await scan(umpire)


async def first_round(browser: Browser, server: Server, c: Console, admin: Console, link: str) -> None:
    """The umpire's phone pairs from its code and cards a player red in qf-1; the devices play
    the rest of the first round; the bracket and the ledger follow."""
    page = c.page
    assert link.startswith(f"{server.http}/handheld?game={cup('qf-1')}#pair=v1."), link
    phone = Console(ctx := await browser.new_context(**PHONE), await ctx.new_page())
    hh = phone.page
    try:
        await hh.goto(link)
        await expect(hh.locator("[data-conn=device]")).to_have_attribute("data-state", "online")
        assert "pair" not in hh.url
        await start_clock(server, cup("qf-1"))
        await expect(hh.locator(f"[data-player={CARDED}]")).to_contain_text("#3 Íñigo Ibáñez")
        await hh.click(f"[data-player={CARDED}]")
        await hh.click("#sheet [data-card=red1]")
        await hh.click("#sheet .conduct-pick summary")
        await hh.click("#sheet [data-conduct=striking]")
        await hh.click("#sheet [data-act=record]")
        await expect(hh.locator("#outbox .entry[data-state=acked]")).to_have_count(1)
        await expect(hh.locator("#outbox .entry[data-type=card] .sub")).to_contain_text(
            f"Red card to {CARDED_NAME}")
        await hh.screenshot(path=shot("tournament-day-06-handheld-red-card"))
    finally:
        await ctx.close()
    assert not phone.errors, phone.errors
    # The card was given by the official the code named.
    # The report names who gave the card: the official the code was made for.
    _, report = await server.api("GET", f"/games/{cup('qf-1')}/report.json")
    (card,) = [x for x in report["cards"] if x["player"] == CARDED]
    assert card["official"] == officials_of(cup("qf-1"))[0], card

    await play(server, cup("qf-1"), started=True)
    await play(server, cup("qf-3"))
    await play(server, cup("qf-2"), cards=({"player": RESCINDED, "color": "red", "conduct": "striking"},))
    await play(server, cup("qf-4"))
    await c.tab("games")
    await bracket_ended(page, cup("qf-1"), cup("qf-2"), cup("qf-3"), cup("qf-4"))
    _, drawn = await server.api("GET", f"/api/events/{EVENT}/draw")
    # The winners stand in the semifinals, the losers in the consolation: none is proposed out.
    for game, feeds in ((cup("qf-1"), cup("sf-1")), (cup("qf-4"), cup("sf-2"))):
        winner, _ = winner_loser(drawn, game)
        await expect(page.locator(f"#draw-bracket .draw-game[data-game='{feeds}']")).to_contain_text(
            NAME[winner])
    assert winner_loser(drawn, cup("qf-1")) == ("aiken", "hacienda")
    assert winner_loser(drawn, cup("qf-4")) == ("flores", "cedar")
    await expect(page.locator(f"#draw-bracket .draw-game[data-game='{cup('c-sf-1')}']")).to_contain_text(
        "Hacienda Ibáñez")
    await expect(page.locator("#draw-proposals")).to_be_hidden()
    for game in (cup("c-sf-1"), cup("c-sf-2"), cup("sf-1"), cup("sf-2")):
        await set_up(page, game)
    await shot_page(page, "07-bracket-after-the-first-round")

    # The suspensions: owed; the consolation game passes over the red card's (R16), the
    # semifinal would take Delta's; the round robin's game will take Hacienda's.
    await c.tab("ledger")
    await page.fill("#ledger-by", "M. Pérez")
    await page.locator("#ledger-by").dispatch_event("change")
    owed = page.locator(f"#ledger-table tr[data-player={CARDED}]")
    await expect(owed).to_have_attribute("data-status", "pending")
    await expect(owed).to_contain_text("#3 Íñigo Ibáñez")
    await expect(owed).to_contain_text("Hacienda Ibáñez")
    await expect(owed.locator("[data-kind]")).to_have_attribute("data-kind", "suspension")
    await expect(page.locator(f"#previews [data-game='{cup('c-sf-1')}'] [data-empty=true]")).to_be_visible()
    sf1 = page.locator(f"#previews [data-game='{cup('sf-1')}']")
    await expect(sf1.locator(f"li[data-player={RESCINDED}]")).to_contain_text("Ty Brook")
    await admin.tab("ledger")
    await expect(admin.page.locator(f"#previews [data-game='{north('rr1-1')}'] li[data-player={CARDED}]")
                 ).to_contain_text("#3 Íñigo Ibáñez")
    await expect(admin.page.locator(f"#previews [data-game='{north('rr1-2')}'] [data-empty=true]")
                 ).to_be_visible()
    await shot_page(page, "08-ledger-and-previews")
    await shot_page(admin.page, "08-round-robin-previews")

    # Delta's is rescinded: refused without a reason, then struck through with who, when, why.
    row = page.locator(f"#ledger-table tr[data-player={RESCINDED}]")
    await row.locator("[data-act=rescind]").click()
    await page.click("#decision-form [type=submit]")
    await expect(page.locator("#decision-form .field-error")).to_contain_text("Reason")
    await page.fill("#decision-form [name=reason]", "shown to the wrong player: the video shows no strike")
    await page.click("#decision-form [type=submit]")
    await expect(row).to_have_attribute("data-status", "rescinded")
    await expect(row.locator("[data-kind] del")).to_be_visible()
    decided = row.locator("[data-decided=rescinded]")
    await expect(decided).to_contain_text("Rescinded by M. Pérez on ")
    await expect(decided).to_contain_text("shown to the wrong player: the video shows no strike")
    await expect(sf1.locator("[data-empty=true]")).to_be_visible()
    await shot_page(page, "09-rescinded")


async def later_rounds(browser: Browser, server: Server, c: Console, admin: Console) -> None:
    page = c.page
    # The consolation semifinal: Hacienda plays (its player's suspension passes over it), and
    # the scoreboard and the overlay show it, Cedar in the kit chosen for the clash.
    await c.tab("games")
    _, doc = await server.api("GET", f"/api/games/{cup('c-sf-1')}")
    assert doc["roster"]["kits"] == {"away": {"primary": "#f2c200", "secondary": "#2e7d32"}}
    _, doc = await server.api("GET", f"/api/games/{cup('c-sf-2')}")
    assert doc["roster"].get("kits", {}) == {}, doc["roster"].get("kits")   # no clash: no kit
    await start_clock(server, cup("c-sf-1"))
    await displays(browser, server, cup("c-sf-1"))
    await play(server, cup("c-sf-1"), started=True)
    await bracket_ended(page, cup("c-sf-1"))
    await confirm_proposals(page, server, {"cedar": "lost"})
    await c.tab("ledger")
    owed = page.locator(f"#ledger-table tr[data-player={CARDED}]")
    await expect(owed).to_have_attribute("data-status", "pending")     # not served in the consolation
    await expect(owed.locator("[data-applied]")).to_have_attribute("data-applied", "")

    # The round robin's first round: Hacienda's game takes the suspension; the scoreboard says so.
    await play(server, north("rr1-2"))
    await start_clock(server, north("rr1-1"))
    await expect(owed.locator("[data-applied]")).to_have_attribute("data-applied", north("rr1-1"))
    board = await browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        await board.goto(f"{server.http}/scoreboard?game={north('rr1-1')}")
        await expect(board.locator("#event")).to_contain_text(NORTH_NAME)
        await expect(board.locator(f".suspended-row[data-player={CARDED}]")).to_contain_text(
            "#3 Íñigo Ibáñez")
        await board.screenshot(path=shot("tournament-day-11-scoreboard-suspended"))
    finally:
        await board.close()
    await play(server, north("rr1-1"), started=True)
    await expect(owed).to_have_attribute("data-status", "served")
    await shot_page(page, "12-ledger-served-in-the-round-robin")

    # The semifinals and the other consolation semifinal; then the finals.
    await c.tab("games")
    for game in (cup("c-sf-2"), cup("sf-1"), cup("sf-2")):
        await play(server, game)
    await bracket_ended(page, cup("c-sf-2"), cup("sf-1"), cup("sf-2"))
    await confirm_proposals(page, server, {"estancia": "lost", "delta": "lost", "bayou": "lost"})
    _, report = await server.api("GET", f"/games/{cup('sf-1')}/report.json")
    assert report["carried"] == [], report["carried"]     # the rescinded suspension: never taken
    for game in (cup("c-final"), cup("final")):
        await set_up(page, game)
    for game in (north("rr2-1"), north("rr2-2"), cup("c-final"), cup("final"), north("rr3-1"),
                 north("rr3-2")):
        await play(server, game)
    await bracket_ended(page, cup("c-final"), cup("final"))
    await expect(page.locator("#draw-bracket")).to_contain_text("Aiken Arena wins the event")
    await confirm_proposals(page, server, {"hacienda": "lost", "granja": "last_game", "flores": "lost"})
    done = page.locator("#draw-proposals .draw-proposal[data-action=complete]")
    await done.get_by_role("button", name="Confirm").click()
    await expect(page.locator("#draw-proposals")).to_be_hidden()
    _, events = await server.api("GET", "/api/events")
    cup_event = next(e for e in events if e["id"] == EVENT)
    assert sorted(cup_event["eliminated"]) == sorted(set(SEEDS) - {"aiken"}) and cup_event["completed"]
    await expect(page.locator("#draw-form")).to_be_hidden()   # a completed event is drawn no more
    await shot_page(page, "13-bracket-played")

    # Sixteen games, in two arenas, all ended.
    _, games = await server.api("GET", "/api/games")
    day = [g for g in games if g["event"] in (EVENT, NORTH)]
    assert len(day) == 16 and {g["arena"] for g in day} == {"main", "north"}
    assert all(g["status"] == "ended" for g in day), [(g["game"], g["status"]) for g in day]
    await admin.tab("games")
    standings = admin.page.locator("#draw-bracket .draw-standings tbody tr")
    await expect(standings.first.locator("td").nth(1)).to_have_text("3")      # each played three
    await shot_page(admin.page, "14-round-robin-standings")


async def displays(browser: Browser, server: Server, game: str) -> None:
    """A game's scoreboard and overlay, in English then Spanish: the event's name, the teams'
    names, the kit chosen for the clash."""
    ctx = await browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        for lang in ("en", "es"):
            board = await ctx.new_page()
            await board.goto(f"{server.http}/scoreboard?game={game}&lang={lang}")
            await expect(board.locator("#event")).to_contain_text(CUP)
            await expect(board.locator("#home-name")).to_have_text("Hacienda Ibáñez")
            await expect(board.locator("#away-name")).to_have_text("Cedar Ridge")
            await expect(board.locator("#period")).to_contain_text("Period" if lang == "en" else "Período")
            bg = ("(side) => getComputedStyle(document.getElementById(side))"
                  ".getPropertyValue('--team-bg').trim()")
            assert await board.evaluate(bg, "away") == "#f2c200"              # the kit of the clash
            assert await board.evaluate(bg, "home") == "#2f6b34"
            # The red card of qf-1 is not served here: the player is no one's suspended row.
            await expect(board.locator(f".suspended-row[data-player={CARDED}]")).to_have_count(0)
            await board.screenshot(path=shot(f"tournament-day-10-scoreboard-{lang}"))
            overlay = await ctx.new_page()
            await overlay.goto(f"{server.http}/overlay?game={game}&lang={lang}")
            await expect(overlay.locator("#bug-home-name")).to_have_text("HAC")
            await expect(overlay.locator("#bug-away-name")).to_have_text("CED")
            assert await overlay.locator("body").evaluate(
                "n => getComputedStyle(n).getPropertyValue('--away').trim()") == "#f2c200"
            await overlay.screenshot(path=shot(f"tournament-day-10-overlay-{lang}"))
    finally:
        await ctx.close()


async def decisions_export(c: Console) -> None:
    """The decisions' export has the rescind, who and why, and the seven eliminations; the
    reports' export says each game's events in names, in English and in Spanish."""
    page = c.page
    await c.tab("export")
    async with page.expect_download() as dl:
        await page.click("#export-csv")
    reports = list(csv.DictReader(io.StringIO((await (await dl.value).path()).read_text(encoding="utf-8"))))
    assert len({r["game"] for r in reports}) == 10                     # the cup's games
    (red,) = [r for r in reports if r["kind"] == "card.recorded" and r["player"] == CARDED]
    assert red["text_en"].startswith(f"Red card to {CARDED_NAME}"), red
    assert red["text_es"].startswith(f"Tarjeta roja para {CARDED_NAME}"), red
    assert red["official"] == officials_of(cup("qf-1"))[0], red
    async with page.expect_download() as dl:
        await page.click("#export-decisions")
    text = (await (await dl.value).path()).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    kinds = [r["type"] for r in rows]
    assert "committee.rescind" in kinds and kinds.count("team.eliminated") == 7, kinds
    rescind = next(r for r in rows if r["type"] == "committee.rescind")
    assert rescind["by"] == "M. Pérez" and "the video shows no strike" in text, rescind


async def in_names_in_two_languages(browser: Browser, server: Server, c: Console) -> None:
    """The day view, the ledger, the order of play and a game's report, in English then Spanish."""
    page = c.page
    ledger_row = page.locator(f"#ledger-table tr[data-player={RESCINDED}]")
    qf1 = page.locator(f".live-game[data-game='{cup('qf-1')}']")
    for lang in ("en", "es"):
        if lang == "es":
            await page.click("#lang")
        await c.tab("day")
        await expect(page.locator("#day-games .live-game")).to_have_count(10)
        await expect(qf1.locator(".side.home .tname")).to_have_text("Aiken Arena")
        await expect(qf1.locator(".side.away .tname")).to_have_text("Hacienda Ibáñez")
        await expect(qf1.locator(".status")).to_have_text("Ended" if lang == "en" else "Terminado")
        await shot_page(page, f"15-day-{lang}")
        await c.tab("ledger")
        await expect(ledger_row.locator(".st")).to_have_text("Rescinded" if lang == "en" else "Anulada")
        await expect(ledger_row.locator("[data-decided=rescinded]")).to_contain_text(
            "Rescinded by M. Pérez" if lang == "en" else "Anulada por M. Pérez")
        await expect(page.locator(f"#ledger-table tr[data-player={CARDED}] .st")).to_have_text(
            "Served" if lang == "en" else "Cumplida")
        await shot_page(page, f"16-ledger-{lang}")
        await c.tab("order")
        await expect(page.locator("#order-arenas tr[data-game]")).to_have_count(10)
        await expect(page.locator("#order-title")).to_contain_text(
            f"{CUP} · order of play" if lang == "en" else f"{CUP} · orden de juego")
        await expect(page.locator(f"#order-arenas tr[data-game='{cup('final')}']")).to_contain_text(
            "Aiken Arena – Las Flores")
        await shot_page(page, f"17-order-of-play-{lang}")
    report = await browser.new_page()
    try:
        await report.goto(f"{server.http}/games/{cup('qf-1')}/report")
        body = report.locator("body")
        await expect(body).to_contain_text(CUP)
        await expect(body).to_contain_text("Hacienda Ibáñez")
        await expect(body).to_contain_text(f"Red card to {CARDED_NAME}")
        card = report.locator("tr[data-cause]", has_text="Red card")
        await expect(card).to_contain_text(officials_of(cup("qf-1"))[0])      # who gave it, by name
        await expect(report.locator("tr[data-obligation]")).to_contain_text(north("rr1-1"))
        await report.screenshot(path=shot("tournament-day-18-report"), full_page=True)
    finally:
        await report.close()


async def test_a_kit_chosen_for_one_game_is_not_carried_into_the_next(server: Server,
                                                                      console: Console) -> None:
    """The away team's kit for a clash is that game's: the next game set up in the same form,
    with other teams that don't clash, is set up in the teams' own colours (no kit), whether
    its teams are picked by hand or filled from the draw."""
    status, ack = await server.api("POST", "/api/events", {"event": EVENT, "class": "club", "handicap": 8,
                                                           "teams": []})
    assert status == 201, ack
    for team, name, short, primary, secondary, players in TEAMS[:4] + TEAMS[7:]:
        status, ack = await server.api("POST", "/api/teams", {
            "team": team, "name": name, "short": short, "event": EVENT,
            "colors": {"primary": primary, "secondary": secondary}})
        assert status == 201, ack
        for pname, number, _ in players[:3]:
            await server.api("POST", "/api/players", {"player": f"{team}{number}", "name": pname,
                                                      "number": number, "team": team})
    page = console.page
    await sign_in(console, server, await committee_token(server))
    await console.tab("games")
    form = page.locator("#game-form")
    # Hacienda v Cedar: both green; Cedar is offered its colours the other way round.
    await form.locator("[name=home_team]").select_option("hacienda")
    await form.locator("[name=away_team]").select_option("cedar")
    await expect(form.locator("[name=away_kit]")).to_be_checked()
    await form.locator("[name=game]").fill("kit-1")
    await form.locator("[type=submit]").click()
    await expect(form.locator(".form-msg.ok")).to_contain_text("kit-1")
    # Then Aiken v Bayou, picked by hand: no clash, no kit.
    await form.locator("[name=home_team]").select_option("aiken")
    await form.locator("[name=away_team]").select_option("bayou")
    await expect(form.locator("[name=away_kit]")).not_to_be_checked()
    await form.locator("[name=game]").fill("kit-2")
    await form.locator("[type=submit]").click()
    await expect(form.locator(".form-msg.ok")).to_contain_text("kit-2")
    _, one = await server.api("GET", "/api/games/kit-1")
    _, two = await server.api("GET", "/api/games/kit-2")
    assert one["roster"]["kits"] == {"away": {"primary": "#f2c200", "secondary": "#2e7d32"}}
    assert two["roster"].get("kits", {}) == {}, two["roster"].get("kits")
