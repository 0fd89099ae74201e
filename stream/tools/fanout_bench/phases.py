"""The phases of ``arena-stream bench fanout``: a load round against one server,
idle viewers for memory (and the loop stalls of their arrival and departure), the
probe of the service's delta size, the busy neighbour of a contended round, and raw
SQLite commits for the ack's reference."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import os
import shutil
import sys
import time
from collections.abc import Awaitable, Callable
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
    Sampler,
    Viewer,
    ViewerWorkers,
    ack_buckets,
    analyse,
    cpu_seconds,
    histogram_p99_bound,
    round_stall,
    slow_seconds,
    summed,
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
                     seconds: float, prefix: str, metrics_from: str | None = None,
                     on_start: Callable[[], Awaitable[object]] | None = None,
                     on_sent: Callable[[], Awaitable[object]] | None = None,
                     on_done: Callable[[], Awaitable[object]] | None = None,
                     drain: float = 15.0) -> LoadResult:
    """``viewers`` viewers, the device at ``rate`` for ``seconds``; ``servers``' CPU time
    meanwhile; ``metrics_from``: a service's base URL, to read its own ack-time histogram
    and its loop-stall probe during the event stream too. ``on_start`` runs once the
    viewers and the device are connected, just before the first event; ``on_sent`` once
    every event is answered (as the CPU times are read); ``on_done`` once every viewer
    has every frame (or ``drain`` s after ``on_sent``: a frame later than that is lost)."""
    pool = ViewerWorkers(group)
    try:
        opened, errors, first_error = await pool.start(name, viewers, viewer_urls, workers,
                                                       stop_at_error=False)
        if errors or opened != viewers:
            raise RuntimeError(f"{name}: only {opened} of {viewers} viewers opened ({first_error})")
        await asyncio.sleep(0.5)
        n_events = 2 * max(1, round(rate * seconds / 2))  # even: the clock ends stopped
        # This process is the device: what earlier rounds left in it (their figures, millions
        # of objects) is collected and frozen now, so that no full collection walks it in the
        # middle of the events (a 0.3 s stall, after which the device sent what it owed at once).
        gc.collect()
        gc.freeze()
        async with EventStream(device_url, tokens, rate, prefix) as stream:
            cpu0 = sum(cpu_seconds(s.pid) for s in servers)
            wcpu0 = sum(cpu_seconds(p.pid) for p in pool.procs)
            async with contextlib.AsyncExitStack() as sampling:
                # The service's /metrics every second (its first read empties the stall window).
                sampler = (await sampling.enter_async_context(Sampler(metrics_from))
                           if metrics_from else None)
                if on_start is not None:
                    await on_start()
                burst = await stream.run(count=n_events)
                cpu = sum(cpu_seconds(s.pid) for s in servers) - cpu0
                wcpu = sum(cpu_seconds(p.pid) for p in pool.procs) - wcpu0
                if on_sent is not None:
                    await on_sent()
            reports = await pool.finish(max(burst.sends, default=0), drain=drain)
            if on_done is not None:
                await on_done()
            await stream.stop_clock()
    finally:
        await pool.close()
    if burst.refused:
        print(f"  {name}: {len(burst.refused)} event(s) refused or unanswered, the first: "
              f"{burst.refused[0]}", flush=True)

    pages = sampler.pages if sampler is not None else []
    origin = sampler.origin_ns if sampler is not None else None

    def result(url: str | None = None) -> LoadResult:
        return analyse(name, reports, burst.sends, burst.ack_ms, n_events, len(burst.refused),
                       burst.seconds, url, origin_ns=origin)

    res = result()
    if len(set(viewer_urls)) > 1:
        res.by_url = {url: result(url) for url in dict.fromkeys(viewer_urls)}
    res.send_seconds, res.server_cpu, res.viewer_cpu = burst.send_seconds, cpu, wcpu
    if len(pages) >= 2 and origin is not None:
        page0, page1 = pages[0].text, pages[-1].text
        res.server_ack_p99_bound = histogram_p99_bound(ack_buckets(page0), ack_buckets(page1))
        res.lag_p99_ms, res.lag_max_ms = round_stall(pages)
        acks: dict[int, list[float]] = {}
        for seq, sent_ns in burst.sends.items():
            if seq in stream.acks:
                acks.setdefault((sent_ns - origin) // 1_000_000_000, []).append(stream.acks[seq])
        res.slow = slow_seconds(res.by_second, pages, origin, res.viewer_stalls,
                                device_stalls=sampler.stalls.by_second if sampler else None,
                                device_collections=sampler.collections if sampler else None, acks=acks)
        res.commit_p99_ms, res.durable_p99_ms = (
            histogram_p99_bound(ack_buckets(page0, name), ack_buckets(page1, name))
            for name in ("arena_store_commit_seconds", "arena_store_durable_seconds"))
        pauses = "arena_gc_pause_seconds_sum"
        res.gc_ms = 1000 * (summed(page1, pauses) - summed(page0, pauses))
        res.steal_s, res.iowait_s = (
            summed(page1, f'arena_machine_cpu_seconds_total{{mode="{m}"}}')
            - summed(page0, f'arena_machine_cpu_seconds_total{{mode="{m}"}}') for m in ("steal", "iowait"))
    res.load_avg = os.getloadavg()[0]
    return res


class Neighbour:
    """A CPU-bound process pinned to ``cpu`` (``taskset -c``): a busy loop that ends by
    itself after ``seconds``, ended sooner by ``stop``. The contended rounds' neighbour."""

    CODE = ("import time\nend = time.monotonic() + {seconds}\nn = 0\n"
            "while time.monotonic() < end:\n    n += 1\n")

    def __init__(self, group: Processes, cpu: int, seconds: float) -> None:
        argv = [sys.executable, "-c", self.CODE.format(seconds=seconds)]
        self.proc = group.add(Process(f"neighbour-cpu{cpu}", argv))
        taskset = shutil.which("taskset")
        if taskset:
            self.proc.wrap = [taskset, "-c", str(cpu)]
        self.cpu = cpu

    async def __aenter__(self) -> Neighbour:
        await self.proc.astart()
        if not self.proc.wrap:  # no taskset: the same call it makes
            os.sched_setaffinity(self.proc.pid, {self.cpu})
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.proc.astop(2.0)


