"""Worker processes that hold the viewers (1,000 asyncio clients in the measuring
process would be its bottleneck on two cores, not the service's), driven a line
at a time, and what their reports add up to."""

from __future__ import annotations

import asyncio
import math
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from .measure import percentile
from .processes import Process, Processes
from .tail import SlowSecond

__all__ = ["LineWorkers", "LoadResult", "ViewerWorkers", "analyse", "workers_for"]


def workers_for(count: int) -> int:
    """How many viewer workers for ``count`` viewers: one per core of a two-core machine."""
    return 1 if count < 200 else 2


class LineWorkers:
    """Worker processes (in ``group``) that take a command a line on stdin and answer a
    line on stdout whose first word says what it is; each writes its report (MessagePack)
    to its own file when told to stop."""

    def __init__(self, group: Processes) -> None:
        self.group = group
        self.procs: list[Process] = []
        self.outs: list[Path] = []

    def spawn(self, name: str, out: Path, *args: str) -> Process:
        """Start ``python ARGS`` as worker ``name``, reporting to ``out``."""
        proc = self.group.spawn(name, *args, stdin=True, stdout=True)
        self.procs.append(proc)
        self.outs.append(out)
        return proc

    async def read(self, expect: str, wait_s: float) -> list[str]:
        """Each worker's next line, which must start with ``expect`` (within ``wait_s`` each)."""
        lines = []
        for proc in self.procs:
            line = await proc.areadline(wait_s)
            if line.split()[:1] != [expect]:
                raise RuntimeError(f"worker {proc.name} did not say {expect!r} (it said {line!r}):\n"
                                   f"{proc.tail()}")
            lines.append(line)
        return lines

    async def say(self, line: str, expect: str, wait_s: float) -> list[str]:
        """Tell every worker ``line``; their answers."""
        for proc in self.procs:
            proc.write_line(line)
        return await self.read(expect, wait_s)

    async def finish(self, last_seq: int, drain: float) -> list[dict[str, Any]]:
        """``stop LAST DRAIN``: once every viewer has ``last_seq`` (or after ``drain`` s), each
        worker writes its report and ends. The reports."""
        await self.say(f"stop {last_seq} {drain:g}", "done", drain + 120)
        reports = []
        for out in self.outs:
            reports.append(msgspec.msgpack.decode(await asyncio.to_thread(out.read_bytes)))
            await asyncio.to_thread(out.unlink)
        await self.close(wait_first=5.0)
        return reports

    async def close(self, wait_first: float = 0.0) -> None:
        for proc in self.procs:
            await proc.astop(5.0, wait_first)


