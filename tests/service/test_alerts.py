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
