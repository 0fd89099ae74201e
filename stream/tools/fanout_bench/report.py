"""What ``arena-stream bench fanout`` prints: a line or two per load round and per
idle phase, the table of the single node against its references (the median and the
worst round of each server, quiet and contended; each server's loop stalls and memory
under idle viewers), and the cluster's table."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..harness.tail import SLOW_MS
from ..harness.workers import LoadResult
from .phases import IdleResult, Stalls


@dataclass
class FanoutOptions:
    viewers: int = 1000
    rate: float = 50.0
    seconds: float = 20.0
    idle_viewers: int = 10_000
    nodes: int = 1
    rounds: int = 5
    settle: float = 3.0
    #: Also the contended rounds: a busy neighbour on the other core, the server pinned.
    contended: bool = True
    #: Instructions per frame and per ack (``instructions``): viewers, events (0: not counted).
    ir_viewers: int = 20
    ir_events: int = 200
    ir_rate: float = 40.0
    #: The ``ws`` package's directory (``ensure_node_ws``): also measure the Node peer.
    node_ws: Path | None = None
    #: The saturation phase (``saturation``): viewers, the ladder's events/s, seconds a step,
    #: rounds (0: not measured).
    sat_viewers: int = 250
    sat_rates: tuple[float, ...] = (50.0, 100.0, 200.0, 400.0, 800.0)
    sat_seconds: float = 1.5
    sat_rounds: int = 3


def frames_failed(figures: dict[str, float]) -> bool:
    """Whether a frame was lost or repeated (or, on the cluster, out of seq order): a failure,
    whatever the latencies."""
    return any(figures.get(k) for k in ("lost", "dup", "cluster_lost", "cluster_dup", "cluster_misordered"))


def fmt(x: float, spec: str = ".2f") -> str:
    return "n/a" if math.isnan(x) else format(x, spec)


def median_of(rounds: list[LoadResult], what: Callable[[LoadResult], float]) -> float:
    """The median over ``rounds`` of a round's figure (NaNs left out; NaN if none)."""
    xs = [x for x in map(what, rounds) if not math.isnan(x)]
    return statistics.median(xs) if xs else math.nan


def worst_of(rounds: list[LoadResult], what: Callable[[LoadResult], float]) -> float:
    """The worst (largest) over ``rounds`` of a round's figure (NaNs left out; NaN if none)."""
    xs = [x for x in map(what, rounds) if not math.isnan(x)]
    return max(xs) if xs else math.nan


def p50(r: LoadResult) -> float:
    return r.p(0.5)


def p99(r: LoadResult) -> float:
    return r.p(0.99)


def node_label(i: int) -> str:
    return f"node {chr(ord('A') + i)}"


def report_round(r: LoadResult) -> None:
    print(f"  {r.name} ({r.condition}, load average {r.load_avg:.2f}): {r.sent} events sent in "
          f"{r.send_seconds:.1f} s ({r.sent / r.send_seconds:.1f}/s), "
          f"{r.acked} acked, {len(r.lat_ms):,} frames timed over {r.viewers} viewers; "
          f"viewer p50 {fmt(r.p(0.5))} ms p99 {fmt(r.p(0.99))} ms max {fmt(r.p(1.0), '.1f')} ms; "
          f"ack p50 {fmt(r.ack_p(0.5))} ms p99 {fmt(r.ack_p(0.99))} ms; lost {r.lost}, dup {r.dup}, "
          f"resyncs {r.resets}, viewers dropped {r.dropped}, other deltas {r.other}", flush=True)
    per = 1e6 * r.server_cpu / max(1, r.acked * r.viewers)
    print(f"  {r.name}: server CPU {r.server_cpu:.1f} s "
          f"({100 * r.server_cpu / r.seconds:.0f} % of a core, {per:.1f} µs per frame sent), "
          f"viewer workers' CPU {r.viewer_cpu:.1f} s", flush=True)
    if not math.isnan(r.server_ack_p99_bound):
        print(f"  {r.name}: the service's own arena_ack_seconds histogram (arrival to ack ready): "
              f"p99 <= {r.server_ack_p99_bound:g} ms; its loop-stall probe: p99 {fmt(r.lag_p99_ms)} ms, "
              f"max {fmt(r.lag_max_ms)} ms", flush=True)
        print(f"  {r.name}: beside it, the store's transactions alone (the disk's fsync) p99 <= "
              f"{fmt(r.commit_p99_ms, '.1f')} ms, each append from its call to durable p99 <= "
              f"{fmt(r.durable_p99_ms, '.1f')} ms; garbage collections {fmt(r.gc_ms, '.1f')} ms in all; the "
              f"machine's CPU stolen by its host {fmt(r.steal_s, '.2f')} s, waiting on a disk "
              f"{fmt(r.iowait_s, '.2f')} s", flush=True)
        report_slow(r)


