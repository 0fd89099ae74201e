"""The committee console (clients/web/committee/) in a real Chromium against the real
service, walked as a committee member would: the admin mints a committee token; the
member signs in with it, creates the event, imports the rosters from a CSV (a bad file
first: its rows are listed by line with the reason, and nothing is imported), schedules
two games (a refused one first: the reason beside its field), pairs an umpire's handheld
by following the QR code's link, and revokes another device; the umpire gives a red card
on the handheld and ends the game; the suspension shows in the ledger and in game 2's
preview; the member rescinds it and game 2's preview is empty again. On the way the
scoreboard and the overlay show the registered names, numbers and colours, the day's view
follows both games live, and the exports download with the token in a header (never in a
URL). A second member's save over a registration changed meanwhile is refused with what
changed, and the form shows the current one. Screenshots: artifacts/screenshots/committee-*.png."""

from __future__ import annotations

import json
import re
import struct
import zlib
from datetime import UTC, datetime
from typing import Any

from playwright.async_api import Browser, FilePayload, Page, expect

from ..live.conftest import Server
from .conftest import Console, shot

EVENT = "spring-cup"
G1, G2 = "spring-cup-g1", "spring-cup-g2"
PHONE: dict[str, Any] = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2,
                         "is_mobile": True, "has_touch": True}

HEADER = "team,team_name,short,primary,secondary,player,player_name,number,handicap\n"
TEAMS = [("aiken", "Aiken Arena", "AIK", "#1f4fb4", "#ffffff"),
         ("wellington", "Wellington Blue", "WEL", "#0b3d91", "#f2c200"),
         ("palm", "Palm Beach", "PBP", "#b3471b", "#ffffff"),
         ("houston", "Houston", "HOU", "#7a1f5c", "#e8e8e8")]
PLAYERS = {"aiken": [("ruiz", "Martín Ruiz", 1, 2), ("ortega", "Ignacio Ortega", 2, 3),
                     ("mahoney", "Kate Mahoney", 3, 1), ("diaz", "José Díaz", 4, 2)],
           "wellington": [("beck", "Sam Beck", 1, 2), ("salas", "Tomás Salas", 2, 3),
                          ("kerr", "Ana Kerr", 3, 1), ("frey", "Lou Frey", 4, 0)],
           "palm": [("nunez", "Iñaki Núñez", 1, 2), ("grant", "Eli Grant", 2, 3),
                    ("soto", "Raúl Soto", 3, 1), ("moss", "Kit Moss", 4, 0)],
           "houston": [("vega", "Lucía Vega", 1, 2), ("brook", "Ty Brook", 2, 3),
                       ("lane", "Jo Lane", 3, 1), ("cruz", "Andrés Cruz", 4, 0)]}


def good_csv() -> bytes:
    rows = [f"{t},{name},{short},{p1},{p2},{pid},{pname},{num},{hcp}"
            for t, name, short, p1, p2 in TEAMS for pid, pname, num, hcp in PLAYERS[t]]
    return (HEADER + "\n".join(rows) + "\n").encode()


def bad_csv() -> bytes:
    rows = ["aiken,Aiken Arena,AIK,#1f4fb4,#ffffff,ruiz,Martín Ruiz,1,2",
            "aiken,Aiken Arena,AIKENS,#1f4fb4,#ffffff,ortega,Ignacio Ortega,2,3",     # short: 6 letters
            "wellington,Wellington Blue,WEL,blue,#f2c200,beck,Sam Beck,1,2",          # not a colour
            "wellington,Wellington Blue,WEL,#0b3d91,#f2c200,salas,Tomás Salas,many,3"]  # not a number
    return (HEADER + "\n".join(rows) + "\n").encode()


async def shot_page(page: Page, name: str) -> None:
    await page.evaluate("scrollTo(0, 0)")
    await page.screenshot(path=shot(f"committee-{name}"), full_page=True)


async def committee_token(server: Server, device: str = "htc-1") -> str:
    """The host committee's token for the event, as M. Pérez at ``device``."""
    return await server.committee_token(EVENT, device=device, official="M. Pérez")


async def new_event(server: Server) -> None:
    status, _ = await server.api("POST", "/api/events", {"event": EVENT, "class": "club", "handicap": 8,
                                                         "teams": []})
    assert status == 201


