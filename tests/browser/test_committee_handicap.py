"""Goals on handicap in the committee console, in a real Chromium against the real service
(docs/clients.md, the console's paragraph): the committee sets up a handicap event with the
USPA arena matrix from the event form, imports players with their handicaps, and the games
form previews what a 3-period game will start with ("Aiken Arena 7 v Wellington Blue 10 →
Aiken Arena starts 1½–0"); the day view then shows 1½ with its mark; the committee changes
the goals with who and why before the game begins (a missing reason is refused in words),
works them out again, and once a handheld starts the clock the control is disabled with the
reason and a change is refused in words, in English and Spanish; the decisions file lists
the changes. The draw shows a played game's score and the standings with halves.
Screenshots: artifacts/screenshots/committee-hcp-*.png."""

from __future__ import annotations

import pytest
from playwright.async_api import Page, expect

from ..live.conftest import Server
from .conftest import Console
from .test_committee import EVENT, committee_token, import_rosters, shot_page

pytestmark = pytest.mark.browser

GAME = "spring-cup-h1"
HEADER = "team,team_name,short,primary,secondary,player,player_name,number,handicap\n"
# Aiken's first three (its starters) add up to 7, Wellington's to 10: 3 goals of difference.
ROSTER = {("aiken", "Aiken Arena", "AIK", "#1f4fb4", "#ffffff"):
          [("ruiz", 3), ("ortega", 2), ("mahoney", 2), ("diaz", 0)],
          ("wellington", "Wellington Blue", "WEL", "#c8102e", "#f2c200"):
          [("beck", 4), ("salas", 3), ("kerr", 3), ("frey", 1)]}
USPA = [{"periods": 2, "goals_per_goal": 0.5}, {"periods": 3, "goals_per_goal": 0.5},
        {"periods": 4, "goals_per_goal": 1}]


def roster_csv() -> bytes:
    rows = [f"{t},{name},{short},{p1},{p2},{pid},{pid.title()},{n},{hcp}"
            for (t, name, short, p1, p2), players in ROSTER.items()
            for n, (pid, hcp) in enumerate(players, start=1)]
    return (HEADER + "\n".join(rows) + "\n").encode()


async def sign_in(page: Page, server: Server) -> None:
    await page.goto(f"{server.http}/committee")
    await page.fill("#token-input", await committee_token(server))
    await page.click("#signin-form [type=submit]")
    await expect(page.locator("body")).to_have_attribute("data-ready", "true")


