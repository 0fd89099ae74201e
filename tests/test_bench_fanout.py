"""``arena-stream bench fanout`` at a tiny size: it runs, stops by itself and prints its
tables, the median and the worst round of each server, quiet and contended, never a best
round; ``bench instructions`` counts each server's instructions; the service's loop-stall
probe is on ``/metrics`` and moves, and the peers run the same probe, answered on ``GET
/lag``, their stalls printed beside the service's. No assertion on speed: the figures are
for the full benchmark to print."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import msgspec
import pytest
from aiohttp import web
from prometheus_client import generate_latest

from stream.live.ops import stall
from stream.live.ops.config import Config
from stream.live.ops.loops import default_loop, loop_factory
from stream.live.ops.metrics import Metrics
from stream.tools.device_client import FIRST_PING_S
from stream.tools.fanout_bench.peers import (
    PeerServer,
    ensure_node_ws,
    lag_response,
    start_bare,
    start_node_ws,
)
from stream.tools.fanout_bench.phases import load_phase, viewer_url
from stream.tools.fanout_bench.report import beside, report_idle, report_slow
from stream.tools.fanout_bench.saturation import (
    Point,
    crossing,
    limit_of,
    median_point,
    ratio,
    saturation_row,
    saturation_verdict,
    step_p99,
    worst_point,
)
from stream.tools.harness import Device, LoadResult, Processes, Viewer, lag_of, setup_game, slow_seconds
from stream.tools.harness.measure import lag_answer, lag_json, peer_loop_lag
from stream.tools.harness.tail import (
    DEVICE,
    SLOW_MS,
    TCP_TIMEOUT,
    VIEWERS,
    WAY_IN,
    LoopStalls,
    Page,
    Sampler,
    SlowSecond,
    tcp_counters,
)

from .tcp_proxy import Proxy

# Each runs benchmarks or whole pytest sessions in processes of its own: seconds to minutes.
pytestmark = pytest.mark.slow

NUM = r"(\d+\.\d+|n/a)"
FIG = r"(\d+\.\d+)"


def test_bench_fanout_reports_the_median_and_the_worst_round_quiet_and_contended() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "stream", "bench", "fanout", "--viewers", "20", "--rate", "20",
         "--seconds", "2", "--idle-viewers", "200", "--rounds", "2", "--ir-events", "0",
         "--sat-viewers", "10", "--sat-rates", "10,20", "--sat-seconds", "1", "--sat-rounds", "2"],
        capture_output=True, text=True, timeout=500)
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
    # Beside each service round, what else held it up, read off its /metrics: figures, not "n/a".
    for name in ("service1", "servicec2"):
        assert re.search(rf"^  {name}: beside it, the store's transactions alone \(the disk's fsync\) "
                         rf"p99 <= {FIG} ms, each append from its call to durable p99 <= {FIG} ms; garbage "
                         rf"collections {FIG} ms in all; the machine's CPU stolen by its host {FIG} s, "
                         rf"waiting on a disk {FIG} s$", out, re.M), (name, out)
        # ... and each second of it whose p99 was over 50 ms, with what was behind it; or none.
        assert re.search(rf"^  {name}: (no second with a p99 over 50 ms|second \d+: p99 {FIG} ms over [\d,]+ "
                         rf"frames; while they were in flight .*: (the disk's fsync|the host's steal|a "
                         rf"collection|a stall of the loop|a busy core|"
                         r"a machine with no core free|not attributed))", out, re.M), (name, out)
    for cond in ("quiet", "contended"):
        m = re.search(rf"^tail, {cond}\s+worst round p99 / median round p99 {FIG} \(goal <= 2\); "
                      r"seconds with a p99 over 50 ms: (\d+), outside the process (\d+), inside (\d+), "
                      r"not attributed (\d+)", out, re.M)
        assert m and float(m[1]) >= 1.0, (cond, out)
        assert int(m[2]) == int(m[3]) + int(m[4]) + int(m[5]), m[0]
    assert re.search(rf"^ack p99\s+{NUM} ms \(worst {NUM} ms\)\s+raw SQLite FULL commit p99 {NUM} ms",
                     out, re.M), out
    # The stall probe, read off the service: numbers, not "n/a", for the load and the idle viewers.
    assert re.search(rf"^loop stall, load\s+p99 {FIG} ms, max {FIG} ms \(worst round's max {FIG} ms\)",
                     out, re.M), out
    # ... and off the bare peer's own probe (GET /lag), beside the service's.
    for what in ("connect", "leave"):
        assert re.search(rf"^loop stall, {what}\s+p99 {FIG} ms, max {FIG} ms \(bare websockets: p99 {FIG} "
                         rf"ms, max {FIG} ms\)\s+\(200 idle viewers", out, re.M), out
    for label in ("arena-stream", "bare websockets"):
        assert re.search(rf"^  idle, {label}: 200 opened \((-?\d+\.\d|n/a) KiB of RSS each\), 0 errors$",
                         out, re.M), out
        for what in ("connect", "leave"):
            assert re.search(rf"^  idle, {label}: loop stall while they {what}: p99 {FIG} ms, max {FIG} ms$",
                             out, re.M), (label, what, out)
    m = re.search(rf"^idle viewers\s+(\d+) opened: {NUM} KiB each \(bare websockets: {NUM} KiB\)", out, re.M)
    assert m and int(m[1]) > 0, out
    assert "instructions:" not in out, "--ir-events 0 counts none"
    # The saturation ladders: each server's steps, server by server, the order reversed in round 2.
    step = re.compile(
        r"^  sat(\d)-(bare|svc)(\d), (?:bare websockets|arena-stream): 10 viewers x (\d+) events/s = "
        rf"([\d,]+) frames/s offered \(load average {FIG}\): (\d+) events sent .* viewer p50 {NUM} ms "
        rf"p99 (?:{NUM}|inf) ms.*; lost \d+, resyncs \d+, viewers dropped \d+, refused \d+; "
        r"server CPU \d+ % of a core, viewer workers' CPU \d+ % of a core \(1 worker\(s\)\), the "
        r"device's (?:\d+|n/a) %, machine (?:\d+|n/a) % busy", re.M)
    steps = [m.groups() for m in step.finditer(out)]
    order = list(dict.fromkeys((g[0], g[1]) for g in steps))
    assert order == [("1", "bare"), ("1", "svc"), ("2", "svc"), ("2", "bare")], out
    for g in steps:
        assert (g[3], g[4], g[6]) == (("10", "100", "10") if g[2] == "1" else ("20", "200", "20")), g
    point = r"(?:[<>] )?[\d,]+"
    for rnd in ("1", "2"):
        for label in ("bare websockets", "arena-stream"):
            assert re.search(rf"^  sat{rnd}, {label}: saturation point {point} frames/s \(", out, re.M), out
    assert re.search(r"^saturation: 10 viewers, the device at 10, 20 events/s \(100 to 200 frames/s "
                     r"offered\), 1 s a step; .*linear on offered frames/s between the last step under and "
                     r"the first step over; median and worst of 2 round\(s\) per server", out, re.M), out
    limit = "(the server's|the harness's|the machine's|no CPU limit's|none over)"
    for label in ("bare websockets", "arena-stream"):
        assert re.search(rf"^{label}\s+{point}\s+{point}\s+{limit} \d", out, re.M), out
    ratio_fig = r"(?:[<>] )?(?:\d+\.\d\d|n/a)"
    assert re.search(rf"^saturation ratio vs bare websockets\s+{ratio_fig}\s+worst\s+{ratio_fig}\s+"
                     r"\(arena-stream / bare websockets, median rounds; for reference\)$", out, re.M), out


STEPS = [(100.0, 10.0), (200.0, 40.0), (400.0, 160.0), (800.0, 900.0)]


@pytest.mark.parametrize(("steps", "point"), [
    pytest.param([(100.0, 10.0), (200.0, 40.0)], Point(200.0, 1), id="every step under: over the top step"),
    pytest.param(STEPS, Point(300.0), id="crossing: linear on frames/s between the last under and the next"),
    pytest.param([(100.0, 60.0), (200.0, 100.0)], Point(200.0), id="crossing at a step: 100 ms is over"),
    pytest.param([(100.0, 120.0), (200.0, 300.0)], Point(100.0, -1), id="over at the first step"),
    pytest.param([(100.0, 5.0)], Point(100.0, 1), id="one step, under"),
    pytest.param([(100.0, 20.0), (200.0, 150.0), (400.0, 50.0)], Point(100.0 + 100.0 * 80 / 130),
                 id="the first step over counts, not a later one under"),
    pytest.param([(100.0, 20.0), (200.0, math.inf)], Point(100.0), id="no finite p99 over: the step under"),
    pytest.param([(100.0, 20.0), (200.0, math.nan)], Point(100.0), id="no p99 at all counts as over"),
])
def test_the_saturation_point_is_linear_between_the_last_step_under_and_the_first_over(
        steps: list[tuple[float, float]], point: Point) -> None:
    got = crossing(steps)
    assert got.bound == point.bound and math.isclose(got.fps, point.fps), (got, point)


def test_a_saturation_point_reads_as_a_bound_when_it_is_one() -> None:
    assert [Point(55_172.4).text(), Point(200_000, 1).text(), Point(12_500, -1).text(),
            Point(math.nan).text()] == ["55,172", "> 200,000", "< 12,500", "n/a"]
    with pytest.raises(ValueError):
        crossing([])


@pytest.mark.parametrize(("a", "b", "expect"), [
    (Point(300.0), Point(200.0), Point(1.5)),
    (Point(800.0, 1), Point(400.0), Point(2.0, 1)),      # the service never crossed: at least 2x
    (Point(400.0), Point(800.0, 1), Point(0.5, -1)),     # the reference never crossed: at most 0.5x
    (Point(100.0, -1), Point(400.0), Point(0.25, -1)),
    (Point(800.0, 1), Point(100.0, -1), Point(8.0, 1)),
    (Point(800.0, 1), Point(800.0, 1), Point(math.nan)),  # both over the top step: unknown
])
def test_a_ratio_of_saturation_points_keeps_their_bounds(a: Point, b: Point, expect: Point) -> None:
    got = ratio(a, b)
    assert got.bound == expect.bound and (math.isclose(got.fps, expect.fps)
                                          or (math.isnan(got.fps) and math.isnan(expect.fps))), got


def test_the_median_and_the_worst_round_of_saturation_points() -> None:
    rounds = [Point(800.0, 1), Point(300.0), Point(350.0)]
    assert median_point(rounds) == Point(350.0) and worst_point(rounds) == Point(300.0)
    assert worst_point([Point(100.0, -1), Point(100.0)]) == Point(100.0, -1)
    assert median_point([Point(100.0), Point(200.0)]) == Point(100.0), "the lower middle one"
    assert math.isnan(median_point([]).fps)


@pytest.mark.parametrize(("cpu", "expect"), [
    ((0.95, 0.5, 2, 1.6), "the server's"),
    ((0.4, 1.85, 2, 1.9), "the harness's"),     # both viewer workers at their cores
    ((0.4, 0.7, 2, 1.95), "the machine's"),     # the machine full, mostly with other processes
    ((0.6, 1.1, 2, 1.95), "the harness's"),     # the machine full with the bench's own processes
    ((0.4, 0.7, 2, 1.2), "no CPU limit's"),
])
def test_whose_limit_a_step_over_100_ms_met(cpu: tuple[float, float, int, float], expect: str) -> None:
    server, viewers, workers, machine = cpu
    assert limit_of(server, viewers, workers, machine, 2, device=0.1) == expect


def test_a_frame_never_received_counts_as_late_in_a_steps_p99() -> None:
    def res(lat: list[float], lost: int) -> LoadResult:
        return LoadResult("s", 1, 0, 0, 0, 1.0, lat, [], lost, 0, 0, 0, 0)

    assert step_p99(res([float(i) for i in range(1, 101)], 0)) == 99.0
    assert step_p99(res([float(i) for i in range(1, 100)], 1)) == 99.0  # 1 % late: the 99th of 100
    assert step_p99(res([float(i) for i in range(1, 99)], 2)) == math.inf
    assert math.isnan(step_p99(res([], 0)))


def test_bench_alls_saturation_cell_and_verdict() -> None:
    fig = {"sat_rounds": 3.0, "sat_svc": 80_000.0, "sat_svc_bound": 0.0, "sat_svc_worst": 70_000.0,
           "sat_svc_worst_bound": 0.0, "sat_node": 200_000.0, "sat_node_bound": 1.0,
           "sat_node_worst": 90_000.0, "sat_node_worst_bound": 0.0, "sat_bare": 55_000.0,
           "sat_bare_bound": 0.0, "sat_bare_worst": 50_000.0, "sat_bare_worst_bound": 0.0,
           "sat_node_ratio": 0.4, "sat_node_ratio_bound": -1.0, "sat_node_ratio_worst": 70 / 90,
           "sat_node_ratio_worst_bound": 0.0, "sat_bare_ratio": 80 / 55, "sat_bare_ratio_bound": 0.0,
           "sat_bare_ratio_worst": 1.4, "sat_bare_ratio_worst_bound": 0.0, "sat_svc_harness": 0.0,
           "sat_node_harness": 2.0, "sat_bare_harness": 3.0}
    assert saturation_row(fig) == (
        "arena-stream 80,000 frames/s median (worst 70,000); Node ws > 200,000 (worst 90,000); "
        "bare websockets 55,000 (worst 50,000); < 0.40× Node ws (worst 0.78×), 1.45× bare websockets "
        "(worst 1.40×); crossings at the harness's or the machine's limit: Node ws 2 of 3, "
        "bare websockets 3 of 3")
    assert saturation_verdict(fig) is False
    unknown = {"sat_node_ratio": math.nan, "sat_node_ratio_bound": 0.0}
    assert "; ratio unknown Node ws (worst 0.78×), " in saturation_row(fig | unknown)
    assert saturation_verdict(fig | unknown) is None
    for r, bound, verdict in ((1.2, 0, True), (0.9, 0, False), (1.1, 1, True), (0.9, 1, None),
                              (1.1, -1, None)):
        node = {"sat_node_ratio": r, "sat_node_ratio_bound": float(bound)}
        assert saturation_verdict(fig | node) is verdict
    assert saturation_verdict({k: v for k, v in fig.items() if not k.startswith("sat_node")}) is None


def test_bench_fanout_two_nodes_prints_the_cross_node_line() -> None:
    """``--nodes 2``: the single node and two nodes on an etcd cluster in one run; every viewer
    on node B gets every delta, once, in seq order."""
    res = subprocess.run(
        [sys.executable, "-m", "stream", "bench", "fanout", "--nodes", "2", "--viewers", "20",
         "--rate", "20", "--seconds", "2", "--idle-viewers", "1", "--rounds", "1", "--no-contended",
         "--ir-events", "0", "--sat-rounds", "0"],
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
    assert "  saturation: not measured (--sat-rounds 0)" in out.splitlines(), out
    assert not re.search(r"^saturation", out, re.M), out
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


def test_a_lag_answer_reads_as_a_metrics_page_does() -> None:
    """``GET /lag``'s JSON, from a probe window's seconds, reads as ``lag_of`` reads the
    service's page: (p99 ms, max ms, samples); NaNs and 0 without samples; anything else
    is refused."""
    assert lag_answer(lag_json(0.004, 0.035, 120)) == (4.0, 35.0, 120)
    assert msgspec.json.decode(lag_json(math.nan, math.nan, 0)) == {"p99_ms": None, "max_ms": None,
                                                                    "samples": 0}
    p99, top, n = lag_answer(lag_json(math.nan, math.nan, 0))
    assert math.isnan(p99) and math.isnan(top) and n == 0
    p99, top, n = lag_answer(b'{"p99_ms": 0.74, "max_ms": 12.89, "samples": 301}')  # from Node
    assert (p99, top, n) == (0.74, 12.89, 301)
    for bad in (b"", b"[]", b'{"p99_ms": 1}', b'{"p99_ms": "1", "max_ms": 2, "samples": 3}'):
        with pytest.raises(ValueError):
            lag_answer(bad)


def test_the_bare_peers_lag_response_empties_the_window() -> None:
    window = stall.LagWindow()
    for late in (0.001, 0.002, 0.040):
        window.note(late)
    r = lag_response(window)
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/json"
    assert int(r.headers["Content-Length"]) == len(r.body)
    p99, top, n = lag_answer(r.body)
    assert n == 3 and math.isclose(top, 40.0) and math.isclose(p99, 40.0)
    assert lag_answer(lag_response(window).body)[2] == 0, "read once: a new window"


def test_the_bare_peer_runs_on_the_services_loop() -> None:
    """The loop ``arena-stream serve`` picks when not told, made as serve makes it."""
    loop = loop_factory(default_loop())()
    try:
        assert type(loop).__module__.split(".")[0] == ("uvloop" if default_loop() == "uvloop" else "asyncio")
    finally:
        loop.close()


async def _answers_lag_beside_its_viewers(peer: PeerServer) -> None:
    """A peer: ``GET /lag`` on its WebSocket port answers its probe's window, which moves
    and empties; viewers still connect on the same port."""
    await asyncio.sleep(0.5)
    p99, top, n = await peer_loop_lag(peer.http)
    assert n > 5 and 0 <= p99 <= top, (p99, top, n)  # ~50 wake-ups in 0.5 s
    viewer = await Viewer.connect(peer.watch())
    try:
        assert (await viewer.next(timeout=10))["type"] == "hello"
    finally:
        await viewer.close()
    await asyncio.sleep(0.1)
    _, _, again = await peer_loop_lag(peer.http)
    assert 0 < again < n, "the window starts again after a read"


async def test_the_bare_peer_answers_its_loop_stall_probe(tmp_path: Path) -> None:
    async with Processes(tmp_path) as group:
        await _answers_lag_beside_its_viewers(await start_bare(group, 256))


async def test_the_node_peer_answers_its_loop_stall_probe(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        pytest.skip("node not found")
    ws_module, note = await asyncio.to_thread(ensure_node_ws)
    if ws_module is None:
        pytest.skip(note)
    async with Processes(tmp_path) as group:
        await _answers_lag_beside_its_viewers(await start_node_ws(group, 256, ws_module))


def test_each_servers_idle_stalls_are_printed_and_the_peers_beside_the_service(
        capsys: pytest.CaptureFixture[str]) -> None:
    report_idle("Node ws", (500, 0, "", 13.4), {"connect": (4.18, 16.61), "leave": (math.nan, math.nan)})
    report_idle("bare websockets", (500, 2, "ConnectionRefusedError", 13.2), {})
    assert capsys.readouterr().out.splitlines() == [
        "  idle, Node ws: 500 opened (13.4 KiB of RSS each), 0 errors",
        "  idle, Node ws: loop stall while they connect: p99 4.18 ms, max 16.61 ms",
        "  idle, Node ws: loop stall while they leave: p99 n/a ms, max n/a ms",
        "  idle, bare websockets: 500 opened (13.2 KiB of RSS each), 2 errors ConnectionRefusedError",
    ]
    figures = {"connect_lag_max_ms": 35.0, "bare_connect_lag_p99_ms": 3.0, "bare_connect_lag_max_ms": 43.0,
               "node_connect_lag_p99_ms": 4.18, "node_connect_lag_max_ms": 16.61}
    assert beside(figures, "connect") == ("bare websockets: p99 3.00 ms, max 43.00 ms; "
                                          "Node ws: p99 4.18 ms, max 16.61 ms")
    assert beside(figures, "leave") == ""


def test_the_saturation_options_parse_and_are_checked() -> None:
    import argparse

    from stream.tools.bench_fanout import add_saturation_arguments
    from stream.tools.fanout_bench.report import FanoutOptions
    from stream.tools.fanout_bench.saturation import check_saturation, device_sockets, sat_tokens

    p = argparse.ArgumentParser()
    add_saturation_arguments(p)
    args = p.parse_args(["--sat-viewers", "100", "--sat-rates", "25,50,100", "--sat-rounds", "0"])
    assert (args.sat_viewers, args.sat_rates, args.sat_seconds, args.sat_rounds) == (100, (25.0, 50.0, 100.0),
                                                                                     1.5, 0)
    assert p.parse_args([]).sat_rates == FanoutOptions().sat_rates
    with pytest.raises(SystemExit):
        p.parse_args(["--sat-rates", "50,fast"])
    check_saturation(FanoutOptions(sat_rounds=0, sat_rates=()), "bench fanout")  # not measured: anything goes
    for bad in ({"sat_rates": (100.0, 50.0)}, {"sat_rates": ()}, {"sat_viewers": 0}, {"sat_seconds": 0.0},
                {"sat_rounds": -1}):
        with pytest.raises(SystemExit, match="--sat-rates"):
            check_saturation(FanoutOptions(**bad), "bench fanout")
    # The device's stream spread over sockets each under the service's per-socket limit.
    per_socket = 0.8 * Config().device_rate  # events/s a device socket is given at most
    top = max(FanoutOptions().sat_rates)
    assert [device_sockets(r) for r in (per_socket / 2, per_socket, per_socket * 1.125, top)] == [
        1, 1, 2, math.ceil(top / per_socket)]
    assert sat_tokens(FanoutOptions()) == math.ceil(top / per_socket)
    assert sat_tokens(FanoutOptions(sat_rounds=0)) == 0


async def _round_with_a_stop(tmp_path: Path, name: str, stopped: Callable[[Processes], int]) -> LoadResult:
    """A small round (4 viewers in one worker, 20 events/s for 4 s) on a real service, with
    the process ``stopped`` picks SIGSTOPped for 0.4 s, 1.5 s into the events."""
    async def stop(group: Processes, proxy: Proxy) -> None:
        pid = stopped(group)
        os.kill(pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(0.4)
        finally:
            os.kill(pid, signal.SIGCONT)

    return await _round_held(tmp_path, name, stop)


async def _round_held(tmp_path: Path, name: str,
                      held: Callable[[Processes, Proxy], Awaitable[None]]) -> LoadResult:
    """A small round (4 viewers in one worker, 20 events/s for 4 s, 4 devices) on a real
    service, its devices' sockets through a TCP proxy on loopback; ``held`` runs 1.5 s into
    the events."""
    async with Processes(tmp_path) as group, Proxy(0) as proxy:
        svc = group.service(tmp_path / "data", name="service")
        await svc.astart()
        proxy.upstream_port = svc.port
        tokens = await setup_game(svc.http, svc.admin, devices=4)  # the burst after the stop: in rate
        holding: list[asyncio.Task[None]] = []

        async def hold() -> None:
            await asyncio.sleep(1.5)
            await held(group, proxy)

        async def start() -> None:
            holding.append(asyncio.create_task(hold()))

        async def sent() -> None:
            await asyncio.gather(*holding)  # (a failure to hold it is raised here)

        device_url = svc.device_url.replace(f":{svc.port}/", f":{proxy.port}/")
        assert device_url != svc.device_url
        res = await load_phase(group, name, [svc], [viewer_url(svc)], device_url, tokens, viewers=4,
                               workers=1, rate=20, seconds=4, prefix=f"{name}-", metrics_from=svc.http,
                               on_start=start, on_sent=sent)
    assert holding and holding[0].done(), "nothing was held"
    assert res.lost == 0 and res.acked == res.sent, res
    assert res.by_second and sum(map(len, res.by_second.values())) == len(res.lat_ms)
    assert all(s.p99_ms > SLOW_MS for s in res.slow)
    report_slow(res)  # prints without error, for the reader of the test's output
    return res


async def test_a_service_stopped_mid_round_shows_as_a_slow_second_held_by_the_loop(tmp_path: Path) -> None:
    """The per-second attribution against a real service: SIGSTOPped for 0.4 s in the middle of
    a small round, its frames of that second are late, and ``bench fanout``'s analysis names
    that second, with the loop's stall (the probe wakes 0.4 s late) as what held it up."""
    def service(group: Processes) -> int:
        (svc,) = [p for p in group.members if p.name == "service"]
        return svc.pid

    res = await _round_with_a_stop(tmp_path, "held", service)
    held = [s for s in res.slow if s.stall_max_ms >= 300]
    assert held, [(s.second, s.p99_ms, s.stall_max_ms, s.cause) for s in res.slow]
    second = held[0]
    assert second.cause == "a stall of the loop" and not second.outside, second
    assert res.lag_max_ms >= 300, "the round's largest stall is the windows' largest"


