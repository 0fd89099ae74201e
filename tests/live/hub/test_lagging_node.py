"""Two service nodes in this process on one real etcd cluster: an event sent through
a node whose follower has not yet read what another node wrote is judged on the whole
log, never refused for what the node had not folded yet (docs/protocol-device.md,
``not_stored``; docs/reliability.md)."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest
import websockets

from stream.live.hub import follower
from stream.live.hub.hub import Hub

from ..conftest import RunningServer, Server, Viewer, eventually


def _follower_of(hub: Hub) -> asyncio.Task[None]:
    """The node's log follower, as ``lifecycle.py`` started it."""
    for task in asyncio.all_tasks():
        frame = task.get_coro().cr_frame  # type: ignore[union-attr]
        if task.get_name() == "log-follower" and frame is not None and frame.f_locals.get("hub") is hub:
            return task
    raise AssertionError("no follower for this node")


async def _stop_follower_of(a: Server, b: Server) -> Hub:
    """Game g1 set up through node A and read by node B; then B's follower stopped: B reads
    nothing more of the log until a test runs ``follower.run`` again. B's hub."""
    await a.setup_game("g1")
    await eventually(lambda: "g1" in b.svc.hub.feeds, timeout=10)
    hub = b.svc.hub
    stopped = _follower_of(hub)
    stopped.cancel()
    await asyncio.wait([stopped], timeout=5)
    return hub


async def _closed_store_unavailable(viewer: Viewer) -> None:
    """The node sends the viewer nothing but heartbeats, then closes it 1001 ``store unavailable``."""
    async with asyncio.timeout(10):
        while True:
            try:
                frame = await viewer.ws.recv()
            except websockets.ConnectionClosed as closed:
                assert closed.rcvd is not None
                assert (closed.rcvd.code, closed.rcvd.reason) == (1001, "store unavailable")
                return
            assert json.loads(frame)["type"] == "heartbeat", frame


async def test_events_through_a_node_behind_the_log_are_judged_on_the_whole_log(
        tmp_path: Path, etcd_url: str) -> None:
    """Node B's follower stops a while. Meanwhile node A logs a whistle and sets up game g2.
    Through B, an official voids that whistle (naming no game: the protocol lets a void name
    only its target) and the timekeeper starts g2. B's fold knows neither: refused
    ``unknown_target`` and ``unknown_game``, both corrections would be lost though the log
    holds what they name. B reads up to the log's end first, then judges them: acked."""
    async with RunningServer(tmp_path, store=etcd_url) as a, RunningServer(tmp_path, store=etcd_url) as b:
        await _stop_follower_of(a, b)
        tk_a = await a.device("timekeeper", "g1")
        whistle = await tk_a.send({"type": "clock.start", "game": "g1"})
        await a.setup_game("g2")
        ump_b = await b.device("umpire", "g1")
        tk_b = await b.device("timekeeper", "g2")
        void = asyncio.create_task(ump_b.send({"type": "void", "target": whistle["log_id"]}))
        start = asyncio.create_task(tk_b.send({"type": "clock.start", "game": "g2"}))
        await asyncio.sleep(0.3)                   # B waits for its follower: no answer yet
        assert not void.done() and not start.done()
        resumed = asyncio.create_task(follower.run(b.svc.hub), name="log-follower-again")
        try:
            voided, started = await void, await start
            assert (voided["type"], voided["game"], voided["seq"]) == ("ack", "g1", 3), voided
            assert (started["type"], started["game"], started["seq"]) == ("ack", "g2", 2), started
            await eventually(lambda: a.svc.hub.seqs == b.svc.hub.seqs, timeout=10)
            assert a.svc.hub.engine.state_hash() == b.svc.hub.engine.state_hash()
        finally:
            resumed.cancel()
            await asyncio.wait([resumed], timeout=5)
            for dev in (tk_a, ump_b, tk_b):
                await dev.close()


