"""The tail, second by second: what held up each slow second of a fan-out round.

While a round's events are sent, ``Sampler`` reads the service's ``/metrics`` once a
second. Each viewer frame belongs to the second its event was sent in (counted from the
sampler's start). For every second whose frames' p99 is over ``SLOW_MS``,
``slow_seconds`` reads the pages around the time those frames were in flight (from the
second's start to its end plus that p99) and sets beside the p99:

* the store's transactions alone (the disk's fsync; ``arena_store_commit_seconds``) and
  each append from its call to durable (``arena_store_durable_seconds``), p99 bucket bounds;
* the event loop's largest stall (the stall probe's windows, which each scrape empties);
* the garbage collections' pauses (``arena_gc_pause_seconds``), the service's CPU time;
* the machine's CPU time stolen by its host and idle waiting on a disk (all cores);
* the viewers' own loop: each viewer worker runs the same kind of probe
  (``LoopStalls``: a 10 ms timer measuring its lateness), kept as the largest lateness
  of each second of the wall clock; a frame that waits in a worker stalled on its other
  viewers is stamped late by the worker, not by the service;
* the device's own loop (the benchmark's process, which sends the events and reads the
  pages), by the same probe, and its collections: a device that stalls sends the events it
  owes at once when it wakes (the schedule is kept), and every viewer gets their frames at
  once: a burst the service takes in as much time as it takes to send them;
* the way in: the device's own send-to-ack p99 of the second's events beside the
  service's arrival-to-ack p99 (``arena_ack_seconds``) over the span: an ack late at the
  device, on time in the service, with neither loop stalled, was late between the two
  processes: in the kernel, before the service read the event (its frames late with it)
  or after it wrote the ack;
* the kernel's TCP counters (``/proc/net/snmp``, ``/proc/net/netstat``, machine-wide):
  segments resent, and resent after a retransmission timeout, whose least is 200 ms. On
  loopback nothing is lost, so a timeout is rare and the kernel's own delay. Other resends
  are loss probes, fired two round trips after a segment whose ack is late: they follow
  any burst of frames written at once (the receiver delays its acks), so their count is
  printed, beside the round's usual rate, and never named as a cause.

``cause`` names the first of them that is at least half the second's p99: the disk's
fsync, or the host's steal (its share of one core: the service runs on one), outside the
process; a collection or a stall of the loop, inside it (a stall is the loop's own work,
or the process not run at all); else a busy core, when the service used 90 % of a core
or more over the span (the frames queued behind its own work); else the viewers' own
process, when a viewer worker's loop stalled that long (outside the service: the frames
were there, the measuring side read them late); else the device's own process, when its
loop stalled that long (the burst it then sent); else the kernel's TCP, when a segment was
resent after a timeout while the frames were in flight (a timeout is 200 ms at least); else
the way in, when the device's acks were that late and the service's were not; else a
machine with no core free, when
the machine's idle CPU was 5 % of its cores or less (the load generator shares the
service's cores: outside the process); or "not attributed". A scrape a second
costs the service a page render (about a millisecond); the round's own loop-stall
figures are then the windows' (see ``round_stall``)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import itertools
import math
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass

from .measure import ack_buckets, histogram_p99_bound, lag_of, percentile, scrape, summed

#: A second whose viewers' p99 is over this (ms) is explained.
SLOW_MS = 50.0
#: What a cause must reach, as a share of the second's p99, to be named.
SHARE = 0.5
#: The service's CPU, as a share of one core, from which a slow second is put down to its work.
BUSY = 0.9
#: The machine's idle CPU, as a share of all its cores, under which a slow second is put down
#: to a machine with no core free (the load generator shares the service's cores).
IDLE = 0.05
#: The viewers' side: a worker's loop as late as the frames.
VIEWERS = "the viewers' own process"
#: The device's side: the benchmark's own loop stalled as long; it then sends what it owes at
#: once (the schedule is kept), a burst of frames for every viewer.
DEVICE = "the device's own process (stalled, then sending what it owed at once)"
#: A segment resent after a retransmission timeout (at least ``RTO_MIN_MS``) in the span.
TCP_TIMEOUT = "a TCP retransmission timeout (the kernel)"
RTO_MIN_MS = 200.0
#: The device's acks as late as the frames, the service's own and the device's loop not.
WAY_IN = "the way in (the kernel, between the device and the service)"
#: The causes outside the process.
OUTSIDE = ("the disk's fsync", "the host's steal", VIEWERS, DEVICE, TCP_TIMEOUT, WAY_IN,
           "a machine with no core free")


@dataclass(frozen=True)
class Page:
    """One reading of ``/metrics``: when (``time.time_ns()``, as the sends), and the text."""

    at_ns: int
    text: str
    #: The kernel's TCP counters then (``tcp_counters``): segments resent, timeouts.
    tcp: tuple[float, float] = (math.nan, math.nan)


@dataclass(frozen=True)
class SlowSecond:
    """A second of a round (from the sampler's start) whose frames' p99 was over ``SLOW_MS``,
    and what the service's pages say of the time its frames were in flight (ms, except where
    said)."""

    second: int
    frames: int
    p99_ms: float
    commit_p99_ms: float
    durable_p99_ms: float
    stall_max_ms: float
    gc_ms: float
    cpu_ms: float
    steal_ms: float
    iowait_ms: float
    #: How long the pages read span (ms), and the machine's cores.
    span_ms: float = math.nan
    cores: int = 1
    #: The machine's idle CPU time over the span (ms, every core).
    idle_ms: float = math.nan
    #: The viewer workers' largest loop stall over the span (ms; NaN: not probed).
    viewers_stall_ms: float = math.nan
    #: The device's (the benchmark's) largest loop stall over the span, and its longest
    #: collection (ms; NaN: not probed).
    device_stall_ms: float = math.nan
    device_gc_ms: float = math.nan
    #: The second's events' send-to-ack p99 at the device, and the service's arrival-to-ack
    #: p99 bound over the span (ms; NaN: not known).
    ack_p99_ms: float = math.nan
    service_ack_p99_ms: float = math.nan
    #: TCP segments the machine resent over the span, and of them after a timeout; and the
    #: round's usual: the median a second between its pages.
    tcp_resent: float = math.nan
    tcp_timeouts: float = math.nan
    tcp_resent_usual: float = math.nan

    @property
    def busy(self) -> float:
        """The service's CPU over the span, as a share of one core."""
        return self.cpu_ms / self.span_ms if self.span_ms > 0 else math.nan

    @property
    def cause(self) -> str:
        bar = SHARE * self.p99_ms
        for figure, name in ((self.commit_p99_ms, "the disk's fsync"),
                             (self.steal_ms / max(1, self.cores), "the host's steal"),
                             (self.gc_ms, "a collection"), (self.stall_max_ms, "a stall of the loop")):
            if not math.isnan(figure) and figure >= bar:
                return name
        if self.busy >= BUSY:
            return "a busy core"
        if not math.isnan(self.viewers_stall_ms) and self.viewers_stall_ms >= bar:
            return VIEWERS
        if self.device_stall_ms >= bar:
            return DEVICE
        if self.tcp_timeouts > 0 and bar <= RTO_MIN_MS:
            return TCP_TIMEOUT
        if self.ack_p99_ms >= bar and self.service_ack_p99_ms < bar:
            return WAY_IN
        if self.idle_share <= IDLE:
            return "a machine with no core free"
        return "not attributed"

    @property
    def idle_share(self) -> float:
        """The machine's idle CPU over the span, as a share of all its cores."""
        return self.idle_ms / (self.span_ms * self.cores) if self.span_ms > 0 else math.nan

    @property
    def outside(self) -> bool:
        """Whether its cause is outside the service's process."""
        return self.cause in OUTSIDE


