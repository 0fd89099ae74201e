"""The phases of ``arena-stream bench fanout``: a load round against one server,
idle viewers for memory, the probe of the service's delta size, and raw SQLite
commits for the ack's reference."""

from __future__ import annotations

import asyncio
import math
import os
import time
from pathlib import Path
from typing import Protocol

from ...store.sqlite import SCHEMA
from ...store.sqlite import connect as sqlite_connect
from ..harness import (
    GAME,
    DevicePool,
    EventStream,
    Process,
    Processes,
    Viewer,
    ViewerWorkers,
    ack_histogram,
    analyse,
    cpu_seconds,
    histogram_p99_bound,
    vm_rss_kib,
)
from ..harness.workers import LoadResult


class Server(Protocol):
    """What the bench needs of a server process: the service, a peer server."""

    name: str
    port: int

    @property
    def pid(self) -> int: ...

    @property
    def device_url(self) -> str: ...

    def watch(self, game: str | None = None) -> str: ...


def viewer_url(server: Server) -> str:
    return server.watch(GAME)


async def load_phase(group: Processes, name: str, servers: list[Process], viewer_urls: list[str],
                     device_url: str, tokens: list[str], *, viewers: int, workers: int, rate: float,
                     seconds: float, prefix: str, metrics_from: str | None = None) -> LoadResult:
    """``viewers`` viewers, the device at ``rate`` for ``seconds``; ``servers``' CPU time
    meanwhile; ``metrics_from``: a service's base URL, to read its own ack-time histogram too."""
    pool = ViewerWorkers(group)
    try:
        opened, errors, first_error = await pool.start(name, viewers, viewer_urls, workers,
                                                       stop_at_error=False)
        if errors or opened != viewers:
            raise RuntimeError(f"{name}: only {opened} of {viewers} viewers opened ({first_error})")
        await asyncio.sleep(0.5)
        n_events = 2 * max(1, round(rate * seconds / 2))  # even: the clock ends stopped
        async with EventStream(device_url, tokens, rate, prefix) as stream:
            cpu0 = sum(cpu_seconds(s.pid) for s in servers)
            wcpu0 = sum(cpu_seconds(p.pid) for p in pool.procs)
            hist0 = await ack_histogram(metrics_from) if metrics_from else {}
            burst = await stream.run(count=n_events)
            cpu = sum(cpu_seconds(s.pid) for s in servers) - cpu0
            wcpu = sum(cpu_seconds(p.pid) for p in pool.procs) - wcpu0
            hist1 = await ack_histogram(metrics_from) if metrics_from else {}
            reports = await pool.finish(max(burst.sends, default=0), drain=15)
            await stream.stop_clock()
    finally:
        await pool.close()
    if burst.refused:
        print(f"  {name}: {len(burst.refused)} event(s) refused or unanswered, the first: "
              f"{burst.refused[0]}", flush=True)

    def result(url: str | None = None) -> LoadResult:
        return analyse(name, reports, burst.sends, burst.ack_ms, n_events, len(burst.refused),
                       burst.seconds, url)

    res = result()
    if len(set(viewer_urls)) > 1:
        res.by_url = {url: result(url) for url in dict.fromkeys(viewer_urls)}
    res.send_seconds, res.server_cpu, res.viewer_cpu = burst.send_seconds, cpu, wcpu
    if metrics_from:
        res.server_ack_p99_bound = histogram_p99_bound(hist0, hist1)
    return res


async def probe_delta_size(server: Server, tokens: list[str], events: int,
                           viewer_node: Server | None = None) -> float:
    """Send ``events`` events to ``server``, one at a time, with one viewer watching (on
    ``viewer_node``, if given): the mean size of a delta frame (bytes). Also warms the
    service up, and leaves the game's clock stopped."""
    viewer = await Viewer.connect(viewer_url(viewer_node or server), max_size=2**22, compression=None)
    try:
        first = await viewer.next(timeout=10)
        if first.get("type") != "snapshot":
            raise RuntimeError(f"the service sent {first.get('type')!r} before a snapshot")
        async with DevicePool(server.device_url, tokens, "probe") as pool:
            last = 0
            for i in range(2 * max(1, events // 2)):
                _, _, reply = await pool.fire(i)
                if reply.get("type") != "ack":
                    raise RuntimeError(f"probe event refused: {reply}")
                last = int(reply["seq"])
        await viewer.until_seq(GAME, last, timeout=10)
    finally:
        await viewer.close()
    sizes = [size for frame, size in zip(viewer.frames, viewer.sizes, strict=True)
             if frame["type"] == "delta"]
    return sum(sizes) / len(sizes)


async def idle_phase(group: Processes, name: str, servers: list[Server], count: int,
                     workers: int, settle: float) -> tuple[int, int, str, float]:
    """Open up to ``count`` idle viewers; (opened, errors, first error, KiB of RSS each)."""
    pool = ViewerWorkers(group)
    try:
        before = sum(vm_rss_kib(s.pid) for s in servers)
        opened, errors, first_error = await pool.start(name, count, [viewer_url(s) for s in servers],
                                                       workers, stop_at_error=True)
        await asyncio.sleep(settle)
        after = sum(vm_rss_kib(s.pid) for s in servers)
        await pool.finish(0, 0)
    finally:
        await pool.close()
    return opened, errors, first_error, (after - before) / opened if opened else math.nan


def sqlite_commit_ms(path: Path, n: int) -> list[float]:
    """``n`` single-row INSERT+COMMITs into the service's own schema, WAL, synchronous=FULL:
    each one's time (ms), sorted."""
    conn = sqlite_connect(path, synchronous="FULL")
    try:
        conn.executescript(SCHEMA)
        body = b'{"type":"whistle","id":"bench/x","at":1780000000000,"game":"bench-fanout"}'
        out = []
        for i in range(n):
            t = time.perf_counter_ns()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO log (game, seq, device, client_id, official, digest, received_at, body)"
                         " VALUES (?,?,?,?,?,?,?,?)",
                         (GAME, i + 1, "bench", f"c{i}", "bench", os.urandom(16), i, body))
            conn.execute("COMMIT")
            out.append((time.perf_counter_ns() - t) / 1e6)
    finally:
        conn.close()
    return sorted(out)