async def test_a_scoreboard_on_a_node_that_has_not_read_its_game_yet_gets_it_not_unknown_game(
        tmp_path: Path, etcd_url: str) -> None:
    """docs/protocol-viewer.md, "Subscribe": game g2 is set up through node A while node B's
    follower is stopped. A scoreboard subscribes to g2 on B: B does not answer
    ``unknown_game`` (a final answer: the scoreboard would wait for nothing), it waits for its
    follower to read the log to its end, then sends g2's snapshot. A game in no node's log is
    ``unknown_game`` still, once B is level with the log."""
    async with RunningServer(tmp_path, store=etcd_url) as a, RunningServer(tmp_path, store=etcd_url) as b:
        hub = await _stop_follower_of(a, b)
        await a.setup_game("g2")
        assert "g2" not in hub.feeds
        viewer = await Viewer.open(b.watch_url, game="g2")
        early = asyncio.create_task(viewer.next())
        await asyncio.sleep(0.3)                  # B waits for its follower: nothing yet
        assert not early.done(), early.result()
        resumed = asyncio.create_task(follower.run(hub), name="log-follower-again")
        try:
            first = await early
            assert (first["type"], first["game"]) == ("snapshot", "g2"), first
            assert first["seq"] == a.svc.hub.feeds["g2"].seq
            other = await Viewer.open(b.watch_url, game="nope")
            refused = await other.next("error")
            assert (refused["code"], refused["retry"]) == ("unknown_game", False), refused
            await other.close()
        finally:
            resumed.cancel()
            await asyncio.wait([resumed], timeout=5)
            await viewer.close()


async def test_a_scoreboard_on_a_node_that_cannot_read_its_game_in_time_is_closed_1001(
        tmp_path: Path, etcd_url: str) -> None:
    """docs/protocol-viewer.md, "Subscribe": node B's follower stays stopped, so B can't read
    the log up to the end where game g2's set-up lies. After 2 s the scoreboard's socket is
    closed 1001 ``store unavailable`` (heartbeats only before it: no ``unknown_game``); once B
    reads the log again, subscribing again brings g2's snapshot."""
    async with RunningServer(tmp_path, store=etcd_url) as a, RunningServer(tmp_path, store=etcd_url) as b:
        hub = await _stop_follower_of(a, b)
        await a.setup_game("g2")
        viewer = await Viewer.open(b.watch_url, game="g2")
        loop = asyncio.get_running_loop()
        began = loop.time()
        await _closed_store_unavailable(viewer)
        assert loop.time() - began >= 1.5  # it waited for the log, rather than answer at once
        resumed = asyncio.create_task(follower.run(hub), name="log-follower-again")
        try:
            back = await Viewer.open(b.watch_url, game="g2")
            first = await back.next()
            assert (first["type"], first["game"]) == ("snapshot", "g2"), first
            await back.close()
        finally:
            resumed.cancel()
            await asyncio.wait([resumed], timeout=5)


async def test_a_conduct_named_through_a_node_that_folds_its_card_meanwhile_is_acked(
        tmp_path: Path, etcd_url: str) -> None:
    """Node B's follower is stopped while node A logs a card; an official names its conduct
    through B, whose fold has no such card yet. B reads up to the log's end, and its follower
    folds the card just as B asks where that end is: the naming was judged before the card,
    so it is judged again, never refused ``not_a_card`` for a card the log holds. (B's store
    is made to answer "where is the end" only once its follower has read up to it: the one
    interleaving in which B is level with the log by the time it looks.)"""
    async with RunningServer(tmp_path, store=etcd_url) as a, RunningServer(tmp_path, store=etcd_url) as b:
        hub = await _stop_follower_of(a, b)
        tk_a, ump_a = await a.device("timekeeper", "g1"), await a.device("umpire", "g1")
        await tk_a.send({"type": "clock.start", "game": "g1"})
        card = await ump_a.send({"type": "card", "game": "g1", "color": "yellow",
                                 "official": {"team": "home", "role": "coach"}})
        resumed: list[asyncio.Task[None]] = []
        log, end = hub.store, hub.store.end  # type: ignore[attr-defined]

        async def end_once_folded() -> str:
            last = await end()
            if not resumed:
                resumed.append(asyncio.create_task(follower.run(hub), name="log-follower-again"))
                await eventually(lambda: hub.tail == last, timeout=10)
            return str(last)

        log.end = end_once_folded  # type: ignore[attr-defined]
        ump_b = await b.device("umpire", "g1")
        try:
            named = await ump_b.send({"type": "card.amended", "game": "g1", "target": card["log_id"],
                                      "conduct": "arguing"})
            assert (named["type"], named["seq"]) == ("ack", 4), named
            assert resumed, "B judged the naming on a fold that held the card already"
        finally:
            for task in resumed:
                task.cancel()
                await asyncio.wait([task], timeout=5)
            for dev in (tk_a, ump_a, ump_b):
                await dev.close()