def tcp_counters() -> tuple[float, float]:
    """The machine's TCP segments resent so far, and retransmission timeouts (NaNs where
    the kernel does not say)."""
    found: dict[str, float] = {}
    for path, table, names in (("/proc/net/snmp", "Tcp:", ("RetransSegs",)),
                               ("/proc/net/netstat", "TcpExt:", ("TCPTimeouts",))):
        try:
            with open(path) as f:
                rows = [line.split() for line in f if line.startswith(table)]
        except OSError:
            continue
        for head, values in zip(rows[::2], rows[1::2], strict=False):
            for name in names:
                if name in head:
                    found[name] = float(values[head.index(name)])
    return found.get("RetransSegs", math.nan), found.get("TCPTimeouts", math.nan)


class Sampler:
    """``async with Sampler(http)``: ``/metrics`` (and ``tcp_counters``) read on entry, every
    ``period`` s while inside, and on exit; ``pages`` in order. A page that can't be read is
    skipped. Meanwhile ``stalls`` probes this process's own loop (the device's)."""

    def __init__(self, http: str, period: float = 1.0) -> None:
        self.http, self.period = http, period
        self.pages: list[Page] = []
        self.origin_ns = 0
        self.stalls = LoopStalls()
        #: This process's longest collection (ms) in each second of the wall clock.
        self.collections: dict[int, float] = {}
        self._gc_started = 0
        self._tasks: list[asyncio.Task[None]] = []

    def _timed(self, phase: str, info: dict[str, int]) -> None:
        now = time.perf_counter_ns()
        if phase == "start":
            self._gc_started = now
        elif self._gc_started:
            ms, second = (now - self._gc_started) / 1e6, time.time_ns() // 10**9
            self.collections[second] = max(ms, self.collections.get(second, 0.0))

    async def __aenter__(self) -> Sampler:
        await self._read()
        self.origin_ns = self.pages[0].at_ns if self.pages else time.time_ns()
        self._tasks = [asyncio.create_task(self._run(), name="metrics-sampler"),
                       asyncio.create_task(self.stalls.run(), name="device-stall-probe")]
        gc.callbacks.append(self._timed)
        return self

    async def __aexit__(self, *exc: object) -> None:
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._timed)
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            try:
                await t
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise  # this task's own cancellation, not only the sampler's: passed on
        await self._read()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            due += self.period
            await asyncio.sleep(max(0.0, due - loop.time()))
            await self._read()

    async def _read(self) -> None:
        at = time.time_ns()
        try:
            text = await scrape(self.http)
        except (OSError, RuntimeError):
            return
        self.pages.append(Page(at, text, tcp_counters()))