def report_slow(r: LoadResult) -> None:
    """Each second of a service round whose p99 was over 50 ms, with what was behind it."""
    if not r.slow:
        print(f"  {r.name}: no second with a p99 over {SLOW_MS:g} ms", flush=True)
    for s in r.slow:
        where = "outside the process" if s.outside else (
            "inside the process" if s.cause != "not attributed" else "")
        print(f"  {r.name}: second {s.second}: p99 {fmt(s.p99_ms, '.1f')} ms over {s.frames:,} frames; while "
              f"they were in flight the store's transactions alone p99 <= {fmt(s.commit_p99_ms, '.1f')} ms, "
              f"appends to durable p99 <= {fmt(s.durable_p99_ms, '.1f')} ms, the loop's largest stall "
              f"{fmt(s.stall_max_ms, '.1f')} ms, collections {fmt(s.gc_ms, '.1f')} ms, the service's CPU "
              f"{fmt(s.cpu_ms, '.0f')} ms of {fmt(s.span_ms, '.0f')} "
              f"({fmt(100 * s.busy, '.0f')} % of a core), "
              f"stolen by the host {fmt(s.steal_ms, '.0f')} ms over {s.cores} cores, waiting on a disk "
              f"{fmt(s.iowait_ms, '.0f')} ms, the machine idle {fmt(100 * s.idle_share, '.0f')} %, "
              f"the viewers' own loop's largest stall {fmt(s.viewers_stall_ms, '.1f')} ms, the device's "
              f"{fmt(s.device_stall_ms, '.1f')} ms (its longest collection {fmt(s.device_gc_ms, '.1f')} ms), "
              f"the second's acks p99 {fmt(s.ack_p99_ms, '.1f')} ms "
              f"at the device and <= {fmt(s.service_ack_p99_ms, '.1f')} ms in the service, TCP segments "
              f"resent {fmt(s.tcp_resent, '.0f')} ({fmt(s.tcp_timeouts, '.0f')} after a timeout; the round's "
              f"usual {fmt(s.tcp_resent_usual, '.0f')} a second): "
              f"{s.cause}" + (f" ({where})" if where else ""), flush=True)


def tail_summary(rounds: list[LoadResult], cond: str) -> dict[str, float]:
    """The service's tail under ``cond``: its worst round against its median round, and its
    seconds over 50 ms by cause. Its figures."""
    ratio = worst_of(rounds, p99) / median_of(rounds, p99)
    slow = [s for r in rounds for s in r.slow]
    outside = sum(s.outside for s in slow)
    unknown = sum(s.cause == "not attributed" for s in slow)
    causes = ", ".join(f"{c} {n}" for c, n in Counter(s.cause for s in slow).most_common())
    print(f"{'tail, ' + cond:21}worst round p99 / median round p99 {fmt(ratio)} (goal <= 2); seconds with "
          f"a p99 over {SLOW_MS:g} ms: {len(slow)}, outside the process {outside}, inside "
          f"{len(slow) - outside - unknown}, not attributed {unknown}" + (f" ({causes})" if causes else ""))
    sfx = SUFFIX[cond]
    return {f"tail_ratio{sfx}": ratio, f"slow_seconds{sfx}": float(len(slow)),
            f"slow_outside{sfx}": float(outside), f"slow_unattributed{sfx}": float(unknown)}