async def test_a_resume_ahead_of_a_node_that_cannot_read_the_log_is_closed_1001_not_reset(
        tmp_path: Path, etcd_url: str) -> None:
    """docs/protocol-viewer.md, "Resume": a scoreboard moves from node A to node B, whose
    follower has not read A's latest event and can't read the log just now (its last read
    failed, as in a failover). After 2 s B has still not shown the viewer's ``seq``: it closes
    the socket 1001 ``store unavailable`` rather than reset the display to an older seq; the
    viewer's resume once B reads the log again gets exactly what follows."""
    async with RunningServer(tmp_path, store=etcd_url) as a, RunningServer(tmp_path, store=etcd_url) as b:
        hub = await _stop_follower_of(a, b)
        hub.races.readable = False  # what the follower's failed read of the log leaves
        tk = await a.device("timekeeper", "g1")
        try:
            seen = (await tk.send({"type": "clock.start", "game": "g1"}))["seq"]
            epoch = hub.store.epoch
            viewer = await Viewer.open(b.watch_url, game="g1", since=seen, epoch=epoch)
            await _closed_store_unavailable(viewer)  # no reset snapshot before it
            resumed = asyncio.create_task(follower.run(hub), name="log-follower-again")
            try:
                nxt = (await tk.send({"type": "clock.stop", "game": "g1"}))["seq"]
                back = await Viewer.open(b.watch_url, game="g1", since=seen, epoch=epoch)
                frames = await back.until_seq("g1", nxt)
                assert [(f["type"], f.get("seq")) for f in frames if f["type"] in ("snapshot", "delta")] == [
                    ("delta", nxt)]
                await back.close()
            finally:
                resumed.cancel()
                await asyncio.wait([resumed], timeout=5)
        finally:
            await tk.close()


async def test_a_node_whose_log_follower_stops_is_not_ready_and_says_why(
        tmp_path: Path, etcd_url: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """The follower ends on an error no read should raise (a bug, or a library failing it):
    the node would serve a log it no longer reads. It says so at once, in its log and on
    ``GET /readyz`` (503, the task and its error), rather than only when it stops."""
    caplog.set_level(logging.INFO)
    async with RunningServer(tmp_path, store=etcd_url) as node:
        status, doc = await node.api("GET", "/readyz")
        assert (status, doc["ready"], doc["reason"]) == (200, True, None), doc

        async def broken(*args: object, **kwargs: object) -> None:
            raise RuntimeError("a read that fails as no read should")

        monkeypatch.setattr(node.svc.hub.store, "read_after", broken)
        await eventually(lambda: node.svc.stopped is not None, timeout=5)
        status, doc = await node.api("GET", "/readyz")
        assert status == 503 and doc["ready"] is False, doc
        assert doc["reason"] == "log-follower stopped: RuntimeError: a read that fails as no read should"
        said = [r for r in caplog.records
                if r.getMessage() == "a task of the node stopped; the node is not ready"]
        assert said and said[0].exc_info is not None
