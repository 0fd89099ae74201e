"""What ``arena-stream bench fanout`` prints: a line or two per load round, the
table of the single node against its references, and the cluster's table."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..harness.workers import LoadResult


@dataclass
class FanoutOptions:
    viewers: int = 1000
    rate: float = 50.0
    seconds: float = 20.0
    idle_viewers: int = 10_000
    nodes: int = 1
    rounds: int = 2
    settle: float = 3.0
    #: The ``ws`` package's directory (``ensure_node_ws``): also measure the Node peer.
    node_ws: Path | None = None


def frames_failed(figures: dict[str, float]) -> bool:
    """Whether a frame was lost or repeated (or, on the cluster, out of seq order): a failure,
    whatever the latencies."""
    return any(figures.get(k) for k in ("lost", "dup", "cluster_lost", "cluster_dup", "cluster_misordered"))


def fmt(x: float, spec: str = ".2f") -> str:
    return "n/a" if math.isnan(x) else format(x, spec)


def nan_last(x: float) -> float:
    return math.inf if math.isnan(x) else x


def best(rounds: list[LoadResult]) -> LoadResult:
    """The round with the lowest viewer p99 (the least disturbed, on a shared machine)."""
    return min(rounds, key=lambda x: nan_last(x.p(0.99)))


def node_label(i: int) -> str:
    return f"node {chr(ord('A') + i)}"


def report_round(r: LoadResult) -> None:
    print(f"  {r.name}: {r.sent} events sent in {r.send_seconds:.1f} s ({r.sent / r.send_seconds:.1f}/s), "
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
              f"p99 <= {r.server_ack_p99_bound:g} ms", flush=True)


def report_nodes(res: LoadResult, urls: list[str]) -> None:
    """A cluster round, node by node (``urls``: each node's viewer URL, node A's first)."""
    for i, url in enumerate(urls):
        r = res.by_url[url]
        how = "same node as the device" if i == 0 else "cross-node"
        print(f"  {res.name}, {node_label(i)} ({how}): {len(r.lat_ms):,} frames timed over {r.viewers} "
              f"viewers; viewer p50 {fmt(r.p(0.5))} ms p99 {fmt(r.p(0.99))} ms max {fmt(r.p(1.0), '.1f')} "
              f"ms; lost {r.lost}, dup {r.dup}, out of order {r.misordered}, resyncs {r.resets}, "
              f"viewers dropped {r.dropped}", flush=True)


def summary(opts: FanoutOptions, delta_bytes: float, results: dict[str, list[LoadResult]],
            ack_p99: float, raw_p99: float, svc_idle: tuple[int, int, str, float],
            bare_idle: tuple[int, int, str, float]) -> dict[str, float]:
    """The single node's table against the bare server (and the Node peer, under "node"):
    best round each, lost and repeated frames over all rounds. Its figures."""
    bare_res, svc_res = best(results["bare"]), best(results["svc"])
    node_res = best(results["node"]) if results.get("node") else None
    lost = {key: sum(x.lost for x in rs) for key, rs in results.items() if rs}
    dup = {key: sum(x.dup for x in rs) for key, rs in results.items() if rs}
    ratio = svc_res.p(0.99) / bare_res.p(0.99)
    svc_kib, bare_kib = svc_idle[3], bare_idle[3]
    rows = [("bare websockets", "bare", bare_res)]
    if node_res is not None:
        rows.append(("node ws", "node", node_res))
    rows.append(("arena-stream", "svc", svc_res))
    print()
    print(f"fanout: {opts.viewers} viewers, {opts.rate:g} events/s for {opts.seconds:g} s, "
          f"delta {delta_bytes / 1024:.1f} KiB ({delta_bytes:.0f} bytes); best of {opts.rounds} "
          f"round(s) each; lost/dup over all rounds")
    print(f"{'':22}{'p50 ms':>6}   {'p99 ms':>6}   {'lost':>4}  {'dup':>3}")
    for label, key, r in rows:
        print(f"{label:22}{fmt(r.p(0.5)):>6}   {fmt(r.p(0.99)):>6}   {lost[key]:>4}  {dup[key]:>3}")
    for label, _, r in rows:
        if r.refused or r.sent / r.send_seconds < 0.95 * opts.rate:
            print(f"  (against {label}: {r.refused} event(s) refused or unanswered; the device sent "
                  f"{r.sent / r.send_seconds:.1f} events/s)")
    print(f"{'viewer p99 ratio':21}{fmt(ratio):>5}   (goal <= 1.25)")
    node_figures: dict[str, float] = {}
    if node_res is not None:
        node_ratio = svc_res.p(0.99) / node_res.p(0.99)
        print(f"{'p99 ratio vs node ws':21}{fmt(node_ratio):>5}   (arena-stream p99 / Node ws p99; "
              f"goal <= 1.25)")
        node_figures = {"node_p50_ms": node_res.p(0.5), "node_p99_ms": node_res.p(0.99),
                        "node_ratio": node_ratio}
    print(f"{'ack p99':21}{fmt(ack_p99)} ms  raw SQLite FULL commit p99 {fmt(raw_p99)} ms"
          f"  (goal <= raw + 2 ms)")
    print(f"{'idle viewers':21}{svc_idle[0]} opened: {fmt(svc_kib, '.1f')} KiB each "
          f"(bare websockets: {fmt(bare_kib, '.1f')} KiB)  (goal <= 12 KiB)", flush=True)
    return node_figures | {
        "delta_bytes": delta_bytes,
        "bare_p50_ms": bare_res.p(0.5), "bare_p99_ms": bare_res.p(0.99),
        "svc_p50_ms": svc_res.p(0.5), "svc_p99_ms": svc_res.p(0.99),
        "ratio": ratio,
        "lost": float(sum(lost.values())), "dup": float(sum(dup.values())),
        "ack_p99_ms": ack_p99, "raw_commit_p99_ms": raw_p99,
        "idle_opened": float(svc_idle[0]), "idle_kib": svc_kib, "bare_idle_kib": bare_kib,
    }


def cluster_summary(opts: FanoutOptions, urls: list[str], rounds: list[LoadResult],
                    svc_rounds: list[LoadResult]) -> dict[str, float]:
    """The cluster's table (``urls``: each node's viewer URL, node A's first), beside the
    single node's best round; its figures."""
    svc_res = best(svc_rounds)
    a_url, b_url = urls[0], urls[-1]
    top = min(rounds, key=lambda x: nan_last(x.by_url[b_url].p(0.99)))
    on_a, cross = top.by_url[a_url], top.by_url[b_url]
    ratio = cross.p(0.99) / svc_res.p(0.99)
    a_ratio = on_a.p(0.99) / svc_res.p(0.99)
    ack_p99 = min(nan_last(x.ack_p(0.99)) for x in rounds)

    def total(results: list[LoadResult], what: str) -> int:
        return sum(int(getattr(x, what)) for x in results)

    a_rounds = [x.by_url[a_url] for x in rounds]
    b_rounds = [x.by_url[b_url] for x in rounds]
    print()
    print(f"cluster: {len(urls)} nodes on one redis-server (AOF, appendfsync always), the device on "
          f"node A, viewers round-robin over them ({on_a.viewers} on A, {cross.viewers} on B); "
          f"best of {opts.rounds} round(s) by node B's p99; lost/dup/out of order over all rounds")
    print(f"{'':26}{'p50 ms':>6}   {'p99 ms':>6}   {'lost':>4}  {'dup':>3}  {'order':>5}")
    for label, r, rs in (("single node (SQLite)", svc_res, svc_rounds),
                         ("cluster, node A", on_a, a_rounds),
                         ("cluster, cross-node (B)", cross, b_rounds)):
        print(f"{label:26}{fmt(r.p(0.5)):>6}   {fmt(r.p(0.99)):>6}   {total(rs, 'lost'):>4}  "
              f"{total(rs, 'dup'):>3}  {total(rs, 'misordered'):>5}")
    if top.refused or top.sent / top.send_seconds < 0.95 * opts.rate:
        print(f"  (against the cluster: {top.refused} event(s) refused or unanswered; the device sent "
              f"{top.sent / top.send_seconds:.1f} events/s)")
    print(f"{'cross-node p99 ratio':25}{fmt(ratio):>5}   (cross-node p99 / single-node p99; goal <= 1.5)")
    print(f"{'node A p99 ratio':25}{fmt(a_ratio):>5}   (node A p99 / single-node p99; for reference)")
    print(f"{'cluster ack p99':25}{fmt(ack_p99)} ms  (device on node A, Redis appendfsync always; "
          f"for reference)")
    print(f"{'cluster idle viewers':25}not measured (only for --nodes 1)", flush=True)
    return {
        "cluster_a_p50_ms": on_a.p(0.5), "cluster_a_p99_ms": on_a.p(0.99),
        "cross_p50_ms": cross.p(0.5), "cross_p99_ms": cross.p(0.99),
        "cross_ratio": ratio, "cluster_a_ratio": a_ratio, "cluster_ack_p99_ms": ack_p99,
        "cluster_lost": float(total(rounds, "lost")), "cluster_dup": float(total(rounds, "dup")),
        "cluster_misordered": float(total(rounds, "misordered")),
    }
