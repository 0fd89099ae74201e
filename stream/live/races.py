"""Several nodes writing one game: a lost race for a ``seq`` costs that game's
tail, never a reload of the log, and never blocks another game.

A node applies an event to its fold, gives it the game's next ``seq`` and sends
it to the log; until the log answers, the event is *tentative*. Another node may
have taken that ``seq`` first: the store refuses the append (``SeqTaken``), or
this node's follower meets the other node's entry at a ``seq`` it has used. Either
way the node **catches the game up**:

1. The game's gate closes: the game's new events wait there; other games go on.
2. Every append of the game in flight is answered. The store refuses the ones
   after a refused one: they were built on it.
3. The refused events are taken back: the game in the fold as it was before the
   first of them (``Engine.rollback``), its ``seq``, and the view its viewers'
   next patch is computed against (``Feeds.delta``).
4. The store takes the game's appends again (``Store.readmit``).
5. The game's entries after its ``seq`` are read from the log and folded at
   once, as long as each changes that game alone (``game.only_its_game``): those
   commute with other games' entries, so folding them ahead of the follower
   changes nothing. The follower folds the rest, in the log's order.
6. The gate opens once the game holds the ``seq`` the log was seen to hold. The
   events that waited, and the refused ones (``Hub.submit`` sends them again),
   are judged on that state.

A node alone on its log (no follower: ``Races.fold`` unset) never races, and takes
no savepoints.

Only if something since the first refused event may have changed more than its
game (a game beginning or ending, a void, a tournament's event) does the node
fold the whole log again (``Hub.recover``), as after any other failed write; so
too if the game has not reached the other node's entries within ``CATCH_UP_S``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import NotStored
from ..rules import codec
from ..rules import game as gm
from ..rules.engine import Engine, Savepoint
from ..store import Record, Store
from ..tasks import stop
from . import protocol as pr
from .dedup import Key
from .feeds import Feeds

log = logging.getLogger("arena_stream.races")

CATCH_UP_S = 2.0  # a game's events wait this long at its gate; then the whole log is folded


@dataclass(slots=True)
class Tentative:
    """An event this node applied to a game and sent to the log, not yet answered."""

    key: Key
    seq: int
    savepoint: Savepoint | None    # the game before it (None: its set-up)
    base: Any                      # the game's patch base before it (``GameFeed.base``)
    done: asyncio.Future[pr.Ack]   # settles with its commit
    eid: str = ""                  # its event id (``Hub.unsettled`` until it is taken back)


class Node(Protocol):
    """What a catch-up works on: the hub's fold and log."""

    engine: Engine
    seqs: dict[str, int]
    feeds: Feeds
    applied: list[Key]
    unsettled: set[str]
    store: Store
    generation: int

    async def recover(self) -> None: ...


