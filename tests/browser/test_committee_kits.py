"""A kit clash, as a committee meets it in a real Chromium: two teams registered in the same
colours; the games form names the clash on the away side and offers that team its colours the
other way round for this game; the game is scheduled with that kit, and the scoreboard shows
the away team in it while the home team keeps its own. Screenshot: committee-kit-clash.png."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, expect

from ..live.conftest import Server
from .conftest import TABLET, Console
from .test_committee import EVENT, committee_token, shot_page, sign_in

pytestmark = pytest.mark.browser

RED = {"primary": "#c8102e", "secondary": "#ffffff"}
RED_TOO = {"primary": "#d0142a", "secondary": "#1a1a1a"}   # not the same hex: the same red all the same


async def register(server: Server) -> None:
    status, ack = await server.api("POST", "/api/events", {
        "event": EVENT, "class": "club", "handicap": 8, "teams": []})
    assert status == 201, ack
    teams = (("aiken", "Aiken Arena", "AIK", RED), ("palm", "Palm Beach", "PBP", RED_TOO))
    for team, name, short, colors in teams:
        status, ack = await server.api("POST", "/api/teams", {"team": team, "name": name, "short": short,
                                                              "colors": colors, "event": EVENT})
        assert status == 201, ack
        for n in range(1, 4):
            status, ack = await server.api("POST", "/api/players", {
                "player": f"{team}{n}", "name": f"{name.split()[0]} {n}", "number": n, "team": team})
            assert status == 201, ack


async def test_a_kit_clash_is_named_and_every_display_shows_the_kit_chosen(browser: Browser, server: Server,
                                                                          console: Console) -> None:
    await register(server)
    page = console.page
    await sign_in(console, server, await committee_token(server))
    await console.tab("games")
    form = page.locator("#game-form")
    await form.locator("[name=home_team]").select_option("aiken")
    warn = form.locator("[data-side=away] .kit-clash")
    await expect(warn).to_be_hidden()                      # one team: nothing to clash with
    await form.locator("[name=away_team]").select_option("palm")
    await expect(warn).to_be_visible()
    await expect(form.locator("[name=away_kit]")).to_be_checked()
    # The away team is offered its colours the other way round, and that resolves it: said so.
    await expect(form.locator("[name=away_kit_primary]")).to_have_value(RED_TOO["secondary"])
    await expect(warn).to_have_attribute("data-resolved", "true")
    await expect(warn).to_contain_text("Palm Beach wears the colours below in this game")
    # Back to its own colours: the clash is named again, in the committee's language too.
    await form.locator("[name=away_kit]").uncheck()
    await expect(warn).to_have_attribute("data-resolved", "false")
    await expect(warn).to_contain_text("Aiken Arena and Palm Beach wear the same colours")
    await page.click("#lang")
    await expect(warn).to_contain_text("Aiken Arena y Palm Beach usan los mismos colores")
    await page.click("#lang")
    await form.locator("[name=away_kit]").check()
    await form.locator("[name=away_kit_primary]").evaluate(
        "(i) => { i.value = '#f2c200'; i.dispatchEvent(new Event('input', {bubbles: true})); }")
    await expect(warn).to_have_attribute("data-resolved", "true")
    await form.locator("[name=game]").fill("kits-g1")
    await shot_page(page, "kit-clash")
    await page.click("#game-form [type=submit]")
    await expect(form.locator(".form-msg.ok")).to_be_visible()

    _, doc = await server.api("GET", "/api/games/kits-g1")
    assert doc["roster"]["kits"] == {"away": {"primary": "#f2c200", "secondary": RED_TOO["secondary"]}}

    context = await browser.new_context(**TABLET)
    try:
        board = await context.new_page()
        await board.goto(f"{server.http}/scoreboard?game=kits-g1")
        await expect(board.locator("body")).to_have_attribute("data-ready", "true")
        bg = "(side) => getComputedStyle(document.getElementById(side)).getPropertyValue('--team-bg').trim()"
        assert await board.evaluate(bg, "away") == "#f2c200"        # the kit this game chose
        assert await board.evaluate(bg, "home") == RED["primary"]   # the home team's own
    finally:
        await context.close()


async def test_a_lineup_outside_the_event_s_team_handicap_is_said_before_and_at_the_set_up(
        server: Server, console: Console) -> None:
    page = console.page
    await sign_in(console, server, await committee_token(server))
    # The event's limits are the committee's to set: 4 to 8 goals a side.
    form = page.locator("#event-form")
    await form.locator("[name=team_min]").fill("4")
    await form.locator("[name=team_max]").fill("8")
    await page.click("#event-form [type=submit]")
    await expect(page.locator("#event-summary [data-limits]")).to_have_text("4–8")
    for team, name, hcps in (("aiken", "Aiken Arena", (4, 3, 2, 1)), ("palm", "Palm Beach", (1, 1, 1, 0))):
        status, ack = await server.api("POST", "/api/teams", {"team": team, "name": name, "short": team[:3],
                                                              "colors": RED, "event": EVENT})
        assert status == 201, ack
        for n, h in enumerate(hcps, 1):
            await server.api("POST", "/api/players", {"player": f"{team}{n}", "name": f"{name} {n}",
                                                      "number": n, "handicap": h, "team": team})
    await page.reload()
    await expect(page.locator("body")).to_have_attribute("data-ready", "true")
    await console.tab("games")
    games = page.locator("#game-form")
    await games.locator("[name=home_team]").select_option("aiken")
    await games.locator("[name=away_team]").select_option("palm")
    home = games.locator("[data-side=home] .team-handicap")
    away = games.locator("[data-side=away] .team-handicap")
    await expect(home).to_have_attribute("data-state", "over")          # 4 + 3 + 2
    await expect(home).to_have_text("Starters' handicaps: 9 goals · over the event's limit of 8")
    await expect(away).to_have_attribute("data-state", "under")         # 1 + 1 + 1
    # The third starter changed for #4 (1 goal): within the limit, and the one displaced goes
    # to the substitutes.
    await games.locator("[data-side=home] select.lineup").nth(2).select_option("aiken4")
    await expect(home).to_have_attribute("data-state", "ok")
    await expect(home).to_have_text("Starters' handicaps: 8 goals")
    await games.locator("[name=game]").fill("hcp-g1")
    await page.click("#game-form [type=submit]")
    await expect(games.locator(".form-msg.ok")).to_be_visible()
    # The service says the same at the set-up, for the side still outside them.
    _, report = await server.api("GET", "/games/hcp-g1/report.json")
    assert [(a["code"], a["side"]) for a in report["alerts"] if a["code"].startswith("team_handicap")] == [
        ("team_handicap_under", "away")]
    await page.click("#lang")
    await expect(away).to_contain_text("por debajo del mínimo del evento, 4")
