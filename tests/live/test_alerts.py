"""Alerts on the wire: a fact the rules don't expect (a second ``clock.start``, a goal
credited to a player in the box) is taken, not refused, and the ``alert`` notice that
says so reaches the device that sent it (in its ack) and every viewer (in the delta,
and in a late viewer's snapshot ``recent``), with its text in English and Spanish."""

from __future__ import annotations

from typing import Any

from .conftest import Server, Viewer


def alerts(notices: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [n for n in notices if n["type"] == "alert"]


async def test_an_alert_reaches_the_sending_device_and_every_viewer(server: Server) -> None:
    await server.setup_game("g1")
    viewer = await Viewer.open(server.watch_url, game="g1")
    assert (await viewer.next("snapshot"))["seq"] == 1
    tk = await server.device("timekeeper", "g1")

    first = await tk.send({"type": "clock.start", "game": "g1"})
    assert alerts(first["notices"]) == []
    second = await tk.send({"type": "clock.start", "game": "g1"})
    assert second["type"] == "ack" and second["seq"] == 3          # a fact: stored, not refused
    (alert,) = alerts(second["notices"])
    assert (alert["code"], alert["clause"], alert["cause"], alert["subject"], alert["game"]) == (
        "clock_already_running", "A1", second["log_id"], second["log_id"], "g1")
    assert alert["text"]["en"].startswith("The clock was started while it was already running")
    assert alert["text"]["en"].endswith("(Arena · Periods and the game clock)")
    assert alert["text"]["es"].endswith("(Arena · Períodos y reloj de juego)")

    frames = await viewer.until_seq("g1", 3)
    delta = frames[-1]
    assert (delta["type"], delta["seq"]) == ("delta", 3)
    assert alerts(delta["notices"]) == [alert]                       # the same notice, as the device got it

    # a goal credited to a player in the penalty box counts, with an alert to check the scorer
    ump = await server.device("umpire", "g1")
    for _ in range(2):
        await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow",
                        "conduct": "arguing"})
    goal = await ump.send({"type": "goal", "game": "g1", "team": "home", "player": "h2"})
    (scorer,) = alerts(goal["notices"])
    assert (scorer["code"], scorer["player"], scorer["side"], scorer["clause"]) == (
        "scorer_not_on_field", "h2", "home", "A3")
    assert "goal.scored" in [n["type"] for n in goal["notices"]]
    frames = await viewer.until_seq("g1", goal["seq"])
    assert alerts(frames[-1]["notices"]) == [scorer]
    assert ["score.home", 1] in frames[-1]["patch"]

    # a viewer that joins later finds both in the snapshot's recent notices
    late = await Viewer.open(server.watch_url, game="g1")
    snap = await late.next("snapshot")
    assert [a["code"] for a in alerts(snap["recent"])] == ["clock_already_running", "scorer_not_on_field"]
    for ws in (late, viewer):
        await ws.close()
    await tk.close()
    await ump.close()


async def test_a_late_postgame_card_is_told_to_the_game_already_under_way(server: Server) -> None:
    """R9: the umpire's post-game red for h2 in g1 reaches the log only while g2, the same
    teams' next game, is being played. g2's viewers (its handhelds, the committee's day view)
    are told at once by a ``notices`` frame about g2, outside g2's seq order; the card's own
    ack carries the alert; g1's delta does not (it is about g2); and a display that joins g2
    later reads it in the snapshot's ``recent``."""
    teams = {"home": {"team": "g1-home", "players": ["h1", "h2", "h3"], "subs": ["h4"]},
             "away": {"team": "g1-away", "players": ["a1", "a2", "a3"], "subs": ["a4"]}}
    await server.setup_game("g1")
    await server.setup_game("g2", teams=teams)
    tk1 = await server.device("timekeeper", "g1")
    await tk1.send({"type": "clock.start", "game": "g1"})
    end = await tk1.send({"type": "game.end", "game": "g1"})
    tk2 = await server.device("timekeeper", "g2")
    start = await tk2.send({"type": "clock.start", "game": "g2"})
    assert start["seq"] == 2
    g1 = await Viewer.open(server.watch_url, game="g1")
    g2 = await Viewer.open(server.watch_url, game="g2")
    await g1.next("snapshot")
    assert (await g2.next("snapshot"))["seq"] == 2

    ump = await server.device("umpire", "g1")
    card = await ump.send({"type": "postgame.card", "game": "g1", "player": "h2", "level": "red"})
    assert card["type"] == "ack" and card["seq"] == end["seq"] + 1
    (told,) = alerts(card["notices"])
    assert (told["code"], told["game"], told["player"], told["clause"], told["origin_game"],
            told["reason"], told["owed_ms"], told["detail"], told["subject"]) == (
        "next_game_begun", "g2", "h2", "R9", "g1", "suspension", 240_000, "live", card["log_id"])
    assert told["text"]["en"].startswith("h2 (home) is suspended (his team short for 4:00 of play) "
                                         "for this game under Rule 14 (from game g1, recorded only now)")
    assert "Comité" in told["text"]["es"]

    notices = await g2.next("notices")
    assert notices == {"type": "notices", "game": "g2", "notices": [told]}
    delta = (await g1.until_seq("g1", card["seq"]))[-1]
    assert alerts(delta["notices"]) == []
    assert "obligation.created" in [n["type"] for n in delta["notices"]]
    # g2 itself is not changed under its officials: still seq 2, h2 still on the field
    status, game = await server.api("GET", "/api/games/g2")
    assert status == 200 and game["seq"] == 2
    assert next(p for p in game["view"]["players"] if p["id"] == "h2")["on_field"] is True

    late = await Viewer.open(server.watch_url, game="g2")
    snap = await late.next("snapshot")
    assert alerts(snap["recent"])[-1] == told
    for ws in (late, g1, g2):
        await ws.close()
    for dev in (tk1, tk2, ump):
        await dev.close()


async def test_leaving_the_arena_in_an_interval_is_an_alert_not_a_red(server: Server) -> None:
    """R14: "during the course of a period": an ``arena.left`` after the period's horn is
    taken with the alert, no card; the scoreboard's view keeps the player on the field."""
    await server.setup_game("g1")
    viewer = await Viewer.open(server.watch_url, game="g1")
    await viewer.next("snapshot")
    tk = await server.device("timekeeper", "g1")
    ump = await server.device("umpire", "g1")
    await tk.send({"type": "clock.start", "game": "g1"})
    await tk.send({"type": "horn", "game": "g1"})
    left = await ump.send({"type": "arena.left", "game": "g1", "player": "h2"})
    assert left["type"] == "ack"
    assert [n["type"] for n in left["notices"]] == ["alert"]
    (alert,) = left["notices"]
    assert (alert["code"], alert["clause"], alert["player"], alert["subject"]) == (
        "left_arena_in_interval", "R14", "h2", left["log_id"])
    assert alert["text"]["en"].startswith("h2 (home) left the arena during an interval")
    delta = (await viewer.until_seq("g1", left["seq"]))[-1]
    assert delta["notices"] == [alert]
    assert not any(p[0].startswith("players.h2") for p in delta["patch"])
    await viewer.close()
    await tk.close()
    await ump.close()