def report_nodes(res: LoadResult, urls: list[str]) -> None:
    """A cluster round, node by node (``urls``: each node's viewer URL, node A's first)."""
    for i, url in enumerate(urls):
        r = res.by_url[url]
        how = "same node as the device" if i == 0 else "cross-node"
        print(f"  {res.name}, {node_label(i)} ({how}): {len(r.lat_ms):,} frames timed over {r.viewers} "
              f"viewers; viewer p50 {fmt(r.p(0.5))} ms p99 {fmt(r.p(0.99))} ms max {fmt(r.p(1.0), '.1f')} "
              f"ms; lost {r.lost}, dup {r.dup}, out of order {r.misordered}, resyncs {r.resets}, "
              f"viewers dropped {r.dropped}", flush=True)


#: Each server's key and label, in the tables' order.
SERVERS = (("bare", "bare websockets"), ("node", "node ws"), ("svc", "arena-stream"))
#: The peers' keys and labels in the lines that put them beside the service.
PEERS = (("bare", "bare websockets"), ("node", "Node ws"))

def report_idle(label: str, idle: IdleResult, stalls: Stalls) -> None:
    """One server's idle phase: its viewers, their memory, its loop stalls (if it has a probe)."""
    opened, errors, first_error, kib = idle
    print(f"  idle, {label}: {opened} opened ({fmt(kib, '.1f')} KiB of RSS each), {errors} errors "
          f"{first_error}".rstrip(), flush=True)
    for what in ("connect", "leave"):
        if what in stalls:
            p99_ms, max_ms = stalls[what]
            print(f"  idle, {label}: loop stall while they {what}: p99 {fmt(p99_ms)} ms, max "
                  f"{fmt(max_ms)} ms", flush=True)


def beside(figures: dict[str, float], what: str) -> str:
    """The peers' loop stalls at ``what`` ("connect", "leave") from ``summary``'s figures:
    "bare websockets: p99 .. ms, max .. ms; Node ws: ..." (the peers measured), or ""."""
    return "; ".join(f"{label}: p99 {fmt(figures[f'{key}_{what}_lag_p99_ms'])} ms, max "
                     f"{fmt(figures[f'{key}_{what}_lag_max_ms'])} ms"
                     for key, label in PEERS if f"{key}_{what}_lag_max_ms" in figures)
#: The suffix of a condition's figures: "" for quiet, "_contended".
SUFFIX = {"quiet": "", "contended": "_contended"}


