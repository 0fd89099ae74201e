"""With several nodes on one Redis log: fold, in log order, what the other nodes
write, and show it to this node's viewers with the same sequence numbers.

An entry of another node at a ``seq`` this node has used for an event of its own
still in flight is a race this node lost: the game is caught up (``races.py``)
and the entry folded then. Anything else that does not fold means this node's
state is not the log's: the log is folded again (``Hub.recover``)."""

from __future__ import annotations

import asyncio
import functools

from ..errors import NotStored, Refused
from ..rules import codec
from ..rules import game as gm
from ..rules.text import render
from ..store import Followable, Record
from ..tasks import detached
from . import protocol as pr
from .dedup import Logged
from .feeds import Pending
from .hub import Hub


async def run(hub: Hub) -> None:
    store = hub.store
    assert isinstance(store, Followable)
    hub.races.fold = functools.partial(fold, hub)  # a catch-up folds a game's tail this way
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
            hub.races.readable = False
            await asyncio.sleep(0.5)
            continue
        hub.races.readable = True
        for entry_id, r in entries:
            if hub.recovering or hub.races.settling is not None:
                break
            generation = hub.generation
            if not fold(hub, r) and not await _caught_up(hub, r):
                if hub.generation == generation:  # else folded again already
                    await hub.recover()
                break
            hub.folded_to(entry_id)
            if r.game is not None and r.seq is not None:
                hub.races.follower_passed(r.game, r.seq)


async def _caught_up(hub: Hub, r: Record) -> bool:
    """``r`` did not fold: if its game has events of this node in flight, catch the game
    up and fold it. False: the log must be folded again."""
    if r.game is None or r.seq is None or not hub.races.racing(r.game):
        return False
    generation = hub.generation
    await hub.races.lost(r.game, r.seq)
    return hub.generation == generation and fold(hub, r)


async def _read(store: Followable, tail: str) -> list[tuple[str, Record]]:
    """The entries after ``tail``, waiting up to a second for one. Cancelling the follower
    (the node shutting down, ``app.py``) leaves the read itself alone, to end within its
    second: redis-py can swallow a cancellation that lands as a blocking read's reply
    arrives, and the task then never ends (as in redis/redis-py#2028), nor the shutdown
    that awaits it."""
    return await detached(store.read_after(tail, block_ms=1000))


def fold(hub: Hub, r: Record) -> bool:
    """Fold one record another node wrote. False: this node has diverged (it
    applied something else at that seq) and must reload."""
    key = (r.device, r.client_id)
    if key in hub.keys:
        hub.wide.discard(key)
        if r.game is None:
            return True
        if hub.races.elsewhere(r.game, key, r.seq):
            return False  # this node has the same event in flight at another seq: a race lost
        hub.races.advanced(r.game)
        return True  # this node's own, or already folded
    if r.game is not None and r.seq is not None and r.seq != hub.seqs.get(r.game, 0) + 1:
        return False
    e = codec.decode_event(r.body)
    if hub.wide and not gm.only_its_game(hub.engine.status_of(r.game) if r.game else None, e):
        return False  # this node applied an event the log has after this one, in the other order
    try:
        notices = hub.engine.apply(e)
    except Refused:
        return False
    hub.keys[key] = Logged(r.digest, e.id, r.game, r.seq, e.at)
    hub.applied.append(key)
    hub.wake.set()
    if r.game is None:
        # A registration's rosters, a committee decision's notices: to this node's viewers.
        names = hub.engine.names()
        hub.feeds.outside(e, [render(n, names) for n in notices])
        return True
    if r.seq is None:
        return True
    hub.seqs[r.game] = r.seq
    hub.races.advanced(r.game)
    view = hub.engine.view(r.game)
    names = hub.engine.names()
    delta = hub.feeds.delta(r.game, r.seq, [render(n, names) for n in notices], view)
    ack = pr.Ack(id=r.client_id, log_id=e.id, game=r.game, seq=r.seq, at=e.at, duplicate=True)
    hub.committed(Pending(r, ack, delta, view, hub.generation))
    return True
