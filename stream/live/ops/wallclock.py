"""The wall clock, in the log's unit (integer milliseconds since the Unix epoch).

The rule engine never reads it; the shell stamps what it receives and sends with
it, and sleeps until the engine's next deadline by it (``timer.py``)."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def now_ms() -> int:
    return int(time.time() * 1000)


def iso(ms: int) -> str:
    """Wall time in ms as ISO 8601, UTC, to the millisecond: ``2024-05-01T14:03:07.250Z``."""
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
