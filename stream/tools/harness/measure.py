"""What the benchmarks and the proofs read off a process: its CPU time, memory,
open files and open-file limit; a service's Prometheus page; percentiles."""

from __future__ import annotations

import contextlib
import math
import os
import re
import resource
from collections.abc import Sequence

import aiohttp

__all__ = ["ack_buckets", "ack_histogram", "cpu_seconds", "histogram_p99_bound", "lag_of", "loop_lag",
           "metric", "open_files", "percentile", "raise_nofile", "scrape", "vm_rss_kib"]


def raise_nofile() -> int:
    """Raise this process's open-file limit to the hard limit; return the new soft limit."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def vm_rss_kib(pid: int) -> int:
    """A process's resident memory (``VmRSS``), KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far, from ``/proc/<pid>/stat``."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_files(pid: int) -> int:
    """How many descriptors a process holds (its sockets among them)."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def percentile(sorted_xs: Sequence[float], q: float) -> float:
    """Nearest rank, of samples already sorted; NaN for no samples."""
    if not sorted_xs:
        return math.nan
    return float(sorted_xs[min(len(sorted_xs) - 1, max(0, math.ceil(q * len(sorted_xs)) - 1))])


async def scrape(http: str) -> str:
    """The service's ``/metrics`` page."""
    async with aiohttp.ClientSession() as session, session.get(f"{http}/metrics") as r:
        if r.status != 200:
            raise RuntimeError(f"{http}/metrics answered {r.status}")
        return await r.text()


def metric(text: str, name: str) -> float:
    """One sample of a Prometheus text page, by its full name (labels included); 0 if absent."""
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def ack_buckets(text: str) -> dict[float, float]:
    """The ``arena_ack_seconds`` histogram of a metrics page: cumulative count by upper bound (s)."""
    out: dict[float, float] = {}
    with contextlib.suppress(ValueError, IndexError):
        for line in text.splitlines():
            if line.startswith("arena_ack_seconds_bucket{"):
                le = line.split('le="', 1)[1].split('"', 1)[0]
                out[math.inf if le == "+Inf" else float(le)] = float(line.rsplit(" ", 1)[1])
    return out


async def ack_histogram(http: str) -> dict[float, float]:
    """The service's own ``arena_ack_seconds`` histogram: cumulative count by upper bound (s);
    empty if the page can't be read."""
    with contextlib.suppress(aiohttp.ClientError, OSError, RuntimeError):
        return ack_buckets(await scrape(http))
    return {}


def histogram_p99_bound(before: dict[float, float], after: dict[float, float]) -> float:
    """The smallest bucket bound (ms) holding 99 % of what was observed between two scrapes."""
    diff = {le: after.get(le, 0.0) - before.get(le, 0.0) for le in after}
    total = diff.get(math.inf, 0.0)
    if total <= 0:
        return math.nan
    return min(le for le, n in diff.items() if n >= 0.99 * total) * 1000


def lag_of(text: str) -> tuple[float, float, int]:
    """The loop-stall probe's window on a metrics page (``stream/live/stall.py``):
    (p99 ms, max ms, samples); NaNs and 0 without samples."""
    n = int(metric(text, "arena_loop_lag_window_samples"))
    if not n:
        return math.nan, math.nan, 0
    p99 = metric(text, 'arena_loop_lag_window_seconds{quantile="0.99"}')
    top = metric(text, 'arena_loop_lag_window_seconds{quantile="1"}')
    return p99 * 1000, top * 1000, n


async def loop_lag(http: str) -> tuple[float, float, int]:
    """The service's loop-stall probe since the previous scrape of its ``/metrics`` (which
    this scrape empties): (p99 ms, max ms, samples); NaNs and 0 if the page can't be read.
    Read once before a phase and once after it: the second reading is the phase's."""
    with contextlib.suppress(aiohttp.ClientError, OSError, RuntimeError):
        return lag_of(await scrape(http))
    return math.nan, math.nan, 0
