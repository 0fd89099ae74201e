"""With several nodes on one log (etcd): fold, in log order, what the other nodes
write, and show it to this node's viewers with the same sequence numbers.

An entry of another node at a ``seq`` this node has used for an event of its own
still in flight is a race this node lost: the game is caught up (``races.py``)
and the entry folded then. Anything else that does not fold means this node's
state is not the log's: the log is folded again (``Hub.recover``)."""

from __future__ import annotations

import asyncio

from ...errors import NotStored
from ...store import Followable, Record
from ...tasks import detached
from .hub import Hub


async def run(hub: Hub) -> None:
    store = hub.store
    assert isinstance(store, Followable)
    hub.follow()
    while True:
        if not hub.ready or hub.recovering or hub.races.settling is not None:
            await asyncio.sleep(0.05)
            continue
        try:
            if hub.races.owed:  # this node's entries it took back may lie behind its tail
                await hub.races.fold_owed()
                continue
            entries = await _read(store, hub.tail)
        except NotStored:
            hub.races.read(answered=False)
            await asyncio.sleep(0.5)
            continue
        hub.races.read(answered=True)
        for entry_id, r in entries:
            if hub.recovering or hub.races.settling is not None:
                break
            generation = hub.generation
            if not hub.fold_other(r) and not await _caught_up(hub, r):
                if hub.generation == generation:  # else folded again already
                    await hub.recover()
                break
            hub.folded_to(entry_id, r)


async def _caught_up(hub: Hub, r: Record) -> bool:
    """``r`` did not fold: if its game has events of this node in flight, catch the game
    up and fold it. False: the log must be folded again."""
    if r.game is None or r.seq is None or not hub.races.racing(r.game):
        return False
    generation = hub.generation
    await hub.races.lost(r.game, r.seq)
    return hub.generation == generation and hub.fold_other(r)


async def _read(store: Followable, tail: str) -> list[tuple[str, Record]]:
    """The entries after ``tail``, waiting up to a second for one. Cancelling the follower
    (the node shutting down, ``app.py``) leaves the read itself alone, to end within its
    second: a client library can swallow a cancellation that lands as a blocking read's
    reply arrives, and the task then never ends, nor the shutdown that awaits it."""
    return await detached(store.read_after(tail, block_ms=1000))
