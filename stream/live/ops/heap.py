"""The garbage collector, kept from stalling the loop.

Most of what a node holds lives as long as the node: the folded log, the feeds, and
during a game the viewers. A full (generation 2) collection walks every object that
can be in a reference cycle, so the bigger the node the longer the loop stands still
while it runs; with 10,000 viewers connected that is tens of milliseconds.

- After start-up (the log folded, the store open) everything alive is collected once
  and frozen (``gc.freeze``): no collection walks it again.
- While a crowd of viewers connects, each ``CROWD`` more than at the last freeze (and a
  quarter more) are frozen too, after a young collection: a crowd that stays for the game is
  not walked by every full collection, and is never walked whole while it arrives. A
  viewer's connection leaves no reference cycle behind when it closes
  (``viewer_socket.py``), so a frozen one that leaves is freed all the same. What the
  collector had not yet found of other garbage in the oldest generation at a freeze is
  kept: a few objects per crowd.
- Every collection is timed, by generation: ``arena_gc_pause_seconds``.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Histogram

#: Viewers more than at the last freeze (and a quarter more) that make a crowd.
CROWD = 500
#: How often the viewers are counted.
EVERY_S = 0.25


def pause_histogram(registry: CollectorRegistry) -> Histogram:
    return Histogram("arena_gc_pause_seconds", "Garbage collections, by generation: how long each "
                     "held up the loop", ["generation"], registry=registry,
                     buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5))


class PauseTimer:
    """A ``gc.callbacks`` entry that times each collection into ``histogram``."""

    def __init__(self, histogram: Histogram) -> None:
        self.children = [histogram.labels(str(g)) for g in range(3)]
        self.started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self.started = time.perf_counter()
        else:
            self.children[info["generation"]].observe(time.perf_counter() - self.started)


def freeze_after_start() -> None:
    """Collect once, then freeze everything alive: the long-lived heap of a started node."""
    gc.collect()
    gc.freeze()


async def freeze_crowds(viewers: Callable[[], int], every: float = EVERY_S) -> None:
    """Freeze again each time a crowd of viewers has connected: ``viewers()`` is how many
    are connected now."""
    frozen_at = viewers()
    while True:
        await asyncio.sleep(every)
        now = viewers()
        if now >= frozen_at + CROWD and now >= frozen_at * 1.25:
            gc.collect(1)
            gc.freeze()
            frozen_at = now
        elif now < frozen_at:
            frozen_at = now