async def test_a_viewer_worker_stopped_mid_round_is_a_slow_second_of_the_viewers(tmp_path: Path) -> None:
    """The viewers' side of the attribution: a viewer worker SIGSTOPped for 0.4 s in the middle
    of a small round stamps its frames of that second late, though the service sent them on
    time; its own stall probe wakes 0.4 s late, and ``bench fanout``'s analysis puts that
    second down to the viewers' own process, outside the service."""
    def worker(group: Processes) -> int:
        (w,) = [p for p in group.members if p.name.startswith("vstop-w")]
        return w.pid

    res = await _round_with_a_stop(tmp_path, "vstop", worker)
    assert max(res.viewer_stalls.values(), default=0.0) >= 300, res.viewer_stalls
    held = [s for s in res.slow if s.viewers_stall_ms >= 300]
    assert held, [(s.second, s.p99_ms, s.viewers_stall_ms, s.stall_max_ms, s.cause) for s in res.slow]
    second = held[0]
    assert second.stall_max_ms < 100, second  # the service's own loop kept turning
    assert second.cause == VIEWERS and second.outside, second


async def test_a_devices_frames_held_on_the_way_in_are_a_slow_second_outside_the_service(
        tmp_path: Path) -> None:
    """The way in: the devices' sockets pass through a TCP proxy, which holds the next bytes
    a device sends for 0.4 s in the middle of a small round (a link that stops, as the
    kernel's does when a segment waits to be resent). The frames of that second and their
    acks are late at the device; the service's own arrival-to-ack and both loops are not:
    ``bench fanout``'s analysis puts the second down to the way in, outside the service."""
    async def hold_the_way_in(group: Processes, proxy: Proxy) -> None:
        proxy.delay(b"", 0.4)  # the next bytes from any client: a device's event

    res = await _round_held(tmp_path, "wayin", hold_the_way_in)
    held = [s for s in res.slow if s.ack_p99_ms >= 300]
    assert held, [(s.second, s.p99_ms, s.ack_p99_ms, s.service_ack_p99_ms, s.cause) for s in res.slow]
    second = held[0]
    assert second.service_ack_p99_ms < 100 and second.stall_max_ms < 100, second
    assert second.device_stall_ms < 100 and second.viewers_stall_ms < 100, second
    assert second.cause == WAY_IN and second.outside, second