async def sign_in_admin(page: Page, server: Server) -> None:
    """The admin token (as `arena-stream serve` writes it) signs the console in."""
    await page.goto(f"{server.http}/committee")
    await page.fill("#token-input", server.admin)
    await page.click("#signin-form [type=submit]")
    await expect(page.locator("body")).to_have_attribute("data-ready", "true")


async def import_rosters(page: Page, csv: bytes) -> None:
    await page.set_input_files("#csv-form [name=file]", files=[
        FilePayload(name="rosters.csv", mimeType="text/csv", buffer=csv)])
    await page.click("#csv-form [type=submit]")


async def sign_in(c: Console, server: Server, token: str, header: str = EVENT) -> None:
    page = c.page
    await page.goto(f"{server.http}/committee")
    await expect(page.locator("#signin")).to_be_visible()
    await page.fill("#token-input", "v1.not-a-token.x")
    await page.click("#signin-form [type=submit]")
    await expect(page.locator("#signin-form .field-error")).to_contain_text(
        "Committee token: the token was not accepted")
    await shot_page(page, "01-sign-in-refused")
    await page.fill("#token-input", token)
    await page.click("#signin-form [type=submit]")
    await expect(page.locator("#console")).to_be_visible()
    await expect(page.locator("body")).to_have_attribute("data-ready", "true")
    await expect(page.locator("#event-name")).to_have_text(header)  # the event's name, once it has one


