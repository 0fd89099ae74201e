"""A committee's decisions reach the feed: a rescind or an increase (a decrease likewise) of an
obligation (events of no game) is sent, as a `notices` frame, to every viewer of the game
the obligation came from (docs/protocol-viewer.md, "Notices from another game"), so that a
committee console following its event's arenas sees its ledger change; the notices are not
kept in the game's `recent`."""

from __future__ import annotations

from typing import Any

from stream.tools.harness import Viewer

from ..conftest import Server


async def _notices(viewer: Viewer) -> dict[str, Any]:
    """The next `notices` frame, skipping deltas, heartbeats and the like."""
    while True:
        m = await viewer.next()
        if m["type"] == "notices":
            return m


async def red_for_h2_in_g1(server: Server) -> None:
    """g1 played: h2 sent off (a suspension owed), and the game ended."""
    tk = await server.device("timekeeper", "g1")
    ump = await server.device("umpire", "g1")
    try:
        await tk.send({"type": "clock.start", "game": "g1"})
        await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "red", "conduct": "striking"})
        await tk.send({"type": "game.end", "game": "g1"})
    finally:
        await tk.close()
        await ump.close()


async def test_a_committee_decision_is_sent_to_the_viewers_of_the_game_it_is_about(
        server: Server) -> None:
    await server.setup_game("g1", arena="main", event="cup")
    await server.setup_game("g2", arena="main", event="cup")
    arena = await Viewer.open(server.watch_url, arena="main")
    other = await Viewer.open(server.watch_url, game="g2")
    await red_for_h2_in_g1(server)
    status, owed = await server.api("GET", "/api/players/h2/obligations")
    assert status == 200
    (ob,) = [o for o in owed["obligations"] if o["kind"] == "suspension"]

    status, ack = await server.api("POST", "/api/committee/rescind", {
        "id": "res-1", "obligation": ob["id"], "by": "HTC", "reason": "mistaken identity"})
    assert status == 201, ack
    frame = await _notices(arena)
    assert frame["game"] == "g1"
    (n,) = frame["notices"]
    assert (n["type"], n["obligation"], n["game"], n["player"]) == (
        "obligation.withdrawn", ob["id"], "g1", "h2")
    assert n["text"]["en"] and n["text"]["es"]

    status, ack = await server.api("POST", "/api/committee/increase", {
        "id": "inc-1", "player": "h3", "origin_game": "g1", "games": 1, "sit_out_ms": 0,
        "by": "HTC", "reason": "conduct after the game"})
    assert status == 201, ack
    frame = await _notices(arena)
    assert frame["game"] == "g1" and [x["type"] for x in frame["notices"]] == ["obligation.created"]
    assert frame["notices"][0]["player"] == "h3"

    # A viewer of another game gets none of it; a fresh snapshot of g1 does not repeat it.
    assert not [f for f in other.frames if f["type"] == "notices"]
    fresh = await Viewer.open(server.watch_url, game="g1")
    snap = await fresh.next("snapshot")
    assert not [x for x in snap["recent"] if x["type"] in ("obligation.withdrawn", "obligation.created")
                and x["cause"] in ("admin/res-1", "admin/inc-1")]
    for v in (arena, other, fresh):
        await v.close()


async def test_a_rescind_tells_the_game_whose_set_up_warned_of_it_and_stays_in_its_recent(
        server: Server) -> None:
    """The next game was set up while h2 owed a suspension: its set-up said so
    (`suspended_in_lineup`). The committee rescinds it: that game's viewers are told he no
    longer owes it (`no_longer_owed`), and a display that joins later reads both."""
    await server.setup_game("g1", arena="main", event="cup")
    await red_for_h2_in_g1(server)
    await server.setup_game("next", arena="main", event="cup", teams={
        "home": {"team": "g1-home", "players": ["h1", "h2", "h3"]},
        "away": {"team": "g1-away", "players": ["a1", "a2", "a3"]}})
    viewer = await Viewer.open(server.watch_url, game="next")
    snap = await viewer.next("snapshot")
    assert [x["code"] for x in snap["recent"] if x["type"] == "alert" and x["player"] == "h2"] == [
        "suspended_in_lineup"]
    status, owed = await server.api("GET", "/api/players/h2/obligations")
    (ob,) = [o for o in owed["obligations"] if o["kind"] == "suspension"]
    status, ack = await server.api("POST", "/api/committee/rescind", {
        "id": "res-2", "obligation": ob["id"], "by": "HTC", "reason": "mistaken identity"})
    assert status == 201, ack
    frame = await _notices(viewer)
    (n,) = frame["notices"]
    assert (frame["game"], n["type"], n["code"], n["player"], n["origin_game"]) == (
        "next", "alert", "no_longer_owed", "h2", "g1")
    assert "no longer owes" in n["text"]["en"] and "ya no debe" in n["text"]["es"]
    fresh = await Viewer.open(server.watch_url, game="next")
    snap = await fresh.next("snapshot")
    assert [x["code"] for x in snap["recent"] if x["type"] == "alert" and x["player"] == "h2"] == [
        "suspended_in_lineup", "no_longer_owed"]
    for v in (viewer, fresh):
        await v.close()