def test_the_way_in_and_the_kernels_tcp_are_named_after_every_figure_of_the_service() -> None:
    """The device's acks late, the service's on time and neither loop stalled: the way in. A
    segment resent after a timeout (200 ms at least) over the span, with frames late by
    about that: the kernel's TCP. The device stalled as long: its own process, which then
    sent what it owed at once. None excuses the service's own figures."""
    quiet = SlowSecond(second=3, frames=1000, p99_ms=300.0, commit_p99_ms=5.0, durable_p99_ms=10.0,
                       stall_max_ms=10.0, gc_ms=1.0, cpu_ms=800, steal_ms=0.0, iowait_ms=0.0,
                       span_ms=2000.0, cores=2, idle_ms=2000.0, viewers_stall_ms=12.0, device_stall_ms=11.0,
                       service_ack_p99_ms=5.0, ack_p99_ms=20.0, tcp_resent=3.0, tcp_timeouts=0.0)
    assert quiet.cause == "not attributed"
    way_in = dataclasses.replace(quiet, ack_p99_ms=290.0)
    assert way_in.cause == WAY_IN and way_in.outside
    assert dataclasses.replace(way_in, service_ack_p99_ms=250.0).cause == "not attributed"
    assert dataclasses.replace(way_in, service_ack_p99_ms=math.nan).cause == "not attributed"
    assert dataclasses.replace(way_in, device_stall_ms=280.0).cause == DEVICE  # its acks read late
    assert dataclasses.replace(way_in, stall_max_ms=200.0).cause == "a stall of the loop"
    timeout = dataclasses.replace(quiet, tcp_timeouts=1.0)
    assert timeout.cause == TCP_TIMEOUT and timeout.outside
    assert dataclasses.replace(timeout, p99_ms=900.0).cause == "not attributed"  # far more than one
    assert dataclasses.replace(timeout, gc_ms=200.0).cause == "a collection"
    # Loss probes follow any burst of frames: a figure, never a cause.
    resent = dataclasses.replace(quiet, tcp_resent=900.0)
    assert resent.cause == "not attributed" and not resent.outside
    # The device stalled as long: the burst it sent on waking (loss probes follow such bursts).
    device = dataclasses.replace(resent, device_stall_ms=280.0)
    assert device.cause == DEVICE and device.outside
    assert dataclasses.replace(device, gc_ms=200.0).cause == "a collection"


