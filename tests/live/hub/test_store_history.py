"""The service on Redis through Sentinel (real processes: a primary, its replica, three
Sentinels; two nodes of the service in this process, real devices and viewers), when what
Redis holds is not the history the nodes served (docs/reliability.md, "Sentinel"):

* newest log entries gone, the epoch gone, or another epoch: found as the writer connects
  again (its connection cut with CLIENT KILL) and by each node's reads. Every write is
  refused (``not_stored`` with the reason), ``/readyz`` answers 503 with it, the metric
  ``arena_store_diverged`` is 1, and each node says so in one ERROR line;
* the operator accepts the history Redis holds (``POST /api/admin/store/accept``): a new
  epoch; both nodes take writes again, and every viewer, on either node, gets a snapshot
  with ``reset: true`` (``history_replaced``) and then the deltas that follow it;
* a failover: the primary SIGKILLed, the replica promoted, the service acks again and no
  acked event is missing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from stream.store.redis import WRITER_NAME
from stream.tools.harness import HOST, Processes, SentinelGroup, Viewer, game_log, node_hashes

from ..conftest import RunningServer, Server, eventually


@pytest.fixture
async def group(tmp_path: Path) -> AsyncIterator[SentinelGroup]:
    work = tmp_path / "redis"
    work.mkdir()
    async with Processes(work) as processes:
        g = SentinelGroup(work, group=processes)
        await g.astart()
        yield g


async def metric(server: Server, name: str) -> float:
    status, text = await server.api("GET", "/metrics")
    assert status == 200
    return float(next(line.split()[-1] for line in str(text).splitlines() if line.startswith(name + " ")))


async def readyz(server: Server) -> tuple[int, Any]:
    return await server.api("GET", "/readyz")


async def cut_writers(primary: Any) -> int:
    """CLIENT KILL every node's writer connection (they name themselves)."""
    killed = 0
    for c in await primary.client_list():
        if c.get("name") == WRITER_NAME:
            killed += await primary.client_kill_filter(_id=c["id"])
    return killed


async def damage(primary: Any, how: str) -> None:
    if how == "newest entries gone":   # a history behind what was served
        newest = await primary.xrevrange("arena:log", "+", "-", count=2)
        assert await primary.xdel("arena:log", *(i for i, _ in newest)) == 2
    elif how == "epoch gone":          # Redis emptied, or its data lost
        assert await primary.delete("arena:epoch") == 1
    else:                              # another log
        await primary.set("arena:epoch", "0123456789ab")


