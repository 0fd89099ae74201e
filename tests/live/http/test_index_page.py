"""The front door (``/``, docs/public.md) shows each game with its score as people write it:
a game of a handicap event starts with its goals on handicap (a half as "½"), and the page
says the score includes them."""

from __future__ import annotations

import aiohttp

from ..conftest import Server, admin_device

MATRIX = [{"periods": 3, "goals_per_goal": 0.5}]


def card(page: str, game: str) -> str:
    """The game's card on the page ("" when it shows none)."""
    start = page.find(f'<article class="game" data-game="{game}"')
    return "" if start < 0 else page[start:page.index("</article>", start)]


async def index(server: Server) -> str:
    async with aiohttp.ClientSession() as s, s.get(server.http + "/") as r:
        assert r.status == 200
        return await r.text()


async def test_the_front_door_shows_half_goals_and_the_goals_on_handicap(server: Server) -> None:
    status, reply = await server.api("POST", "/api/events", {
        "id": "ev", "event": "cup", "class": "uspa", "handicap": 8, "teams": ["g1-home", "g1-away"],
        "handicap_matrix": MATRIX})
    assert status == 201, reply
    admin = await admin_device(server)
    # home's starters rated 4 in all, away's 7: home starts with (7 - 4) × ½ = 1½
    for player, rating in {"h1": 2, "h2": 1, "h3": 1, "a1": 3, "a2": 2, "a3": 2}.items():
        await admin.send({"type": "player.registered", "player": player, "name": player, "handicap": rating})
    await admin.close()
    await server.setup_game("g1", periods=3)
    await server.setup_game("g2", event="club-day", periods=3)   # no matrix: no goals on handicap
    page = await index(server)
    g1 = card(page, "g1")
    assert ('data-score="home">1½</b><small class="hcp">incl. 1½ on handicap</small>' in g1
            and 'data-score="away">0</b></div>' in g1), g1
    assert card(page, "g2") == "" or "hcp" not in card(page, "g2"), "no matrix: no goals on handicap"

    ump = await server.device("umpire", "g1")
    tk = await server.device("timekeeper", "g1")
    await tk.send({"type": "clock.start", "game": "g1"})
    await ump.send({"type": "goal", "game": "g1", "team": "away"})
    await ump.send({"type": "goal", "game": "g1", "team": "away"})
    await ump.close()
    await tk.close()
    g1 = card(await index(server), "g1")
    assert 'data-status="live"' in g1 and 'data-score="home">1½</b>' in g1, g1
    assert 'data-score="away">2</b>' in g1, g1
    assert "incl. 1½ on handicap" in g1


async def test_the_games_list_carries_the_goals_on_handicap_with_the_total(server: Server) -> None:
    """``GET /api/games``: the score is the total, and ``goals_on_handicap`` says what it includes."""
    status, reply = await server.api("POST", "/api/events", {
        "id": "ev", "event": "cup", "class": "uspa", "handicap": 8, "teams": ["g1-home", "g1-away"],
        "handicap_matrix": MATRIX})
    assert status == 201, reply
    await server.setup_game("g1", periods=3, goals_on_handicap={"home": 0, "away": 2.5})
    await server.setup_game("g2", event="club-day", periods=3)
    status, rows = await server.api("GET", "/api/games")
    assert status == 200, rows
    by_game = {r["game"]: r for r in rows}
    assert by_game["g1"]["score"] == {"home": 0, "away": 2.5}, by_game["g1"]
    hcp = by_game["g1"]["goals_on_handicap"]
    assert (hcp["home"], hcp["away"], hcp["source"]) == (0, 2.5, "committee"), hcp
    assert by_game["g2"]["goals_on_handicap"] is None, by_game["g2"]
