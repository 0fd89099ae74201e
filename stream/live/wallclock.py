"""The wall clock, in the log's unit (integer milliseconds since the Unix epoch).

The rule engine never reads it; the shell stamps what it receives and sends with
it, and sleeps until the engine's next deadline by it (``timer.py``)."""

from __future__ import annotations

import time


def now_ms() -> int:
    return int(time.time() * 1000)
