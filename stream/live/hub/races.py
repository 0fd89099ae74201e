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
   first of them (``Engine.rollback``), and its ``seq``. Viewers were shown none of
   them: an event is shown once committed (``Feeds.show``).
4. The store takes the game's appends again (``Store.readmit``).
5. The game's entries after its ``seq`` are read from the log and folded at
   once, as long as each changes that game alone (``Engine.only_its_game``: a void of
   an event that neither began nor ends the game among them): those
   commute with other games' entries, so folding them ahead of the follower
   changes nothing. The follower folds the rest, in the log's order.
6. The gate opens once the game holds the ``seq`` the log was seen to hold. The
   events that waited, and the refused ones (``Hub.submit`` sends them again),
   are judged on that state.

A node alone on its log (no follower: ``Hub.following`` unset) never races, and takes
no savepoints.

Only if something since the first refused event may have changed more than its
game (a game beginning or ending, the ledger re-derived, a tournament's event;
``Engine.rollback``) does the node
fold the whole log again (``Hub.recover``); so too if the game, caught up, has not
reached the other node's entries within ``CATCH_UP_S``. A catch-up that still waits on
the store then (for the answers to what it had in flight: a failover, an election) is no
reason to: the events waiting are answered ``NotStored``, and the catch-up goes on.

**A failed write** (the store refused it or could not be reached, or its fate is not
known: no etcd member answered within the call's budget) is **settled** the same way, for every game at once
(``failed``): the store takes no append after a failed one until told, so every
event of this node in flight fails behind it. New events wait at the gate and the
follower pauses; once every append in flight is answered, each game's unconfirmed
events are taken back (steps 2 and 3), the store takes appends again, and each
game's tail is folded from the log (step 5; an event whose write was "not known"
and that the log does hold comes back this way). The state is then the log's, with
no fold of the whole log.

