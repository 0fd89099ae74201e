"""A viewer cut off mid-game resumes with exactly what it missed: no gap, no
duplicate; a resume that can't be served exactly says so with a reset
snapshot; the deltas survive a restart (they are rebuilt from the log); and
MessagePack viewers see the same frames as JSON ones."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
import websockets

from stream.tools.device_client import Device

from ..conftest import RunningServer, Server, Viewer, view_after


class Officials:
    """Two handhelds playing a valid game, one event at a time, each awaited."""

    def __init__(self, tk: Device, ump: Device) -> None:
        self.tk, self.ump = tk, ump
        self.n = 0
        self.acks: list[dict[str, Any]] = []

    @classmethod
    async def open(cls, server: Server, tag: str = "") -> Officials:
        """(A device's event ids are its own forever: after a restart, new devices get a ``tag``.)"""
        return cls(await server.device("timekeeper", name=f"tk{tag}" if tag else None),
                   await server.device("umpire", name=f"ump{tag}" if tag else None))

    async def play(self, count: int) -> int:
        """``count`` more events (start, card, goal, whistle, void, ...); the last seq."""
        script: list[tuple[Device, dict[str, Any]]] = [
            (self.tk, {"type": "clock.start"}),
            (self.ump, {"type": "card", "color": "yellow", "conduct": "arguing"}),
            (self.ump, {"type": "goal", "team": "away", "player": "a1"}),
            (self.tk, {"type": "clock.start"}),
            (self.ump, {"type": "whistle"}),
            (self.tk, {"type": "clock.start"}),
            (self.ump, {"type": "goal", "team": "home", "player": "h1", "points": 2}),
            (self.ump, {"type": "void"}),  # the goal just before: the clock runs again
            (self.ump, {"type": "whistle"}),
        ]
        for _ in range(count):
            dev, body = script[self.n % len(script)]
            event = {**body, "game": "g1"}
            if event["type"] == "void":
                event["target"] = self.acks[-1]["log_id"]
            if event["type"] == "card":
                event["player"] = ["h2", "a2", "h3", "a3"][self.n // len(script) % 4]
            self.acks.append(await dev.send(event))
            self.n += 1
        return int(self.acks[-1]["seq"])

    async def close(self) -> None:
        await self.tk.close()
        await self.ump.close()


def deltas(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in frames if f["type"] == "delta"]


def seqs(frames: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(f["type"], f["seq"]) for f in frames if f["type"] in ("delta", "snapshot")]


async def quiet(viewer: Viewer) -> list[dict[str, Any]]:
    """Whatever the viewer is sent before the pong to a ping sent now (heartbeats aside)."""
    await viewer.ws.send(json.dumps({"type": "ping", "device_time": 1}))
    got = []
    while (m := await viewer.next()) and m["type"] != "pong":
        got.append(m)
    return got


async def test_viewer_cut_off_resumes_with_exactly_what_it_missed(server: Server) -> None:
    await server.setup_game()
    witness = await Viewer.open(server.watch_url, game="g1")  # never cut off
    viewer = await Viewer.open(server.watch_url, game="g1")
    snap = await viewer.next("snapshot")
    await witness.next("snapshot")
    epoch = snap["epoch"]
    assert (snap["seq"], snap["reset"]) == (1, False)
    officials = await Officials.open(server)

    seen = await officials.play(5)
    await viewer.until_seq("g1", seen)
    assert seqs(viewer.frames) == [("snapshot", 1)] + [("delta", s) for s in range(2, seen + 1)]
    await viewer.close()

    last = await officials.play(9)  # a card, goals, a void: all missed
    back = await Viewer.open(server.watch_url, game="g1", since=seen, epoch=epoch)
    missed = await back.until_seq("g1", last)
    assert seqs(missed) == [("delta", s) for s in range(seen + 1, last + 1)]  # no snapshot, no gap
    # the very deltas the witness was sent live, field by field
    live = deltas(await witness.until_seq("g1", last))
    assert missed == live[seen - 1:]
    # then live ones, each once
    nxt = await officials.play(1)
    after = await back.next()
    assert seqs([after]) == [("delta", nxt)]
    assert await quiet(back) == []
    _, now = await server.api("GET", "/api/games/g1")
    assert now["seq"] == nxt
    assert view_after([*viewer.frames, *missed, after]) == now["view"]
    await officials.close()
    for v in (witness, back):
        await v.close()


async def test_resume_in_a_subscribe_frame_and_with_nothing_missed(server: Server) -> None:
    await server.setup_game()
    officials = await Officials.open(server)
    last = await officials.play(6)
    epoch = server.svc.hub.store.epoch
    # the same resume, asked in a frame instead of the URL
    viewer = Viewer(await websockets.connect(server.watch_url))
    await viewer.ws.send(json.dumps({"type": "subscribe", "game": "g1", "since": 3, "epoch": epoch}))
    assert seqs(await viewer.until_seq("g1", last)) == [("delta", s) for s in range(4, last + 1)]
    await viewer.close()
    # up to date already: nothing at all until the next event
    viewer = await Viewer.open(server.watch_url, game="g1", since=last, epoch=epoch)
    assert await quiet(viewer) == []
    nxt = await officials.play(1)
    assert seqs([await viewer.next()]) == [("delta", nxt)]
    # from 0: every delta, the setup's first (the whole view)
    zero = await Viewer.open(server.watch_url, game="g1", since=0, epoch=epoch)
    frames = await zero.until_seq("g1", nxt)
    assert seqs(frames) == [("delta", s) for s in range(1, nxt + 1)]
    assert [p[0] for p in frames[0]["patch"]] == [""]
    await officials.close()
    await viewer.close()
    await zero.close()


@pytest.mark.parametrize("case", ["wrong_epoch", "no_epoch", "since_beyond_seq", "since_far_beyond"])
async def test_resume_that_cannot_be_served_gets_a_reset_snapshot(server: Server, case: str) -> None:
    await server.setup_game()
    officials = await Officials.open(server)
    last = await officials.play(4)
    epoch = server.svc.hub.store.epoch
    queries: dict[str, dict[str, Any]] = {
        "wrong_epoch": {"since": 2, "epoch": "0" * 12},
        "no_epoch": {"since": 2},
        "since_beyond_seq": {"since": last + 1, "epoch": epoch},
        "since_far_beyond": {"since": 10**30, "epoch": epoch},
    }
    query = queries[case]
    viewer = await Viewer.open(server.watch_url, game="g1", **query)
    snap = await viewer.next()
    assert snap["type"] == "snapshot"
    assert (snap["seq"], snap["epoch"], snap["reset"], snap["reason"]) == (last, epoch, True,
                                                                          "resume_unavailable")
    _, now = await server.api("GET", "/api/games/g1")
    assert snap["view"] == now["view"]
    assert await quiet(viewer) == []  # nothing repeated after the snapshot
    nxt = await officials.play(2)
    assert seqs(await viewer.until_seq("g1", nxt)) == [("delta", last + 1), ("delta", nxt)]
    await officials.close()
    await viewer.close()


async def test_deltas_rebuilt_after_a_restart_equal_the_live_ones(tmp_path: Path) -> None:
    first = RunningServer(tmp_path)
    async with first as server:
        await server.setup_game()
        viewer = await Viewer.open(server.watch_url, game="g1")
        snap = await viewer.next("snapshot")
        epoch = snap["epoch"]
        officials = await Officials.open(server)
        last = await officials.play(17)
        live = deltas(await viewer.until_seq("g1", last))
        assert [d["seq"] for d in live] == list(range(2, last + 1))
        await officials.close()
    with pytest.raises(websockets.ConnectionClosed):  # the restart closes every viewer
        await viewer.next(timeout=5)

    async with RunningServer(tmp_path, port=first.port) as server:
        assert server.svc.hub.store.epoch == epoch
        back = await Viewer.open(server.watch_url, game="g1", since=1, epoch=epoch)
        rebuilt = await back.until_seq("g1", last)
        assert seqs(rebuilt) == [("delta", s) for s in range(2, last + 1)]
        for was, now in zip(live, rebuilt, strict=True):
            assert now == was, now["seq"]
        # a resume from the middle, and from the start (setup delta: the first snapshot's view)
        mid = await Viewer.open(server.watch_url, game="g1", since=9, epoch=epoch)
        assert await mid.until_seq("g1", last) == [d for d in live if d["seq"] > 9]
        zero = await Viewer.open(server.watch_url, game="g1", since=0, epoch=epoch)
        frames = await zero.until_seq("g1", last)
        assert frames[0]["patch"] == [["", snap["view"]]] and frames[1:] == live
        # and it all goes on live
        officials = await Officials.open(server, tag="-after")
        officials.n = 17  # carry on where the game was: the clock is stopped
        nxt = await officials.play(2)
        for v in (back, mid, zero):
            got = await v.until_seq("g1", nxt)
            assert seqs(got) == [("delta", last + 1), ("delta", nxt)]
        _, view = await server.api("GET", "/api/games/g1")
        assert view_after([snap, *live, *deltas(back.frames)[-2:]]) == view["view"]
        await officials.close()
        for v in (back, mid, zero):
            await v.close()


async def played_and_stopped(data: Path, events: int) -> tuple[int, int, str]:
    """A service that played ``events`` events of g1 and stopped: its port, the last
    ``seq`` and the log's epoch, for a restart on the same data to resume against."""
    first = RunningServer(data)
    async with first as server:
        await server.setup_game()
        officials = await Officials.open(server)
        last = await officials.play(events)
        epoch = server.svc.hub.store.epoch
        await officials.close()
    return first.port, last, epoch


async def test_resume_after_a_restart_with_nothing_missed_and_with_a_gap(tmp_path: Path) -> None:
    port, last, epoch = await played_and_stopped(tmp_path, 5)
    async with RunningServer(tmp_path, port=port) as server:
        up_to_date = await Viewer.open(server.watch_url, game="g1", since=last, epoch=epoch)
        assert await quiet(up_to_date) == []
        behind = await Viewer.open(server.watch_url, game="g1", since=2, epoch=epoch)
        assert seqs(await behind.until_seq("g1", last)) == [("delta", s) for s in range(3, last + 1)]
        beyond = await Viewer.open(server.watch_url, game="g1", since=last + 5, epoch=epoch)
        snap = await beyond.next()
        assert (snap["type"], snap["seq"], snap["reason"]) == ("snapshot", last, "resume_unavailable")
        for v in (up_to_date, behind, beyond):
            await v.close()


async def test_a_resume_from_a_seq_this_node_has_not_shown_yet_waits_for_it(server: Server) -> None:
    """docs/protocol-viewer.md, "Resume": a viewer that moves from a node a few events ahead
    (its ``since`` beyond this node's latest) is not reset: the node waits (up to 4 s) until
    it has shown that ``seq``, then sends exactly what follows, as any resume."""
    await server.setup_game()
    officials = await Officials.open(server)
    last = await officials.play(3)
    epoch = server.svc.hub.store.epoch
    viewer = await Viewer.open(server.watch_url, game="g1", since=last + 1, epoch=epoch)
    await asyncio.sleep(0.2)                      # it waits: the node has not shown last + 1
    ahead = await officials.play(1)               # now it has
    assert ahead == last + 1
    nxt = await officials.play(1)
    frames = await viewer.until_seq("g1", nxt)
    assert seqs(frames) == [("delta", nxt)]       # no reset, no repeat of what it had
    await viewer.close()
    await officials.close()


async def test_msgpack_viewer_gets_the_same_frames_as_a_json_viewer(server: Server) -> None:
    await server.setup_game()
    officials = await Officials.open(server)
    await officials.play(3)
    as_json = await websockets.connect(f"{server.watch_url}?game=g1")
    as_mp = await websockets.connect(f"{server.watch_url}?game=g1&format=msgpack")
    last = await officials.play(8)

    async def read(ws: Any, kind: type) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        async with asyncio.timeout(5):
            while not out or out[-1].get("seq") != last:
                raw: Any = await ws.recv()
                right_kind = isinstance(raw, kind)
                assert right_kind, type(raw)  # text frames for JSON, binary for MessagePack
                msg = msgspec.json.decode(raw) if kind is str else msgspec.msgpack.decode(raw)
                if msg["type"] not in ("heartbeat", "presence"):
                    out.append(msg)
        return out

    got_json, got_mp = await read(as_json, str), await read(as_mp, bytes)
    assert seqs(got_json) == [("snapshot", 4)] + [("delta", s) for s in range(5, last + 1)]
    assert got_mp == got_json
    # a resume in MessagePack, asked in a MessagePack frame
    resumed = await websockets.connect(f"{server.watch_url}?format=msgpack")
    await resumed.send(msgspec.msgpack.encode({"type": "subscribe", "game": "g1", "since": 6,
                                               "epoch": server.svc.hub.store.epoch}))
    catch_up = await read(resumed, bytes)
    assert catch_up == got_json[-len(catch_up):] and catch_up[0]["seq"] == 7
    # a JSON frame is not MessagePack: a (MessagePack) error, and the socket stays
    await resumed.send(json.dumps({"type": "ping"}).encode())
    err: Any = {"type": "presence"}
    while err["type"] in ("presence", "heartbeat", "roster"):
        raw: Any = await resumed.recv()
        err = msgspec.msgpack.decode(raw)
    assert (err["type"], err["code"]) == ("error", "invalid_frame")
    await officials.close()
    for ws in (as_json, as_mp, resumed):
        await ws.close()


async def test_deltas_applied_in_order_reproduce_the_committed_view(server: Server) -> None:
    """One event at a time: a display that applies every patch shows what the service holds."""
    await server.setup_game()
    viewer = await Viewer.open(server.watch_url, game="g1")
    await viewer.next("snapshot")
    officials = await Officials.open(server)
    for _ in range(4):
        last = await officials.play(4)
        await viewer.until_seq("g1", last)
        _, now = await server.api("GET", "/api/games/g1")
        assert view_after(viewer.frames) == now["view"]
    await officials.close()
    await viewer.close()


async def test_concurrent_events_from_two_devices_keep_displays_right(server: Server) -> None:
    await server.setup_game()
    viewer = await Viewer.open(server.watch_url, game="g1")
    await viewer.next("snapshot")
    tk1, tk2 = await server.device("timekeeper"), await server.device("timekeeper")
    seen = (await tk1.send({"type": "clock.start", "game": "g1"}))["seq"]
    for i in range(25):  # within the devices' burst allowance
        # two timekeepers press at once: stop and start (one of them may be refused)
        await asyncio.gather(tk1.send_once({"type": "clock.stop", "game": "g1", "id": f"stop{i}"}),
                             tk2.send_once({"type": "clock.start", "game": "g1", "id": f"start{i}"}))
        _, now = await server.api("GET", "/api/games/g1")
        if now["seq"] > seen:
            await viewer.until_seq("g1", now["seq"])
            seen = now["seq"]
        shown = view_after(viewer.frames)
        assert shown["clock"] == now["view"]["clock"], f"after round {i}"
        assert shown == now["view"]
    await tk1.close()
    await tk2.close()
    await viewer.close()


async def test_a_resume_out_of_the_tokens_scope_reads_nothing_from_the_log(tmp_path: Path) -> None:
    """A display token of another game asking to resume from before what the node holds
    gets ``out_of_scope``, and the node folds nothing from its log for it; the same resume
    with the game's own token is rebuilt from the log."""
    port, last, epoch = await played_and_stopped(tmp_path, 5)
    async with RunningServer(tmp_path, port=port) as server:
        feeds = server.svc.hub.feeds
        assert feeds.needs_history("g1", 2)   # restarted: the deltas after 2 are in the log only
        for scope, wanted in (("g9", "error"), ("g1", "delta")):
            async with websockets.connect(server.watch_url, open_timeout=5) as ws:
                token = server.token("display", "board", game=scope)
                await ws.send(json.dumps({"type": "auth", "token": token}))
                await ws.send(json.dumps({"type": "subscribe", "game": "g1", "since": 2, "epoch": epoch}))
                while (frame := json.loads(await asyncio.wait_for(ws.recv(), 5)))["type"] not in (
                        "error", "delta", "snapshot"):
                    pass
            assert frame["type"] == wanted, frame
            if scope == "g9":
                assert frame["code"] == "out_of_scope"
                assert feeds.needs_history("g1", 2), "nothing was folded from the log"
            else:
                assert frame["seq"] == 3 and not feeds.needs_history("g1", 2)
    assert last > 3