def slow_seconds(seconds: dict[int, list[float]], pages: list[Page], origin_ns: int,
                 viewer_stalls: Mapping[int, float] | None = None, *,
                 device_stalls: Mapping[int, float] | None = None,
                 device_collections: Mapping[int, float] | None = None,
                 acks: Mapping[int, list[float]] | None = None) -> list[SlowSecond]:
    """Every second of ``seconds`` whose p99 is over ``SLOW_MS``, with the figures of the pages
    around its frames' flight (none: no pages to read), and the viewer workers' and the
    device's largest stall then (``viewer_stalls``, ``device_stalls``: by second of the wall
    clock, ``LoopStalls.by_second``); ``acks``: the device's send-to-ack times (ms) by second,
    as ``seconds``."""
    out: list[SlowSecond] = []
    if len(pages) < 2:
        return out
    rates = [(b.tcp[0] - a.tcp[0]) * 1e9 / (b.at_ns - a.at_ns)
             for a, b in itertools.pairwise(pages) if b.at_ns > a.at_ns]
    usual = percentile(sorted(r for r in rates if math.isfinite(r)), 0.5)
    for second in sorted(seconds):
        lat = sorted(seconds[second])
        p99 = percentile(lat, 0.99)
        if p99 <= SLOW_MS:
            continue
        start = origin_ns + second * 1_000_000_000
        end = start + 1_000_000_000 + int(p99 * 1e6)
        i = max((k for k, p in enumerate(pages) if p.at_ns <= start), default=0)
        j = min((k for k, p in enumerate(pages) if p.at_ns >= end), default=len(pages) - 1)
        j = max(j, i + 1)
        found = figures_between(second, len(lat), p99, pages[i:j + 1])
        found = dataclasses.replace(found, tcp_resent_usual=usual)
        wall = range(start // 10**9, end // 10**9 + 1)
        if viewer_stalls is not None:
            found = dataclasses.replace(found, viewers_stall_ms=max(viewer_stalls.get(t, 0.0) for t in wall))
        if device_stalls is not None:
            found = dataclasses.replace(found, device_stall_ms=max(device_stalls.get(t, 0.0) for t in wall))
        if device_collections is not None:
            found = dataclasses.replace(found, device_gc_ms=max(device_collections.get(t, 0.0) for t in wall))
        if acks is not None and acks.get(second):
            found = dataclasses.replace(found, ack_p99_ms=percentile(sorted(acks[second]), 0.99))
        out.append(found)
    return out


def figures_between(second: int, frames: int, p99: float, pages: list[Page]) -> SlowSecond:
    """The service's figures from the first of ``pages`` to the last."""
    first, last = pages[0].text, pages[-1].text

    def grew(name: str) -> float:
        return summed(last, name) - summed(first, name)

    commit, durable = (histogram_p99_bound(ack_buckets(first, name), ack_buckets(last, name))
                       for name in ("arena_store_commit_seconds", "arena_store_durable_seconds"))
    stalls = [lag_of(p.text)[1] for p in pages[1:]]
    (resent0, timeouts0), (resent1, timeouts1) = pages[0].tcp, pages[-1].tcp
    return SlowSecond(
        second=second, frames=frames, p99_ms=p99, commit_p99_ms=commit, durable_p99_ms=durable,
        stall_max_ms=max((s for s in stalls if not math.isnan(s)), default=math.nan),
        gc_ms=1000 * grew("arena_gc_pause_seconds_sum"), cpu_ms=1000 * grew("process_cpu_seconds_total"),
        steal_ms=1000 * grew('arena_machine_cpu_seconds_total{mode="steal"}'),
        iowait_ms=1000 * grew('arena_machine_cpu_seconds_total{mode="iowait"}'),
        span_ms=(pages[-1].at_ns - pages[0].at_ns) / 1e6, cores=os.cpu_count() or 1,
        idle_ms=1000 * grew('arena_machine_cpu_seconds_total{mode="idle"}'),
        service_ack_p99_ms=histogram_p99_bound(ack_buckets(first), ack_buckets(last)),
        tcp_resent=resent1 - resent0, tcp_timeouts=timeouts1 - timeouts0)


def round_stall(pages: list[Page]) -> tuple[float, float]:
    """The loop's stalls over a round sampled by ``Sampler``: (an upper bound of the p99: the
    largest window p99, since no window has more than 1 % of its samples above its own;
    the largest). NaNs without a window."""
    windows = [lag_of(p.text) for p in pages[1:]]
    p99s = [w[0] for w in windows if w[2]]
    tops = [w[1] for w in windows if w[2]]
    return max(p99s, default=math.nan), max(tops, default=math.nan)


class LoopStalls:
    """A load generator's own stall probe (a viewer worker's, the device's): ``run`` wakes
    every ``period`` s and notes how late its loop woke it, kept as the largest lateness (ms)
    of each second of the wall clock (``by_second``, by ``time.time_ns() // 10**9``; a second
    with no lateness is absent)."""

    def __init__(self, period: float = 0.01) -> None:
        self.period = period
        self.by_second: dict[int, float] = {}

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + self.period
            await asyncio.sleep(self.period)
            late = 1000 * (loop.time() - due)
            if late > 0:
                second = time.time_ns() // 10**9
                if late > self.by_second.get(second, 0.0):
                    self.by_second[second] = late