Such an event may lie behind the follower: it read the entry while the write's
answer was still on its way, and passed it as this node's own (and then, maybe,
folded other nodes' entries of the game after it, which the take-back takes back
too). A lost race can leave the same: the follower met the log's copy of an event
this node has in flight at that ``seq`` (a device's retry through another node),
and passed it as this node's own. So a game that had an event taken back, by a
settling or a catch-up, at a ``seq`` the follower has passed is **owed** its tail until
its entries up to that ``seq`` are folded: the settling folds them at once if the
log can be read, else the follower does as soon as the log answers, before it
reads on. Until then the game's events wait at its gate, and no refusal is final
(``Hub.behind_the_log``): an event voided or amended through this node may be one
of those entries. Such an entry that can't be folded out of the log's order (it
changes more than its game) makes the node fold the whole log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from ...errors import NotStored
from ...rules import codec
from ...rules.engine import Engine, Savepoint
from ...store import Record, Store
from ...tasks import stop
from ..wire import protocol as pr
from .dedup import Key

log = logging.getLogger("arena_stream.races")

CATCH_UP_S = 2.0  # a game's events wait this long at its gate; then the whole log is folded


@dataclass(slots=True)
class Tentative:
    """An event this node applied to a game and sent to the log, not yet answered."""

    key: Key
    seq: int
    savepoint: Savepoint | None    # the game before it (None: its set-up)
    done: asyncio.Future[pr.Ack]   # settles with its commit
    eid: str = ""                  # its event id (``Hub.unsettled`` until it is taken back)


class Node(Protocol):
    """What a catch-up works on: the hub's fold and log, through the hub's own methods."""

    engine: Engine
    store: Store
    generation: int
    following: bool
    wake: asyncio.Event

    @property
    def seqs(self) -> Mapping[str, int]: ...

    def fold_other(self, r: Record) -> bool: ...

    def rewind(self, game: str, seq: int, taken: Collection[Key], ids: Iterable[str]) -> None: ...

    async def recover(self) -> None: ...


class Races:
    def __init__(self, node: Node) -> None:
        self.node = node
        self.tentative: dict[str, deque[Tentative]] = {}
        self.gates: dict[str, asyncio.Event] = {}    # games whose new events wait
        self.targets: dict[str, int] = {}           # the seq the log was seen to hold
        self.catching: dict[str, asyncio.Task[None]] = {}
        self.caught_up = 0                          # catch-ups that took events back
        self.readable = True                        # the follower's last read of the log answered
        self.reloads = 0                            # ... that had to fold the whole log
        # Settling after a failed write (``failed``): new events wait, the follower pauses.
        self.settling: asyncio.Task[None] | None = None
        self.settled = 0                            # failed writes settled game by game
        self.settle_reloads = 0                     # ... that had to fold the whole log
        # Games whose events a settling took back behind the follower, until folded (``fold_owed``).
        self.owed: set[str] = set()
        self.passed: dict[str, int] = {}            # each game's last seq the follower passed
        self._paid = asyncio.Event()                # set while nothing is owed
        self._paid.set()
        self._paying = asyncio.Lock()

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

    async def gate(self, game: str | None) -> None:
        """Wait while a failed write is being settled, or ``game`` caught up (at once if
        neither). Raises ``NotStored`` if the settling takes longer than ``CATCH_UP_S``."""
        settling = self.settling
        if settling is not None:
            try:
                await asyncio.wait_for(asyncio.shield(settling), CATCH_UP_S)
            except TimeoutError:
                raise NotStored("this node is still settling writes the log did not confirm; "
                                "send the event again") from None
        if game is not None and game in self.owed:
            await self.paid()
        opened = None if game is None else self.gates.get(game)
        if opened is None or game is None:
            return
        try:
            await asyncio.wait_for(opened.wait(), CATCH_UP_S)
        except TimeoutError:
            if not self.readable or game in self.catching:
                # The follower can't read the log, or the catch-up still waits on the store for
                # what it had in flight (a failover, an election): both go on when it answers.
                raise NotStored("this node is catching the game up with the log; send the event "
                                "again") from None
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
        self.owed.clear()
        self.passed.clear()
        self._paid.set()

    def read(self, answered: bool) -> None:
        """The follower's read of the log answered (True), or could not (a failover)."""
        self.readable = answered

    def follower_passed(self, game: str, seq: int) -> None:
        """The follower passed ``game``'s entry at ``seq`` (folded, or this node's own)."""
        self.passed[game] = seq

    async def paid(self) -> None:
        """Wait until no game is owed its tail (at once if none is). Raises ``NotStored`` at
        once while the log can't be read, or if it is not paid within ``CATCH_UP_S``."""
        if self._paid.is_set():
            return
        try:
            if not self.readable:
                raise TimeoutError
            await asyncio.wait_for(self._paid.wait(), CATCH_UP_S)
        except TimeoutError:
            raise NotStored("this node is reading back from the log events it took back; send "
                            "the event again") from None

    async def fold_owed(self) -> None:
        """Fold each owed game's entries after its ``seq``, read from the log (the module
        docstring). Raises ``NotStored`` while the log can't be read: the follower calls
        this again before it reads on."""
        node = self.node
        async with self._paying:
            for game in sorted(self.owed):
                if game not in self.owed:
                    continue  # the whole log was folded again meanwhile
                try:
                    folded = await self._fold_tail(game, self.passed.get(game, 0))
                except NotStored:
                    self.readable = False
                    raise
                self.readable = True
                if not folded:
                    self.settle_reloads += 1
                    log.info("an owed entry changes more than its game; folding the log again",
                             extra={"game": game})
                    await node.recover()
                    return
                self.owed.discard(game)
                log.debug("folded an owed tail", extra={"game": game, "seq": node.seqs.get(game)})
            if not self.owed:
                self._paid.set()

    async def close(self) -> None:
        await stop([*self.catching.values(), *([self.settling] if self.settling else [])])

    # ------------------------------------------------------ a failed write

    def failed(self) -> asyncio.Future[None]:
        """A write failed: settle it (the module docstring). The future is done when the
        state is the log's again, game by game or, if that can't be, by a fold of the whole log."""
        if self.settling is None:
            self.settling = asyncio.create_task(self._settle(), name="settle-failed-writes")
        return asyncio.shield(self.settling)

    async def _settle(self) -> None:
        node = self.node
        generation = node.generation
        try:
            # Every append in flight is answered (the store fails those behind a failed one at
            # once), and every catch-up of a race these answers started has ended.
            while pending := [t.done for q in self.tentative.values() for t in q if not t.done.done()]:
                await asyncio.wait(pending)
            if self.catching:
                await asyncio.wait(list(self.catching.values()))
            if node.generation != generation:
                return  # the whole log was folded again meanwhile
            taken: list[str] = []
            for game in list(self.tentative):
                outcome = self._take_back(game)
                if outcome is None:
                    self.settle_reloads += 1
                    log.info("a write failed; folding the log again", extra={"game": game})
                    await node.recover()
                    return
                if outcome:
                    taken.append(game)
            await node.store.reset_after_failure()
            self.settled += 1
            log.debug("a write failed; took back what the log did not confirm",
                     extra={"games": taken})
            behind = self._owe(taken)
            try:
                await self.fold_owed()
                for game in taken:
                    if game not in behind and node.generation == generation:
                        await self._fold_tail(game)
            except NotStored:
                if self.owed:
                    log.info("the log can't be read yet; the follower folds the owed tails when it "
                             "can", extra={"games": sorted(self.owed)})
        finally:
            self.settling = None
            node.wake.set()

    def _owe(self, games: Iterable[str]) -> list[str]:
        """Of ``games``, just taken back, those whose entries the follower has passed beyond
        their ``seq`` now: owed their tails until folded (the module docstring)."""
        node = self.node
        behind = [g for g in games if self.passed.get(g, 0) > node.seqs.get(g, 0)]
        if behind:
            self.owed.update(behind)
            self._paid.clear()
            log.info("took back events the follower had passed; their games are owed their tails",
                     extra={"games": behind})
        return behind

    # ------------------------------------------------------ the catch-up

    async def _catch_up(self, game: str) -> None:
        node = self.node
        generation = node.generation
        try:
            while pending := [t.done for t in self.tentative.get(game, ()) if not t.done.done()]:
                await asyncio.wait(pending)
            if node.generation != generation:
                return  # the whole log was folded again meanwhile
            outcome = self._take_back(game)
            if outcome is None:
                self.reloads += 1
                log.info("seq race lost; folding the log again", extra={"game": game})
                await node.recover()
                return
            if outcome:
                self.caught_up += 1
                log.info("seq race lost; caught the game up", extra={"game": game, "seq": node.seqs[game]})
            node.store.readmit(game)
            owed = self._owe([game]) if outcome else []
            with contextlib.suppress(NotStored):  # the follower reads on when the store answers
                await (self.fold_owed() if owed else self._fold_tail(game))
        finally:
            del self.catching[game]
            self.advanced(game)

    def _take_back(self, game: str) -> bool | None:
        """Take back ``game``'s events in flight from the first the log refused (steps 2 and 3:
        every one of them is answered). True: some were; False: none was refused; None: they
        can't be taken back alone (one may have changed more than its game): fold the log."""
        node = self.node
        sent = list(self.tentative.pop(game, ()))
        refused = sent[next((i for i, t in enumerate(sent) if t.done.exception()), len(sent)):]
        if not refused:
            return False
        first = refused[0]
        why = ("its set-up" if first.savepoint is None else
               "one was stored after" if not all(t.done.exception() for t in refused) else
               "one may have changed more than its game" if not node.engine.rollback(first.savepoint)
               else None)
        if why is not None:
            log.info("the events in flight can't be taken back", extra={"game": game, "why": why})
            return None
        node.rewind(game, first.seq, [t.key for t in refused], [t.eid for t in refused])
        return True

    async def _fold_tail(self, game: str, behind: int = 0) -> bool:
        """Fold the game's entries after its seq, read from the log, while each changes that
        game alone (step 5); the follower folds the rest in the log's order. False: an entry
        at or before ``behind`` (the follower has passed it) did not fold. Raises
        ``NotStored`` if the log can't be read."""
        node = self.node
        if not node.following:
            return True
        generation = node.generation
        records = await node.store.game_records(game, node.seqs.get(game, 0))
        if node.generation != generation:
            return True  # the whole log was folded again while it was read
        for r in records:
            if not node.engine.only_its_game(codec.decode_event(r.body)) or not node.fold_other(r):
                return (r.seq or 0) > behind
        return True