async def test_the_committee_runs_a_day_from_the_console(browser: Browser, server: Server,
                                                        console: Console) -> None:
    c, page = console, console.page
    token = await committee_token(server)
    await sign_in(c, server, token)

    # 1. The event, then the rosters: a bad CSV first (nothing imported), then the good one.
    await page.fill("#event-form [name=name]", "Copa de Otoño")  # what the displays call it
    await expect(page.locator("#event-form [name=event]")).to_have_value(EVENT)  # the token's event
    await page.select_option("#event-form [name=class]", "club")
    await page.fill("#event-form [name=handicap]", "8")
    await shot_page(page, "02-event-form")
    await page.click("#event-form [type=submit]")
    await expect(page.locator("#event-summary")).to_be_visible()
    await expect(page.locator("#event-summary h3")).to_have_text("Copa de Otoño")
    await expect(page.locator("#event-summary")).to_contain_text(EVENT)
    await expect(page.locator("#event-name")).to_have_text("Copa de Otoño")
    await expect(page.locator("#csv-template")).to_have_attribute("href", "/api/rosters/template.csv")

    await page.set_input_files("#csv-form [name=file]", files=[
        FilePayload(name="rosters.csv", mimeType="text/csv", buffer=bad_csv())])
    await page.click("#csv-form [type=submit]")
    refused = page.locator("#csv-result [data-result=refused]")
    await expect(refused).to_contain_text("Nothing was imported")
    lines = page.locator("#csv-result table.csv-errors tbody tr")
    await expect(lines).to_have_count(3)
    assert await lines.evaluate_all("rows => rows.map(r => Number(r.dataset.line))") == [3, 4, 5]
    await shot_page(page, "03-csv-refused")
    status, teams = await server.api("GET", "/api/teams", token=token)
    assert status == 200 and teams == []                                   # nothing imported

    await page.set_input_files("#csv-form [name=file]", files=[
        FilePayload(name="rosters.csv", mimeType="text/csv", buffer=good_csv())])
    await page.click("#csv-form [type=submit]")
    await expect(page.locator("#csv-result [data-result=imported]")).to_contain_text("4 teams and 16 players")
    await expect(page.locator("#teams-table tbody tr")).to_have_count(4)
    await expect(page.locator("#players-table tbody tr")).to_have_count(16)
    await expect(page.locator("#players-table tr[data-player=diaz]")).to_contain_text("José Díaz")
    await expect(page.locator("#teams-table tr[data-team=aiken] .short")).to_have_text("AIK")
    await shot_page(page, "04-rosters-imported")

    # 2. Two games; the same team on both sides first: refused, the reason beside the lineup.
    await c.tab("games")
    form = page.locator("#game-form")
    await page.fill("#game-form [name=game]", G1)
    await page.select_option("#game-form [name=home_team]", "aiken")
    await page.select_option("#game-form [name=away_team]", "aiken")
    await page.click("#game-form [type=submit]")
    error = form.locator("[data-side=home] .field-error[data-code=duplicate_player]")   # beside the lineup
    await expect(error).to_contain_text(
        "Lineup (3): a player is listed twice. Pick each player once")
    await expect(error).to_contain_text("A3")
    await shot_page(page, "05-game-refused")
    await page.select_option("#game-form [name=away_team]", "wellington")
    lineup = form.locator("[data-side=home] select.lineup")
    assert await lineup.evaluate_all("s => s.map(x => x.value)") == ["ruiz", "ortega", "mahoney"]
    await expect(lineup.nth(1).locator("option:checked")).to_have_text("#2 Ignacio Ortega")
    await expect(form.locator("[data-side=home] .subs input[value=diaz]")).to_be_checked()
    await page.click("#game-form [type=submit]")
    await expect(form.locator(".form-msg.ok")).to_contain_text(G1)
    await page.fill("#game-form [name=game]", G2)
    await page.select_option("#game-form [name=home_team]", "aiken")
    await page.select_option("#game-form [name=away_team]", "palm")
    await page.select_option("#game-form [name=kind]", "regular")
    await page.fill("#game-form [name=handicap]", "8")
    await page.click("#game-form [type=submit]")
    await expect(form.locator(".form-msg.ok")).to_contain_text(G2)
    await expect(page.locator("#games-table tbody tr")).to_have_count(2)
    await shot_page(page, "06-games-scheduled")

    # 3. Pair the umpire's handheld by the QR code's link; revoke a referee's device.
    await c.tab("pair")
    card = page.locator(f"details.game-pair[data-game={G1}]")
    await card.locator("[name=official]").fill("A. Rivera")
    await card.locator("button[data-role=umpire]").click()
    qr = card.locator("figure.qr[data-role=umpire]")
    await expect(qr.locator("img")).to_be_visible()
    link = await qr.locator("a.pair-link").get_attribute("href")
    assert link and link.startswith(f"{server.http}/handheld?game={G1}#pair=v1.")
    await card.locator("button[data-role=referee]").click()
    await expect(card.locator("figure.qr[data-role=referee] img")).to_be_visible()
    await shot_page(page, "07-pairing-codes")

    phone = await browser.new_context(**PHONE)
    try:
        hh = await phone.new_page()
        hh_errors: list[str] = []
        hh.on("pageerror", lambda e: hh_errors.append(str(e)))
        await hh.goto(link)
        await expect(hh.locator("[data-conn=device]")).to_have_attribute("data-state", "online")
        assert "pair" not in hh.url                                        # the fragment is gone
        await card.locator(".row-head button").click()                     # refresh the devices
        rows = card.locator(".devices tbody tr")
        await expect(rows).to_have_count(2)
        await expect(card.locator(".devices tr[data-connected='1']")).to_contain_text("A. Rivera")
        referee = card.locator(".devices tr", has_text="Referee")
        await referee.locator("[data-act=revoke]").click()
        await expect(card.locator(".devices tr[data-revoked=true]")).to_have_count(1)
        await shot_page(page, "08-devices")

        # The game is played: the timekeeper starts the clock, the umpire gives a red card.
        tk = await server.device("timekeeper", G1)
        try:
            await tk.send({"type": "clock.start", "game": G1})
        finally:
            await tk.close()
        await expect(hh.locator("[data-player=ortega]")).to_be_visible()
        await expect(hh.locator("[data-player=ortega]")).to_contain_text("Ortega")
        await hh.click("[data-player=ortega]")              # player → colour → record
        await hh.click("#sheet [data-card=red1]")
        await hh.click("#sheet .conduct-pick summary")       # the conduct, named at once here
        await hh.click("#sheet [data-conduct=striking]")
        await hh.click("#sheet [data-act=record]")
        await expect(hh.locator("#outbox .entry[data-state=acked]")).to_have_count(1)
        await hh.screenshot(path=shot("committee-09-handheld-red-card"))

        # 4. The day, live: both games, names and colours, the sent-off player.
        await c.tab("day")
        tile = page.locator(f".live-game[data-game={G1}]")
        await expect(tile).to_have_attribute("data-status", "live")
        await expect(tile.locator(".side.home .tname")).to_have_text("Aiken Arena")
        await expect(tile.locator(".box li[data-player=ortega]")).to_contain_text("#2 Ignacio Ortega")
        game2 = page.locator(f".live-game[data-game={G2}]")
        await expect(game2).to_have_attribute("data-status", "scheduled")
        await shot_page(page, "10-run-the-day")
        await displays_show_names(browser, server, tile)

        # The umpire ends game 1: the red card's suspension is derived.
        await hh.click("#gamebar [data-act=end]")
        await hh.click("#sheet [data-act=record]")
        await expect(hh.locator("#outbox .entry[data-state=acked]")).to_have_count(2)
        assert not hh_errors, hh_errors
    finally:
        await phone.close()
    await expect(tile).to_have_attribute("data-status", "ended")

    # 5. The ledger and game 2's preview; the committee rescinds the suspension.
    await c.tab("ledger")
    await page.click("#ledger-refresh")
    owed = page.locator("#ledger-table tr[data-player=ortega]")
    await expect(owed).to_have_attribute("data-status", "pending")
    await expect(owed.locator("[data-kind]")).to_have_attribute("data-kind", "suspension")
    await expect(owed).to_contain_text(G1)
    await expect(owed).to_contain_text("#2 Ignacio Ortega")
    preview = page.locator(f"#previews [data-game={G2}]")
    await expect(preview.locator("li[data-player=ortega]")).to_contain_text("Suspension")
    await shot_page(page, "11-ledger-suspension")

    await owed.locator("[data-act=rescind]").click()
    await page.click("#decision-form [type=submit]")                      # no reason: refused
    await expect(page.locator("#decision-form .field-error")).to_be_visible()
    await page.fill("#decision-form [name=reason]", "mistaken identity: the video shows no strike")
    await shot_page(page, "12-rescind")
    await page.click("#decision-form [type=submit]")
    await expect(page.locator("#ledger-table tr[data-player=ortega][data-status=pending]")).to_have_count(0)
    await expect(owed).to_have_attribute("data-status", "rescinded")   # still listed, struck through
    await expect(owed.locator("[data-decided=rescinded]")).to_contain_text("mistaken identity")
    await expect(preview.locator("[data-empty=true]")).to_be_visible()
    await shot_page(page, "13-rescinded")
    status, after = await server.api("GET", f"/api/games/{G2}/preview", token=token)
    assert status == 200 and after["applies"] == []

    # 6. Exports: the day's CSV and the log need the token, sent in a header.
    await c.tab("export")
    async with page.expect_download() as dl:
        await page.click("#export-csv")
    csv_path = await (await dl.value).path()
    text = csv_path.read_text(encoding="utf-8")
    assert text.startswith("game,") and G1 in text
    async with page.expect_download() as dl:
        await page.click("#export-log")
    log = (await (await dl.value).path()).read_text(encoding="utf-8")
    records = [json.loads(line) for line in log.splitlines()]
    types = [r["type"] for r in records]
    assert "Ignacio Ortega" in {r.get("name") for r in records}, types
    assert types.count("game.setup") == 2 and "card" in types and "game.end" in types, types
    async with page.expect_download() as dl:
        await page.click("#export-decisions")
    decisions = (await (await dl.value).path()).read_text(encoding="utf-8")
    assert decisions.startswith("type,id,at,by,") and "committee.rescind" in decisions, decisions
    assert "mistaken identity: the video shows no strike" in decisions
    report = page.locator(f"#export-table tr[data-game={G1}] a[data-link=report-html]")
    await expect(report).to_have_attribute("href", f"/games/{G1}/report?lang=en")
    await shot_page(page, "14-export")

    # Spanish, on a tablet as on a laptop; the printable report in Spanish too.
    await page.click("#lang")
    await expect(report).to_have_attribute("href", f"/games/{G1}/report?lang=es")
    await expect(page.locator("#tabs [data-tab=ledger]")).to_contain_text("Registro de suspensiones")
    await c.tab("day")
    await expect(page.locator(f".live-game[data-game={G1}] .status")).to_have_text("Terminado")
    await shot_page(page, "15-spanish")
    await page.set_viewport_size({"width": 1440, "height": 900})
    await c.tab("event")
    await shot_page(page, "16-laptop")

    assert not [u for u in c.urls if token in u or token[-20:] in u]   # never in a URL
    # The event's log holds the committee's decision on an obligation from one of its games.
    assert "committee.rescind" in types, types