async def test_the_samplers_process_has_its_collections_timed_by_second() -> None:
    """The device's side: the benchmark's own collections, by second of the wall clock, while
    the sampler is open (and no longer once it is closed)."""
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="")

    app = web.Application()
    app.router.add_get("/metrics", page)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        async with Sampler(f"http://127.0.0.1:{port}", period=0.05) as sampler:
            junk = [[i] for i in range(300_000)]
            gc.collect()
            del junk
            await asyncio.sleep(0.1)
        timed = dict(sampler.collections)
        gc.collect()
        assert sampler.collections == timed
    finally:
        await runner.cleanup()
    assert timed and max(timed.values()) > 0, timed
    assert all(second > 1_700_000_000 for second in timed)
    assert len(sampler.pages) >= 2 and all(not math.isnan(p.tcp[0]) for p in sampler.pages)


def test_the_rounds_usual_resends_are_the_median_rate_between_its_pages() -> None:
    origin = 10**18
    idle = 1.5 * (os.cpu_count() or 1)
    text = [_page([]), _page([0.001] * 50, 0.002, 0.0, idle / 2), _page([0.001] * 50, 0.0, 0.0, idle)]
    counts = [(100.0, 0.0), (102.0, 0.0), (902.0, 0.0), (905.0, 0.0)]  # 2, 800, 3 a second
    pages = [Page(origin + k * 1_000_000_000, text[min(k, 2)], c) for k, c in enumerate(counts)]
    (slow,) = slow_seconds({1: [5.0] * 98 + [300.0] * 2}, pages, origin)
    assert slow.tcp_resent_usual == 3.0
    assert slow.tcp_resent == 803.0 and slow.tcp_timeouts == 0.0, slow


