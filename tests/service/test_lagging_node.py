"""Two service nodes in this process on one real ``redis-server``: an event sent through
a node whose follower has not yet read what another node wrote is judged on the whole
log, never refused for what the node had not folded yet (docs/protocol-device.md,
``not_stored``; docs/reliability.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from stream.live import follower
from stream.live.hub import Hub

from .conftest import RunningServer, eventually


def _follower_of(hub: Hub) -> asyncio.Task[None]:
    """The node's log follower, as ``lifecycle.py`` started it."""
    for task in asyncio.all_tasks():
        frame = task.get_coro().cr_frame  # type: ignore[union-attr]
        if task.get_name() == "log-follower" and frame is not None and frame.f_locals.get("hub") is hub:
            return task
    raise AssertionError("no follower for this node")


async def test_events_through_a_node_behind_the_log_are_judged_on_the_whole_log(
        tmp_path: Path, redis_url: str) -> None:
    """Node B's follower stops a while. Meanwhile node A logs a whistle and sets up game g2.
    Through B, an official voids that whistle (naming no game: the protocol lets a void name
    only its target) and the timekeeper starts g2. B's fold knows neither: refused
    ``unknown_target`` and ``unknown_game``, both corrections would be lost though the log
    holds what they name. B reads up to the log's end first, then judges them: acked."""
    async with RunningServer(tmp_path, store=redis_url) as a, RunningServer(tmp_path, store=redis_url) as b:
        await a.setup_game("g1")
        await eventually(lambda: "g1" in b.svc.hub.feeds, timeout=10)
        stopped = _follower_of(b.svc.hub)
        stopped.cancel()
        await asyncio.wait([stopped], timeout=5)
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