async def displays_show_names(browser: Browser, server: Server, tile: Any) -> None:
    """The scoreboard and the overlay of game 1 show the registered names, numbers and colours."""
    ctx = await browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        board = await ctx.new_page()
        await board.goto(f"{server.http}/scoreboard?game={G1}")
        await expect(board.locator("#home-name")).to_have_text("Aiken Arena")
        await expect(board.locator("#away-name")).to_have_text("Wellington Blue")
        await expect(board.locator(".sentoff-row[data-player=ortega]")).to_contain_text("#2 Ignacio Ortega")
        assert await board.locator("#home").evaluate(
            "n => getComputedStyle(n).getPropertyValue('--team-bg').trim()") == "#1f4fb4"
        await board.screenshot(path=shot("committee-10a-scoreboard"))
        overlay = await ctx.new_page()
        await overlay.goto(f"{server.http}/overlay?game={G1}")
        await expect(overlay.locator("#bug-home-name")).to_have_text("AIK")
        await expect(overlay.locator("#bug-away-name")).to_have_text("WEL")
        await expect(overlay.locator("#box")).to_contain_text("IGNACIO ORTEGA")
        assert await overlay.locator("body").evaluate(
            "n => getComputedStyle(n).getPropertyValue('--home').trim()") == "#1f4fb4"
        await overlay.screenshot(path=shot("committee-10b-overlay"))
    finally:
        await ctx.close()


