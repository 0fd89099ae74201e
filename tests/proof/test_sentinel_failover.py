"""Proof 9: Redis failovers under Sentinel, under load.

A primary, its replica and three Sentinels (``SentinelGroup``: real processes,
``appendfsync always`` on both servers, ``down-after-milliseconds`` 500); two nodes of
the service reaching them through the Sentinels (``redis+sentinel://``, acks waiting
for the replica); three officials' devices sending to one game on both nodes (each
resends until acked, moving to the other node when its own can't be reached);
scoreboards in worker processes, half on each node, each resuming on either; at each
kill a tenth of them leave their node and resume on the other (``since``/``epoch``).

At random moments under that load the Redis primary is SIGKILLed, again and again:
the Sentinels promote the replica, and the old primary comes back as the new
primary's replica. The officials' stream is a tournament's: whistles and goals, and
now and then a void of an earlier whistle, a card to a team official and its conduct
named later; each device resends as docs/protocol-device.md says, and gives up on a
final refusal, which none of them may meet. Pass: no acked event lost, none twice,
none logged that was not sent, each device's order kept; no heartbeat ahead of what
its viewer had been sent; no ack while the promoted primary had no replica to
confirm it; every viewer saw every ``seq`` once, in order, with no reset snapshot; both
nodes' live state equals a fresh replay of the log. Measured: from the SIGKILL to the
promotion, and to the first ack after it.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp

from stream.tools.harness import (
    Device,
    Officials,
    Process,
    Processes,
    SentinelGroup,
    ServiceProcess,
    game_log,
    node_hashes,
    tally,
)

from ..rules.script import AWAY, HOME
from .conftest import Figures, scale

READY_EVERY_S = 0.05


async def _viewers(processes: Processes, urls: list[str], count: int, name: str) -> Process:
    worker = processes.spawn(name, "-m", "tests.proof.failover_worker", "--urls", ",".join(urls),
                             "--count", str(count), "--game", "g1", stdin=True, stdout=True)
    line = await worker.areadline(90)
    assert line.startswith("ready"), f"{name}: {line!r}{worker.tail()}"
    return worker


async def _first_ack_after(officials: Officials, t: float, within: float = 60) -> float:
    """When the first event was acked after ``t`` (monotonic)."""
    deadline = time.monotonic() + within
    while True:
        after = [acked for _, acked in officials.times.values() if acked > t]
        if after:
            return min(after)
        assert time.monotonic() < deadline, f"no ack within {within:g} s"
        await asyncio.sleep(0.02)


async def _readiness(http: str, stop: asyncio.Event, unready: list[tuple[float, str]]) -> None:
    """``GET /readyz`` every ``READY_EVERY_S`` until ``stop``: each answer that was not 200,
    with its reason (a node that does not answer within the interval counts too)."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=READY_EVERY_S * 4)) as http_:
        while not stop.is_set():
            t = time.monotonic()
            try:
                async with http_.get(f"{http}/readyz") as r:
                    if r.status != 200:
                        unready.append((t, str((await r.json()).get("reason"))))
            except (aiohttp.ClientError, TimeoutError) as err:
                unready.append((t, type(err).__name__))
            await asyncio.sleep(max(0.0, READY_EVERY_S - (time.monotonic() - t)))


async def _probe(url: str, token: str, stop: asyncio.Event, acks: list[float]) -> None:
    """A device on one node that resends every 50 ms (no backoff) until acked, then sends the
    next event: when it is acked again after a failover is when that node takes writes again."""
    d = Device(url, token, prefix="probe")
    try:
        while not stop.is_set():
            await d.send({"type": "whistle", "game": "g1"}, attempts=100_000, wait_s=2, resend_s=0.05)
            acks.append(time.monotonic())
            await asyncio.sleep(0.1)
    finally:
        await d.close()


