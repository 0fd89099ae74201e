"""The loop-stall probe: a timer in the service's event loop that measures its own
lateness, so that anything holding the loop (a garbage collection, a burst of pings, a
commit run on the loop) shows as a number on ``/metrics``.

Every ``PERIOD`` seconds the probe asks to be woken ``PERIOD`` later and notes how
late it was woken (``loop.time()``, monotonic). Each lateness goes into the histogram
``arena_loop_lag_seconds`` (cumulative, for any scraper), and into a window that each
scrape of ``/metrics`` reads and empties: ``arena_loop_lag_window_seconds`` with
``quantile="0.99"`` and ``quantile="1"`` (the largest), and
``arena_loop_lag_window_samples``. The window is what ``arena-stream bench`` reads
around a phase (a scrape before it empties the window, the scrape after it reads the
phase's lateness); a scraper every 15 s reads the worst stall of each 15 s. With two
scrapers each sees only what was left by the other: the histogram is exact for both.

Its cost: one timer every 10 ms, about 100 wake-ups a second."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

#: How often the probe wakes (s).
PERIOD = 0.01
#: The most samples a window keeps between scrapes (older ones are dropped, the
#: largest lateness is kept apart): ten minutes of samples.
KEEP = 60_000


class LagWindow(Collector):
    """The lateness seen since the previous scrape: its p99 and its largest."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.largest = 0.0

    def note(self, late: float) -> None:
        if len(self.samples) >= KEEP:
            del self.samples[: KEEP // 2]
        self.samples.append(late)
        self.largest = max(self.largest, late)

    def take(self) -> tuple[float, float, int]:
        """(p99, largest, samples) since the previous take, and a new window; NaN for none."""
        samples, largest = sorted(self.samples), self.largest
        self.samples, self.largest = [], 0.0
        if not samples:
            return math.nan, math.nan, 0
        p99 = samples[min(len(samples) - 1, max(0, math.ceil(0.99 * len(samples)) - 1))]
        return p99, largest, len(samples)

    def collect(self) -> Iterator[Metric]:
        p99, largest, n = self.take()
        lag = GaugeMetricFamily("arena_loop_lag_window_seconds",
                                "The event loop's lateness since the previous scrape of /metrics "
                                "(the stall probe, stream/live/ops/stall.py): p99 and the largest",
                                labels=["quantile"])
        lag.add_metric(["0.99"], p99)
        lag.add_metric(["1"], largest)
        yield lag
        yield GaugeMetricFamily("arena_loop_lag_window_samples",
                                "Stall-probe samples since the previous scrape of /metrics", value=n)


def lag_histogram(registry: CollectorRegistry) -> Histogram:
    return Histogram("arena_loop_lag_seconds", "The event loop's lateness, sampled every 10 ms by "
                     "the stall probe", registry=registry,
                     buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0))


async def run(histogram: Histogram, window: LagWindow, period: float = PERIOD) -> None:
    """Until cancelled: wake every ``period`` s and record how late the loop woke us."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + period
        await asyncio.sleep(period)
        late = max(0.0, loop.time() - due)
        histogram.observe(late)
        window.note(late)