async def test_a_second_members_save_is_refused_with_what_changed(browser: Browser, server: Server,
                                                                  console: Console) -> None:
    c, page = console, console.page
    token = await committee_token(server)
    status, _ = await server.api("POST", "/api/events", {"event": EVENT, "class": "club", "handicap": 8,
                                                         "teams": []}, token=token)
    assert status == 201
    status, _ = await server.api("POST", "/api/teams", {
        "team": "aiken", "name": "Aiken Arena", "short": "AIK", "event": EVENT,
        "colors": {"primary": "#1f4fb4", "secondary": "#ffffff"}, "revision": 0}, token=token)
    assert status == 201
    await sign_in(c, server, token)
    row = page.locator("#teams-table tr[data-team=aiken]")
    await row.locator("button").click()
    await expect(page.locator("#team-form [name=name]")).to_have_value("Aiken Arena")

    # Another member renames the team meanwhile.
    status, _ = await server.api("POST", "/api/teams", {
        "team": "aiken", "name": "Aiken Polo Club", "short": "APC", "event": EVENT,
        "colors": {"primary": "#1f4fb4", "secondary": "#ffffff"}, "revision": 1}, token=token)
    assert status == 201

    await page.fill("#team-form [name=short]", "AKN")
    await page.click("#team-form [type=submit]")
    msg = page.locator("#team-form .form-msg.error")
    await expect(msg).to_have_attribute("data-code", "stale_registration")
    await expect(msg).to_contain_text("Aiken Polo Club")
    await expect(page.locator("#team-form [name=name]")).to_have_value("Aiken Polo Club")   # the current one
    await expect(page.locator("#team-form [name=short]")).to_have_value("APC")
    await shot_page(page, "17-stale-registration")
    status, doc = await server.api("GET", "/api/teams/aiken", token=token)
    assert status == 200 and doc["current"]["name"] == "Aiken Polo Club" and doc["current"]["revision"] == 2

    # A logo too large is refused beside its field, and nothing is saved.
    await page.fill("#team-form [name=short]", "AKN")
    await page.set_input_files("#team-form [name=logo]", files=[
        FilePayload(name="big.png", mimeType="image/png", buffer=png(70 * 1024))])
    await page.click("#team-form [type=submit]")
    await expect(page.locator("#team-form .field-error[data-code=too_large]")).to_be_visible()
    await expect(row.locator(".short")).to_have_text("APC")

    # Saved again from the current revision, with a logo that fits: accepted.
    await page.set_input_files("#team-form [name=logo]", files=[
        FilePayload(name="aiken.png", mimeType="image/png", buffer=png())])
    await page.click("#team-form [type=submit]")
    await expect(page.locator("#team-form .form-msg.ok")).to_be_visible()
    await expect(row.locator(".short")).to_have_text("AKN")
    await expect(row.locator("img.logo")).to_have_attribute("src", re.compile(r"^/logos/[0-9a-f]{64}$"))
    await shot_page(page, "18-team-saved-with-logo")
    status, doc = await server.api("GET", "/api/teams/aiken", token=token)
    assert doc["current"]["short"] == "AKN" and doc["current"]["revision"] == 3 and doc["current"]["logo"]


