"""WebSocket pings to viewers: one timer for all of them, spread over the interval.

A viewer that stops answering (a phone gone to sleep, a half-open connection)
must be found and closed. aiohttp's own heartbeat does it with a timer per
socket, rounded to whole seconds, and a task per ping: every viewer that
connected in the same second is pinged in the same turn of the loop, and a
thousand of them hold up every event behind them.

Here the interval is a ring of ``TICK``-wide slots, and one task visits one
slot per tick. A viewer joins the ring at a slot between half an interval
and an interval ahead (spread by a low-discrepancy sequence, so that viewers
who connect together are spread over half the interval), and is pinged each
time the ring comes round to it: once per ``interval``, its first ping
within one. A ping is a prebuilt frame written to the viewer's transport,
like every other frame it is sent.

A viewer that has not answered a ping (or sent anything else) within
``timeout`` is closed; bytes it never took are cut ``grace`` seconds later
(a peer that stopped reading never takes them, and its socket would be held
for ever).
"""

from __future__ import annotations

import asyncio
import math
from collections import deque

from ..ops.metrics import Metrics
from .fanout import Watcher

TICK = 0.1
PING = b"\x89\x00"  # FIN + ping, no payload: a server frame is never masked (RFC 6455 §5.5.2)
_PHI = (math.sqrt(5) - 1) / 2


class Pings:
    def __init__(self, metrics: Metrics, *, interval: float, timeout: float, grace: float) -> None:
        self.metrics = metrics
        self.timeout = timeout
        self.grace = grace
        self._ring: list[list[Watcher]] = [[] for _ in range(max(1, round(interval / TICK)))]
        self._cursor = 0
        self._joined = 0
        self._waiting: deque[tuple[float, float, Watcher]] = deque()  # (deadline, sent, viewer)

    def add(self, w: Watcher) -> None:
        """A new viewer: its first ping between half an interval and an interval from now."""
        slots = len(self._ring)
        self._joined += 1
        ahead = slots // 2 + int(slots / 2 * ((self._joined * _PHI) % 1.0))
        self._ring[(self._cursor + max(1, ahead)) % slots].append(w)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(TICK)
            self.tick(loop.time())

    def tick(self, now: float) -> None:
        """Close the viewers whose ping went unanswered; ping this slot's viewers."""
        waiting = self._waiting
        while waiting and waiting[0][0] <= now:
            _, sent, w = waiting.popleft()
            if w.pinged == sent:
                self._drop(w)
        self._cursor = (self._cursor + 1) % len(self._ring)
        slot = self._ring[self._cursor]
        kept = [w for w in slot if w.transport is not None and not w.transport.is_closing()]
        for w in kept:
            self._ping(w, now)
        self._ring[self._cursor] = kept  # the closed ones leave the ring

    def _ping(self, w: Watcher, now: float) -> None:
        if w.pinged is not None:  # the last one is still unanswered: its deadline decides
            return
        assert w.transport is not None
        w.transport.write(PING)
        w.pinged = now
        self._waiting.append((now + self.timeout, now, w))

    def _drop(self, w: Watcher) -> None:
        t = w.transport
        if t is None or t.is_closing():
            return
        self.metrics.ping_timeouts.inc()
        t.close()  # the handler's read loop ends when the connection is lost
        asyncio.get_running_loop().call_later(self.grace, t.abort)


def heard(w: Watcher) -> None:
    """The viewer answered a ping, or sent anything: it is alive."""
    w.pinged = None