def _metric(text: str, name: str) -> float:
    """The value of one sample in a Prometheus text exposition."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"no {name} in /metrics")


def _first_after(times: list[float], t: float) -> float:
    return min((x for x in times if x > t), default=float("inf"))


async def test_redis_primary_sigkilled_again_and_again_loses_no_acked_event(
        tmp_path: Path, figures: Figures) -> None:
    kills, viewers = scale(3, 12), scale(60, 500)
    rng = random.Random(2026)
    async with Processes(tmp_path) as processes:
        group = SentinelGroup(tmp_path, group=processes)
        shared = tmp_path / "shared"   # one secret.key: a token of either node is taken by both
        nodes = [processes.add(ServiceProcess(
            shared, store=group.url, name=f"node-{x}",
            args=["--device-rate", "1000", "--device-burst", "1000", "--redis-wait-ms", "500"]))
            for x in "ab"]
        a, b = nodes
        await group.astart()
        for node in nodes:
            await node.astart()
        a.post("/api/games", {"id": "s1", "game": "g1", "event": "cup", "class": "club", "handicap": 8,
                              "teams": {"home": {"team": "h", "players": HOME},
                                        "away": {"team": "a", "players": AWAY}}})
        tokens = {f"ump{i}": a.post("/api/tokens", {"role": "umpire", "device": f"ump{i}",
                                                     "game": "g1"})["token"] for i in range(3)}
        timer = Device(a.device_url, a.post("/api/tokens", {"role": "timekeeper", "device": "tk",
                                                            "game": "g1"})["token"], prefix="tk")
        await timer.send({"type": "clock.start", "game": "g1"})
        await timer.close()
        workers = [await _viewers(processes, [n.watch_url, m.watch_url], viewers // 2, f"viewers-{n.name}")
                   for n, m in ((a, b), (b, a))]
        officials = Officials([n.device_url for n in nodes], tokens, scale(30, 40), "g1", attempts=2000,
                              corrections=True)
        officials.start()
        stop = asyncio.Event()
        unready: list[list[tuple[float, str]]] = [[], []]
        probe_acks: list[list[float]] = [[], []]
        watching = [asyncio.create_task(_readiness(n.http, stop, u))
                    for n, u in zip(nodes, unready, strict=True)]
        probes = [asyncio.create_task(_probe(n.device_url, a.post("/api/tokens", {
            "role": "umpire", "device": f"probe-{n.name}", "game": "g1"})["token"], stop, acks))
            for n, acks in zip(nodes, probe_acks, strict=True)]
        failovers: list[dict[str, float]] = []
        t0 = time.monotonic()
        for _ in range(kills):
            await asyncio.sleep(rng.uniform(1.0, 4.0))   # a random moment of the stream
            t_kill = time.monotonic()
            old = await asyncio.to_thread(group.kill_primary)
            for w in workers:  # a tenth of the scoreboards move to the other node meanwhile
                w.write_line(f"hop {max(1, viewers // 20)}")
            await asyncio.to_thread(group.wait_promoted, old)
            t_promoted = time.monotonic()
            await asyncio.sleep(rng.uniform(0.0, 1.0))   # the new primary alone a while
            t_rejoin = time.monotonic()
            await group.arejoin(old)
            t_synced = time.monotonic()
            t_ack = await _first_ack_after(officials, t_promoted)
            failovers.append({"promoted": t_promoted - t_kill, "first_ack": t_ack - t_kill,
                              "alone": t_rejoin - t_promoted, "synced": t_synced,
                              "promoted_at": t_promoted})
            # With no replica, no write can be confirmed: no ack between promotion and rejoin.
            failovers[-1]["acked_alone"] = sum(t_promoted < acked < t_rejoin
                                               for _, acked in officials.times.values())
        await asyncio.sleep(2.0)
        stop.set()
        await asyncio.gather(*watching, *probes)
        await officials.finish(within=120)
        run_s = time.monotonic() - t0
        # The game goes on a moment after the officials stop (the deadline timer's ticks, a
        # retry's answer): the final seq is the one both nodes agree on.
        deadline = time.monotonic() + 30
        while (final := int(a.get("/api/games/g1")["seq"])) != (seq_b := int(b.get("/api/games/g1")["seq"])):
            assert time.monotonic() < deadline, f"node B at seq {seq_b}, node A at {final}"
            await asyncio.sleep(0.05)
        reports: list[dict[str, Any]] = []
        for w in workers:
            w.write_line(f"stop {final} 60")
            line = await w.areadline(90)
            assert line.startswith("{"), f"{w.name}: {line!r}{w.tail()}"
            reports.append(json.loads(line))
        rows = await asyncio.to_thread(game_log, a.http, "g1")
        hashes = await asyncio.to_thread(node_hashes, a.http, b.http, token=a.admin)
        scraped = [await asyncio.to_thread(_scrape, n.http) for n in nodes]

    log = tally(rows, officials.sent, officials.acked)
    acked = sum(map(len, officials.acked.values()))
    seen = {k: sum(r[k] for r in reports) for k in ("viewers", "caught_up", "gaps", "repeats", "resets",
                                                   "reconnects", "heartbeats", "ahead")}
    promoted = [f["promoted"] for f in failovers]
    first_ack = [f["first_ack"] for f in failovers]
    acked_alone = sum(int(f["acked_alone"]) for f in failovers)
    live_ok = all(live == replayed for live, replayed in hashes) and hashes[0][0] == hashes[1][0]
    figures(f"Redis primary SIGKILLed {len(failovers)} times at random moments in {run_s:.0f} s under "
            f"{officials.rate:.0f} events/s from {len(tokens)} devices on 2 nodes through 3 Sentinels, "
            f"{seen['viewers']} viewers: {acked:,} events acked, lost {log.lost}, duplicates {log.doubled}, "
            f"logged but never sent {log.unsent}, each device's order kept {log.order_kept}; acked while "
            f"the promoted primary had no replica {acked_alone}; among them "
            + ", ".join(f"{n} {k}" for k, n in sorted(officials.kinds.items()))
            + " (every one acked: no final refusal)",
            kills=len(failovers), acked=acked, lost=log.lost, duplicates=log.doubled, unsent=log.unsent,
            acked_alone=acked_alone)
    figures(f"from the SIGKILL to the promotion: median {statistics.median(promoted):.2f} s, worst "
            f"{max(promoted):.2f} s; to the first ack after it: median {statistics.median(first_ack):.2f} s, "
            f"worst {max(first_ack):.2f} s (the old primary back as a replica after "
            f"{statistics.median(f['alone'] for f in failovers):.2f} s, median)",
            promoted_median_s=statistics.median(promoted), promoted_worst_s=max(promoted),
            first_ack_median_s=statistics.median(first_ack), first_ack_worst_s=max(first_ack))
    figures(f"viewers: every one caught up to seq {final}: {seen['caught_up']} of {seen['viewers']}; gaps "
            f"{seen['gaps']}, repeats {seen['repeats']}, reset snapshots {seen['resets']}, reconnects "
            f"{seen['reconnects']}; heartbeats {seen['heartbeats']}, ahead of what the viewer had been sent "
            f"{seen['ahead']}; both nodes' live state = replay of the log {live_ok} "
            f"({hashes[0][0][:16]}…)", **seen)
    # Per node, per failover: from the replica back in sync (acks can be confirmed again) to
    # the node's probe's next ack; and, for the officials, whose devices back off, to theirs.
    taken = [[_first_after(acks, f["synced"]) - f["synced"] for f in failovers] for acks in probe_acks]
    officials_after = [_first_after([t for _, t in officials.times.values()], f["synced"]) - f["synced"]
                       for f in failovers]
    # From the promotion to the first ack of either probe: the Sentinels' part excluded, the old
    # primary's return and sync included (with one replica, no ack can come before it).
    after_promotion = [min(_first_after(acks, f["promoted_at"]) for acks in probe_acks) - f["promoted_at"]
                       for f in failovers]
    sync_s = [f["synced"] - f["promoted_at"] for f in failovers]
    reloads = [int(_metric(m, "arena_log_reloads")) for m in scraped]
    settled = [int(_metric(m, 'arena_failed_writes_settled{outcome="taken_back"}')) for m in scraped]
    settle_reloads = [int(_metric(m, 'arena_failed_writes_settled{outcome="reloaded"}')) for m in scraped]
    race_reloads = [int(_metric(m, 'arena_seq_races_lost{outcome="reloaded"}')) for m in scraped]
    unready_s = [len(u) * READY_EVERY_S for u in unready]
    figures(f"from the replica back in sync to the next ack, a probe resending every 50 ms: node A median "
            f"{statistics.median(taken[0]):.2f} s, worst {max(taken[0]):.2f} s; node B median "
            f"{statistics.median(taken[1]):.2f} s, worst {max(taken[1]):.2f} s; the officials (backing off "
            f"to 2 s) median {statistics.median(officials_after):.2f} s, worst {max(officials_after):.2f} s; "
            f"from the promotion to a probe's next ack: median {statistics.median(after_promotion):.2f} s, "
            f"worst {max(after_promotion):.2f} s (the old primary back in sync "
            f"{statistics.median(sync_s):.2f} s after the promotion, median)",
            probe_a_median_s=statistics.median(taken[0]), probe_a_worst_s=max(taken[0]),
            probe_b_median_s=statistics.median(taken[1]), probe_b_worst_s=max(taken[1]),
            promotion_to_ack_median_s=statistics.median(after_promotion))
    figures(f"failed writes settled game by game: node A {settled[0]}, node B {settled[1]}; by a fold of "
            f"the whole log (an event in flight that changed more than its game): A {settle_reloads[0]}, "
            f"B {settle_reloads[1]}; whole-log folds in all: A {reloads[0]}, B {reloads[1]}; /readyz not 200 "
            f"(sampled every {READY_EVERY_S * 1000:.0f} ms): A {unready_s[0]:.2f} s, B {unready_s[1]:.2f} s"
            + "".join(f"; {sorted({r for _, r in u})}" for u in unready if u),
            settled_a=settled[0], settled_b=settled[1], reloads_a=reloads[0], reloads_b=reloads[1],
            unready_a_s=unready_s[0], unready_b_s=unready_s[1])
    assert len(failovers) == kills
    # A failover costs a node no fold of the whole log, except for an event in flight that
    # changed more than its own game (a void, say: docs/reliability.md).
    assert all(r == sr + rr for r, sr, rr in zip(reloads, settle_reloads, race_reloads, strict=True)), (
        reloads, settle_reloads, race_reloads)
    assert sum(settled) > 0, "no failed write met: the failovers did not land under load"
    # A node stopped being ready only while it folded the whole log again.
    assert all(not u or r > 0 for u, r in zip(unready, reloads, strict=True)), unready
    assert log.ok, log
    assert log.logged == acked and len(rows) == final, "the log holds seq 1 to the last, nothing more"
    assert acked_alone == 0, "an ack while no replica could confirm it"
    assert (seen["gaps"], seen["repeats"], seen["resets"]) == (0, 0, 0), [r["first_gaps"] for r in reports]
    assert seen["ahead"] == 0, "a heartbeat vouched for a seq its viewer had not been sent"
    assert seen["reconnects"] >= len(failovers) * 2 * max(1, viewers // 20), "the scoreboards did not move"
    assert officials.kinds.get("void", 0) > 0 and officials.kinds.get("card.amended", 0) > 0, officials.kinds
    assert seen["caught_up"] == seen["viewers"] == viewers // 2 * 2
    assert live_ok, hashes


def _scrape(http: str) -> str:
    with urllib.request.urlopen(f"{http}/metrics", timeout=10) as r:
        return str(r.read().decode())
