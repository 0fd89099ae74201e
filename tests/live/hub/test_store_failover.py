"""The service on etcd through a failover (real processes: a cluster of three members of
the test's own; the service in this process, real devices): the leader SIGKILLed, a new
one elected among the two left, the service acks again and no acked event is missing;
and while no majority of the members is up, nothing is acked (an ack is a write a
majority has on disk: docs/reliability.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from stream.tools.harness import EtcdCluster, game_log, node_hashes

from ..conftest import RunningServer


async def test_the_service_acks_again_after_a_failover_and_no_acked_event_is_missing(
        tmp_path: Path, etcd: EtcdCluster) -> None:
    async with RunningServer(tmp_path / "a", store=etcd.url("arena")) as a:
        await a.setup_game()
        tk = await a.device("timekeeper")
        await tk.send({"type": "clock.start", "game": "g1"})
        ump = await a.device("umpire")
        acked = [await ump.send({"type": "goal", "game": "g1", "team": "home"}) for _ in range(3)]
        # The leader crashes: the two members left elect another, and take writes again.
        old = await asyncio.to_thread(etcd.leader)
        await asyncio.to_thread(etcd.kill, old)
        acked.append(await ump.send({"type": "goal", "game": "g1", "team": "away"}, attempts=400))
        # One more member down: no majority, so no ack until it is back.
        leader = await asyncio.to_thread(etcd.leader)
        follower = next(m for m in etcd.members if m is not old and m is not leader)
        await asyncio.to_thread(etcd.kill, follower)
        sending = asyncio.create_task(ump.send({"type": "goal", "game": "g1", "team": "away"},
                                               attempts=400))
        await asyncio.sleep(2.0)
        assert not sending.done(), "acked while no majority of the members could have it on disk"
        await etcd.arestart(follower)
        async with asyncio.timeout(30):
            acked.append(await sending)
        await etcd.arestart(old)
        acked.append(await ump.send({"type": "goal", "game": "g1", "team": "home"}, attempts=60))
        log = await asyncio.to_thread(game_log, a.http, "g1")
        ids = [r["id"] for r in log]
        assert all(ids.count(ack["log_id"]) == 1 for ack in acked), (ids, acked)
        assert [r["type"] for r in log].count("goal") == len(acked) and len(log) == 2 + len(acked)
        status, ready = await a.api("GET", "/readyz")
        assert status == 200 and ready["store"]["members"] == 3, ready
        [(live, replayed)] = await asyncio.to_thread(node_hashes, a.http, token=a.admin)
        assert live == replayed
        for d in (tk, ump):
            await d.close()
