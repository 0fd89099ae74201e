"""Ingest -> durable ack -> broadcast, end to end, with real clients."""

from __future__ import annotations

import asyncio
import json
import time

from stream.live.ops.wallclock import now_ms
from stream.rules import codec
from stream.store import Record

from .conftest import Server, Viewer, eventually


async def test_card_is_acked_durably_then_broadcast(server: Server) -> None:
    await server.setup_game()
    viewer = await Viewer.open(server.watch_url, game="g1")
    snap = await viewer.next("snapshot")
    assert snap["seq"] == 1 and snap["view"]["status"] == "scheduled"

    tk = await server.device("timekeeper")
    ump = await server.device("umpire")
    ack = await tk.send({"type": "clock.start", "game": "g1"})
    assert ack["seq"] == 2 and not ack["duplicate"]
    ack = await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow",
                          "conduct": "arguing"})
    assert ack["seq"] == 3
    # acked means on disk: the row is in the SQLite file, with its dedup key
    rows = server.log_rows()
    assert (rows[-1][0], rows[-1][1], rows[-1][3]) == ("g1", 3, ack["id"])

    frames = await viewer.until_seq("g1", 3)
    deltas = [f for f in frames if f["type"] == "delta"]
    assert [d["seq"] for d in deltas] == [2, 3]
    card = deltas[-1]
    assert [n["type"] for n in card["notices"]] == ["card.recorded", "penalty.awarded"]
    assert card["notices"][0]["cause"] == ack["log_id"]
    assert any(p[0] == "players.h2.yellows" and p[1] == 1 for p in card["patch"])
    await viewer.close()
    await tk.close()
    await ump.close()


async def test_identical_retry_gets_the_same_ack_and_a_conflict_is_refused(server: Server) -> None:
    await server.setup_game()
    tk = await server.device("timekeeper")
    first = await tk.send_once({"type": "clock.start", "game": "g1", "id": "x1"})
    again = await tk.send_once({"type": "clock.start", "game": "g1", "id": "x1"})
    assert first["type"] == again["type"] == "ack"
    assert (again["seq"], again["log_id"], again["duplicate"]) == (first["seq"], first["log_id"], True)
    other = await tk.send_once({"type": "horn", "game": "g1", "id": "x1"})
    assert other["type"] == "error" and other["code"] == "id_conflict" and not other["retry"]
    assert [r[3] for r in server.log_rows()].count("x1") == 1
    await tk.close()


async def test_refused_event_gets_the_clause_and_writes_nothing(server: Server) -> None:
    await server.setup_game()
    ump = await server.device("umpire")
    before = server.log_rows()
    # leaving the arena before the game has begun (a goal would be taken: facts are never refused)
    reply = await ump.send_once({"type": "arena.left", "game": "g1", "player": "h1", "id": "early"})
    assert reply["type"] == "error"
    assert (reply["code"], reply["clause"], reply["retry"]) == ("game_not_started", "A1", False)
    assert server.log_rows() == before
    await ump.close()


async def test_box_eligible_is_pushed_by_the_deadline_timer(server: Server) -> None:
    """The shell turns the engine's next deadline into a timer and logs a tick,
    so box.eligible reaches viewers live, sequenced like any event. A synced
    device stamps events with its own clock: here, play began 119.7 s ago."""
    await server.setup_game()
    viewer = await Viewer.open(server.watch_url, game="g1")
    await viewer.next("snapshot")
    ump = await server.device("umpire")
    tk = await server.device("timekeeper")
    await asyncio.sleep(0.3)  # the server's first ping and the device's pong: clock sync
    now = int(time.time() * 1000)
    start = await tk.send({"type": "clock.start", "game": "g1", "at": now - 119_700})
    assert abs(start["at"] - (now - 119_700)) < 250, "the device's own time was used"
    await ump.send({"type": "card", "game": "g1", "player": "a1", "color": "yellow", "count": 2,
                    "conduct": "striking", "at": now - 119_700})
    frames = await viewer.until_seq("g1", 4, timeout=5)
    tick = frames[-1]
    assert [n["type"] for n in tick["notices"]] == ["box.eligible"]
    assert tick["notices"][0]["player"] == "a1"
    assert any(p[0] == "players.a1.box.release" and p[1] == "next_stoppage" for p in tick["patch"])
    assert [r[2] for r in server.log_rows()][-1] == "system"  # the tick is in the log
    out = await ump.send({"type": "whistle", "game": "g1"})
    assert [n["type"] for n in out["notices"]][-1] == "box.release"
    await viewer.close()
    await ump.close()
    await tk.close()