async def test_a_committee_runs_a_handicap_event_from_the_console(server: Server, console: Console) -> None:
    page = console.page
    await sign_in(page, server)

    # 1. The event, with the USPA arena matrix as the form fills it in.
    form = page.locator("#event-form")
    await form.locator("[name=name]").fill("Handicap Cup")
    await expect(form.locator(".matrix")).to_be_hidden()              # open / on the flat unless chosen
    await form.locator("[name=hcp_mode][value=matrix]").check()
    rows = form.locator(".matrix-table tbody tr")
    await expect(rows).to_have_count(3)
    await expect(rows.nth(1).locator(".rate-says")).to_have_text("= ½")
    await form.locator("[data-act=add-row]").click()                  # a row added, then taken away
    await expect(rows).to_have_count(4)
    await rows.nth(3).locator("[data-act=remove-row]").click()
    await expect(rows).to_have_count(3)
    await shot_page(page, "hcp-01-event-matrix")
    await form.locator("[type=submit]").click()
    summary = page.locator("#event-summary")
    await expect(summary).to_contain_text(
        "Handicap event: 2 periods ½ · 3 periods ½ · 4 periods 1 per goal of difference")
    status, events = await server.api("GET", "/api/events")
    assert status == 200
    assert next(e for e in events if e["id"] == EVENT)["handicap_matrix"] == USPA

    # 2. The players with their handicaps; a 3-period game previewed, then set up.
    await import_rosters(page, roster_csv())
    await expect(page.locator("#csv-result [data-result=imported]")).to_be_visible()
    await page.click("#tabs [data-tab=games]")
    games = page.locator("#game-form")
    await games.locator("[name=game]").fill(GAME)
    await games.locator("[name=home_team]").select_option("aiken")
    await games.locator("[name=away_team]").select_option("wellington")
    preview = games.locator(".hcp-preview")
    await expect(preview).to_have_text("Aiken Arena 7 v Wellington Blue 10 → Aiken Arena starts 3–0 "
                                       "(1 a goal of difference, 4 periods)")
    await games.locator("[name=periods]").fill("3")
    await expect(preview).to_have_text("Aiken Arena 7 v Wellington Blue 10 → Aiken Arena starts 1½–0 "
                                       "(½ a goal of difference, 3 periods)")
    await games.locator("[name=hcp_away]").fill("1")                  # entered: as the committee says
    await expect(preview).to_have_text("As entered by the committee: the game starts 0–1")
    await games.locator("[name=hcp_away]").fill("")                   # left empty: worked out again
    await expect(preview).to_contain_text("starts 1½–0")
    await shot_page(page, "hcp-02-game-preview")
    await games.locator("[type=submit]").click()
    await expect(games.locator(".form-msg.ok")).to_be_visible()
    status, doc = await server.api("GET", f"/api/games/{GAME}")
    assert doc["view"]["score"] == {"home": 1.5, "away": 0}
    assert doc["view"]["goals_on_handicap"]["source"] == "matrix"

    row = page.locator(f"#games-table tr[data-game={GAME}]")
    await expect(row.locator("td.num")).to_contain_text("1½–0")
    await expect(row.locator(".hcp-cell")).to_contain_text("Aiken Arena 1½ · worked out from 7 v 10")

    # 3. The day view: the score that includes them, and their mark.
    await page.click("#tabs [data-tab=day]")
    tile = page.locator(f"#day-games [data-game={GAME}]")
    await expect(tile.locator("[data-score=home]")).to_have_text("1½")
    await expect(tile.locator("[data-score=away]")).to_have_text("0")
    await expect(tile.locator("[data-hcp=home]")).to_have_text("incl. 1½ hcp")
    await expect(tile.locator("[data-hcp=away]")).to_have_count(0)
    await shot_page(page, "hcp-03-day-view")

    # 4. Changed before the game begins: who (the token's official) and why (required).
    await page.click("#tabs [data-tab=games]")
    await row.locator("[data-act=handicap]").click()
    change = page.locator("#handicap-form")
    await expect(change).to_be_visible()
    await expect(change.locator("[name=by]")).to_have_value("M. Pérez")
    await expect(change.locator("[name=home]")).to_have_value("1.5")
    await change.locator("[name=home]").fill("2.5")
    await change.locator("[type=submit]").click()
    await expect(change.locator(".field-error")).to_have_text("Reason: Give the reason for the change.")
    status, doc = await server.api("GET", f"/api/games/{GAME}")
    assert doc["view"]["score"]["home"] == 1.5                      # nothing sent
    await change.locator("[name=reason]").fill("Ruiz plays off 5 in arena")
    await change.locator("[type=submit]").click()
    await expect(change.locator(".form-msg.ok")).to_have_text(f"{GAME} now starts 2½–0.")
    await expect(row.locator(".hcp-cell")).to_contain_text("Aiken Arena 2½ · set by the committee")
    await shot_page(page, "hcp-04-changed")
    await page.click("#tabs [data-tab=day]")
    await expect(tile.locator("[data-score=home]")).to_have_text("2½")
    await expect(tile.locator("[data-hcp=home]")).to_have_text("incl. 2½ hcp")

    # Worked out again from the registrations, then set once more.
    await page.click("#tabs [data-tab=games]")
    await change.locator("[name=reason]").fill("back to the matrix")
    await change.locator("[data-act=rework]").click()
    await expect(change.locator(".form-msg.ok")).to_contain_text("worked out again")
    await expect(row.locator(".hcp-cell")).to_contain_text("Aiken Arena 1½ · worked out from 7 v 10")
    await change.locator("[name=home]").fill("2.5")
    await change.locator("[name=reason]").fill("Ruiz plays off 5 in arena")
    await change.locator("[type=submit]").click()
    await expect(row.locator(".hcp-cell")).to_contain_text("Aiken Arena 2½ · set by the committee")

    # 5. A handheld starts the clock: the control is disabled with the reason; the open form's
    # change is refused in words.
    await change.locator("[name=home]").fill("3")
    await change.locator("[name=reason]").fill("one more look")
    tk = await server.device("timekeeper", GAME, name="tk-hcp")
    try:
        await tk.send({"type": "clock.start", "game": GAME})
    finally:
        await tk.close()
    await expect(row.locator("[data-act=handicap]")).to_be_disabled()
    await expect(row.locator("[data-why=begun]")).to_have_text("Fixed: the game has begun")
    await change.locator("[type=submit]").click()
    refused = change.locator(".form-msg.error")
    await expect(refused).to_have_attribute("data-code", "game_begun")
    await expect(refused).to_contain_text(
        "Not changed: the game has begun, and its goals on handicap were fixed when it began.")
    await expect(refused).not_to_contain_text("game_begun")
    status, doc = await server.api("GET", f"/api/games/{GAME}")
    assert doc["view"]["score"]["home"] == 2.5                      # nothing changed
    await shot_page(page, "hcp-05-refused-after-the-start")

    # 6. In Spanish: what is on screen is said again.
    await page.click("#lang")
    await expect(refused).to_contain_text(
        "Sin cambios: el partido ya empezó y sus goles de hándicap quedaron fijados al comenzar.")
    await expect(row.locator("[data-why=begun]")).to_have_text("Fijados: el partido ya empezó")
    await expect(row.locator(".hcp-cell")).to_contain_text("Aiken Arena 2½ · fijados por el Comité")
    await expect(change.locator(".hcp-now")).to_contain_text("El partido ya empezó")
    await shot_page(page, "hcp-06-es-games")
    await page.click("#tabs [data-tab=day]")
    await expect(tile.locator("[data-hcp=home]")).to_have_text("incl. 2½ hándicap")
    await page.click("#tabs [data-tab=event]")
    await expect(summary).to_contain_text(
        "Evento con hándicap: 2 períodos ½ · 3 períodos ½ · 4 períodos 1 por gol de diferencia")
    await page.click("#lang")

    # 7. The committee's decisions list the changes, with who and why.
    await page.click("#tabs [data-tab=export]")
    async with page.expect_download() as dl:
        await page.click("#export-decisions")
    decisions = (await (await dl.value).path()).read_text(encoding="utf-8")
    lines = [x for x in decisions.splitlines() if x.startswith("game.handicap,")]
    assert len(lines) == 3, decisions
    assert "M. Pérez" in lines[0] and "Ruiz plays off 5 in arena" in lines[0]
    assert "Goals on handicap of Aiken Arena v Wellington Blue set: 2½–0" in lines[0]
    assert "worked out again" in lines[1]


