"""WebSocket pings to viewers: one timer for all of them, spread over the interval.

A viewer that stops answering (a phone gone to sleep, a half-open connection)
must be found and closed. aiohttp's own heartbeat does it with a timer per
socket, rounded to whole seconds, and a task per ping: every viewer that
connected in the same second is pinged in the same turn of the loop, and a
thousand of them hold up every event behind them. Here one task pings a
slice of the viewers every ``TICK``, so that each is pinged once per
``interval`` and the work is spread evenly over it; a ping is a prebuilt
frame written to the viewer's transport, like every other frame it is sent.

A viewer that has not answered a ping (or sent anything else) within
``timeout`` is closed; bytes it never took are cut ``grace`` seconds later
(a peer that stopped reading never takes them, and its socket would be held
for ever).
"""

from __future__ import annotations

import asyncio
import math
from collections import deque

from .fanout import Fanout, Watcher
from .metrics import Metrics

TICK = 0.1
PING = b"\x89\x00"  # FIN + ping, no payload: a server frame is never masked (RFC 6455 §5.5.2)


class Pings:
    def __init__(self, fanout: Fanout, metrics: Metrics, *, interval: float, timeout: float,
                 grace: float) -> None:
        self.fanout = fanout
        self.metrics = metrics
        self.interval = interval
        self.timeout = timeout
        self.grace = grace
        self._round: list[Watcher] = []      # this interval's viewers, in the order they are pinged
        self._next = 0                       # the next of them to ping ...
        self._started = -math.inf            # ... in the round that began then
        self._waiting: deque[tuple[float, float, Watcher]] = deque()  # (deadline, sent, viewer)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(TICK)
            self.tick(loop.time())

    def tick(self, now: float) -> None:
        """Close the viewers whose ping went unanswered; ping this tick's slice of the others."""
        waiting = self._waiting
        while waiting and waiting[0][0] <= now:
            _, sent, w = waiting.popleft()
            if w.pinged == sent:
                self._drop(w)
        if now - self._started >= self.interval:  # a new round: every viewer once, evenly spaced
            self._round = list(self.fanout.watchers)
            self._next = 0
            self._started = now
        n = len(self._round)
        due = min(n, math.ceil(n * (now - self._started + TICK) / self.interval))
        for w in self._round[self._next:due]:
            self._ping(w, now)
        self._next = max(self._next, due)

    def _ping(self, w: Watcher, now: float) -> None:
        t = w.transport
        if t is None or t.is_closing() or w.pinged is not None:
            return
        t.write(PING)
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
