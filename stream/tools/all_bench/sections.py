"""The sections of ``arena-stream bench all``, in order, each bounded in time; a
section that fails becomes "not measured" in its rows and the others still run."""

from __future__ import annotations

import asyncio
import gc
import math
import os
import shutil
import tempfile
from pathlib import Path

from ..bench_replay import bench_replay
from ..fanout_bench.peers import ensure_node_ws
from ..fanout_bench.report import PEERS, frames_failed
from ..fanout_bench.run import bench_fanout
from ..fanout_bench.saturation import sat_budget, saturation_row, saturation_verdict
from ..harness import Processes
from .cold import cold_section
from .commits import end_to_end_section, group_commit_section, lone_ack_section
from .options import AllOptions
from .report import Bench, Report, fmt, ok

#: The fan-out section's rows and their goals (docs/performance.md, issue 15).
FAN_ROWS = ("viewer p99 vs bare websockets", "viewer p99 vs Node ws",
            "viewer p99 vs bare websockets, contended", "viewer p99 vs Node ws, contended",
            "ack p99 under fan-out vs raw commit p99", "memory per idle viewer",
            "loop stall under fan-out", "loop stall, idle viewers connecting",
            "loop stall, idle viewers leaving", "instructions per delivered frame",
            "instructions per acked event", "cross-node p99 vs single node",
            "saturation point (viewer p99 crosses 100 ms)", "the tail: worst round vs median round")
FAN_GOALS = ("≤ 1.25×", "≤ 1.0×", "≤ 1.25×", "≤ 1.0×", "≤ raw + 2 ms", "≤ 8 KiB", "none over 20 ms",
             "none over 20 ms", "none over 20 ms", "for reference (≤ Node ws)", "for reference", "≤ 1.5×",
             "≥ Node ws", "≤ 2×, or every second over 50 ms caused outside the process")
