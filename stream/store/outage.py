"""A store's server failing, said the way an operator can use: once when it starts, at
most every 30 s while it lasts, and once when it answers again."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger("arena_stream.store")


class Outage:
    """The store's server failing, said the way an operator can use: once when it starts (with the
    reason), then at most every ``every`` seconds while it lasts (with how long and how
    many calls failed), and once when it answers again; never a traceback, since an
    outage is expected. ``clock`` is for the tests."""

    def __init__(self, where: str, every: float = 30.0,
                 clock: Callable[[], float] = time.monotonic, what: str = "the store") -> None:
        self.where = where
        self.what = what
        self.every = every
        self.clock = clock
        self.since: float | None = None   # when the outage began
        self.said = 0.0                   # when it was last logged
        self.failures = 0                 # failed calls since it began

    def failed(self, err: BaseException) -> None:
        now = self.clock()
        self.failures += 1
        reason = f"{type(err).__name__}: {err}"
        if self.since is None:
            self.since = self.said = now
            log.error(f"{self.what} unavailable", extra={"store": self.where, "reason": reason})
        elif now - self.said >= self.every:
            self.said = now
            log.error(f"{self.what} still unavailable", extra={
                "store": self.where, "reason": reason, "for_s": round(now - self.since),
                "failures": self.failures})

    def ok(self) -> None:
        if self.since is not None:
            log.warning(f"{self.what} available again", extra={
                "store": self.where, "after_s": round(self.clock() - self.since, 1),
                "failures": self.failures})
            self.since, self.failures = None, 0