async def test_the_draw_and_its_standings_show_halves_and_the_mark(server: Server, console: Console) -> None:
    status, ack = await server.api("POST", "/api/events", {
        "event": EVENT, "class": "uspa", "handicap": 8, "teams": [], "handicap_matrix": USPA})
    assert status == 201, ack
    for (team, name, short, primary, secondary), players in ROSTER.items():
        status, ack = await server.api("POST", "/api/teams", {
            "team": team, "name": name, "short": short, "event": EVENT,
            "colors": {"primary": primary, "secondary": secondary}})
        assert status == 201, ack
        for n, (pid, hcp) in enumerate(players, start=1):
            status, ack = await server.api("POST", "/api/players", {
                "player": pid, "name": pid.title(), "number": n, "handicap": hcp, "team": team})
            assert status == 201, ack
    status, ack = await server.api("POST", f"/api/events/{EVENT}/draw", {
        "id": "draw-hcp", "format": "round_robin", "teams": ["aiken", "wellington"]})
    assert status == 201, ack
    status, drawn = await server.api("GET", f"/api/events/{EVENT}/draw")
    g = drawn["games"][0]
    sheet = {side: {"team": g[side]["team"], "players": [p for p, _ in next(
        v for k, v in ROSTER.items() if k[0] == g[side]["team"])[:3]]} for side in ("home", "away")}
    status, ack = await server.api("POST", "/api/games", {
        "game": g["game"], "event": EVENT, "kind": g["kind"], "handicap": 8, "periods": 3, "teams": sheet})
    assert status == 201, ack
    low = "home" if g["home"]["team"] == "aiken" else "away"      # Aiken, 7 against 10, starts 1½
    high = "away" if low == "home" else "home"
    tk, ump = await server.device("timekeeper", g["game"]), await server.device("umpire", g["game"])
    try:
        await tk.send({"type": "clock.start", "game": g["game"]})
        await ump.send({"type": "goal", "game": g["game"], "team": high})
        await tk.send({"type": "game.end", "game": g["game"]})
    finally:
        await tk.close()
        await ump.close()
    status, drawn = await server.api("GET", f"/api/events/{EVENT}/draw")
    score = drawn["games"][0]["score"]
    assert score == ([1.5, 1] if low == "home" else [1, 1.5]), drawn

    page = console.page
    await sign_in(page, server)
    await page.click("#tabs [data-tab=games]")
    box = page.locator(f"#draw-bracket .draw-game[data-game='{g['game']}']")
    await expect(box).to_have_attribute("data-state", "ended")
    sides = box.locator(".draw-side .num")
    await expect(sides.nth(0 if low == "home" else 1)).to_have_text("1½incl. 1½ hcp")
    await expect(sides.nth(1 if low == "home" else 0)).to_have_text("1")
    await expect(box.locator(f"[data-hcp={low}]")).to_have_text("incl. 1½ hcp")
    standings = page.locator("#draw-bracket .draw-standings")
    await expect(standings.locator("tr[data-team=aiken] td").last).to_have_text("1½–1")
    await expect(standings.locator("tr[data-team=wellington] td").last).to_have_text("1–1½")
    await shot_page(page, "hcp-07-draw")
    # The one helper every page writes a score with (clients/web/shared/common.js).
    written = await page.evaluate(
        "import('/clients/common.js').then(m => [5.5, 0.5, 4, 0, 12.5].map(m.goals))")
    assert written == ["5½", "½", "4", "0", "12½"]
    await page.click("#lang")
    await expect(box.locator(f"[data-hcp={low}]")).to_have_text("incl. 1½ hándicap")
    listed = page.locator(f"#games-table tr[data-game='{g['game']}'] td.num")
    await expect(listed).to_contain_text("1½–1" if low == "home" else "1–1½")
    await expect(listed.locator(f"[data-hcp={low}]")).to_have_text("incl. 1½ hándicap")