def summary(opts: FanoutOptions, delta_bytes: float, results: dict[tuple[str, str], list[LoadResult]],
            raw_p99: float, idle: dict[str, IdleResult], stalls: dict[str, Stalls],
            neighbour: str) -> dict[str, float]:
    """The single node's table against the bare server (and the Node peer, under "node"),
    quiet and contended: the median and the worst round of each, lost and repeated frames
    over all rounds; each server's loop stalls and memory under idle viewers (``idle`` and
    ``stalls`` by server key: "svc", "bare", "node"). Its figures (a contended figure's key
    ends in ``_contended``; a peer's idle figures start with its key)."""
    conditions = [c for c in ("quiet", "contended") if results.get(("svc", c))]
    lost = {key: sum(x.lost for x in rs) for key, rs in results.items()}
    dup = {key: sum(x.dup for x in rs) for key, rs in results.items()}
    figures: dict[str, float] = {"delta_bytes": delta_bytes}
    print()
    print(f"fanout: {opts.viewers} viewers, {opts.rate:g} events/s for {opts.seconds:g} s, "
          f"delta {delta_bytes / 1024:.1f} KiB ({delta_bytes:.0f} bytes); median and worst of "
          f"{opts.rounds} interleaved round(s) per server and condition, fresh processes each round; "
          f"lost/dup over all rounds")
    if "contended" in conditions:
        print(f"  contended: {neighbour}")
    print(f"{'':18}{'':11}{'p50 ms':>8}{'p99 ms':>8}{'worst p99':>10}{'ack p99':>9}{'load':>6}"
          f"{'lost':>6}{'dup':>5}")
    for cond in conditions:
        for key, label in SERVERS:
            rs = results.get((key, cond), [])
            if not rs:
                continue
            print(f"{label:18}{cond:11}{fmt(median_of(rs, p50)):>8}{fmt(median_of(rs, p99)):>8}"
                  f"{fmt(worst_of(rs, p99)):>10}{fmt(median_of(rs, lambda x: x.ack_p(0.99))):>9}"
                  f"{fmt(median_of(rs, lambda x: x.load_avg), '.1f'):>6}"
                  f"{lost[(key, cond)]:>6}{dup[(key, cond)]:>5}")
            sfx = SUFFIX[cond]
            figures[f"{key}_p50_ms{sfx}"] = median_of(rs, p50)
            figures[f"{key}_p99_ms{sfx}"] = median_of(rs, p99)
            figures[f"{key}_worst_p99_ms{sfx}"] = worst_of(rs, p99)
            for r in rs:
                if r.refused or r.sent / r.send_seconds < 0.95 * opts.rate:
                    print(f"  (against {label}, {r.name}: {r.refused} event(s) refused or unanswered; "
                          f"the device sent {r.sent / r.send_seconds:.1f} events/s)")
    print("  (p50, p99, ack p99, load: the median round's; worst p99: the worst round's; load: the "
          "1-minute load average at the end of the round)")
    for cond in conditions:
        sfx = SUFFIX[cond]
        for ref, label, goal in (("bare", "bare websockets", "1.25"), ("node", "node ws", "1.0")):
            if f"{ref}_p99_ms{sfx}" not in figures:
                continue
            ratio = figures[f"svc_p99_ms{sfx}"] / figures[f"{ref}_p99_ms{sfx}"]
            worst = figures[f"svc_worst_p99_ms{sfx}"] / figures[f"{ref}_worst_p99_ms{sfx}"]
            name = "ratio" if ref == "bare" else "node_ratio"
            figures[f"{name}{sfx}"], figures[f"{name}_worst{sfx}"] = ratio, worst
            print(f"{'p99 ratio vs ' + label + ', ' + cond:40}{fmt(ratio):>6}   worst {fmt(worst):>6}   "
                  f"(arena-stream / {label}, median rounds; goal <= {goal})")
    for cond in conditions:
        figures |= tail_summary(results[("svc", cond)], cond)
    svc_rounds = results[("svc", "quiet")]
    ack_p99 = median_of(svc_rounds, lambda x: x.ack_p(0.99))
    ack_worst = worst_of(svc_rounds, lambda x: x.ack_p(0.99))
    print(f"{'ack p99':21}{fmt(ack_p99)} ms (worst {fmt(ack_worst)} ms)  raw SQLite FULL commit p99 "
          f"{fmt(raw_p99)} ms  (goal <= raw + 2 ms)")
    lag_p99 = median_of(svc_rounds, lambda x: x.lag_p99_ms)
    lag_max = median_of(svc_rounds, lambda x: x.lag_max_ms)
    lag_worst = worst_of(svc_rounds, lambda x: x.lag_max_ms)
    print(f"{'loop stall, load':21}p99 {fmt(lag_p99)} ms, max {fmt(lag_max)} ms (worst round's max "
          f"{fmt(lag_worst)} ms)  (the service's stall probe during the events; goal: none over 20 ms)")
    svc_idle = idle["svc"]
    for what in ("connect", "leave"):
        for key in ("svc", *(k for k, _ in PEERS if k in stalls)):
            sp99, smax = stalls.get(key, {}).get(what, (math.nan, math.nan))
            name = f"{what}_lag" if key == "svc" else f"{key}_{what}_lag"
            figures[f"{name}_p99_ms"], figures[f"{name}_max_ms"] = sp99, smax
        peers = beside(figures, what)
        print(f"{'loop stall, ' + what:21}p99 {fmt(figures[f'{what}_lag_p99_ms'])} ms, max "
              f"{fmt(figures[f'{what}_lag_max_ms'])} ms" + (f" ({peers})" if peers else "")
              + f"  ({svc_idle[0]} idle viewers {'connecting' if what == 'connect' else 'leaving'} at "
              "once; goal: none over 20 ms)")
    svc_kib = svc_idle[3]
    peers_kib = "; ".join(f"{label}: {fmt(idle[key][3], '.1f')} KiB" for key, label in PEERS if key in idle)
    print(f"{'idle viewers':21}{svc_idle[0]} opened: {fmt(svc_kib, '.1f')} KiB each"
          + (f" ({peers_kib})" if peers_kib else "") + "  (goal <= 8 KiB)", flush=True)
    for key, _ in PEERS:
        if key in idle:
            figures[f"{key}_idle_kib"] = idle[key][3]
    return figures | {
        "lost": float(sum(lost.values())), "dup": float(sum(dup.values())),
        "ack_p99_ms": ack_p99, "ack_worst_p99_ms": ack_worst, "raw_commit_p99_ms": raw_p99,
        "load_lag_p99_ms": lag_p99, "load_lag_max_ms": lag_max, "load_lag_worst_max_ms": lag_worst,
        "idle_opened": float(svc_idle[0]), "idle_kib": svc_kib,
    }


