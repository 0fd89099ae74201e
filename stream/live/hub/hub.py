"""The live core of the service: dedup, the engine, ordering, the durable log.

One ``Hub`` per process. Every event, from a handheld, the admin API or the
deadline timer (``timer.py``), takes the same path through ``submit``:

1. **Dedup** (``dedup.py``). ``(device, client_id)`` already known: the same
   payload gets the original ack (waiting for it if the first copy is still
   committing); a different payload is a ``Conflict``.
2. **Rules.** The engine applies the event or raises ``Refused``; a refused
   event is never stored.
3. **Order.** The event takes the next ``seq`` of its game; its delta (its
   notices and the patch it makes to the game's view) is computed now
   (``feeds.py``).
4. **Durability.** The store commits it with its dedup key (group commit).
   Only then is the device acked and the delta shown, in ``seq`` order. If
   another node took its ``seq`` first, the game is caught up (``races.py``);
   if the commit fails otherwise, every event not yet committed fails with
   ``NotStored``: with several nodes, each game's unconfirmed events are taken
   back and its tail read from the log (``Races.failed``); alone, or for a
   tournament's event, the log is folded again (``recover``).

Start-up: the state is the fold of the log; a snapshot (``snapshot.py``)
caches it up to a log position, written after a long fold and at a clean
shutdown. With several nodes, ``follower.py`` folds what the others write.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Iterable, Mapping
from typing import cast

import msgspec

from ...errors import Conflict, NotStored, Refused
from ...rules import codec
from ...rules import events as ev
from ...rules.engine import Engine
from ...rules.text import render
from ...store import START, DuplicateKey, Followable, Record, SeqTaken, Store, entry_key
from ..wire import protocol as pr
from .dedup import Key, Known, Logged, Taken
from .feeds import Feeds, Pending, Sink
from .races import CATCH_UP_S, Races, Tentative
from .snapshot import SnapshotCache, no_gc

__all__ = ["SYSTEM", "Hub"]

log = logging.getLogger("arena_stream.hub")

SYSTEM = "system"  # the device name of events the service writes itself (ticks)
SNAPSHOT_TAIL = 20_000  # a start that folds more records than this writes a snapshot


class Hub:
    def __init__(self, store: Store, sink: Sink) -> None:
        self.store = store
        self.engine = Engine()
        self._seqs: dict[str, int] = {}          # each game's last seq in the fold
        self.feeds = Feeds(store, lambda: self.engine, sink)   # what viewers are sent, and where
        self._keys: dict[Key, Known] = {}         # what a retry of each event is answered with
        self.snapshots = SnapshotCache(store)
        self._tail = START                        # the last log entry folded (followable stores)
        self._tail_moved = asyncio.Event()       # set (and replaced) each time ``tail`` moves
        self.position = START                    # the log position the last _load reached
        # The keys applied to the engine since that load, in order: a snapshot at shutdown is
        # written only if they are exactly the log's records after ``position``.
        self._applied: list[Key] = []
        self.folded = 0                          # records the last load folded (after its snapshot)
        self.generation = 0                      # how many times the log has been folded whole
        self.reloads = 0                         # ... of them after the start (``recover``)
        self.ready = False
        self.recovering = False
        self._recovered = asyncio.Event()
        self.wake = asyncio.Event()              # the engine's next deadline may have changed
        self.races = Races(self)                 # this node's events in flight, by game
        self.following = False                   # other nodes write this log too (``follow``)
        # This node's events that may change more than their game, until the follower passes
        # them in the log: another node's such entry first means another order (follower.py).
        self._wide: set[Key] = set()
        # The ids of events this node applied to its fold whose write the log has not
        # confirmed, until the fold lets them go (a rollback, a reload): while an id is
        # here, ``duplicate_id`` for it would speak of the fold, not of the log.
        self._unsettled: set[str] = set()
        self._inflight: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------- startup

    async def start(self) -> None:
        await self.store.open()
        folded = await self._load()
        # Nothing is applied before ``ready``: the engine is exactly the fold up to ``position``.
        blob = self._capture(self.position) if folded > SNAPSHOT_TAIL else None
        self.ready = True
        if blob is not None:
            self.snapshots.save_soon(self.position, blob)

    async def _load(self) -> int:
        """The state is what the log says: the snapshot, if there is a valid one, and the fold
        of every record after it (or of the whole log). Returns how many records it folded."""
        found = await self.snapshots.load()
        position = START if found is None else found[0]
        try:
            last, rows = await self.store.rows_after(position)
        except LookupError as err:
            log.warning("snapshot ignored; folding the whole log", extra={"reason": str(err)})
            self.snapshots.forget()
            found, position = None, START
            last, rows = await self.store.rows_after(position)
        keys: dict[Key, Known]
        if found is None:
            engine, seqs, keys = Engine(), {}, {}
        else:  # the restored keys are all Logged: the same dict, taken as it is (no copy)
            engine, seqs, keys = found[1][0], found[1][1], cast(dict[Key, Known], found[1][2])
        with no_gc(freeze=len(rows) > SNAPSHOT_TAIL):
            apply, decode = engine.feed, codec.decode_event
            for game, seq, device, client_id, dg, body in rows:
                e = decode(body)
                apply(e)
                if game is not None and seq is not None:
                    seqs[game] = seq
                keys[(device, client_id)] = Logged(dg, e.id, game, seq, e.at)
        self.engine, self._seqs, self._keys = engine, seqs, keys
        self._unsettled.clear()  # the fold is the log's: it holds no id the log lacks
        self.position = last
        self.folded_to(last)
        self._applied = []
        self.folded = len(rows)
        self.generation += 1
        self.feeds.reset(engine, seqs, self.generation)
        log.info("loaded", extra={"records": len(rows), "games": len(seqs),
                                  "snapshot": position if position != START else None})
        return len(rows)

    def _capture(self, position: str) -> bytearray | None:
        """The snapshot of the state, which must be the fold up to ``position``."""
        return self.snapshots.capture(self.engine, self._seqs, self._keys, position)

    # ------------------------------------------------- what others may read

    @property
    def seqs(self) -> Mapping[str, int]:
        """Each game's last ``seq`` in the fold (this node's events in flight included)."""
        return self._seqs

    @property
    def keys(self) -> Mapping[Key, Known]:
        """What a retry of each event, by ``(device, client_id)``, is answered with."""
        return self._keys

    @property
    def tail(self) -> str:
        """The last log entry the follower has folded (followable stores)."""
        return self._tail

    # ------------------------------------------- the follower and the races

    def follow(self) -> None:
        """Other nodes write this log too: from now on this node takes savepoints, races for
        each game's ``seq`` and settles failed writes game by game (``follower.run`` calls it)."""
        self.following = True

    def fold_other(self, r: Record) -> bool:
        """Fold one record another node wrote (or this node's own, met again). False: this
        node has diverged (it applied something else at that seq), or the record can't be
        folded here in the log's order: the caller catches the game up or folds the log."""
        key = (r.device, r.client_id)
        if key in self._keys:
            self._wide.discard(key)
            if r.game is None:
                return True
            if self.races.elsewhere(r.game, key, r.seq):
                return False  # this node has the same event in flight at another seq: a race lost
            self.races.advanced(r.game)
            return True  # this node's own, or already folded
        if r.game is not None and r.seq is not None and r.seq != self._seqs.get(r.game, 0) + 1:
            return False
        e = codec.decode_event(r.body)
        if self._wide and not self.engine.only_its_game(e):
            return False  # this node applied an event the log has after this one, in the other order
        try:
            notices = self.engine.apply(e)
        except Refused:
            return False
        self._keys[key] = Logged(r.digest, e.id, r.game, r.seq, e.at)
        self._applied.append(key)
        self.wake.set()
        names = self.engine.names()
        rendered = [render(n, names) for n in notices]
        if r.game is None:
            # A registration's rosters, a committee decision's notices: to this node's viewers.
            self.feeds.outside(e, rendered)
            return True
        if r.seq is None:
            return True
        self._seqs[r.game] = r.seq
        self.races.advanced(r.game)
        ack = pr.Ack(id=r.client_id, log_id=e.id, game=r.game, seq=r.seq, at=e.at, duplicate=True)
        self.feeds.show(Pending(r, ack, rendered, self.engine.view(r.game), self.generation))
        return True

    def rewind(self, game: str, seq: int, taken: Collection[Key], ids: Iterable[str]) -> None:
        """This node's events of ``game`` from ``seq`` on, which the log refused or did not
        confirm, are taken back (the engine already rolled back the game to before them): the
        game's ``seq``, what dedup and the unsettled ids knew of them, and any of the game's
        later events held to be shown after them. Viewers were shown none of them (an event
        is shown once committed), so their next patch needs nothing undone. A retry of one
        is judged afresh.

        The engine took back every event of the game since, and so does dedup: another
        node's event the follower folded after one of these (the log held this node's event,
        but its write's answer was lost) is no longer in the fold, and comes back from the
        log like this node's own (``Races``: an owed tail)."""
        self._seqs[game] = seq - 1
        feed = self.feeds.get(game)
        if feed is not None:
            for held in [s for s in feed.held if s >= seq]:
                del feed.held[held]  # built on the state taken back
        keys = set(taken)
        i = len(self._applied)
        while i:  # the latest events are at the end; the game's, in seq order
            i -= 1
            key = self._applied[i]
            if key in keys:
                keys.discard(key)
            else:
                known = self._keys.get(key)
                at = None if known is None else known.logged()
                if at is None or at.game != game or at.seq is None:
                    continue
                if at.seq < seq:
                    if not keys:
                        break  # the game's events before the first taken back
                    continue
                del self._keys[key]
                self._wide.discard(key)
            del self._applied[i]
        self._unsettled.difference_update(ids)

    # -------------------------------------------------------------- submit

    async def submit(self, *, device: str, official: str, client_id: str, payload_digest: bytes,
                     event: ev.Event, received_at: int) -> pr.Ack:
        """Apply, commit and acknowledge one event (see the module docstring), received at
        ``received_at`` (the service's clock, in ms: the log keeps it). With several nodes,
        another node may take the event's ``seq`` first: this node then catches the game up
        (``races.py``) and judges the event anew."""
        rejudged = False
        for _ in range(8):
            seen = self._tail  # the log as folded here when the event is judged (or earlier)
            try:
                return await self._submit_once(device=device, official=official, client_id=client_id,
                                               payload_digest=payload_digest, event=event,
                                               received_at=received_at)
            except SeqTaken:
                continue  # the next try waits at the game's gate
            except Refused:
                # A refusal is final only if judged on the whole log: on a node whose follower
                # is behind, a game set up, a card to name the conduct of or an event to void
                # through another node may not be folded here yet. Fold up to the log's end
                # now; if anything was folded since the event was judged, judge it once more.
                if rejudged:
                    raise
                behind = await self.behind_the_log()
                if not behind and self._tail == seen:
                    raise
                rejudged = True
        raise NotStored("the game is busy on other nodes; send the event again")

    def folded_to(self, entry_id: str, r: Record | None = None) -> None:
        """The follower has folded the log up to ``entry_id`` (the record ``r``)."""
        self._tail = entry_id
        if r is not None and r.game is not None and r.seq is not None:
            self.races.follower_passed(r.game, r.seq)
        moved, self._tail_moved = self._tail_moved, asyncio.Event()
        moved.set()

    async def behind_the_log(self) -> bool:
        """Whether this node had not folded every entry the log holds now (or owed a game its
        tail: ``Races.owed``); if so, wait (up to ``CATCH_UP_S``) until it has, and say True.
        False: alone on its log, or level with it."""
        store = self.store
        if not self.following or not isinstance(store, Followable):
            return False
        if self.races.owed:  # entries this node took back after a failed write are owed
            await self.races.paid()
            return True
        end = entry_key(await store.end())
        if entry_key(self._tail) >= end:
            return False
        if not await self._reach(end, CATCH_UP_S):
            raise NotStored("this node has not yet read the whole log; send the event again")
        return True

    async def level_with_log(self, within: float) -> bool:
        """Wait, at most ``within`` seconds, until this node has folded every entry the log
        holds now (at once if it is alone on its log, or level with it). False if it has not
        by then, or the log can't be read (a viewer's game this node may not have read yet)."""
        store = self.store
        if not self.following or not isinstance(store, Followable):
            return True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        try:
            async with asyncio.timeout(within):
                end = entry_key(await store.end())
        except (TimeoutError, NotStored):
            return False
        return await self._reach(end, deadline - loop.time())

    async def _reach(self, end: tuple[int, int], within: float) -> bool:
        """Wait, at most ``within`` seconds, until the follower has folded up to ``end``."""
        try:
            async with asyncio.timeout(max(0.0, within)):
                while entry_key(self._tail) < end:
                    await self._tail_moved.wait()
        except TimeoutError:
            return False
        return True

    async def _submit_once(self, *, device: str, official: str, client_id: str,
                           payload_digest: bytes, event: ev.Event, received_at: int) -> pr.Ack:
        game = self.engine.logged_under(event)  # the game the log files it under (or None)
        shared = self.following  # other nodes write this log too: events race (races.py)
        if shared:
            await self.races.gate(game)
        if not self.ready or self.recovering:
            raise NotStored("the service is loading its log; send the event again")
        key = (device, client_id)
        known = self._keys.get(key)
        if known is not None:
            if known.digest != payload_digest:
                raise Conflict("id_conflict", f"{client_id!r} was already used by this device for "
                                              "a different event; the first one stands")
            if isinstance(known, Logged):  # folded from the log: its ack is made now
                return known.ack(client_id)
            prior = known.ack
            ack = prior if isinstance(prior, pr.Ack) else await asyncio.shield(prior)
            return msgspec.structs.replace(ack, duplicate=True, notices=[])

        savepoint = self.engine.savepoint(game) if shared and game is not None else None
        wide = self.engine.wide_changes
        try:
            notices = self.engine.apply(event)  # raises Refused: nothing applied, nothing stored
        except Refused as r:
            if r.code == "duplicate_id" and event.id in self._unsettled:
                # The fold still holds an earlier copy whose write failed or is unanswered:
                # whether the log has it is not known yet. A final refusal would be a lie.
                raise NotStored("an earlier copy of this event is still being settled with the log; "
                                "send the event again") from r
            raise
        self._unsettled.add(event.id)
        if shared and self.engine.wide_changes != wide:
            self._wide.add(key)
        seq = view = None
        names = self.engine.names()  # the roster as of this event, once for every viewer
        rendered = [render(n, names) for n in notices]
        if game is not None:
            seq = self._seqs[game] = self._seqs.get(game, 0) + 1
            view = self.engine.view(game)  # what viewers are shown once it is committed
        record = Record(game=game, seq=seq, device=device, client_id=client_id, official=official,
                        digest=payload_digest, received_at=received_at, body=codec.encode_event(event))
        ack = pr.Ack(id=client_id, log_id=event.id, game=game, seq=seq, at=event.at,
                     duplicate=False, notices=rendered)
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[pr.Ack] = loop.create_future()      # for retries of this event
        waiter: asyncio.Future[pr.Ack] = loop.create_future()   # for this submitter
        self._keys[key] = Taken(payload_digest, fut)
        self._applied.append(key)
        if shared and game is not None and seq is not None:
            self.races.track(game, Tentative(key, seq, savepoint, fut, event.id))
        self.wake.set()
        # The commit runs as its own task: if the device goes away mid-commit,
        # the event still lands (or fails) whole, and a retry finds its ack.
        task = asyncio.create_task(self._commit(
            Pending(record, ack, rendered, view, self.generation), key, fut, waiter))
        self._inflight.add(task)
        task.add_done_callback(self._inflight.discard)
        return await waiter

    async def _commit(self, p: Pending, key: Key, fut: asyncio.Future[pr.Ack],
                      waiter: asyncio.Future[pr.Ack]) -> None:
        def ok() -> None:
            for f in (fut, waiter) if not waiter.done() else (fut,):
                f.set_result(p.ack)

        def failed(err: BaseException) -> None:
            for f in (fut, waiter) if not waiter.done() else (fut,):
                f.set_exception(err)
                f.exception()  # retrieved: nobody may be waiting

        game, lost = p.record.game, None
        try:
            await self.store.append(p.record)
        except DuplicateKey as dup:
            s, m = dup.existing, p.record
            if (s.digest, s.game, s.seq, s.body) != (m.digest, m.game, m.seq, m.body):
                lost = SeqTaken(s.seq or 0)  # stored elsewhere: the next try answers with its ack
            # Else another node wrote exactly this record (a deadline tick both timers saw).
        except SeqTaken as err:
            lost = err
        except NotStored as err:  # not stored, or not known: settled game by game (races.py)
            self._keys.pop(key, None)
            failed(err)
            await (self.recover() if game is None or not self.following else self.races.failed())
            return
        if lost is not None:  # another node took the seq first: catch the game up (races.py)
            self._keys.pop(key, None)
            caught = None if game is None else self.races.lost(game, lost.current)
            failed(lost)
            await (self.recover() if caught is None else caught)
            return
        self._unsettled.discard(p.ack.log_id)  # the log has it
        if p.generation != self.generation:
            # The log was folded again while this commit was in flight: that fold
            # (or the follower, reading on from it) shows the event; only ack it.
            ok()
            return
        self._keys[key] = Taken(p.record.digest, p.ack)
        ok()
        if game is not None and self.following:
            self.races.committed(game)
        # The device's ack goes out first (its task runs next), then the fan-out;
        # call_soon keeps commits' publications in commit order.
        asyncio.get_running_loop().call_soon(self.feeds.show, p)

    async def close(self) -> None:
        """Let every commit in flight finish, write a snapshot, then close the store."""
        if self._inflight:
            await asyncio.gather(*self._inflight, return_exceptions=True)
        await self.races.close()
        await self.snapshots.close()
        if self.ready and not self.recovering:
            await self.snapshots.save_at_close(self.position, self._applied, self._capture)
        await self.store.close()

    async def recovered(self) -> None:
        """Wait until the reload after a failed commit has finished (at once if it has)."""
        await self._recovered.wait()

    async def recover(self) -> None:
        """A commit failed: reload everything from the log, which is the truth."""
        if self.recovering:
            await self._recovered.wait()
            return
        self.recovering = True
        self._recovered.clear()
        # From here on, nothing computed on the diverged state is published: a commit
        # still in flight (pipelined behind the one that failed) may land, but its
        # delta was built on a state the log does not have. The reload shows it.
        self.generation += 1
        log.warning("commit failed; reloading the log")
        failures = 0
        try:
            while True:
                try:
                    await self._load()
                    await self.store.reset_after_failure()
                    await self.feeds.publish_missed()
                    self.reloads += 1
                    break
                except Exception as err:  # keep trying, acking nothing
                    failures += 1
                    if failures == 1:  # the store logs how its outage goes on; anything else is a bug
                        log.warning("reload failed; retrying every 0.5 s", extra={"reason": str(err)},
                                    exc_info=not isinstance(err, NotStored))
                    await asyncio.sleep(0.5)
            if failures:
                log.warning("log reloaded", extra={"failed_tries": failures})
        finally:
            self.recovering = False
            self.races.clear()
            self._wide.clear()
            self._recovered.set()