def cpus() -> tuple[int, int]:
    """(the core a contended round pins the server to, the core its neighbour gets): the
    first and the last this process may use; the same one on a one-core machine."""
    usable = sorted(os.sched_getaffinity(0))
    return usable[0], usable[-1]


async def probe_delta_size(server: Server, tokens: list[str], events: int,
                           viewer_node: Server | None = None, prefix: str = "probe") -> float:
    """Send ``events`` events to ``server``, one at a time, with one viewer watching (on
    ``viewer_node``, if given): the mean size of a delta frame (bytes). Also warms the
    service up, and leaves the game's clock stopped. ``prefix``: of the events' ids, new
    for each probe of a service (the same ids again are duplicates)."""
    viewer = await Viewer.connect(viewer_url(viewer_node or server), max_size=2**22, compression=None)
    try:
        first = await viewer.next(timeout=10)
        if first.get("type") != "snapshot":
            raise RuntimeError(f"the service sent {first.get('type')!r} before a snapshot")
        async with DevicePool(server.device_url, tokens, prefix) as pool:
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


#: An idle phase: (opened, errors, first error, KiB of RSS each).
IdleResult = tuple[int, int, str, float]
#: The loop stalls of the idle viewers' arrival and of their departure: (p99 ms, max ms).
Stalls = dict[str, tuple[float, float]]


async def idle_phase(group: Processes, name: str, servers: list[Server], count: int,
                     workers: int, settle: float, *,
                     probe: Callable[[], Awaitable[tuple[float, float, int]]] | None = None,
                     after_leave: Callable[[], Awaitable[object]] | None = None
                     ) -> tuple[IdleResult, Stalls]:
    """Open up to ``count`` idle viewers at once; (opened, errors, first error, KiB of RSS
    each). With ``probe`` (a read of the server's loop-stall probe that empties its window:
    ``loop_lag`` of a service, ``peer_loop_lag`` of a peer), also the stalls over their
    arrival (until ``settle`` s after the last opened) and over their departure (all closed
    at once, then ``after_leave`` run, some work that lets a collection of their garbage
    happen, then ``settle`` s)."""
    pool = ViewerWorkers(group)
    stalls: Stalls = {}
    try:
        before = sum(vm_rss_kib(s.pid) for s in servers)
        if probe is not None:
            await probe()  # empties the probe's window
        opened, errors, first_error = await pool.start(name, count, [viewer_url(s) for s in servers],
                                                       workers, stop_at_error=True)
        await asyncio.sleep(settle)
        after = sum(vm_rss_kib(s.pid) for s in servers)
        if probe is not None:
            stalls["connect"] = (await probe())[:2]
        await pool.finish(0, 0)
    finally:
        await pool.close()
    if probe is not None:
        if after_leave is not None:
            await after_leave()
        await asyncio.sleep(settle)
        stalls["leave"] = (await probe())[:2]
    return (opened, errors, first_error, (after - before) / opened if opened else math.nan), stalls


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
