"""With several nodes on one Redis log: fold, in log order, what the other nodes
write, and show it to this node's viewers with the same sequence numbers."""

from __future__ import annotations

import asyncio

from ..errors import NotStored, Refused
from ..rules import codec
from ..rules.text import render
from ..store import Followable, Record
from . import protocol as pr
from .dedup import Logged
from .feeds import Pending
from .hub import Hub


async def run(hub: Hub) -> None:
    store = hub.store
    assert isinstance(store, Followable)
    while True:
        if not hub.ready or hub.recovering:
            await asyncio.sleep(0.05)
            continue
        try:
            entries = await _read(store, hub.tail)
        except NotStored:
            await asyncio.sleep(0.5)
            continue
        for entry_id, r in entries:
            if hub.recovering:
                break
            if not fold(hub, r):
                await hub.recover()
                break
            hub.tail = entry_id


async def _read(store: Followable, tail: str) -> list[tuple[str, Record]]:
    """The entries after ``tail``, waiting up to a second for one. Cancelling the follower
    (the node shutting down, ``app.py``) leaves the read itself alone, to end within its
    second: redis-py can swallow a cancellation that lands as a blocking read's reply
    arrives, and the task then never ends (as in redis/redis-py#2028), nor the shutdown
    that awaits it."""
    read = asyncio.ensure_future(store.read_after(tail, block_ms=1000))
    try:
        return await asyncio.shield(read)
    except asyncio.CancelledError:
        read.add_done_callback(_retrieved)
        raise


def _retrieved(read: asyncio.Future[list[tuple[str, Record]]]) -> None:
    if not read.cancelled():
        read.exception()  # a read that failed after its follower was cancelled: nobody to tell


def fold(hub: Hub, r: Record) -> bool:
    """Fold one record another node wrote. False: this node has diverged (it
    applied something else at that seq) and must reload."""
    key = (r.device, r.client_id)
    if key in hub.keys:
        return True  # this node's own, or already folded
    if r.game is not None and r.seq is not None and r.seq != hub.seqs.get(r.game, 0) + 1:
        return False
    e = codec.decode_event(r.body)
    try:
        notices = hub.engine.apply(e)
    except Refused:
        return False
    hub.keys[key] = Logged(r.digest, e.id, r.game, r.seq, e.at)
    hub.applied.append(key)
    hub.wake.set()
    if r.game is None or r.seq is None:
        return True
    hub.seqs[r.game] = r.seq
    view = hub.engine.view(r.game)
    delta = hub.feeds.delta(r.game, r.seq, [render(n) for n in notices], view)
    ack = pr.Ack(id=r.client_id, log_id=e.id, game=r.game, seq=r.seq, at=e.at, duplicate=True)
    hub.committed(Pending(r, ack, delta, view, hub.generation))
    return True