class Races:
    def __init__(self, node: Node) -> None:
        self.node = node
        self.tentative: dict[str, deque[Tentative]] = {}
        self.gates: dict[str, asyncio.Event] = {}    # games whose new events wait
        self.targets: dict[str, int] = {}           # the seq the log was seen to hold
        self.catching: dict[str, asyncio.Task[None]] = {}
        self.caught_up = 0                          # catch-ups that took events back
        # Folds another node's entry, as the follower does (``follower.run`` sets it).
        self.fold: Callable[[Record], bool] | None = None
        self.reloads = 0                            # ... that had to fold the whole log

    # ------------------------------------------------ the hub's events

    def track(self, game: str, t: Tentative) -> None:
        self.tentative.setdefault(game, deque()).append(t)

    def committed(self, game: str) -> None:
        """An append of ``game`` was answered "stored": forget the answered ones in front."""
        q = self.tentative.get(game)
        while q and q[0].done.done() and q[0].done.exception() is None:
            q.popleft()
        if not q:
            self.tentative.pop(game, None)

    def racing(self, game: str) -> bool:
        """Whether ``game`` has events in flight, or is being caught up."""
        return game in self.tentative or game in self.catching

    def elsewhere(self, game: str, key: Key, seq: int | None) -> bool:
        """Whether this node has the event ``key`` in flight at a seq other than ``seq``."""
        return any(t.key == key and t.seq != seq for t in self.tentative.get(game, ()))

    async def gate(self, game: str) -> None:
        """Wait while ``game`` is being caught up (at once if it is not)."""
        opened = self.gates.get(game)
        if opened is None:
            return
        try:
            await asyncio.wait_for(opened.wait(), CATCH_UP_S)
        except TimeoutError:
            log.warning("game not caught up in time; folding the log again", extra={"game": game})
            await self.node.recover()

    def lost(self, game: str, held: int) -> asyncio.Future[None]:
        """The log holds ``game`` up to at least ``held`` written by another node: catch the
        game up. The future is done when the events in flight are taken back (the gate
        opens later, when the follower has folded up to ``held``)."""
        self.targets[game] = max(self.targets.get(game, 0), held)
        self.gates.setdefault(game, asyncio.Event())
        task = self.catching.get(game)
        if task is None:
            task = self.catching[game] = asyncio.create_task(self._catch_up(game),
                                                             name=f"catch-up:{game}")
        return asyncio.shield(task)

    def advanced(self, game: str) -> None:
        """The follower folded an entry of ``game``: open its gate if it is caught up."""
        gate = self.gates.get(game)
        if (gate is not None and game not in self.catching
                and self.node.seqs.get(game, 0) >= self.targets.get(game, 0)):
            del self.gates[game]
            self.targets.pop(game, None)
            gate.set()

    def clear(self) -> None:
        """The whole log was folded again: nothing is tentative, every gate opens."""
        self.tentative.clear()
        self.targets.clear()
        for gate in self.gates.values():
            gate.set()
        self.gates.clear()

    async def close(self) -> None:
        await stop(list(self.catching.values()))

    # ------------------------------------------------------ the catch-up

    async def _catch_up(self, game: str) -> None:
        node = self.node
        generation = node.generation
        try:
            while pending := [t.done for t in self.tentative.get(game, ()) if not t.done.done()]:
                await asyncio.wait(pending)
            if node.generation != generation:
                return  # the whole log was folded again meanwhile
            sent = list(self.tentative.pop(game, ()))
            refused = sent[next((i for i, t in enumerate(sent) if t.done.exception()), len(sent)):]
            if refused:
                first = refused[0]
                if (first.savepoint is None or not all(t.done.exception() for t in refused)
                        or not node.engine.rollback(first.savepoint)):
                    self.reloads += 1
                    log.info("seq race lost; folding the log again", extra={"game": game})
                    await node.recover()
                    return
                self.caught_up += 1
                node.seqs[game] = first.seq - 1
                node.feeds[game].base = first.base
                _drop(node.applied, {t.key for t in refused})
                node.unsettled.difference_update(t.eid for t in refused)
                log.info("seq race lost; caught the game up",
                         extra={"game": game, "taken_back": len(refused), "seq": first.seq - 1})
            node.store.readmit(game)
            await self._fold_tail(game)
        finally:
            del self.catching[game]
            self.advanced(game)

    async def _fold_tail(self, game: str) -> None:
        """Fold the game's entries after its seq, read from the log, while each changes that
        game alone (step 5); the follower folds the rest in the log's order."""
        node, fold = self.node, self.fold
        if fold is None:
            return
        try:
            records = await node.store.game_records(game, node.seqs.get(game, 0))
        except NotStored:
            return  # the follower reads on when the store answers
        for r in records:
            if not gm.only_its_game(node.engine.status_of(game), codec.decode_event(r.body)) or not fold(r):
                return


def _drop(applied: list[Key], keys: set[Key]) -> None:
    """Remove ``keys`` from the end of ``applied``, where the latest events are."""
    i = len(applied)
    while keys and i:
        i -= 1
        if applied[i] in keys:
            keys.discard(applied[i])
            del applied[i]