def test_the_kernels_tcp_counters_are_read_and_only_grow() -> None:
    """Linux says both (``/proc/net/snmp``'s ``RetransSegs``, ``/proc/net/netstat``'s
    ``TCPTimeouts``): counts, which never go back."""
    before = tcp_counters()
    assert all(math.isfinite(x) and x >= 0 and x == int(x) for x in before), before
    time.sleep(0.05)
    after = tcp_counters()
    assert after[0] >= before[0] and after[1] >= before[1], (before, after)


def test_a_second_the_viewers_stalled_on_is_theirs_unless_the_service_held_it_too() -> None:
    """The viewers' stalls are read over the frames' flight, by second of the wall clock; they
    are named only when nothing of the service's own is as long (never to excuse it)."""
    origin = 1_700_000_000 * 10**9  # a whole second of the wall clock
    idle = 1.5 * (os.cpu_count() or 1)
    pages = [Page(origin, _page([])), Page(origin + 1_000_000_000, _page([0.001] * 50, 0.002, 0.0, idle / 2)),
             Page(origin + 2_000_000_000, _page([0.001] * 50, 0.0, 0.0, idle))]
    seconds = {0: [5.0] * 98 + [300.0] * 2}
    t0 = origin // 10**9
    theirs = slow_seconds(seconds, pages, origin, {t0 - 5: 900.0, t0 + 1: 280.0})
    assert [(s.viewers_stall_ms, s.cause, s.outside) for s in theirs] == [(280.0, VIEWERS, True)]
    short = slow_seconds(seconds, pages, origin, {t0: 40.0})
    assert [(s.viewers_stall_ms, s.cause) for s in short] == [(40.0, "not attributed")]
    assert math.isnan(slow_seconds(seconds, pages, origin)[0].viewers_stall_ms)  # not probed
    held = [Page(origin, _page([])), Page(origin + 1_000_000_000, _page([0.001] * 50, 0.25, 0.0, idle / 2)),
            Page(origin + 2_000_000_000, _page([0.001] * 50, 0.0, 0.0, idle))]
    both = slow_seconds(seconds, held, origin, {t0: 280.0})
    assert [s.cause for s in both] == ["a stall of the loop"]


