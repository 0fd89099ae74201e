"""``arena-stream bench fanout`` at a tiny size: it runs, stops by itself and prints its
table. No assertion on speed: the figures are for the full benchmark to print."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from stream.tools.device_client import FIRST_PING_S
from stream.tools.fanout_bench.peers import start_bare
from stream.tools.harness import Device, Processes

NUM = r"(\d+\.\d+|n/a)"


def test_bench_fanout_runs_and_prints_the_table() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "stream", "bench", "fanout", "--viewers", "20", "--rate", "20",
         "--seconds", "2", "--idle-viewers", "200"],
        capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert "Traceback" not in res.stderr, res.stderr
    assert re.search(r"^fanout: 20 viewers, 20 events/s for 2 s, delta \d+\.\d KiB", out, re.M), out
    for label in ("bare websockets", "arena-stream"):
        m = re.search(rf"^{label}\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+)\s+(\d+)$", out, re.M)
        assert m, out
        assert (m[3], m[4]) == ("0", "0"), f"{label}: lost {m[3]}, duplicated {m[4]}"
    assert re.search(rf"^viewer p99 ratio\s+{NUM}\s+\(goal <= 1\.25\)$", out, re.M), out
    assert re.search(rf"^ack p99\s+{NUM} ms\s+raw SQLite FULL commit p99 {NUM} ms", out, re.M), out
    m = re.search(rf"^idle viewers\s+(\d+) opened: {NUM} KiB each \(bare websockets: {NUM} KiB\)", out, re.M)
    assert m and int(m[1]) > 0, out
    # Every frame timed: 40 events to each of 20 viewers, on both servers, in each of two rounds.
    assert out.count("40 acked, 800 frames timed over 20 viewers") == 4, out


def test_bench_fanout_two_nodes_prints_the_cross_node_line() -> None:
    """``--nodes 2``: the single node and a two-node Redis cluster in one run; every viewer
    on node B gets every delta, once, in seq order."""
    res = subprocess.run(
        [sys.executable, "-m", "stream", "bench", "fanout", "--nodes", "2", "--viewers", "20",
         "--rate", "20", "--seconds", "2", "--idle-viewers", "1", "--rounds", "1"],
        capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert "Traceback" not in res.stderr, res.stderr
    # The single-node table is still there.
    m = re.search(r"^arena-stream\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+)\s+(\d+)$", out, re.M)
    assert m and (m[3], m[4]) == ("0", "0"), out
    for label in (r"single node \(SQLite\)", "cluster, node A", r"cluster, cross-node \(B\)"):
        m = re.search(rf"^{label}\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+)\s+(\d+)\s+(\d+)$", out, re.M)
        assert m, out
        assert (m[3], m[4], m[5]) == ("0", "0", "0"), f"{label}: lost {m[3]}, dup {m[4]}, out of order {m[5]}"
    assert re.search(rf"^cross-node p99 ratio\s+{NUM}\s+\(cross-node p99 / single-node p99; goal <= 1\.5\)$",
                     out, re.M), out
    assert re.search(r"^cluster idle viewers\s+not measured", out, re.M), out
    # Every frame timed on each node: 40 events to each of 10 viewers on A and 10 on B.
    assert "cluster1: 40 events sent" in out and "40 acked, 800 frames timed over 20 viewers" in out, out
    for node in ("node A (same node as the device)", "node B (cross-node)"):
        assert f"cluster1, {node}: 400 frames timed over 10 viewers" in out, out


async def test_a_device_connects_to_the_bare_peer_without_waiting_for_a_ping(tmp_path: Path) -> None:
    """The bare peer answers ``auth`` as the service does, a ``welcome`` then the first
    clock-sync ``ping``: a device that waits for that ping (``FIRST_PING_S``) connects at
    once, and its pong goes to the peer before its first event."""
    async with Processes(tmp_path) as group:
        peer = await start_bare(group, 256)
        for _ in range(3):
            device = Device(peer.device_url, "bench")
            t0 = time.perf_counter()
            await device.connect()
            took = time.perf_counter() - t0
            ack = await device.send({"type": "whistle", "game": "bench-fanout"})
            await device.close()
            assert took < FIRST_PING_S / 4, f"connect took {took * 1000:.0f} ms: waited for a ping"
            assert ack["type"] == "ack", ack
