"""What ``arena-stream bench public`` measures, as data: its options, what the devices sent
and the viewers saw in a stretch, and a round of stretches. ``run.py`` fills them in and
``report.py`` prints them."""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Any

from ..harness import percentile
from .pages import PageRun

SEQ = (1 << 32) - 1


@dataclass
class PublicOptions:
    spectators: int = 5000
    games: int = 8
    rate: float = 1.0          # events per game per second
    seconds: float = 15.0      # each stretch of events
    page_rate: float = 200.0   # GET /events/E per second
    rounds: int = 3
    settle: float = 2.0
    quick: bool = False


@dataclass
class Sent:
    """What the devices sent in one stretch: send time by delta key, ack times (ms), refusals."""

    sends: dict[int, int] = field(default_factory=dict)
    ack_ms: list[float] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Frames:
    """The viewers' side of one stretch: latencies (ms, sorted), lost and repeated deltas."""

    lat_ms: list[float]
    lost: int
    dup: int

    def p99(self) -> float:
        return percentile(self.lat_ms, 0.99)


def frames(reports: list[dict[str, Any]], sends: dict[int, int]) -> Frames:
    lat: list[float] = []
    lost = dup = 0
    for rep in reports:
        for v in rep["viewers"]:
            firsts = dict(v["firsts"])
            keys, times = array("q"), array("q")
            keys.frombytes(v["seqs"])
            times.frombytes(v["times"])
            seen: set[int] = set()
            for k, t in zip(keys, times, strict=True):
                if k in seen:
                    dup += 1
                    continue
                seen.add(k)
                if (st := sends.get(k)) is not None and (k & SEQ) > firsts.get(k >> 32, SEQ):
                    lat.append((t - st) / 1e6)
            lost += sum(1 for k in sends if (k & SEQ) > firsts.get(k >> 32, SEQ) and k not in seen)
    lat.sort()
    return Frames(lat, lost, dup)


@dataclass
class Stretch:
    """One stretch of events in a round, with the page load or without."""

    pages: bool
    sent: Sent
    frames: Frames = field(default_factory=lambda: Frames([], 0, 0))
    page: PageRun | None = None
    cpu: float = math.nan        # the service's CPU, cores
    viewer_cpu: float = math.nan  # the viewer workers', cores
    others: float = math.nan      # the machine's busy cores less the bench's own processes'
    lag_p99_ms: float = math.nan
    lag_max_ms: float = math.nan
    gc_ms: float = math.nan


@dataclass
class Round:
    name: str
    kind: str                    # "event" or "game"
    viewers: int
    mem_kib: float               # the service's RSS growth per viewer
    joined_kib: float            # what a viewer was sent until it had every snapshot (median)
    resets: int = 0
    dropped: int = 0
    stretches: list[Stretch] = field(default_factory=list)
    load_avg: float = math.nan

    def stretch(self, pages: bool) -> Stretch | None:
        return next((s for s in self.stretches if s.pages == pages), None)