async def test_the_viewers_stall_probe_keeps_the_largest_lateness_of_each_second() -> None:
    probe = LoopStalls(period=0.005)
    task = asyncio.create_task(probe.run())
    await asyncio.sleep(0.05)
    time.sleep(0.15)  # noqa: ASYNC251  # the loop held on purpose: the probe wakes about 150 ms late
    await asyncio.sleep(0.05)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert probe.by_second and max(probe.by_second.values()) >= 140, probe.by_second
    assert all(second > 1_700_000_000 for second in probe.by_second)


def _page(commit_s: list[float], stall_s: float = 0.0, gc_s: float = 0.0, idle_s: float = 0.0) -> str:
    """A metrics page of the service's own registry, after ``commit_s`` transactions, a stall
    of ``stall_s`` and a collection of ``gc_s``, the machine idle ``idle_s`` in all (this
    machine's own counts taken out: the pages are made a moment apart, not seconds)."""
    metrics = Metrics()
    for c in commit_s:
        metrics.commit_seconds.observe(c)
    if stall_s:
        metrics.loop_lag_window.note(stall_s)
    if gc_s:
        metrics.gc_pauses.labels("2").observe(gc_s)
    page = generate_latest(metrics.registry).decode()
    lines = [line for line in page.splitlines() if not line.startswith("arena_machine_cpu_seconds_total")]
    return "\n".join([*lines, f'arena_machine_cpu_seconds_total{{mode="idle"}} {idle_s}', ""])


