"""The shell's one use of time: sleep until the engine's next deadline, then log
a ``tick`` for it, so that the deadline's notices (``box.eligible``,
``sub.eligible``, an expired mount window) are logged and sequenced like
everything else."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ...errors import Conflict, NotStored, Refused
from ...rules import codec
from ...rules import events as ev
from ..ops.wallclock import now_ms
from .dedup import digest
from .hub import SYSTEM, Hub

log = logging.getLogger("arena_stream.timer")


async def run(hub: Hub, clock: Callable[[], int] = now_ms) -> None:
    while True:
        hub.wake.clear()
        nxt = hub.engine.next_deadline() if hub.ready and not hub.recovering else None
        if nxt is None:
            await hub.wake.wait()
            continue
        at, game = nxt
        delay = (at - clock()) / 1000
        if delay > 0:
            try:
                await asyncio.wait_for(hub.wake.wait(), timeout=delay)
                continue  # something changed: look again
            except TimeoutError:
                pass
        if hub.engine.next_deadline() != nxt:
            continue
        tick = ev.Tick(id=f"{SYSTEM}:tick:{game}:{at}", at=at, game=game)
        try:
            await hub.submit(device=SYSTEM, official="", client_id=f"tick:{game}:{at}",
                             payload_digest=digest(codec.encode_event(tick)), event=tick,
                             received_at=now_ms())
        except (NotStored, Refused, Conflict):
            log.warning("tick not stored; will retry", extra={"game": game, "at": at})
            await asyncio.sleep(0.2)