GOAL = dict(zip(FAN_ROWS, FAN_GOALS, strict=True))


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

    def row(label: str, measured: str, met: bool | None) -> None:
        report.add(label, measured, GOAL[label], met)

    async def fanout() -> None:
        ws_module, note = await asyncio.to_thread(ensure_node_ws)
        print(f"  Node ws peer: {note}", flush=True)
        nodes = opts.nodes
        if nodes > 1 and shutil.which("etcd") is None:
            nodes = 1
        fig = await bench_fanout(opts.fanout(nodes=nodes, node_ws=ws_module))
        if frames_failed(fig):
            report.failed = True
            report.notes.append("Fan-out: frames were lost, repeated or out of order (see the "
                                "output): a failure, whatever the latencies.")
        for sfx, cond in (("", ""), ("_contended", ", contended")):
            if f"svc_p99_ms{sfx}" not in fig:
                report.not_measured(f"viewer p99 vs bare websockets{cond}", GOAL[f"viewer p99 vs bare "
                                    f"websockets{cond}"], "--no-contended")
                report.not_measured(f"viewer p99 vs Node ws{cond}", GOAL[f"viewer p99 vs Node ws{cond}"],
                                    "--no-contended")
                continue
            for ref, label, limit in (("bare", f"viewer p99 vs bare websockets{cond}", 1.25),
                                      ("node", f"viewer p99 vs Node ws{cond}", 1.0)):
                name = "ratio" if ref == "bare" else "node_ratio"
                if f"{name}{sfx}" not in fig:
                    report.not_measured(label, GOAL[label], note.removeprefix("not measured: "))
                    continue
                r, svc_ms, ref_ms = fig[f"{name}{sfx}"], fig[f"svc_p99_ms{sfx}"], fig[f"{ref}_p99_ms{sfx}"]
                worst, svc_w, ref_w = (fig[f"{name}_worst{sfx}"], fig[f"svc_worst_p99_ms{sfx}"],
                                       fig[f"{ref}_worst_p99_ms{sfx}"])
                row(label, f"{fmt(r)}× median ({fmt(svc_ms)} vs {fmt(ref_ms)} ms); worst {fmt(worst)}× "
                    f"({fmt(svc_w)} vs {fmt(ref_w)} ms)", None if math.isnan(r) else r <= limit)
        if ws_module is not None:
            report.notes.append(f"Node peer: {note} (`stream/tools/bench_peers/ws_peer.js`).")
        ack, raw_p99 = fig["ack_p99_ms"], fig["raw_commit_p99_ms"]
        row(FAN_ROWS[4], f"{fmt(ack)} ms median (worst {fmt(fig['ack_worst_p99_ms'])} ms) vs "
            f"{fmt(raw_p99)} ms", ok(ack - raw_p99, lambda x: x <= 2))
        kib = fig["idle_kib"]
        peers_kib = "".join(f"; {label} {fmt(fig[f'{key}_idle_kib'], '.1f')} KiB" for key, label in PEERS
                            if f"{key}_idle_kib" in fig)
        row(FAN_ROWS[5], f"{fmt(kib, '.1f')} KiB ({int(fig['idle_opened']):,} viewers{peers_kib})",
            ok(kib, lambda x: x <= 8))
        worst_lag = fig["load_lag_worst_max_ms"]
        row(FAN_ROWS[6], f"max {fmt(fig['load_lag_max_ms'])} ms median (worst round {fmt(worst_lag)} ms), "
            f"p99 {fmt(fig['load_lag_p99_ms'])} ms", ok(worst_lag, lambda x: x <= 20))
        conds = [(sfx, cond) for sfx, cond in (("", "quiet"), ("_contended", "contended"))
                 if f"tail_ratio{sfx}" in fig]
        row(FAN_ROWS[13], "; ".join(
            f"{fmt(fig[f'tail_ratio{sfx}'])}× {cond} (seconds over 50 ms: {int(fig[f'slow_seconds{sfx}'])}, "
            f"outside the process {int(fig[f'slow_outside{sfx}'])}, not attributed "
            f"{int(fig[f'slow_unattributed{sfx}'])})" for sfx, cond in conds),
            all(fig[f"tail_ratio{sfx}"] <= 2 or fig[f"slow_seconds{sfx}"] == fig[f"slow_outside{sfx}"]
                for sfx, _ in conds) if conds else None)
        for what, label in (("connect", FAN_ROWS[7]), ("leave", FAN_ROWS[8])):
            top = fig[f"{what}_lag_max_ms"]
            peers = "".join(f"; {name}: max {fmt(fig[f'{key}_{what}_lag_max_ms'])} ms, p99 "
                            f"{fmt(fig[f'{key}_{what}_lag_p99_ms'])} ms" for key, name in PEERS
                            if f"{key}_{what}_lag_max_ms" in fig)
            row(label, f"max {fmt(top)} ms, p99 {fmt(fig[f'{what}_lag_p99_ms'])} ms "
                f"({int(fig['idle_opened']):,} viewers at once{peers})", ok(top, lambda x: x <= 20))
        if "ir_frame_svc" in fig:
            for kind, label in (("frame", FAN_ROWS[9]), ("ack", FAN_ROWS[10])):
                parts = [f"{fmt(fig[f'ir_{kind}_svc'], ',.0f')} arena-stream",
                         f"{fmt(fig[f'ir_{kind}_bare'], ',.0f')} bare websockets"]
                if f"ir_{kind}_node" in fig:
                    parts.append(f"{fmt(fig[f'ir_{kind}_node'], ',.0f')} Node ws")
                tool = "perf stat" if fig.get("ir_perf") else "callgrind Ir"
                row(label, "; ".join(parts) + f" ({tool})", None)
        else:
            why = ("--quick (arena-stream bench instructions counts them)" if opts.quick
                   else "perf stat cannot count here and valgrind is not installed")
            report.not_measured(FAN_ROWS[9], GOAL[FAN_ROWS[9]], why)
            report.not_measured(FAN_ROWS[10], GOAL[FAN_ROWS[10]], why)
        if "cross_ratio" in fig:
            r = fig["cross_ratio"]
            row(FAN_ROWS[11], f"{fmt(r)}× median ({fmt(fig['cross_p99_ms'])} vs {fmt(fig['svc_p99_ms'])} ms);"
                f" worst {fmt(fig['cross_ratio_worst'])}×", ok(r, lambda x: x <= 1.5))
        else:
            why = "etcd not found" if opts.nodes > 1 else "--nodes 1"
            report.not_measured(FAN_ROWS[11], GOAL[FAN_ROWS[11]], why)
        if opts.sat_rounds < 1:
            report.not_measured(FAN_ROWS[12], GOAL[FAN_ROWS[12]], "--sat-rounds 0")
        else:
            row(FAN_ROWS[12], saturation_row(fig, "" if ws_module else note.removeprefix("not measured: ")),
                saturation_verdict(fig))
            rates = ", ".join(f"{r:g}" for r in opts.sat_rates)
            report.notes.append(
                f"Saturation point: {opts.sat_viewers} viewers, the device at {rates} events/s in turn, "
                f"{opts.sat_seconds:g} s a step, {opts.sat_rounds} round(s) per server, server by server "
                "(the order reversed every other round), each server a fresh process for each ladder; a "
                "ladder stops at its first step over 100 ms. A step's p99 counts a frame never received "
                "as late. The point is linear on offered frames/s (viewers × events/s) between the last "
                "step under 100 ms and the first over; '> N' if none was over, '< N' if the first was. "
                f"The viewer workers and the device share the machine's {os.cpu_count() or 1} core(s) "
                "with the server: each step prints the server's "
                "CPU, the viewer workers' and the machine's, and a crossing where the viewer workers or "
                "the machine were at their limit (the harness's) is a lower bound on that server's "
                "own point.")
        report.notes.append(
            f"Fan-out: {opts.viewers:,} viewers, one device at {opts.rate:g} events/s for {opts.seconds:g} s "
            f"(delta {fig['delta_bytes']:.0f} bytes), {opts.rounds} interleaved round(s) per server and "
            "condition, each server a fresh process each round; the median round and the worst "
            "round are reported, never the fastest. Quiet: nothing else running but the viewers' "
            "worker processes and the device; contended: the server pinned to one core "
            "(`taskset -c`) and a busy loop pinned to the other. Each round prints the 1-minute "
            "load average at its end. Loop stalls: the service's own probe (a 10 ms timer "
            "measuring its lateness, `arena_loop_lag_window_seconds` on /metrics) during the "
            f"events, and while {int(fig['idle_opened']):,} idle viewers connect and then leave at "
            "once (their departure followed by 20 events, so that a collection of their "
            "garbage falls in the window); the same probe in the bare websockets server (on the "
            "service's event loop) and in the Node ws server, read by `GET /lag`, under the same "
            "idle viewers, beside it: even a server that does nothing else stalls when thousands "
            "of connections open or close at once. Instructions: each server alone, under valgrind's "
            "callgrind (perf stat where the machine counts), from the first event of a short "
            f"run ({opts.ir_viewers} viewers, {opts.ir_events} events, after a warm-up) to its "
            "last frame delivered: the instructions divided by the frames delivered, and by the "
            "events acked. Counts repeat on a shared machine where times do not.")

    def fanout_failed(why: str) -> None:
        for label, goal in zip(FAN_ROWS, FAN_GOALS, strict=True):
            report.not_measured(label, goal, why)

    conditions = 2 if opts.contended else 1
    budget = (1800 + conditions * 4 * (opts.seconds + 30) * opts.rounds + opts.idle_viewers / 10
              + 900 * (opts.ir_events > 0) + sat_budget(opts, 3))
    await b.section("fan-out", budget, fanout, fanout_failed)