@pytest.mark.parametrize(("commits", "stall", "gc", "cause"), [
    ([0.001] * 50 + [0.25] * 5, 0.005, 0.0, "the disk's fsync"),     # the fsync as long as the frames
    ([0.001] * 50, 0.2, 0.0, "a stall of the loop"),                 # a quick disk, a held loop
    ([0.001] * 50, 0.002, 0.3, "a collection"),                      # a quick disk, a long collection
    ([0.001] * 50, 0.002, 0.0, "not attributed"),                    # nothing the pages show
])
def test_a_slow_second_is_put_down_to_what_the_pages_show_was_as_long_as_it(
        commits: list[float], stall: float, gc: float, cause: str) -> None:
    origin = 10**18
    idle = 1.5 * (os.cpu_count() or 1)  # three quarters of every core idle over the 2 s
    pages = [Page(origin, _page([])), Page(origin + 1_000_000_000, _page(commits, stall, gc, idle / 2)),
             Page(origin + 2_000_000_000, _page(commits, 0.0, gc, idle))]  # counters stay; the window empties
    # Second 0: 100 frames, p99 300 ms; second 1: all quick.
    seconds = {0: [5.0] * 98 + [300.0] * 2, 1: [5.0] * 100}
    slow = slow_seconds(seconds, pages, origin)
    assert [s.second for s in slow] == [0], slow
    assert slow[0].p99_ms == 300.0 and slow[0].frames == 100
    assert slow[0].cause == cause, slow[0]
    assert slow[0].outside == (cause == "the disk's fsync")