def png(pad: int = 0) -> bytes:
    """A 1×1 PNG (an image the service takes by its magic bytes), with ``pad`` bytes of text chunk."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    text = chunk(b"tEXt", b"pad\x00" + b"x" * pad) if pad else b""
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + text
            + chunk(b"IDAT", zlib.compress(b"\x00\x1f\x4f\xb4")) + chunk(b"IEND", b""))


async def test_an_admin_signs_in_to_the_event_listed_and_may_pick_another(server: Server,
                                                                          console: Console) -> None:
    """The admin token (what `arena-stream serve` writes) runs the console too: it opens on the
    last event listed, its games in the day's view, and the picker switches events."""
    for event in ("autumn-cup", EVENT):
        status, _ = await server.api("POST", "/api/events", {"event": event, "class": "club", "handicap": 8,
                                                             "teams": []})
        assert status == 201
    await server.setup_game(G1, arena="main", event=EVENT)
    page = console.page
    await page.goto(f"{server.http}/committee")
    await page.fill("#token-input", server.admin)
    await page.click("#signin-form [type=submit]")
    await expect(page.locator("#event-pick")).to_have_value(EVENT)
    await console.tab("day")
    await expect(page.locator("#day-section")).to_contain_text(G1)
    await page.select_option("#event-pick", "autumn-cup")
    await expect(page.locator("#day-section")).not_to_contain_text(G1)


async def test_the_day_view_shows_a_late_card_in_the_game_it_suspends_from(server: Server,
                                                                           console: Console) -> None:
    """R9: a post-game red of G1 that reaches the log while G2 (the same teams') is played:
    the day view puts the alert on G2's card at once, from the feed, for the committee to
    decide; G2's score and box are unchanged."""
    status, _ = await server.api("POST", "/api/events", {"event": EVENT, "class": "club", "handicap": 8,
                                                         "teams": []})
    assert status == 201
    teams = {"home": {"team": f"{G1}-home", "players": ["h1", "h2", "h3"]},
             "away": {"team": f"{G1}-away", "players": ["a1", "a2", "a3"]}}
    await server.setup_game(G1, arena="main", event=EVENT)
    await server.setup_game(G2, arena="main", event=EVENT, teams=teams)
    tk = await server.device("timekeeper", G1, name="tk-day")
    tk2 = await server.device("timekeeper", G2, name="tk-day-2")
    ump = await server.device("umpire", G1, name="ump-day")
    try:
        await tk.send({"type": "clock.start", "game": G1})
        await tk.send({"type": "game.end", "game": G1})
        await tk2.send({"type": "clock.start", "game": G2})
        page = console.page
        await page.goto(f"{server.http}/committee")
        await page.fill("#token-input", server.admin)
        await page.click("#signin-form [type=submit]")
        await console.tab("day")
        g2 = page.locator(f"#day-games [data-game='{G2}']")
        await expect(g2).to_have_attribute("data-status", "live")
        await expect(g2.locator(".alert")).to_have_count(0)
        ack = await ump.send({"type": "postgame.card", "game": G1, "player": "h2", "level": "red"})
        assert ack["type"] == "ack"
        told = g2.locator(".alert[data-code=next_game_begun]")
        await expect(told).to_contain_text(f"from game {G1}, recorded only now")
        await expect(page.locator(f"#day-games [data-game='{G1}'] .alert[data-code=next_game_begun]")
                     ).to_have_count(0)
        await shot_page(page, "11-late-card-in-the-game-under-way")
    finally:
        for dev in (tk, tk2, ump):
            await dev.close()


async def game_one_ended(server: Server, card: dict[str, Any], *, before_end: bool = False) -> None:
    """Event spring-cup (Club, handicap 8); game 1 played and ended; the umpire's ``card``
    sent before the end (``before_end``) or after it (a post-game card)."""
    status, _ = await server.api("POST", "/api/events", {"event": EVENT, "class": "club", "handicap": 8,
                                                         "teams": []})
    assert status == 201
    await server.setup_game(G1, arena="main", event=EVENT)
    tk = await server.device("timekeeper", G1, name="tk-1")
    ump = await server.device("umpire", G1, name="ump-1")
    try:
        await tk.send({"type": "clock.start", "game": G1})
        if before_end:
            assert (await ump.send(card))["type"] == "ack"
        await tk.send({"type": "game.end", "game": G1})
        if not before_end:
            assert (await ump.send(card))["type"] == "ack"
    finally:
        await tk.close()
        await ump.close()


