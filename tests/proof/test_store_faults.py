"""Proof 7: on etcd, across two nodes, under a steady stream of events.

* **The store's outage.** Every etcd member is SIGKILLed mid-stream (the whole cluster
  down, as a power cut takes it) and comes back after a few seconds on its data
  directory (every write fsynced before its ack). While it is down the nodes answer
  "not stored, retry" and ack nothing; the devices' retries then land exactly once.
* **Node crash.** Node A is SIGKILLed mid-stream. Its devices move to node B
  and resend; its viewers resume on B from the last ``seq`` they saw.

Either way: every acked event is logged once, in each device's order, in one
gap-free ``seq``; every viewer, on either node, sees every ``seq`` once, in
order; and each node's live state hash equals a fresh replay of the log. The viewers
subscribe on both nodes as soon as the game is set up through node A: none is sent an
error (node B answers a game it has not read yet once it has read the log's end, never
``unknown_game``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from stream.tools.harness import Cluster, Device, Officials, ResumingViewer, game_log, tally

from ..rules.script import AWAY, HOME
from .conftest import Figures, scale
from .determinism import live_equals_replay


async def _run_with_fault(tmp_path: Path, figures: Figures, fault: str) -> None:
    cluster = Cluster(tmp_path, args=["--device-rate", "1000", "--device-burst", "1000"])
    a, b = cluster.nodes
    viewers: list[ResumingViewer] = []
    try:
        await cluster.astart()
        a.post("/api/games", {"id": "s1", "game": "g1", "event": "cup", "class": "club", "handicap": 8,
                              "teams": {"home": {"team": "h", "players": HOME},
                                        "away": {"team": "a", "players": AWAY}}})
        devices = 4
        tokens = {f"ump{i}": a.post("/api/tokens", {"role": "umpire", "device": f"ump{i}",
                                                     "game": "g1"})["token"] for i in range(devices)}
        tk = a.post("/api/tokens", {"role": "timekeeper", "device": "tk", "game": "g1"})["token"]
        timer = Device(a.device_url, tk, prefix="tk")
        await timer.send({"type": "clock.start", "game": "g1"})
        await timer.close()
        per_node = scale(40, 250)
        viewers = [ResumingViewer([n.watch_url, m.watch_url], "g1")
                   for n, m in ((a, b), (b, a)) for _ in range(per_node)]
        for v in viewers:
            v.start()
        stream = Officials([n.device_url for n in cluster.nodes], tokens, scale(40, 50), "g1")
        stream.start()
        await asyncio.sleep(scale(2, 10))
        t_fault = time.monotonic()
        if fault == "store":
            await asyncio.to_thread(_kill_store, cluster)
        else:
            await asyncio.to_thread(a.kill9)
        t_down = time.monotonic()
        await asyncio.sleep(scale(3, 10))
        t_up = time.monotonic()
        # the same directories: the members' data; or node A back, catching up from the log
        await (cluster.etcd if fault == "store" else a).astart()
        down_s = time.monotonic() - t_fault
        # Acked while it was down, of events first sent after it went down: with the
        # store down such an ack could only come from memory.
        during = sum(t_down < first and acked < t_up for first, acked in stream.times.values())
        await asyncio.sleep(scale(3, 10))
        await stream.finish()
        last = sum(map(len, stream.acked.values()))
        # Every viewer, on either node, catches up to the last seq.
        final = a.get("/api/games/g1")["seq"]
        assert b.get("/api/games/g1")["seq"] == final
        final = int(final)
        t_catch = time.monotonic()
        try:
            async with asyncio.timeout(30):
                await asyncio.gather(*(v.reach(final) for v in viewers))
        except TimeoutError:
            raise AssertionError(_stuck(cluster, viewers, final)) from None
        caught_up_s = time.monotonic() - t_catch
        state_hash = live_equals_replay(a.http, b.http, token=a.admin)
        rows = game_log(a.http, "g1")
    finally:
        for v in viewers:
            await v.stop()
        await cluster.astop()

    log = tally(rows, stream.sent, stream.acked)
    lost, doubled, unsent = log.lost, log.doubled, log.unsent
    gaps = sum(v.gaps for v in viewers)
    repeats = sum(v.repeats for v in viewers)
    resets = sum(v.resets for v in viewers)
    reconnects = sum(v.reconnects for v in viewers)
    what = "every etcd member SIGKILLed" if fault == "store" else "node A SIGKILLed"
    figures(f"{what} for {down_s:.1f} s under {stream.rate:.0f} events/s from {devices} devices on 2 nodes, "
            f"{len(viewers)} viewers: {last:,} events acked ({during} of those sent while "
            f"{'the store' if fault == 'store' else 'node A'} was down "
            f"acked before it came back), "
            f"lost {lost}, duplicates {doubled}, logged but never sent {unsent}; viewers: gaps {gaps}, "
            f"repeats {repeats}, reset snapshots {resets}, reconnects {reconnects}, all caught up "
            f"{caught_up_s:.2f} s after the last event; both nodes' hash = replay hash {state_hash[:16]}…",
            fault=fault, acked=last, acked_while_down=during, lost=lost, duplicates=doubled,
            unsent=unsent, gaps=gaps, repeats=repeats, resets=resets, viewers=len(viewers))
    assert len(rows) == final, "the log holds seq 1 to the last, nothing more"
    assert log.order_kept and stream.acked == stream.sent, "each device's events logged in its order"
    errors = [e for v in viewers for e in v.errors]
    assert not errors, f"viewers were sent error frames: {errors[:5]}"
    assert (lost, doubled, unsent, gaps, repeats) == (0, 0, 0, 0, 0), [
        v.first_gap for v in viewers if v.first_gap][:5]
    if fault == "store":
        assert during == 0, "an event sent while the store was down was acked: from memory"


def _stuck(cluster: Cluster, viewers: list[ResumingViewer], final: int) -> str:
    """Which viewers did not reach ``final`` in time, and what each node says of itself."""
    behind = [v.where() for v in viewers if v.seq < final]
    nodes = []
    for n in cluster.nodes:
        try:
            ready = n.get("/readyz")
        except Exception as err:  # (a node that can't answer is part of the story)
            ready = repr(err)
        nodes.append(f"{n.name}: /readyz {ready}; log ends:\n{n.tail(15)}")
    return (f"{len(behind)} of {len(viewers)} viewers not at seq {final} within 30 s: "
            + "; ".join(behind[:8]) + "\n" + "\n".join(nodes))


def _kill_store(cluster: Cluster) -> None:
    """Every member at once (SIGKILL to each, then each reaped), their data kept."""
    for m in cluster.etcd.members:
        os.kill(m.process.pid, signal.SIGKILL)
    for m in cluster.etcd.members:
        cluster.etcd.kill(m)


async def test_store_outage_under_load(tmp_path: Path, figures: Figures) -> None:
    await _run_with_fault(tmp_path, figures, "store")


async def test_node_crash_under_load(tmp_path: Path, figures: Figures) -> None:
    await _run_with_fault(tmp_path, figures, "node")