@pytest.mark.parametrize("how", ["newest entries gone", "epoch gone", "another epoch"])
async def test_a_history_in_question_holds_writes_until_the_operator_accepts_it(
        tmp_path: Path, group: SentinelGroup, how: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    primary = aioredis.Redis(host=HOST, port=group.primary.port)
    async with RunningServer(tmp_path / "a", store=group.url) as a, \
            RunningServer(tmp_path / "b", store=group.url) as b:
        await a.setup_game()
        tk = await a.device("timekeeper")
        await tk.send({"type": "clock.start", "game": "g1"})
        ump = await a.device("umpire")
        for team in ("home", "away", "home"):
            await ump.send({"type": "goal", "game": "g1", "team": team})
        await eventually(lambda: "g1" in b.svc.hub.feeds and b.svc.hub.feeds["g1"].seq == 5)
        viewers = [await Viewer.open(s.watch_url, game="g1") for s in (a, b)]
        for v in viewers:
            assert (await v.next("snapshot"))["seq"] == 5
        epoch = a.svc.hub.store.epoch

        await damage(primary, how)
        assert await cut_writers(primary) == 1  # (node B has not written: its writer never connected)
        reply = await ump.send_once({"type": "goal", "game": "g1", "team": "away", "id": "late"})
        assert (reply["type"], reply["code"], reply["retry"]) == ("error", "not_stored", True), reply
        assert "takes no writes" in reply["detail"], reply
        for node in (a, b):  # the other node finds it too, by its reads
            await eventually(lambda node=node: node.svc.hub.store.hold is not None, timeout=10)
            status, ready = await readyz(node)
            assert status == 503 and ready["ready"] is False and ready["reason"], ready
            assert await metric(node, "arena_store_diverged") == 1.0
        status, ready = await readyz(a)
        expected = {"newest entries gone": "no longer holds entry", "epoch gone": "no epoch",
                    "another epoch": "another log"}[how]
        assert expected in ready["reason"], ready
        assert not any(f["type"] == "delta" for v in viewers for f in v.frames), "nothing new was shown"

        status, done = await a.api("POST", "/api/admin/store/accept", {"reason": "the history Redis holds"})
        assert status == 200, done
        assert done["previous"] == epoch and done["epoch"] != epoch and done["by"] == "admin"
        seq = 3 if how == "newest entries gone" else 5
        if how == "newest entries gone":  # the counters and dedup keys made to agree with the log
            assert done["repaired"] == {"seqs": 1, "dedup_keys": 2, "game_entries": 2}, done
        for v in viewers:  # on either node: drop what you had, start from this
            snap = await v.next("snapshot", timeout=10)
            assert (snap["reset"], snap["reason"], snap["epoch"], snap["seq"]) == (
                True, "history_replaced", done["epoch"], seq), snap
        for node in (a, b):
            await eventually(lambda node=node: node.svc.hub.store.hold is None, timeout=10)
            await eventually(lambda node=node: not node.svc.hub.recovering, timeout=10)
            assert (await readyz(node))[0] == 200
            assert await metric(node, "arena_store_diverged") == 0.0
        ack = await ump.send({"type": "goal", "game": "g1", "team": "away", "id": "after"}, attempts=40)
        assert (ack["type"], ack["seq"], ack["duplicate"]) == ("ack", seq + 1, False), ack
        for v in viewers:
            delta = await v.next("delta", timeout=10)
            assert delta["seq"] == seq + 1
            await v.close()
        for d in (tk, ump):
            await d.close()
    await primary.aclose()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [(r.getMessage(), getattr(r, "hold", None)) for r in errors] == [
        ("the store takes no writes", "diverged")] * 2, "one ERROR line per node"
    assert not [r.getMessage() for r in caplog.records if r.exc_info], "no traceback"


async def test_the_service_acks_again_after_a_failover_and_no_acked_event_is_missing(
        tmp_path: Path, group: SentinelGroup) -> None:
    # An ack waits up to 2 s for the replica: as long as a loaded machine's fsync may take.
    async with RunningServer(tmp_path / "a", store=group.url, redis_wait_ms=2000) as a:
        await a.setup_game()
        tk = await a.device("timekeeper")
        await tk.send({"type": "clock.start", "game": "g1"})
        ump = await a.device("umpire")
        acked = [await ump.send({"type": "goal", "game": "g1", "team": "home"}) for _ in range(3)]
        old = await asyncio.to_thread(group.kill_primary)
        sending = asyncio.create_task(ump.send({"type": "goal", "game": "g1", "team": "away"},
                                               attempts=400))
        await asyncio.to_thread(group.wait_promoted, old)
        await asyncio.sleep(0.5)
        assert not sending.done(), "acked while no replica could confirm it"
        await group.arejoin(old)
        async with asyncio.timeout(30):
            acked.append(await sending)
        acked.append(await ump.send({"type": "goal", "game": "g1", "team": "home"}, attempts=60))
        log = await asyncio.to_thread(game_log, a.http, "g1")
        ids = [r["id"] for r in log]
        assert all(ids.count(ack["log_id"]) == 1 for ack in acked), (ids, acked)
        assert [r["type"] for r in log].count("goal") == len(acked) and len(log) == 2 + len(acked)
        assert (await readyz(a))[0] == 200
        [(live, replayed)] = await asyncio.to_thread(node_hashes, a.http, token=a.admin)
        assert live == replayed
        for d in (tk, ump):
            await d.close()


async def test_there_is_nothing_to_accept_on_a_store_whose_history_is_not_in_question(
        server: Server) -> None:
    status, doc = await server.api("POST", "/api/admin/store/accept", {"reason": "just in case"})
    assert (status, doc["code"]) == (409, "not_diverged"), doc
    status, doc = await server.api("POST", "/api/admin/store/accept", {"reason": ""})
    assert (status, doc["code"]) == (400, "invalid_field"), doc
    scoped = server.token("admin", "arena-admin", arena="a1")
    status, doc = await server.api("POST", "/api/admin/store/accept", {"reason": "x"}, token=scoped)
    assert (status, doc["code"]) == (403, "out_of_scope"), doc
    status, _ = await server.api("POST", "/api/admin/store/accept", {"reason": "x"},
                                 token=server.token("umpire", "ump", game="g1"))
    assert status == 403
