"""The draw over HTTP, as a committee runs it (docs/protocol-http.md, L3): the real
service on a SQLite file, its games ended through real device sockets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..conftest import RunningServer, Server

TEAMS = ["aiken", "bayou", "cedar", "delta"]


def sheet(team: str) -> dict[str, Any]:
    return {"team": team, "players": [f"{team}-1", f"{team}-2", f"{team}-3"], "subs": [f"{team}-4"]}


def game_of(bracket: dict[str, Any], game: str) -> dict[str, Any]:
    return next(g for g in bracket["games"] if g["game"] == game)


async def _cup(server: Server, token: str | None = None) -> dict[str, Any]:
    """The USPA event "cup" of four teams, drawn as a knockout by ``token``'s holder."""
    status, ack = await server.api("POST", "/api/events", {
        "id": "cup", "event": "cup", "class": "uspa", "handicap": 8, "teams": TEAMS})
    assert status == 201, ack
    status, listed = await server.api("GET", "/api/events", token=token)
    assert status == 200 and [(e["id"], e["drawn"]) for e in listed] == [("cup", False)]
    status, ack = await server.api("POST", "/api/events/cup/draw", {
        "id": "draw-1", "format": "knockout", "teams": TEAMS}, token=token)
    assert status == 201, ack
    status, listed = await server.api("GET", "/api/events", token=token)
    assert status == 200 and [(e["id"], e["drawn"]) for e in listed] == [("cup", True)]
    status, bracket = await server.api("GET", "/api/events/cup/draw", token=token)
    assert status == 200 and isinstance(bracket, dict), bracket
    return bracket


async def _set_up(server: Server, bracket: dict[str, Any], game: str, token: str | None = None) -> None:
    """``game`` set up as the console does: its id, kind and teams from the draw."""
    g = game_of(bracket, game)
    status, ack = await server.api("POST", "/api/games", {
        "id": f"setup-{game}", "game": game, "event": g["event"], "kind": g["kind"], "handicap": 8,
        "arena": "main", "teams": {"home": sheet(g["home"]["team"]), "away": sheet(g["away"]["team"])}},
        token=token)
    assert status == 201, ack


async def test_a_committee_draws_its_event_and_the_results_follow_the_draw(tmp_path: Path) -> None:
    async with RunningServer(tmp_path) as server:
        committee = server.token("committee", "cup-desk", event="cup")
        bracket = await _cup(server, committee)
        assert bracket["format"] == "knockout" and bracket["teams"] == TEAMS
        first = [g["game"] for g in bracket["games"] if g["round"] == 1]
        assert len(bracket["games"]) == len(TEAMS) - 1 and len(first) == len(TEAMS) // 2
        assert all(game_of(bracket, g)["state"] == "ready" for g in first)
        for game in first:
            await _set_up(server, bracket, game, committee)
        # A game of the draw set up otherwise than the draw says is refused, nothing stored.
        rows = len(server.log_rows())
        status, refused = await server.api("POST", "/api/games", {
            "game": "cup-final", "event": "cup", "handicap": 8,
            "teams": {"home": sheet("aiken"), "away": sheet("bayou")}}, token=committee)
        assert status == 409 and (refused["code"], refused["clause"]) == ("draw_not_ready", "L3")
        assert len(server.log_rows()) == rows

        # The first game: a red card to the home side's first player, the away side scores,
        # the umpire ends it through a handheld.
        opening = game_of(bracket, first[0])
        loser, winner = opening["home"]["team"], opening["away"]["team"]
        tk = await server.device("timekeeper", first[0])
        ump = await server.device("umpire", first[0])
        await tk.send({"type": "clock.start", "game": first[0]})
        await ump.send({"type": "card", "game": first[0], "player": f"{loser}-1", "color": "red",
                        "conduct": "striking"})
        await ump.send({"type": "goal", "game": first[0], "team": "away"})
        ack = await ump.send({"type": "game.end", "game": first[0]})
        assert ack["type"] == "ack", ack
        await tk.close()
        await ump.close()

        status, bracket = await server.api("GET", "/api/events/cup/draw", token=committee)
        assert status == 200
        ended, final = game_of(bracket, first[0]), game_of(bracket, "cup-final")
        assert (ended["state"], ended["winner"], ended["loser"], ended["score"]) == (
            "ended", winner, loser, [0, 1])
        assert winner in (final["home"]["team"], final["away"]["team"]) and final["state"] == "waiting"
        assert [(p["action"], p["team"], p["game"]) for p in bracket["proposals"]] == [
            ("eliminate", loser, first[0])]
        status, tournaments = await server.api("GET", "/api/events", token=committee)
        assert tournaments[0]["eliminated"] == []  # proposed, never applied

        # R15: the committee confirms; what the loser's player owes may be served with any team.
        status, owed = await server.api("GET", f"/api/players/{loser}-1/obligations")
        assert [o["any_team"] for o in owed["obligations"]] == [False]
        status, ack = await server.api("POST", "/api/events/cup/eliminate", {"team": loser}, token=committee)
        assert status == 201, ack
        assert [(n["type"], n["clause"], n["player"]) for n in ack["notices"]] == [
            ("obligation.updated", "R15", f"{loser}-1")]
        status, owed = await server.api("GET", f"/api/players/{loser}-1/obligations")
        assert [o["any_team"] for o in owed["obligations"]] == [True]
        status, bracket = await server.api("GET", "/api/events/cup/draw", token=committee)
        assert bracket["proposals"] == []

        # Drawn again once a game of the draw is set up: refused.
        status, refused = await server.api("POST", "/api/events/cup/draw", {
            "format": "round_robin", "teams": TEAMS}, token=committee)
        assert status == 409 and refused["code"] == "already_drawn"

    # The draw is in the log: a restart folds it back to the same bracket.
    async with RunningServer(tmp_path) as again:
        status, reloaded = await again.api("GET", "/api/events/cup/draw")
        assert status == 200 and reloaded == bracket


async def test_another_event_s_committee_neither_draws_nor_reads_the_draw(server: Server) -> None:
    await _cup(server)
    status, _ = await server.api("POST", "/api/events", {
        "event": "open", "class": "club", "handicap": 8, "teams": ["x", "y"]})
    assert status == 201
    other = server.token("committee", "open-desk", event="open")
    rows = len(server.log_rows())
    status, reply = await server.api("POST", "/api/events/cup/draw", {
        "format": "knockout", "teams": TEAMS}, token=other)
    assert status == 403 and reply["code"] == "out_of_scope"
    status, reply = await server.api("GET", "/api/events/cup/draw", token=other)
    assert status == 403 and reply["code"] == "out_of_scope"
    assert len(server.log_rows()) == rows
    # Its own event, not drawn yet; and a device token reads no draw.
    status, reply = await server.api("GET", "/api/events/open/draw", token=other)
    assert status == 404 and reply["code"] == "not_drawn"
    status, _ = await server.api("GET", "/api/events/cup/draw", token=server.token("umpire", "u", game="g"))
    assert status == 403
    status, reply = await server.api("GET", "/api/events/nope/draw")
    assert status == 404 and reply["code"] == "unknown_event"