class ViewerWorkers(LineWorkers):
    """``viewer_worker`` processes, each with its share of the viewers."""

    @staticmethod
    def plan(count: int, urls: list[str], workers: int) -> list[list[tuple[str, int]]]:
        """Viewer i goes to node i mod nodes and to worker (i div nodes) mod workers, so that
        every worker holds as many viewers of each node (and no node has a worker to itself)."""
        counts: list[dict[str, int]] = [{} for _ in range(workers)]
        for i in range(count):
            url = urls[i % len(urls)]
            w = (i // len(urls)) % workers
            counts[w][url] = counts[w].get(url, 0) + 1
        return [list(c.items()) for c in counts if c]

    async def start(self, name: str, count: int, urls: list[str], workers: int, *,
                    stop_at_error: bool) -> tuple[int, int, str]:
        """Start the workers and wait until each has opened its viewers: (opened, errors,
        the first error)."""
        for w, targets in enumerate(self.plan(count, urls, workers)):
            out = self.group.workdir / f"{name}-w{w}.msgpack"
            args = ["-m", "stream.tools.harness.viewer_worker", "--out", str(out)]
            for url, n in targets:
                args += ["--target", f"{n}={url}"]
            if stop_at_error:
                args.append("--stop-at-error")
            self.spawn(f"{name}-w{w}", out, *args)
        opened = errors = 0
        first_error = ""
        for line in await self.read("ready", 120 + count / 50):
            parts = line.split(maxsplit=3)
            opened += int(parts[1])
            errors += int(parts[2])
            first_error = first_error or (parts[3] if len(parts) > 3 else "")
        return opened, errors, first_error


@dataclass
class LoadResult:
    """The viewers' side of a load run: latency samples (ms, sorted) and what was lost,
    repeated or out of order; the device's side (sent, acked, ack times) alongside."""

    name: str
    viewers: int
    sent: int
    acked: int
    refused: int
    seconds: float
    lat_ms: list[float]
    ack_ms: list[float]
    lost: int
    dup: int
    other: int
    resets: int
    dropped: int
    misordered: int = 0
    send_seconds: float = 0.0
    server_ack_p99_bound: float = math.nan
    by_url: dict[str, LoadResult] = field(default_factory=dict)
    server_cpu: float = 0.0
    viewer_cpu: float = 0.0
    #: How the round ran: "quiet", or "contended" (a busy neighbour on the other core).
    condition: str = "quiet"
    #: The machine's 1-minute load average at the end of the round.
    load_avg: float = math.nan
    #: The service's loop-stall probe during the event stream (ms): p99 and max.
    lag_p99_ms: float = math.nan
    lag_max_ms: float = math.nan
    #: What else held the service up during the event stream (its /metrics, read around
    #: it): each store transaction alone and each append from its call to durable (p99
    #: bucket bounds, ms), its garbage collections (ms in all), and the machine's CPU time
    #: stolen by its host and idle waiting on a disk (s, all cores).
    commit_p99_ms: float = math.nan
    durable_p99_ms: float = math.nan
    gc_ms: float = math.nan
    steal_s: float = math.nan
    iowait_s: float = math.nan
    #: The frames' latencies (ms) by the second their event was sent in, counted from the
    #: ``origin_ns`` given to ``analyse`` (none given: empty).
    by_second: dict[int, list[float]] = field(default_factory=dict)
    #: The viewer workers' own loop stalls: the largest of any worker in each second of
    #: the wall clock (ms, by ``time.time_ns() // 10**9``; ``tail.LoopStalls``).
    viewer_stalls: dict[int, float] = field(default_factory=dict)
    #: Its seconds whose p99 was over 50 ms, with what was behind each
    #: (``stream/tools/harness/tail.py``).
    slow: list[SlowSecond] = field(default_factory=list)

    def p(self, q: float) -> float:
        return percentile(self.lat_ms, q)

    def ack_p(self, q: float) -> float:
        return percentile(self.ack_ms, q)


def analyse(name: str, reports: list[dict[str, Any]], sends: dict[int, int], ack_ms: list[float],
            sent: int, refused: int, seconds: float, url: str | None = None,
            origin_ns: int | None = None) -> LoadResult:
    """Latency samples over all viewers (or those on ``url``), each frame's arrival less the
    send time of its ``seq`` (``sends``); frames lost, repeated or out of ``seq`` order; with
    ``origin_ns``, the samples also by the second (from it) of their event's send."""
    lat: list[float] = []
    by_second: dict[int, list[float]] = {}
    stalls: dict[int, float] = {}
    for rep in reports:
        for second, ms in rep.get("stalls", ()):
            stalls[int(second)] = max(float(ms), stalls.get(int(second), 0.0))
    lost = dup = other = resets = dropped = viewers = misordered = 0
    expected_all = sorted(sends)
    for rep in reports:
        for v in rep["viewers"]:
            if url is not None and v.get("url") != url:
                continue
            viewers += 1
            first = int(v["first"])
            resets += int(v["resets"])
            dropped += bool(v["closed"])
            seqs = array("q")
            seqs.frombytes(v["seqs"])
            times = array("q")
            times.frombytes(v["times"])
            seen: set[int] = set()
            last = first
            for s, t in zip(seqs, times, strict=True):
                if s in seen or s <= first:
                    dup += 1  # twice, or already covered by the viewer's snapshot
                    continue
                if s < last:
                    misordered += 1  # after a later seq
                last = max(last, s)
                seen.add(s)
                st = sends.get(s)
                if st is None:
                    other += 1  # an event the bench did not send (a deadline tick)
                    continue
                lat.append((t - st) / 1e6)
                if origin_ns is not None:
                    by_second.setdefault((st - origin_ns) // 1_000_000_000, []).append(lat[-1])
            lost += sum(1 for s in expected_all if s > first and s not in seen)
    lat.sort()
    return LoadResult(name=name, viewers=viewers, sent=sent, acked=len(sends), refused=refused,
                      seconds=seconds, lat_ms=lat, ack_ms=sorted(ack_ms), lost=lost, dup=dup, other=other,
                      resets=resets, dropped=dropped, misordered=misordered, by_second=by_second,
                      viewer_stalls=stalls)
