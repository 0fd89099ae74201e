"""The draw, as a committee makes it in a real Chromium: four teams entered, the seed order
changed, a knockout with a consolation bracket drawn; the bracket shows the rounds as columns;
"Set up this game" fills the games form with the game's id, kind and teams (their registered
players in the lineups), and the game is scheduled as the draw says; after a handheld ends it,
the winner stands in the final and the committee confirms the loser's place in the consolation,
then an elimination, from the console. Screenshots: committee-draw.png, committee-draw-played.png."""

from __future__ import annotations

import pytest
from playwright.async_api import Locator, Page, expect

from ..live.conftest import Server
from .conftest import Console
from .test_committee import EVENT, committee_token, shot_page, sign_in

pytestmark = pytest.mark.browser

TEAMS = (("aiken", "Aiken Arena", "AIK", "#c8102e"), ("bayou", "Bayou Polo", "BAY", "#1f4e9c"),
         ("cedar", "Cedar Ridge", "CED", "#2e7d32"), ("delta", "Delta Farms", "DEL", "#f2c200"))


async def register(server: Server) -> None:
    status, ack = await server.api("POST", "/api/events", {
        "event": EVENT, "class": "uspa", "handicap": 8, "teams": []})
    assert status == 201, ack
    for team, name, short, primary in TEAMS:
        status, ack = await server.api("POST", "/api/teams", {
            "team": team, "name": name, "short": short, "event": EVENT,
            "colors": {"primary": primary, "secondary": "#ffffff"}})
        assert status == 201, ack
        for n in range(1, 5):
            status, ack = await server.api("POST", "/api/players", {
                "player": f"{team}{n}", "name": f"{name.split()[0]} {n}", "number": n, "team": team})
            assert status == 201, ack


async def play(server: Server, page: Page, console: Console, bracket: Locator, game: str, scorer: str,
               set_up: bool = True) -> None:
    """Handhelds play ``game`` (set up first from the draw, as the API takes it, if ``set_up``):
    one goal to ``scorer``, then the end; the console is opened again on the games."""
    if set_up:
        status, drawn = await server.api("GET", f"/api/events/{EVENT}/draw")
        g = next(x for x in drawn["games"] if x["game"] == game)
        sheet = {side: {"team": g[side]["team"], "players": [f"{g[side]['team']}{n}" for n in (1, 2, 3)]}
                 for side in ("home", "away")}
        status, ack = await server.api("POST", "/api/games", {"game": game, "event": EVENT, "kind": g["kind"],
                                                              "handicap": 8, "teams": sheet})
        assert status == 201, ack
    tk, ump = await server.device("timekeeper", game), await server.device("umpire", game)
    await tk.send({"type": "clock.start", "game": game})
    await ump.send({"type": "goal", "game": game, "team": scorer})
    await ump.send({"type": "game.end", "game": game})
    await tk.close()
    await ump.close()
    await page.reload()
    await expect(page.locator("body")).to_have_attribute("data-ready", "true")
    await console.tab("games")
    await expect(bracket.locator(f".draw-game[data-game='{game}']")).to_have_attribute("data-state", "ended")


