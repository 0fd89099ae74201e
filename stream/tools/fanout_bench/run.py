"""One run of ``arena-stream bench fanout``: the processes, the phases in order,
the tables. (What it measures and why: ``stream/tools/bench_fanout.py``.)"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ...live.ops.config import Config
from ...live.ops.loops import default_loop
from ..harness import (
    Cluster,
    Process,
    Processes,
    ServiceProcess,
    percentile,
    raise_nofile,
    setup_game,
    wait_for_game,
    workers_for,
)
from ..harness.measure import loop_lag, peer_loop_lag
from ..harness.workers import LoadResult
from .instructions import count_all
from .peers import PeerServer, peer_events, start_bare, start_node_ws
from .phases import (
    IdleResult,
    Neighbour,
    Stalls,
    cpus,
    idle_phase,
    load_phase,
    probe_delta_size,
    sqlite_commit_ms,
    viewer_url,
)
from .report import (
    FanoutOptions,
    cluster_summary,
    fmt,
    node_label,
    report_idle,
    report_nodes,
    report_round,
    summary,
)
from .saturation import (
    Ladder,
    SatServer,
    device_sockets,
    sat_budget,
    sat_tokens,
    saturation_phase,
    saturation_summary,
)


async def bench_fanout(opts: FanoutOptions) -> dict[str, float]:
    """The whole benchmark, bounded in time, in a temporary directory; every process it
    started ended on the way out. Its figures."""
    if opts.nodes not in (1, 2):
        raise SystemExit("bench fanout: --nodes accepts 1 or 2")
    nofile = raise_nofile()
    # bare[, node-ws], service[, cluster]
    servers = (2 if opts.nodes == 1 else 3) + (opts.node_ws is not None)
    conditions = 2 if opts.contended else 1
    idle_phases = 2 + (opts.node_ws is not None)  # the service, bare[, node-ws]
    sat_ladders = 2 + (opts.node_ws is not None)  # servers with a saturation ladder: bare[, node-ws], service
    budget = (900 + 600 * (opts.ir_events > 0) + 2 * servers * conditions * (opts.seconds + 20) * opts.rounds
              + opts.idle_viewers / 40 * idle_phases + sat_budget(opts, sat_ladders))  # whatever happens
    with tempfile.TemporaryDirectory(prefix="arena-bench-fanout-") as d:
        async with Processes(Path(d)) as group, asyncio.timeout(budget):
            return await _run(group, opts, nofile)


async def start_node(group: Processes, name: str, data: Path, *, store: str | None = None,
                     extra: Sequence[str] = ()) -> ServiceProcess:
    """A service node on ``data`` (and on ``store``, an etcd:// URL, if given), ready."""
    node = group.service(data, name=name, store=store, args=extra)
    await node.astart()
    return node


async def start_cluster(group: Processes, n: int,
                        sockets: int) -> tuple[Cluster, list[str], float]:
    """Three etcd members and ``n`` service nodes on them, sharing one data directory; the
    bench game set up on node A and followed by the others, warmed up with a device on A and
    a viewer on the last node. (the cluster, device tokens, mean delta bytes.)"""
    try:
        cluster = Cluster(group.workdir, n, group=group)
    except FileNotFoundError:
        raise SystemExit("bench fanout: --nodes 2 needs etcd on the PATH (Debian's etcd-server)") from None
    await cluster.astart()
    a = cluster.nodes[0]
    tokens = await setup_game(a.http, a.admin, devices=sockets)
    for node in cluster.nodes[1:]:
        await wait_for_game(node.http, 1)
    delta_bytes = await probe_delta_size(a, tokens, 20, viewer_node=cluster.nodes[-1])
    return cluster, tokens, delta_bytes


async def _run(group: Processes, opts: FanoutOptions, nofile: int) -> dict[str, float]:
    work = group.workdir
    data = work / "data"
    sockets = device_sockets(opts.rate)
    print(f"bench fanout: {opts.viewers} viewers, {opts.rate:g} events/s for {opts.seconds:g} s, "
          f"{opts.idle_viewers} idle viewers, {opts.nodes} node(s); open-file limit {nofile}; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (other processes add noise)",
          flush=True)

    svc = await start_node(group, "service", data)
    # One token per device socket, for the load rounds' rate and the saturation ladder's top one.
    all_tokens = await setup_game(svc.http, svc.admin, devices=max(sockets, sat_tokens(opts)))
    tokens = all_tokens[:sockets]
    delta_bytes = await probe_delta_size(svc, tokens, 20)
    frame_bytes = round(delta_bytes)
    bare = await start_bare(group, frame_bytes)
    peer = await start_node_ws(group, frame_bytes, opts.node_ws) if opts.node_ws else None
    padded = "bare and Node ws frames" if peer else "bare frames"
    print(f"  service delta: {delta_bytes:.0f} bytes on average; {padded} padded to {frame_bytes}",
          flush=True)
    print(f"  device: one event stream, sent on schedule (open loop), over {sockets} device socket(s) "
          f"(the service allows {Config().device_rate:g} events/s per socket)", flush=True)

    print(f"  loop-stall probe in every server (a 10 ms timer measuring its lateness): the service's read "
          f"on /metrics, the peers' on GET /lag; bare websockets on {default_loop()}, as the service",
          flush=True)

    # Memory first, while the service's heap holds nothing freed by earlier viewers; and the
    # loop stalls of the idle viewers' arrival and departure (then 20 events, one at a time,
    # with a viewer: work that lets the collector meet the departed viewers' garbage), each
    # server's own probe; the same for each peer.
    idle_workers = workers_for(opts.idle_viewers)
    idle: dict[str, IdleResult] = {}
    stalls: dict[str, Stalls] = {}
    idle["svc"], stalls["svc"] = await idle_phase(
        group, "idle-service", [svc], opts.idle_viewers, idle_workers, opts.settle,
        probe=lambda: loop_lag(svc.http),
        after_leave=lambda: probe_delta_size(svc, tokens, 20, prefix="leave"))
    report_idle("arena-stream", idle["svc"], stalls["svc"])

    async def peer_idle(key: str, label: str, server: PeerServer) -> None:
        idle[key], stalls[key] = await idle_phase(
            group, f"idle-{server.name}", [server], opts.idle_viewers, idle_workers, opts.settle,
            probe=lambda: peer_loop_lag(server.http),
            after_leave=lambda: peer_events(server, tokens, 20, f"leave-{key}-"))
        report_idle(label, idle[key], stalls[key])

    await peer_idle("bare", "bare websockets", bare)
    if peer:
        await peer_idle("node", "Node ws", peer)

    # The cluster: after the memory phases, before any load, so that every server gets its
    # load rounds interleaved with the others'.
    cluster: list[ServiceProcess] = []
    cluster_servers: list[Process] = []
    cluster_tokens: list[str] = []
    nodes: Cluster | None = None
    if opts.nodes > 1:
        nodes, cluster_tokens, cluster_delta = await start_cluster(group, opts.nodes, sockets)
        cluster = nodes.nodes
        cluster_servers = [*cluster, *(m.process for m in nodes.etcd.members)]
        print(f"  cluster: three etcd members on {nodes.etcd.endpoints} and "
              f"{len(cluster)} nodes on them sharing one data directory; the device on node A, viewers "
              f"round-robin over {', '.join(node_label(i) for i in range(len(cluster)))}; delta "
              f"{cluster_delta:.0f} bytes on average (device on A, viewer on "
              f"{node_label(len(cluster) - 1)})", flush=True)
        print("  idle viewers: not measured on the cluster (only for --nodes 1)", flush=True)

    # ``rounds`` rounds, each server in turn (bare[, node], service[, cluster]), quiet and then
    # contended, so that a noisy moment on this shared machine hurts no side more than
    # another; each server a fresh process each round (10,000 departed viewers, or the last
    # round's garbage, weigh on no round); the median and the worst round are reported, lost
    # and repeated frames counted over every round. Contended: the server pinned to one core
    # (``taskset``), a busy loop pinned to the other; the viewers and the device unpinned.
    workers = workers_for(opts.viewers)
    conditions = ["quiet", *(["contended"] if opts.contended else [])]
    server_cpu, other_cpu = cpus()
    taskset = shutil.which("taskset")
    neighbour = (f"the server pinned to CPU {server_cpu} (taskset -c {server_cpu}), a busy loop pinned to "
                 f"CPU {other_cpu}" + (" (one usable core: the same one)" if server_cpu == other_cpu else "")
                 + "; the viewers and the device unpinned")
    if opts.contended and taskset is None:
        raise SystemExit("bench fanout: the contended rounds need taskset (util-linux)")
    results: dict[tuple[str, str], list[LoadResult]] = {}
    cluster_rounds: list[LoadResult] = []
    commit_rounds: list[list[float]] = []

    async def fresh(servers: Sequence[Process], cond: str) -> None:
        """Each of ``servers`` a new process, pinned to one core if ``cond`` is contended."""
        for server in servers:
            server.wrap = [taskset or "taskset", "-c", str(server_cpu)] if cond == "contended" else []
            await server.arestart()

    async def load(name: str, cond: str, servers: list[Process], urls: list[str], device_url: str,
                   tokens: list[str], prefix: str, metrics_from: str | None = None) -> LoadResult:
        nearby = (Neighbour(group, other_cpu, opts.seconds + 180) if cond == "contended"
                  else contextlib.nullcontext())
        async with nearby:
            res = await load_phase(group, name, servers, urls, device_url, tokens, viewers=opts.viewers,
                                   workers=workers, rate=opts.rate, seconds=opts.seconds, prefix=prefix,
                                   metrics_from=metrics_from)
        res.condition = cond
        report_round(res)
        return res

    for k in range(1, opts.rounds + 1):
        for cond in conditions:
            c = "" if cond == "quiet" else "c"
            await fresh([bare], cond)
            results.setdefault(("bare", cond), []).append(
                await load(f"bare{c}{k}", cond, [bare], [viewer_url(bare)], bare.device_url, tokens,
                           f"bare{c}{k}-"))
            if peer:
                await fresh([peer], cond)
                results.setdefault(("node", cond), []).append(
                    await load(f"node-ws{c}{k}", cond, [peer], [viewer_url(peer)], peer.device_url, tokens,
                               f"node{c}{k}-"))
            await fresh([svc], cond)
            results.setdefault(("svc", cond), []).append(
                await load(f"service{c}{k}", cond, [svc], [viewer_url(svc)], svc.device_url, tokens,
                           f"svc{c}{k}-", metrics_from=svc.http))
            if cluster and cond == "quiet":
                await fresh(cluster, cond)
                for node in cluster[1:]:
                    await wait_for_game(node.http, 1)
                urls = [viewer_url(n) for n in cluster]
                res = await load(f"cluster{k}", cond, cluster_servers, urls, cluster[0].device_url,
                                 cluster_tokens, f"cl{k}-", metrics_from=cluster[0].http)
                report_nodes(res, urls)
                cluster_rounds.append(res)
        commits = await asyncio.to_thread(sqlite_commit_ms, work / f"raw-commit{k}.sqlite",
                                          max(200, min(1000, results[("svc", "quiet")][-1].acked)))
        print(f"  raw SQLite commit (WAL, synchronous=FULL): {len(commits)} commits, "
              f"p50 {fmt(percentile(commits, 0.5))} ms p99 {fmt(percentile(commits, 0.99))} ms; "
              f"load average now {os.getloadavg()[0]:.2f}", flush=True)
        commit_rounds.append(commits)
    if nodes is not None:  # the nodes, then the etcd members
        for node in cluster:
            await node.astop(5.0)
        await nodes.etcd.astop()

    # The saturation ladders, last: each server a fresh process for each of its ladders.
    ladders: dict[str, list[Ladder]] = {}
    sat_servers = [SatServer("bare", "bare websockets", bare, viewer_url(bare), bare.device_url),
                   *([SatServer("node", "node ws", peer, viewer_url(peer), peer.device_url)] if peer else []),
                   SatServer("svc", "arena-stream", svc, viewer_url(svc), svc.device_url)]
    if opts.sat_rounds > 0:
        ladders = await saturation_phase(group, opts, sat_servers, all_tokens)
    else:
        print("  saturation: not measured (--sat-rounds 0)", flush=True)
    for server in [bare, *([peer] if peer else []), svc]:
        await server.astop(5.0)

    raw_p99 = statistics.median(percentile(c, 0.99) for c in commit_rounds)  # the median round's
    figures = summary(opts, delta_bytes, results, raw_p99, idle, stalls, neighbour)
    if cluster:
        figures |= cluster_summary(opts, [viewer_url(n) for n in cluster], cluster_rounds,
                                   results[("svc", "quiet")])
    if ladders:
        figures |= saturation_summary(opts, ladders, [(s.key, s.label) for s in sat_servers])
    if opts.ir_events > 0:
        figures |= await count_all(group, data, tokens, frame_bytes, opts.node_ws, viewers=opts.ir_viewers,
                                   events=opts.ir_events, rate=min(opts.ir_rate, opts.rate))
    return figures
