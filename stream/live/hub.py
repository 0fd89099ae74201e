"""The live core of the service: the engine, the durable log, and what viewers see.

One ``Hub`` per process. Every event, from a handheld, the admin API or the
deadline timer, takes the same path through ``submit``:

1. **Dedup.** ``(device, client_id)`` already known: the same payload gets
   the original ack (waiting for it if the first copy is still committing);
   a different payload is a ``Conflict``.
2. **Rules.** The engine applies the event or raises ``Refused``; a refused
   event is never stored.
3. **Order.** The event takes the next ``seq`` of its game; its delta (its
   notices and the patch it makes to the game's view) is computed now.
4. **Durability.** The store commits it with its dedup key (group commit).
   Only then is the device acked and the delta published, in ``seq`` order.
   If the commit fails, every event not yet committed is failed with
   ``NotStored`` and the engine is reloaded from what the log does hold.

Start-up: the state is the fold of the log. A snapshot (``stream/live/snapshot.py``)
caches that fold up to a log position: ``_load`` decodes it if it is valid and
folds only the records after it. One is written after a start that folded a
long tail, and at a clean shutdown; never during play.

Time: the shell's only use of the wall clock is to stamp received events and
to sleep until ``engine.next_deadline()``, when it submits a ``tick`` event so
that the deadline's notices are logged and sequenced like everything else.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import logging
import struct
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import msgspec

from ..errors import Conflict, NotStored, Refused
from ..rules import codec
from ..rules import events as ev
from ..rules.engine import Engine
from ..rules.text import render
from ..rules.view import GameView, diff_builtins
from ..store import START, DuplicateKey, Followable, Record, SeqTaken, Store
from . import protocol as pr
from . import snapshot as snap
from .snapshot import Logged, SnapshotError

log = logging.getLogger("arena_stream.hub")

SYSTEM = "system"  # the device name of events the service writes itself (ticks)
RECENT = 12        # notices a snapshot repeats for a display that joins late
SNAPSHOT_TAIL = 20_000  # a start that folds more records than this writes a snapshot
LOADED: Any = object()  # GameFeed.base of a game as loaded: its view, as builtins when first needed

#: A dedup key's value: an event folded from the log (see ``Logged``), or one this process
#: took: (digest, its ack, or the future of its ack while it commits).
Known = Logged | tuple[bytes, pr.Ack | asyncio.Future[pr.Ack]]


def now_ms() -> int:
    return int(time.time() * 1000)


def digest(payload: bytes) -> bytes:
    return hashlib.sha256(payload).digest()[:16]


@dataclass(slots=True)
class Frames:
    """One update, encoded once for every viewer: JSON now, MessagePack on first need."""

    msg: Any
    json: bytes
    _msgpack: bytes | None = None

    @classmethod
    def of(cls, msg: Any) -> Frames:
        return cls(msg, pr.json_out.encode(msg))

    _wire: bytes | None = None
    _wire_mp: bytes | None = None

    def msgpack(self) -> bytes:
        if self._msgpack is None:
            self._msgpack = pr.msgpack_out.encode(self.msg)
        return self._msgpack

    def wire(self, binary: bool) -> bytes:
        """The whole WebSocket frame: server frames are unmasked, so every viewer
        gets the same bytes (RFC 6455 §5.2; no compression on viewer sockets)."""
        if binary:
            if self._wire_mp is None:
                self._wire_mp = _ws_frame(0x82, self.msgpack())
            return self._wire_mp
        if self._wire is None:
            self._wire = _ws_frame(0x81, self.json)
        return self._wire


def _ws_frame(first: int, payload: bytes) -> bytes:
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", first, n)
    elif n < 65536:
        head = struct.pack("!BBH", first, 126, n)
    else:
        head = struct.pack("!BBQ", first, 127, n)
    return head + payload


@dataclass(slots=True)
class GameFeed:
    """What viewers of one game can be sent: the committed view and every delta."""

    seq: int = 0
    view: GameView | None = None
    base: Any = None               # the view after the last *applied* event: the next patch's base
                                   # (LOADED: the loaded view's, made when first needed)
    deltas: list[Frames] = field(default_factory=list)   # deltas[i] has seq i + 1 ...
    first_seq: int = 1                                    # ... offset by the first one held
    complete: bool = True                                 # False after a restart until rebuilt
    snapshot: Frames | None = None
    recent: deque[Any] = field(default_factory=lambda: deque(maxlen=RECENT))
    held: dict[int, Pending] = field(default_factory=dict)  # committed out of seq order: waiting


@dataclass(slots=True)
class Pending:
    record: Record
    ack: pr.Ack
    delta: Frames | None
    view: GameView | None
    generation: int = 0            # the fold it was computed on (see Hub._load)


class Hub:
    def __init__(self, store: Store, *,
                 on_publish: Callable[[str, Frames], None] | None = None) -> None:
        self.store = store
        self.engine = Engine()
        self.seqs: dict[str, int] = {}
        self.feeds: dict[str, GameFeed] = {}
        # (device, client_id) -> what a retry of it is answered with (see Known)
        self.keys: dict[tuple[str, str], Known] = {}
        self.on_publish = on_publish or (lambda game, frames: None)
        self.published: dict[str, int] = {}      # the last seq shown to this node's viewers
        self.tail = START                        # the last log entry folded (followable stores)
        self.position = START                    # the log position the last _load reached
        # The keys applied to the engine since that load, in order: a snapshot at shutdown is
        # written only if they are exactly the log's records after ``position``.
        self.applied: list[tuple[str, str]] = []
        self.snapshot_position: str | None = None  # where the store's snapshot is, if known
        self.folded = 0                          # records the last load folded (after its snapshot)
        self.snapshot_bytes = 0                  # the size of the last snapshot read or written
        self._snapshot_save: asyncio.Task[None] | None = None
        self.generation = 0                      # how many times the log has been folded whole
        self.on_game: Callable[[str], None] = lambda game: None
        self.ready = False
        self.recovering = False
        self._recovered = asyncio.Event()
        self._wake = asyncio.Event()
        self._inflight: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------- startup

    async def start(self) -> None:
        await self.store.open()
        folded = await self._load()
        # Nothing is applied before ``ready``: the engine is exactly the fold up to ``position``.
        blob = None
        if folded > SNAPSHOT_TAIL:
            try:
                blob = self._capture(self.position)
            except Exception as err:  # only a cache: serve without it
                log.warning("snapshot not made", extra={"reason": f"{type(err).__name__}: {err}"})
        self.ready = True
        if blob is not None:
            self._snapshot_save = asyncio.create_task(self._save_snapshot(self.position, blob))

    async def _load(self) -> int:
        """The state is what the log says: the snapshot, if there is a valid one, and the fold
        of every record after it (or of the whole log). Returns how many records it folded."""
        restored = None
        position = START
        try:
            found = await self.store.load_snapshot()
        except Exception as err:  # the log is read next, and says whether the store is down
            log.warning("snapshot not read; folding the whole log",
                        extra={"reason": f"{type(err).__name__}: {err}"})
            found = None
        if found is not None:
            self.snapshot_bytes = len(found[1])
            try:
                with _no_gc(freeze=self.snapshot_bytes > 2**23):
                    restored = snap.restore(found[1], epoch=self.store.epoch,
                                            position=found[0])
                position = found[0]
            except Exception as err:  # SnapshotError, or anything else: it is only a cache
                reason = str(err) if isinstance(err, SnapshotError) else f"{type(err).__name__}: {err}"
                log.warning("snapshot ignored; folding the whole log", extra={"reason": reason})
            found = None  # the blob: decoded or useless
        try:
            last, rows = await self.store.rows_after(position)
        except LookupError as err:
            log.warning("snapshot ignored; folding the whole log", extra={"reason": str(err)})
            restored, position = None, START
            last, rows = await self.store.rows_after(position)
        seqs: dict[str, int]
        keys: dict[tuple[str, str], Known]
        if restored is None:
            engine, seqs, keys = Engine(), {}, {}
        else:
            engine, seqs, logged = restored
            keys = cast(dict[tuple[str, str], Known], logged)
        # Where the store's snapshot is, if it is one this code can use (else: overwrite it).
        self.snapshot_position = position if restored is not None else None
        with _no_gc(freeze=len(rows) > SNAPSHOT_TAIL):
            feed, decode = engine.feed, codec.decode_event
            for game, seq, device, client_id, dg, body in rows:
                e = decode(body)
                feed(e)
                if game is not None and seq is not None:
                    seqs[game] = seq
                keys[(device, client_id)] = (dg, e.id, game, seq, e.at)
        self.engine, self.seqs, self.keys = engine, seqs, keys
        self.position = self.tail = last
        self.applied = []
        self.folded = len(rows)
        self.generation += 1
        self.feeds = {}
        for gid in engine.games:
            self.feeds[gid] = GameFeed(seq=seqs.get(gid, 0), view=engine.view(gid), base=LOADED,
                                       first_seq=seqs.get(gid, 0) + 1, complete=False)
        log.info("loaded", extra={"records": len(rows), "games": len(engine.games),
                                  "snapshot": position if position != START else None})
        return len(rows)

    # ----------------------------------------------------------- snapshots

    def _capture(self, position: str) -> bytearray | None:
        """The snapshot of the state, which must be the fold up to ``position``; None if a key's
        ack is not known yet. Blocks the loop while it encodes (about 1 s per 1,000,000 events)."""
        keys: dict[tuple[str, str], Logged] = {}
        if set(map(len, self.keys.values())) <= {5}:  # all folded from the log (after a load)
            keys = cast(dict[tuple[str, str], Logged], self.keys)
        else:
            for key, known in self.keys.items():
                if len(known) == 5:
                    keys[key] = known
                    continue
                dg, prior = known
                if isinstance(prior, asyncio.Future):
                    if not prior.done() or prior.cancelled() or prior.exception() is not None:
                        return None
                    prior = prior.result()
                keys[key] = (dg, prior.log_id, prior.game, prior.seq, prior.at)
        # The size of the last one, or about what a record takes: the buffer is allocated once.
        hint = int(self.snapshot_bytes * 1.05) if self.snapshot_bytes else 240 * len(keys) + 2**20
        with _no_gc():
            blob = snap.capture(self.engine, self.seqs, keys, epoch=self.store.epoch, position=position,
                                size_hint=hint)
        self.snapshot_bytes = len(blob)
        return blob

    async def _save_snapshot(self, position: str, blob: bytes | bytearray) -> None:
        try:
            await self.store.save_snapshot(position, blob)
        except Exception as err:  # NotStored, or anything else: only a cache is lost
            log.warning("snapshot not written", extra={"reason": f"{type(err).__name__}: {err}"})
            return
        self.snapshot_position = position
        log.info("snapshot written", extra={"position": position, "bytes": len(blob)})

    async def _snapshot_at_close(self) -> None:
        """At a clean shutdown: a snapshot of the state, if it is the fold of a log prefix
        (every event applied since the load is the log's next record, in the log's order)."""
        if not self.ready or self.recovering:
            return
        last, rows = await self.store.rows_after(self.position)
        if [(r[2], r[3]) for r in rows] != self.applied:
            log.info("no snapshot at shutdown: the state is not the fold of a log prefix")
            return
        if last == self.snapshot_position:
            return  # the one the store has
        blob = self._capture(last)
        if blob is not None:
            await self._save_snapshot(last, blob)

    async def _publish_missed(self) -> None:
        """After a reload, viewers get the deltas of events this node had not yet
        shown them (written by another node meanwhile), so they see no gap."""
        for gid, feed in self.feeds.items():
            shown = self.published.get(gid)
            if shown is None or shown >= feed.seq:
                continue
            await self.ensure_history(gid, shown)
            for frames in self.since(gid, shown) or []:
                self.on_publish(gid, frames)
            self.published[gid] = feed.seq

    # -------------------------------------------------------------- submit

    async def submit(self, *, device: str, official: str, client_id: str, payload_digest: bytes,
                     event: Any) -> pr.Ack:
        """Apply, commit and acknowledge one event (see the module docstring).
        With several nodes, another node may take the event's ``seq`` first: this
        node then folds the log again and judges the event anew, a few times."""
        for _ in range(8):
            try:
                return await self._submit_once(device=device, official=official, client_id=client_id,
                                               payload_digest=payload_digest, event=event)
            except SeqTaken:
                await self._recover()
        raise NotStored("the game is busy on other nodes; send the event again")

    async def _submit_once(self, *, device: str, official: str, client_id: str,
                           payload_digest: bytes, event: Any) -> pr.Ack:
        if not self.ready or self.recovering:
            raise NotStored("the service is loading its log; send the event again")
        key = (device, client_id)
        known = self.keys.get(key)
        if known is not None:
            if known[0] != payload_digest:
                raise Conflict("id_conflict", f"{client_id!r} was already used by this device for "
                                              "a different event; the first one stands")
            if len(known) == 5:  # folded from the log: its ack is made now, when a retry asks
                return pr.Ack(id=client_id, log_id=known[1], game=known[2], seq=known[3], at=known[4],
                              duplicate=True, notices=[])
            prior = known[1]
            ack = prior if isinstance(prior, pr.Ack) else await asyncio.shield(prior)
            return msgspec.structs.replace(ack, duplicate=True, notices=[])

        notices = self.engine.apply(event)  # raises Refused: nothing applied, nothing stored
        game: str | None = getattr(event, "game", None)
        if isinstance(event, ev.Void):
            game = self.engine.owner.get(event.id)
        seq = None
        delta = view = None
        rendered = [render(n) for n in notices]
        if game is not None:
            seq = self.seqs.get(game, 0) + 1
            self.seqs[game] = seq
            view = self.engine.view(game)
            feed = self.feeds.get(game)
            if feed is None:  # a game.setup
                feed = self.feeds[game] = GameFeed()
            delta = self._delta(game, seq, rendered, view, feed)
        record = Record(game=game, seq=seq, device=device, client_id=client_id, official=official,
                        digest=payload_digest, received_at=now_ms(), body=codec.encode_event(event))
        ack = pr.Ack(id=client_id, log_id=event.id, game=game, seq=seq, at=event.at,
                     duplicate=False, notices=rendered)
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[pr.Ack] = loop.create_future()      # for retries of this event
        waiter: asyncio.Future[pr.Ack] = loop.create_future()   # for this submitter
        self.keys[key] = (payload_digest, fut)
        self.applied.append(key)
        self._wake.set()
        # The commit runs as its own task: if the device goes away mid-commit,
        # the event still lands (or fails) whole, and a retry finds its ack.
        task = asyncio.create_task(self._commit(
            Pending(record, ack, delta, view, self.generation), key, fut, waiter))
        self._inflight.add(task)
        task.add_done_callback(self._inflight.discard)
        return await waiter

    async def _commit(self, p: Pending, key: tuple[str, str], fut: asyncio.Future[pr.Ack],
                      waiter: asyncio.Future[pr.Ack]) -> None:
        def ok() -> None:
            fut.set_result(p.ack)
            if not waiter.done():
                waiter.set_result(p.ack)

        def failed(err: BaseException) -> None:
            fut.set_exception(err)
            fut.exception()  # retrieved: nobody may be waiting
            if not waiter.done():
                waiter.set_exception(err)
                waiter.exception()

        try:
            await self.store.append(p.record)
        except DuplicateKey as dup:
            mine = p.record
            same = dup.existing
            if (same.digest, same.game, same.seq, same.body) != (mine.digest, mine.game, mine.seq, mine.body):
                self.keys.pop(key, None)
                failed(NotStored(f"{mine.client_id} was stored by another node; send it again"))
                await self._recover()
                return
            # Another node wrote exactly this record (a deadline tick both timers saw).
        except NotStored as err:
            self.keys.pop(key, None)
            failed(err)
            await self._recover()
            return
        if p.generation != self.generation:
            # The log was folded again while this commit was in flight: that fold
            # (or the follower, reading on from it) shows the event; only ack it.
            ok()
            return
        self.keys[key] = (p.record.digest, p.ack)
        ok()
        # The device's ack goes out first (its task runs next), then the fan-out;
        # call_soon keeps commits' publications in commit order.
        asyncio.get_running_loop().call_soon(self._committed, p)

    async def close(self) -> None:
        """Let every commit in flight finish, write a snapshot, then close the store."""
        if self._inflight:
            await asyncio.gather(*self._inflight, return_exceptions=True)
        if self._snapshot_save is not None:
            await self._snapshot_save
        try:
            await self._snapshot_at_close()
        except Exception as err:  # only a cache: the next start folds more of the log
            log.warning("no snapshot at shutdown", extra={"reason": f"{type(err).__name__}: {err}"})
        await self.store.close()

    def _delta(self, game: str, seq: int, rendered: list[Any], view: GameView,
               feed: GameFeed) -> Frames:
        # Against the last *applied* view: events in flight together chain their patches.
        after = msgspec.to_builtins(view)
        before = msgspec.to_builtins(feed.view) if feed.base is LOADED else feed.base
        patch = [pr.Patch(p, v) for p, _, v in _diff(before, after)]
        feed.base = after
        return Frames.of(pr.Delta(game=game, seq=seq, notices=rendered, patch=patch))

    def _committed(self, p: Pending) -> None:
        """Show a committed event, strictly in seq order. This node's own commits and
        the follower's records of other nodes' may complete out of order (the follower
        can read seq N+1 before the task that committed N here resumes): a delta that
        comes early is held until the ones before it are shown."""
        if p.generation != self.generation:
            return  # folded again meanwhile: that fold shows the event
        game = p.record.game
        if game is None or p.delta is None or p.record.seq is None:
            return
        feed = self.feeds[game]
        if p.record.seq <= feed.seq:
            return
        if p.record.seq > feed.seq + 1:
            feed.held[p.record.seq] = p
            return
        while True:
            seq = feed.seq = p.record.seq
            feed.view, feed.snapshot = p.view, None
            assert p.delta is not None
            feed.deltas.append(p.delta)
            feed.recent.extend(p.delta.msg.notices)
            if self.published.get(game, 0) < seq:
                self.published[game] = seq
                self.on_publish(game, p.delta)
            if seq == 1:
                self.on_game(game)
            nxt = feed.held.pop(seq + 1, None)
            if nxt is None:
                return
            p = nxt

    async def _recover(self) -> None:
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
        try:
            log.warning("commit failed; reloading the log")
            while True:
                try:
                    await self._load()
                    await self.store.reset_after_failure()
                    await self._publish_missed()
                    break
                except Exception:  # the store is still down: keep trying, acking nothing
                    log.exception("reload failed; retrying")
                    await asyncio.sleep(0.5)
        finally:
            self.recovering = False
            self._recovered.set()

    # -------------------------------------------------------------- viewers

    def snapshot(self, game: str, *, reset: bool = False, reason: str | None = None) -> Frames:
        feed = self.feeds[game]
        if not reset and feed.snapshot is not None:
            return feed.snapshot
        assert feed.view is not None
        frames = Frames.of(pr.Snapshot(game=game, seq=feed.seq, epoch=self.store.epoch,
                                       view=feed.view, reset=reset, reason=reason,
                                       recent=list(feed.recent)))
        if not reset:
            feed.snapshot = frames
        return frames

    async def ensure_history(self, game: str, seq: int) -> None:
        """Make the deltas after ``seq`` available, folding the game's log again
        if this process hasn't seen them (after a restart)."""
        feed = self.feeds[game]
        if seq < feed.seq and seq + 1 < feed.first_seq:
            await self._rebuild_history(game)

    def since(self, game: str, seq: int) -> list[Frames] | None:
        """The deltas after ``seq``, or None if they can't be served exactly."""
        feed = self.feeds[game]
        if seq > feed.seq or (seq + 1 < feed.first_seq and seq != feed.seq):
            return None
        return feed.deltas[seq + 1 - feed.first_seq:] if seq < feed.seq else []

    async def _rebuild_history(self, game: str) -> None:
        """Deltas are a function of the log: fold the game again to recover them."""
        feed = self.feeds[game]
        held_from = feed.first_seq
        records = [r for r in await self.store.game_records(game)
                   if r.seq is not None and r.seq < held_from]
        if feed.first_seq != held_from or feed.complete:
            return  # rebuilt meanwhile
        fork = self.engine.fork_game(game)
        deltas: list[Frames] = []
        before = GameFeed()
        for r in records:
            e = codec.decode_event(r.body)
            if isinstance(e, ev.GameSetup):
                out: list[Any] = list(fork.games[game].setup_notices)
            else:
                out = fork.feed(e)
            view = fork.view(game)
            delta = self._delta(game, r.seq or 0, [render(n) for n in out], view, before)
            deltas.append(delta)
        feed.deltas = deltas + feed.deltas
        feed.first_seq = 1
        feed.complete = True

    # ------------------------------------------------------------ followers

    async def run_follower(self) -> None:
        """With several nodes: fold, in log order, what other nodes write, and
        show it to this node's viewers with the same sequence numbers."""
        store = self.store
        assert isinstance(store, Followable)
        while True:
            if not self.ready or self.recovering:
                await asyncio.sleep(0.05)
                continue
            try:
                entries = await store.read_after(self.tail, block_ms=1000)
            except NotStored:
                await asyncio.sleep(0.5)
                continue
            for entry_id, r in entries:
                if self.recovering:
                    break
                if not self._fold_remote(r):
                    await self._recover()
                    break
                self.tail = entry_id

    def _fold_remote(self, r: Record) -> bool:
        """Fold one record another node wrote. False: this node has diverged (it
        applied something else at that seq) and must reload."""
        key = (r.device, r.client_id)
        if key in self.keys:
            return True  # this node's own, or already folded
        if r.game is not None and r.seq is not None and r.seq != self.seqs.get(r.game, 0) + 1:
            return False
        e = codec.decode_event(r.body)
        try:
            notices = self.engine.apply(e)
        except Refused:
            return False
        self.keys[key] = (r.digest, e.id, r.game, r.seq, e.at)
        self.applied.append(key)
        self._wake.set()
        if r.game is None or r.seq is None:
            return True
        self.seqs[r.game] = r.seq
        view = self.engine.view(r.game)
        feed = self.feeds.setdefault(r.game, GameFeed())
        delta = self._delta(r.game, r.seq, [render(n) for n in notices], view, feed)
        ack = pr.Ack(id=r.client_id, log_id=e.id, game=r.game, seq=r.seq, at=e.at, duplicate=True)
        self._committed(Pending(r, ack, delta, view, self.generation))
        return True

    # --------------------------------------------------------------- timer

    async def run_timer(self, clock: Callable[[], int] = now_ms) -> None:
        """Sleep until the engine's next deadline, then log a ``tick`` for it."""
        while True:
            self._wake.clear()
            nxt = self.engine.next_deadline() if self.ready and not self.recovering else None
            if nxt is None:
                await self._wake.wait()
                continue
            at, game = nxt
            delay = (at - clock()) / 1000
            if delay > 0:
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout=delay)
                    continue  # something changed: look again
                except TimeoutError:
                    pass
            if self.engine.next_deadline() != nxt:
                continue
            tick = ev.Tick(id=f"{SYSTEM}:tick:{game}:{at}", at=at, game=game)
            try:
                await self.submit(device=SYSTEM, official="", client_id=f"tick:{game}:{at}",
                                  payload_digest=digest(codec.encode_event(tick)), event=tick)
            except (NotStored, Refused, Conflict):
                log.warning("tick not stored; will retry", extra={"game": game, "at": at})
                await asyncio.sleep(0.2)


@contextlib.contextmanager
def _no_gc(*, freeze: bool = False) -> Iterator[None]:
    """A load makes millions of objects and frees few: the cycle collector would only slow it.
    With ``freeze`` (a big load), what exists is then moved out of its sight (``gc.freeze``):
    else it would traverse the state at its next collections, and at every full one while the
    service runs. Reference counting still frees the state when a reload replaces it."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if collecting:
            gc.enable()


def _diff(before: Any, after: Any) -> list[tuple[str, Any, Any]]:
    if before is None:
        return [("", None, after)]  # the whole view: a game just set up
    return diff_builtins(before, after)