async def test_a_committee_draws_its_event_and_sets_a_game_up_from_the_draw(server: Server,
                                                                           console: Console) -> None:
    await register(server)
    page = console.page
    await sign_in(console, server, await committee_token(server))
    await console.tab("games")
    form = page.locator("#draw-form")
    seeds = form.locator(".seeds li")
    await expect(seeds).to_have_count(4)
    # Delta is the top seed: moved up three times.
    for _ in range(3):
        await form.locator(".seeds li[data-team=delta] button").first.click()
    await expect(seeds.first).to_have_attribute("data-team", "delta")
    await form.locator("[name=consolation]").check()
    await form.locator("[type=submit]").click()
    await expect(form.locator(".form-msg.ok")).to_be_visible()

    bracket = page.locator("#draw-bracket")
    await expect(bracket.locator(".draw-round")).to_have_count(3)  # semifinals, final, consolation
    status, drawn = await server.api("GET", f"/api/events/{EVENT}/draw")
    assert status == 200 and drawn["teams"][0] == "delta" and drawn["consolation"] is True
    first = next(g for g in drawn["games"] if g["round"] == 1 and g["bracket"] == "main")
    box = bracket.locator(f".draw-game[data-game='{first['game']}']")
    await expect(box).to_contain_text("Delta Farms")
    await expect(bracket.locator(f".draw-game[data-game='{EVENT}-final']")).to_contain_text("Winner of")
    await shot_page(page, "draw")

    # "Set up this game": the games form holds the draw's id, kind, teams and their players.
    await box.get_by_role("button", name="Set up this game").click()
    games = page.locator("#game-form")
    await expect(games.locator("[name=game]")).to_have_value(first["game"])
    await expect(games.locator("[name=kind]")).to_have_value("regular")
    home, away = first["home"]["team"], first["away"]["team"]
    await expect(games.locator("[name=home_team]")).to_have_value(home)
    await expect(games.locator("[name=away_team]")).to_have_value(away)
    await expect(games.locator("[data-side=home] select.lineup").first).to_have_value(f"{home}1")
    await games.locator("[type=submit]").click()
    await expect(games.locator(".form-msg.ok")).to_be_visible()
    _, doc = await server.api("GET", f"/api/games/{first['game']}")
    assert (doc["view"]["kind"], doc["view"]["teams"]["home"]["team"]) == ("regular", home)
    await expect(box).to_contain_text("Set up")

    # Handhelds play it out: the clock runs, the away side scores, the game ends.
    tk, ump = await server.device("timekeeper", first["game"]), await server.device("umpire", first["game"])
    await tk.send({"type": "clock.start", "game": first["game"]})
    await ump.send({"type": "goal", "game": first["game"], "team": "away"})
    await ump.send({"type": "game.end", "game": first["game"]})
    await tk.close()
    await ump.close()
    await page.reload()
    await expect(page.locator("body")).to_have_attribute("data-ready", "true")
    await console.tab("games")
    await expect(bracket.locator(f".draw-game[data-game='{EVENT}-final']")).to_contain_text(
        dict((t[0], t[1]) for t in TEAMS)[away])
    # The loser goes to the consolation bracket: no elimination proposed for it yet.
    await expect(page.locator("#draw-proposals")).to_be_hidden()
    consolation = bracket.locator(f".draw-game[data-game='{EVENT}-c-final']")
    await expect(consolation).to_contain_text(dict((t[0], t[1]) for t in TEAMS)[home])

    # The other semifinal, then the consolation game, set up from the draw: its kind is the
    # draw's (R16 passes over it), never typed.
    second = next(g for g in drawn["games"] if g["round"] == 1 and g["bracket"] == "main" and g is not first)
    await play(server, page, console, bracket, second["game"], "home")
    await bracket.locator(f".draw-game[data-game='{EVENT}-c-final']").get_by_role(
        "button", name="Set up this game").click()
    await expect(games.locator("[name=kind]")).to_have_value("consolation")
    await games.locator("[type=submit]").click()
    await expect(games.locator(".form-msg.ok")).to_be_visible()
    _, doc = await server.api("GET", f"/api/games/{EVENT}-c-final")
    assert doc["view"]["kind"] == "consolation"
    await play(server, page, console, bracket, f"{EVENT}-c-final", "home", set_up=False)
    # Both consolation teams have played their last game of the draw: proposed, confirmed here.
    proposals = page.locator("#draw-proposals .draw-proposal[data-action=eliminate]")
    await expect(proposals).to_have_count(2)
    beaten = second["away"]["team"]
    confirm = proposals.locator(f"xpath=self::*[@data-team='{beaten}']").get_by_role("button", name="Confirm")
    await confirm.click()
    await expect(proposals).to_have_count(1)
    _, events = await server.api("GET", "/api/events")
    assert next(e for e in events if e["id"] == EVENT)["eliminated"] == [beaten]

    # Spanish, then the console's words for the draw.
    await page.click("#lang")
    await expect(page.locator("#draw-card h2")).to_have_text("El cuadro")
    state = bracket.locator(f".draw-game[data-game='{first['game']}'] .draw-state")
    await expect(state).to_contain_text("Terminado")
    await page.click("#lang")
    await shot_page(page, "draw-played")