async def test_a_decrease_shows_who_why_and_that_it_goes_beyond_rule_14(server: Server,
                                                                        console: Console) -> None:
    """R6 grants an increase, not a decrease: the ledger's decrease dialog says so, and the
    obligation decreased keeps, on its row, what it owed before, who decided and why."""
    await game_one_ended(server, {"type": "postgame.card", "game": G1, "player": "h2", "level": "3y"})
    page = console.page
    await page.goto(f"{server.http}/committee")
    await page.fill("#token-input", server.admin)
    await page.click("#signin-form [type=submit]")
    await console.tab("ledger")
    await page.click("#ledger-refresh")
    row = page.locator("#ledger-table tr[data-player=h2]")
    await expect(row).to_have_attribute("data-status", "pending")
    await row.locator("[data-act=decrease]").click()
    await expect(page.locator("#decision-title")).to_contain_text("beyond Rule 14")
    await page.fill("#decision-form [name=owed]", "2:00")
    await page.fill("#decision-form [name=reason]", "appeal upheld: one foul was not his")
    await page.click("#decision-form [type=submit]")
    decided = row.locator("[data-decided=decreased]")
    await expect(decided).to_contain_text("Decreased from 4:00 to 2:00 by")
    await expect(decided).to_contain_text("appeal upheld: one foul was not his (beyond Rule 14)")
    status, owed = await server.api("GET", "/api/players/h2/obligations")
    assert status == 200
    (ob,) = owed["obligations"]
    assert (ob["owed_ms"], ob["decreased"]["from_ms"], ob["decreased"]["reason"]) == (
        120_000, 240_000, "appeal upheld: one foul was not his")


async def test_a_rescinded_suspension_stays_struck_through_with_who_when_and_why(server: Server,
                                                                                 console: Console) -> None:
    """A rescind leaves the suspension in the ledger, struck through, with who rescinded it,
    when and why, in English and in Spanish; and nothing is owed any more."""
    await game_one_ended(server, {"type": "card", "game": G1, "player": "h2", "color": "red",
                                  "conduct": "striking"}, before_end=True)
    page = console.page
    await page.goto(f"{server.http}/committee")
    await page.fill("#token-input", await committee_token(server))
    await page.click("#signin-form [type=submit]")
    await console.tab("ledger")
    await page.fill("#ledger-by", "M. Pérez")
    await page.click("#ledger-refresh")
    row = page.locator("#ledger-table tr[data-player=h2]")
    await expect(row).to_have_attribute("data-status", "pending")
    await row.locator("[data-act=rescind]").click()
    await page.fill("#decision-form [name=reason]", "shown to the wrong player")
    await page.click("#decision-form [type=submit]")

    await expect(row).to_have_attribute("data-status", "rescinded")
    struck = row.locator("[data-kind] del")
    await expect(struck).to_have_text("Suspension")
    # (Retried: the ledger's live feed may draw the row again meanwhile.)
    await expect(struck).to_have_css("text-decoration-line", "line-through")
    decided = row.locator("[data-decided=rescinded]")
    await expect(decided).to_contain_text("Rescinded by M. Pérez on ")
    await expect(decided).to_contain_text(": shown to the wrong player")
    await expect(row.locator("[data-act]")).to_have_count(0)        # nothing more to decide
    status, owed = await server.api("GET", "/api/players/h2/obligations")
    assert status == 200
    (ob,) = owed["obligations"]
    assert ob["status"] == "rescinded" and ob["rescinded"]["by"] == "M. Pérez"
    when = await decided.locator("time").get_attribute("datetime")
    assert when is not None and when.startswith(iso_prefix(ob["rescinded"]["at"]))
    await shot_page(page, "ledger-rescinded-struck-through")

    await page.click("#lang")
    await expect(row.locator(".st")).to_have_text("Anulada")
    await expect(decided).to_contain_text("Anulada por M. Pérez el ")
    await expect(decided).to_contain_text(": shown to the wrong player")
    await expect(struck).to_have_text("Suspensión")
    await shot_page(page, "ledger-rescinded-spanish")


def iso_prefix(ms: int) -> str:
    """The ISO 8601 (UTC) of ``ms`` to the second, as a page's ``toISOString`` starts."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S")