def cluster_summary(opts: FanoutOptions, urls: list[str], rounds: list[LoadResult],
                    svc_rounds: list[LoadResult]) -> dict[str, float]:
    """The cluster's table (``urls``: each node's viewer URL, node A's first), beside the
    single node's quiet rounds: the median and the worst round of each; its figures."""
    a_url, b_url = urls[0], urls[-1]
    a_rounds = [x.by_url[a_url] for x in rounds]
    b_rounds = [x.by_url[b_url] for x in rounds]
    svc_p99, a_p99, b_p99 = median_of(svc_rounds, p99), median_of(a_rounds, p99), median_of(b_rounds, p99)
    ratio, a_ratio = b_p99 / svc_p99, a_p99 / svc_p99
    worst_ratio = worst_of(b_rounds, p99) / worst_of(svc_rounds, p99)
    ack_p99 = median_of(rounds, lambda x: x.ack_p(0.99))

    def total(results: list[LoadResult], what: str) -> int:
        return sum(int(getattr(x, what)) for x in results)

    print()
    print(f"cluster: {len(urls)} nodes on three etcd members, the device on "
          f"node A, viewers round-robin over them ({a_rounds[0].viewers} on A, {b_rounds[0].viewers} on "
          f"B); median and worst of {len(rounds)} round(s), quiet; lost/dup/out of order over all rounds")
    print(f"{'':26}{'p50 ms':>8}{'p99 ms':>8}{'worst p99':>10}{'lost':>6}{'dup':>5}{'order':>6}")
    for label, rs in (("single node (SQLite)", svc_rounds), ("cluster, node A", a_rounds),
                      ("cluster, cross-node (B)", b_rounds)):
        print(f"{label:26}{fmt(median_of(rs, p50)):>8}{fmt(median_of(rs, p99)):>8}"
              f"{fmt(worst_of(rs, p99)):>10}{total(rs, 'lost'):>6}{total(rs, 'dup'):>5}"
              f"{total(rs, 'misordered'):>6}")
    for top in rounds:
        if top.refused or top.sent / top.send_seconds < 0.95 * opts.rate:
            print(f"  (against the cluster, {top.name}: {top.refused} event(s) refused or unanswered; "
                  f"the device sent {top.sent / top.send_seconds:.1f} events/s)")
    print(f"{'cross-node p99 ratio':25}{fmt(ratio):>6}   worst {fmt(worst_ratio):>6}   (cross-node p99 / "
          f"single-node p99; goal <= 1.5)")
    print(f"{'node A p99 ratio':25}{fmt(a_ratio):>6}   (node A p99 / single-node p99; for reference)")
    print(f"{'cluster ack p99':25}{fmt(ack_p99)} ms  (device on node A, an etcd commit on two of three "
          f"members; for reference)")
    print(f"{'cluster idle viewers':25}not measured (only for --nodes 1)", flush=True)
    return {
        "cluster_a_p50_ms": median_of(a_rounds, p50), "cluster_a_p99_ms": a_p99,
        "cross_p50_ms": median_of(b_rounds, p50), "cross_p99_ms": b_p99, "cross_worst_p99_ms":
        worst_of(b_rounds, p99), "cross_ratio": ratio, "cross_ratio_worst": worst_ratio,
        "cluster_a_ratio": a_ratio, "cluster_ack_p99_ms": ack_p99,
        "cluster_lost": float(total(rounds, "lost")), "cluster_dup": float(total(rounds, "dup")),
        "cluster_misordered": float(total(rounds, "misordered")),
    }
