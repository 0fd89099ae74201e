"""``arena-stream bench fanout`` at a tiny size: it runs, stops by itself and prints its
tables, the median and the worst round of each server, quiet and contended, never a best
round; ``bench instructions`` counts each server's instructions; the service's loop-stall
probe is on ``/metrics`` and moves. No assertion on speed: the figures are for the full
benchmark to print."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from prometheus_client import generate_latest

from stream.live import stall
from stream.live.metrics import Metrics
from stream.tools.device_client import FIRST_PING_S
from stream.tools.fanout_bench.peers import start_bare
from stream.tools.harness import Device, Processes, lag_of

NUM = r"(\d+\.\d+|n/a)"
FIG = r"(\d+\.\d+)"


def test_bench_fanout_reports_the_median_and_the_worst_round_quiet_and_contended() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "stream", "bench", "fanout", "--viewers", "20", "--rate", "20",
         "--seconds", "2", "--idle-viewers", "200", "--rounds", "2", "--ir-events", "0"],
        capture_output=True, text=True, timeout=400)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert "Traceback" not in res.stderr, res.stderr
    assert not re.search(r"\bbest\b", out, re.I), "a best round reported:\n" + out
    assert re.search(r"^fanout: 20 viewers, 20 events/s for 2 s, delta \d+\.\d KiB .*median and worst "
                     r"of 2 interleaved round\(s\) per server and condition, fresh processes each round",
                     out, re.M), out
    assert re.search(r"^  contended: the server pinned to CPU \d+ \(taskset -c \d+\), a busy loop pinned "
                     r"to CPU \d+", out, re.M), out
    for label in ("bare websockets", "arena-stream"):
        for cond in ("quiet", "contended"):
            m = re.search(rf"^{label}\s+{cond}\s+{FIG}\s+{FIG}\s+{FIG}\s+{FIG}\s+{FIG}\s+(\d+)\s+(\d+)$",
                          out, re.M)
            assert m, f"no {label} {cond} row in:\n{out}"
            median_p50, median_p99, worst_p99 = float(m[1]), float(m[2]), float(m[3])
            assert median_p50 <= median_p99 <= worst_p99, m[0]
            assert (m[6], m[7]) == ("0", "0"), f"{label}, {cond}: lost {m[6]}, duplicated {m[7]}"
        for cond in ("quiet", "contended"):
            assert re.search(rf"^p99 ratio vs bare websockets, {cond}\s+{NUM}\s+worst\s+{NUM}\s+"
                             r"\(arena-stream / bare websockets, median rounds; goal <= 1\.25\)$",
                             out, re.M), out
    # Each round on a fresh process, with its condition and its load average.
    for name, cond in (("bare", "quiet"), ("service", "quiet"), ("barec", "contended"),
                       ("servicec", "contended")):
        for k in (1, 2):
            assert re.search(rf"^  {name}{k} \({cond}, load average \d+\.\d\d\): 40 events sent "
                             r".* 40 acked, 800 frames timed over 20 viewers", out, re.M), (name, k, out)
    assert re.search(rf"^ack p99\s+{NUM} ms \(worst {NUM} ms\)\s+raw SQLite FULL commit p99 {NUM} ms",
                     out, re.M), out
    # The stall probe, read off the service: numbers, not "n/a", for the load and the idle viewers.
    assert re.search(rf"^loop stall, load\s+p99 {FIG} ms, max {FIG} ms \(worst round's max {FIG} ms\)",
                     out, re.M), out
    for what in ("connect", "leave"):
        assert re.search(rf"^loop stall, {what}\s+p99 {FIG} ms, max {FIG} ms\s+\(200 idle viewers",
                         out, re.M), out
    m = re.search(rf"^idle viewers\s+(\d+) opened: {NUM} KiB each \(bare websockets: {NUM} KiB\)", out, re.M)
    assert m and int(m[1]) > 0, out
    assert "instructions:" not in out, "--ir-events 0 counts none"


def test_bench_fanout_two_nodes_prints_the_cross_node_line() -> None:
    """``--nodes 2``: the single node and a two-node Redis cluster in one run; every viewer
    on node B gets every delta, once, in seq order."""
    res = subprocess.run(
        [sys.executable, "-m", "stream", "bench", "fanout", "--nodes", "2", "--viewers", "20",
         "--rate", "20", "--seconds", "2", "--idle-viewers", "1", "--rounds", "1", "--no-contended",
         "--ir-events", "0"],
        capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert "Traceback" not in res.stderr, res.stderr
    assert not re.search(r"\bbest\b", out, re.I), out
    # The single-node table is still there, quiet only.
    m = re.search(rf"^arena-stream\s+quiet\s+{FIG}\s+{FIG}\s+{FIG}\s+{FIG}\s+{FIG}\s+(\d+)\s+(\d+)$",
                  out, re.M)
    assert m and (m[6], m[7]) == ("0", "0"), out
    assert not re.search(r"^arena-stream\s+contended", out, re.M), out
    for label in (r"single node \(SQLite\)", "cluster, node A", r"cluster, cross-node \(B\)"):
        m = re.search(rf"^{label}\s+{FIG}\s+{FIG}\s+{FIG}\s+(\d+)\s+(\d+)\s+(\d+)$", out, re.M)
        assert m, out
        assert (m[4], m[5], m[6]) == ("0", "0", "0"), f"{label}: lost {m[4]}, dup {m[5]}, out of order {m[6]}"
    assert re.search(rf"^cross-node p99 ratio\s+{NUM}\s+worst\s+{NUM}\s+\(cross-node p99 / single-node p99; "
                     r"goal <= 1\.5\)$", out, re.M), out
    assert re.search(r"^cluster idle viewers\s+not measured", out, re.M), out
    # Every frame timed on each node: 40 events to each of 10 viewers on A and 10 on B.
    assert re.search(r"cluster1 \(quiet, load average \d+\.\d\d\): 40 events sent", out), out
    assert "40 acked, 800 frames timed over 20 viewers" in out, out
    for node in ("node A (same node as the device)", "node B (cross-node)"):
        assert f"cluster1, {node}: 400 frames timed over 10 viewers" in out, out


def test_bench_instructions_counts_each_server() -> None:
    """A real tiny run under valgrind's callgrind (or perf): instructions per delivered frame
    and per acked event, a number > 0 for each server, every frame delivered."""
    node = shutil.which("node") is not None and shutil.which("npm") is not None
    res = subprocess.run(
        [sys.executable, "-m", "stream", "bench", "instructions", "--viewers", "3", "--events", "20",
         "--rate", "20", *(["--node-ws"] if node else [])],
        capture_output=True, text=True, timeout=900)
    out = res.stdout
    assert res.returncode == 0, out + res.stderr
    assert "Traceback" not in res.stderr, res.stderr
    assert re.search(r"^instructions \((perf stat|valgrind callgrind, total Ir)\), 3 viewers", out, re.M), out
    for label in ("bare websockets", "arena-stream", *(["node ws"] if node else [])):
        m = re.search(rf"^{label}\s+([\d,]+)\s+([\d,]+)\s+(\d+)\s+(\d+)$", out, re.M)
        assert m, f"no {label} row in:\n{out}"
        per_frame, per_ack = int(m[1].replace(",", "")), int(m[2].replace(",", ""))
        assert per_frame > 0 and per_ack > 0, m[0]
        assert (int(m[3]), int(m[4])) == (60, 20), f"{label}: 20 events to 3 viewers: {m[0]}"
        assert per_ack >= per_frame, m[0]  # one ack, three frames: the same instructions


async def test_the_stall_probe_sees_a_blocked_loop_and_its_window_empties() -> None:
    """The probe's metrics are on the service's registry; a loop held for 60 ms shows in the
    window's largest lateness and in the histogram; a scrape empties the window."""
    metrics = Metrics()
    probe = asyncio.create_task(stall.run(metrics.loop_lag, metrics.loop_lag_window, period=0.005))
    try:
        await asyncio.sleep(0.05)
        generate_latest(metrics.registry)  # a scrape: a new window
        await asyncio.sleep(0.01)
        time.sleep(0.06)  # noqa: ASYNC251 - the loop held on purpose: the probe's timer is late
        await asyncio.sleep(0.05)
        page = generate_latest(metrics.registry).decode()
        p99_ms, max_ms, samples = lag_of(page)
        assert samples > 0 and max_ms >= 40, page
        assert p99_ms <= max_ms
        assert 'arena_loop_lag_seconds_bucket{le="0.05"}' in page
        count = re.search(r"^arena_loop_lag_seconds_count (\S+)$", page, re.M)
        assert count and float(count[1]) >= samples
        await asyncio.sleep(0.02)
        _, max_after, after = lag_of(generate_latest(metrics.registry).decode())
        assert 0 < after < samples + 10 and max_after < 40, "the window starts again after a scrape"
    finally:
        probe.cancel()


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
