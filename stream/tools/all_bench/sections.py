"""The sections of ``arena-stream bench all``, in order, each bounded in time; a
section that fails becomes "not measured" in its rows and the others still run."""

from __future__ import annotations

import asyncio
import gc
import shutil
import tempfile
from pathlib import Path

from ..bench_replay import bench_replay
from ..fanout_bench.peers import ensure_node_ws
from ..fanout_bench.report import frames_failed
from ..fanout_bench.run import bench_fanout
from ..harness import Processes
from .cold import cold_section
from .commits import end_to_end_section, group_commit_section, lone_ack_section
from .options import AllOptions
from .report import Bench, Report, fmt, ok

FAN_ROWS = ("viewer p99 vs bare websockets", "viewer p99 vs Node ws",
            "ack p99 under fan-out vs raw commit p99", "memory per idle viewer",
            "cross-node p99 vs single node")
FAN_GOALS = ("≤ 1.25×", "≤ 1.25×", "≤ raw + 2 ms", "≤ 12 KiB", "≤ 1.5×")


async def bench_all(opts: AllOptions) -> Report:
    with tempfile.TemporaryDirectory(prefix="arena-bench-all-") as d:
        async with Processes(Path(d)) as group:
            b = Bench(opts, group)
            await replay_section(b)
            gc.collect()
            await cold_section(b)
            gc.collect()
            await group_commit_section(b)
            await end_to_end_section(b)
            await lone_ack_section(b)
            await fanout_section(b)
    return b.report


async def replay_section(b: Bench) -> None:
    opts, report = b.opts, b.report

    async def replay() -> None:
        fig = await asyncio.to_thread(bench_replay, opts.events, opts.seed)
        report.add(f"fold rate ({int(fig['events']):,} events)",
                   f"{fig['fold_eps']:,.0f} events/s (worst {fig['fold_eps_worst']:,.0f})",
                   "≥ 200,000 events/s", fig["fold_eps_worst"] >= 200_000)
        report.add("fold / decode time", f"{fig['ratio']:.2f}× (worst {fig['ratio_worst']:.2f}×)",
                   "≤ 3×", fig["ratio"] <= 3)

    def replay_failed(why: str) -> None:
        report.not_measured("fold rate", "≥ 200,000 events/s", why)
        report.not_measured("fold / decode time", "≤ 3×", why)

    await b.section("replay: fold against a msgspec decode", 600, replay, replay_failed)


async def fanout_section(b: Bench) -> None:
    opts, report = b.opts, b.report
    fan_rows, fan_goals = FAN_ROWS, FAN_GOALS

    async def fanout() -> None:
        ws_module, note = await asyncio.to_thread(ensure_node_ws)
        print(f"  Node ws peer: {note}", flush=True)
        nodes = opts.nodes
        if nodes > 1 and shutil.which("redis-server") is None:
            nodes = 1
        fig = await bench_fanout(opts.fanout(nodes=nodes, node_ws=ws_module))
        if frames_failed(fig):
            report.failed = True
            report.notes.append("Fan-out: frames were lost, repeated or out of order (see the "
                                "output): a failure, whatever the latencies.")
        r = fig["ratio"]
        report.add(fan_rows[0], f"{fmt(r)}× ({fmt(fig['svc_p99_ms'])} vs {fmt(fig['bare_p99_ms'])} ms)",
                   fan_goals[0], ok(r, lambda x: x <= 1.25))
        if ws_module is None:
            report.not_measured(fan_rows[1], fan_goals[1], note.removeprefix("not measured: "))
        else:
            r = fig["node_ratio"]
            report.add(fan_rows[1], f"{fmt(r)}× ({fmt(fig['svc_p99_ms'])} vs "
                       f"{fmt(fig['node_p99_ms'])} ms)", fan_goals[1], ok(r, lambda x: x <= 1.25))
            report.notes.append(f"Node peer: {note} (`stream/tools/bench_peers/ws_peer.js`).")
        ack, raw_p99 = fig["ack_p99_ms"], fig["raw_commit_p99_ms"]
        report.add(fan_rows[2], f"{fmt(ack)} ms vs {fmt(raw_p99)} ms", fan_goals[2],
                   ok(ack - raw_p99, lambda x: x <= 2))
        kib = fig["idle_kib"]
        report.add(fan_rows[3], f"{fmt(kib, '.1f')} KiB ({int(fig['idle_opened']):,} viewers; bare "
                   f"websockets {fmt(fig['bare_idle_kib'], '.1f')} KiB)", fan_goals[3],
                   ok(kib, lambda x: x <= 12))
        if "cross_ratio" in fig:
            r = fig["cross_ratio"]
            report.add(fan_rows[4], f"{fmt(r)}× ({fmt(fig['cross_p99_ms'])} vs "
                       f"{fmt(fig['svc_p99_ms'])} ms)", fan_goals[4], ok(r, lambda x: x <= 1.5))
        else:
            why = "redis-server not found" if opts.nodes > 1 else "--nodes 1"
            report.not_measured(fan_rows[4], fan_goals[4], why)
        report.notes.append(f"Fan-out: {opts.viewers:,} viewers, one device at {opts.rate:g} "
                            f"events/s for {opts.seconds:g} s, best of {opts.rounds} interleaved "
                            f"round(s) per server; delta {fig['delta_bytes']:.0f} bytes; "
                            f"{opts.idle_viewers:,} idle viewers for memory.")

    def fanout_failed(why: str) -> None:
        for label, goal in zip(fan_rows, fan_goals, strict=True):
            report.not_measured(label, goal, why)

    budget = 1200 + 10 * opts.seconds * opts.rounds + opts.idle_viewers / 10
    await b.section("fan-out", budget, fanout, fanout_failed)