def test_the_hosts_steal_counts_per_core_and_a_saturated_core_is_the_services_own() -> None:
    """The host's steal is measured over every core, the service runs on one: its share of one
    core is set against the p99. With nothing else long enough, a service at 90 % of a core or
    more over the span is the cause (its frames queued behind its own work), else a machine
    with 5 % of its cores idle or less."""
    def second(steal_ms: float, cpu_ms: float) -> SlowSecond:
        return SlowSecond(second=3, frames=1000, p99_ms=100.0, commit_p99_ms=5.0, durable_p99_ms=10.0,
                          stall_max_ms=10.0, gc_ms=1.0, cpu_ms=cpu_ms, steal_ms=steal_ms, iowait_ms=0.0,
                          span_ms=2000.0, cores=2)
    assert second(steal_ms=120, cpu_ms=1000).cause == "the host's steal"  # 60 ms of one core
    assert second(steal_ms=120, cpu_ms=1000).outside
    assert second(steal_ms=80, cpu_ms=1000).cause == "not attributed"  # 40 ms: under half the p99
    busy = second(steal_ms=80, cpu_ms=1900)
    assert busy.busy == 0.95 and busy.cause == "a busy core" and not busy.outside
    # The service under 90 % of its core, the machine's cores all but full: the load
    # generator's share, outside the process; with a core free, nothing named.
    full = dataclasses.replace(second(steal_ms=80, cpu_ms=1200), idle_ms=150.0)
    assert full.idle_share == 0.0375 and full.cause == "a machine with no core free" and full.outside
    assert dataclasses.replace(full, idle_ms=1000.0).cause == "not attributed"
