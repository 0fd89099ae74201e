"""What the benchmarks and the proofs read off a process: its CPU time, memory,
open files and open-file limit; a service's Prometheus page; a peer server's
loop-stall answer; percentiles."""

from __future__ import annotations

import contextlib
import math
import os
import re
import resource
from collections.abc import Sequence

import aiohttp
import msgspec

__all__ = ["LAG_PATH", "LagAnswer", "ack_buckets", "ack_histogram", "cpu_seconds", "histogram_p99_bound",
           "lag_answer", "lag_json", "lag_of", "loop_lag", "metric", "open_files", "peer_loop_lag",
           "percentile", "raise_nofile", "scrape", "summed", "vm_rss_kib"]


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


def ack_buckets(text: str, name: str = "arena_ack_seconds") -> dict[float, float]:
    """A histogram of a metrics page (``arena_ack_seconds`` unless named): cumulative count
    by upper bound (s)."""
    out: dict[float, float] = {}
    with contextlib.suppress(ValueError, IndexError):
        for line in text.splitlines():
            if line.startswith(name + "_bucket{"):
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


def summed(text: str, name: str) -> float:
    """The sum of every sample of ``name`` on a metrics page, whatever its labels."""
    total = 0.0
    with contextlib.suppress(ValueError, IndexError):
        for line in text.splitlines():
            if line.startswith((name + " ", name + "{")):
                total += float(line.rsplit(" ", 1)[1])
    return total


def lag_of(text: str) -> tuple[float, float, int]:
    """The loop-stall probe's window on a metrics page (``stream/live/ops/stall.py``):
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


#: Where a peer server of ``bench fanout`` answers its loop-stall probe's window (a plain
#: HTTP GET on its WebSocket port): ``lag_json``'s JSON.
LAG_PATH = "/lag"


class LagAnswer(msgspec.Struct, forbid_unknown_fields=True):
    """A peer's ``GET /lag``: its stall probe since the previous read (which the read
    empties); ``null`` for no samples."""

    p99_ms: float | None
    max_ms: float | None
    samples: int


_lag_enc = msgspec.json.Encoder()
_lag_dec = msgspec.json.Decoder(LagAnswer)


def lag_json(p99_s: float, max_s: float, samples: int) -> bytes:
    """A ``GET /lag`` answer from a probe window's (p99 s, max s, samples), ``LagWindow.take``'s."""
    def ms(x: float) -> float | None:
        return None if not samples or math.isnan(x) else x * 1000

    return _lag_enc.encode(LagAnswer(ms(p99_s), ms(max_s), samples))


def lag_answer(body: bytes | bytearray | str) -> tuple[float, float, int]:
    """A ``GET /lag`` answer as ``lag_of`` reads a metrics page: (p99 ms, max ms, samples);
    NaNs and 0 without samples. ``msgspec.ValidationError`` (a ``ValueError``) if it is no
    such answer."""
    a = _lag_dec.decode(body)
    if not a.samples or a.p99_ms is None or a.max_ms is None:
        return math.nan, math.nan, 0
    return a.p99_ms, a.max_ms, a.samples


async def peer_loop_lag(http: str) -> tuple[float, float, int]:
    """A peer server's loop-stall probe since the previous read of its ``/lag`` (which this
    read empties): (p99 ms, max ms, samples); NaNs and 0 if it can't be read. ``http``:
    ``http://host:port``, the peer's WebSocket port."""
    with contextlib.suppress(aiohttp.ClientError, OSError, ValueError):
        async with aiohttp.ClientSession() as session, session.get(f"{http}{LAG_PATH}") as r:
            if r.status == 200:
                return lag_answer(await r.read())
    return math.nan, math.nan, 0