async def test_viewers_see_which_officials_are_connected(server: Server) -> None:
    await server.setup_game()
    viewer = await Viewer.open(server.watch_url, game="g1")
    await viewer.next("snapshot")
    assert (await viewer.next("presence"))["devices"] == []
    ump = await server.device("umpire", name="ump-north")
    joined = await viewer.next("presence")
    assert [(d["device"], d["role"]) for d in joined["devices"]] == [("ump-north", "umpire")]
    tk = await server.device("timekeeper", name="timer")
    both = await viewer.next("presence")
    assert [d["device"] for d in both["devices"]] == ["ump-north", "timer"]
    await ump.close()
    left = await viewer.next("presence")
    assert [d["device"] for d in left["devices"]] == ["timer"]
    await tk.close()
    await viewer.close()


async def test_commits_that_complete_out_of_seq_order_are_shown_in_order(server: Server) -> None:
    """With several nodes, the follower can fold seq N+1 (another node's) before the
    task that committed N here resumes: viewers must still get N, then N+1, and a
    resume from before N must get both, in order."""
    await server.setup_game()
    hub = server.svc.hub
    viewer = await Viewer.open(server.watch_url, game="g1")
    await viewer.next("snapshot")
    held: list[object] = []
    feeds = hub.feeds
    show = feeds.show
    feeds.show = held.append  # type: ignore[method-assign,assignment]  # hold the commits back
    tk = await server.device("timekeeper")
    ump = await server.device("umpire")
    await tk.send({"type": "clock.start", "game": "g1"})
    await ump.send({"type": "whistle", "game": "g1"})
    await ump.send({"type": "goal", "game": "g1", "team": "home"})
    feeds.show = show  # type: ignore[method-assign]
    assert len(held) == 3
    for p in reversed(held):  # seq 4 first, then 3, then 2
        show(p)  # type: ignore[arg-type]
    frames = await viewer.until_seq("g1", 4)
    assert [f["seq"] for f in frames if f["type"] == "delta"] == [2, 3, 4]
    assert [d.msg.seq for d in hub.feeds.since("g1", 1) or []] == [2, 3, 4]
    assert hub.feeds["g1"].view is not None and hub.feeds["g1"].view.score.home == 1
    late = await Viewer.open(server.watch_url, game="g1", since=1, epoch=hub.store.epoch)
    frames = await late.until_seq("g1", 4)
    assert [f["seq"] for f in frames if f["type"] == "delta"] == [2, 3, 4]
    for c in (viewer, late):
        await c.close()
    await tk.close()
    await ump.close()


async def test_a_heartbeat_never_counts_a_seq_its_viewers_have_not_been_sent(server: Server) -> None:
    """docs/protocol-viewer.md: a viewer that falls behind a heartbeat resumes. After a reload
    the fold is ahead of what viewers were sent until the deltas it folded are published:
    meanwhile the heartbeats say what was sent, so no viewer resumes for nothing; then the
    delta comes, and the heartbeats move on."""
    await server.setup_game("g1")
    viewer = await Viewer.open(server.watch_url, game="g1")
    await viewer.next("snapshot")
    tk = await server.device("timekeeper", "g1")
    await tk.send({"type": "clock.start", "game": "g1"})
    await viewer.until_seq("g1", 2)
    hub = server.svc.hub
    # Another writer's entry at seq 3, as a second node's: this node folds it on a reload.
    body = {"type": "whistle", "id": "other/w1", "game": "g1", "at": now_ms()}
    await hub.store.append(Record(game="g1", seq=3, device="other", client_id="w1", official="",
                                  digest=b"w1", received_at=now_ms(),
                                  body=codec.encode_event(codec.decode_event(json.dumps(body).encode()))))
    release = asyncio.Event()
    ensure = hub.feeds.ensure_history

    async def held(game: str, seq: int) -> None:   # the rebuild of the missed delta takes a while
        await release.wait()
        await ensure(game, seq)

    hub.feeds.ensure_history = held  # type: ignore[method-assign]
    reload = asyncio.create_task(hub.recover())
    try:
        await eventually(lambda: hub.seqs.get("g1") == 3)      # the fold has seq 3 ...
        for _ in range(3):                                     # ... the viewers do not, yet
            beat = await viewer.next("heartbeat")
            assert beat["seqs"]["g1"] == 2, beat
    finally:
        release.set()
        await reload
        hub.feeds.ensure_history = ensure  # type: ignore[method-assign]
    frames = await viewer.until_seq("g1", 3)
    assert (frames[-1]["type"], frames[-1]["seq"]) == ("delta", 3)
    beat = await viewer.next("heartbeat")
    assert beat["seqs"]["g1"] == 3
    await viewer.close()
    await tk.close()