async def test_the_event_form_sets_the_event_s_time_zone_and_keeps_it_private(server: Server,
                                                                             console: Console) -> None:
    """The committee sets the time zone the public pages write times in, and can keep the
    event off them (docs/public.md); a zone the service doesn't know is refused in words,
    on its field, and nothing is set up."""
    page = console.page
    await sign_in(page, server)
    form = page.locator("#event-form")
    await form.locator("[name=name]").fill("Members' Cup")
    await form.locator("[name=timezone]").fill("America/Nowhere")
    await form.locator("[type=submit]").click()
    await expect(form.locator("[name=timezone]")).to_have_attribute("aria-invalid", "true")
    status, events = await server.api("GET", "/api/events")
    assert status == 200 and all(e["id"] != EVENT for e in events), events
    await form.locator("[name=timezone]").fill("America/Chicago")
    await form.locator("[name=private]").check()
    await form.locator("[type=submit]").click()
    summary = page.locator("#event-summary")
    await expect(summary.locator("[data-timezone]")).to_have_text("America/Chicago")
    await expect(summary.locator("[data-private]")).to_have_attribute("data-private", "true")
    status, events = await server.api("GET", "/api/events")
    mine = next(e for e in events if e["id"] == EVENT)
    assert (mine["timezone"], mine["private"]) == ("America/Chicago", True), mine
    status, problem = await server.api("GET", f"/events/{EVENT}")
    assert status == 404 and problem["code"] == "unknown_event", problem
