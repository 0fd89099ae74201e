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

Time: the shell's only use of the wall clock is to stamp received events and
to sleep until ``engine.next_deadline()``, when it submits a ``tick`` event so
that the deadline's notices are logged and sequenced like everything else.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import struct
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from . import protocol as pr
from .errors import Conflict, NotStored, Refused
from .rules import codec
from .rules import events as ev
from .rules.engine import Engine
from .rules.game import Settings
from .rules.text import render
from .rules.view import GameView, diff_builtins
from .store import DuplicateKey, Followable, Record, SeqTaken, Store

log = logging.getLogger("arena_stream.hub")

SYSTEM = "system"  # the device name of events the service writes itself (ticks)
RECENT = 12        # notices a snapshot repeats for a display that joins late


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
    view_builtins: Any = None      # the committed view, as builtins
    base: Any = None               # the view after the last *applied* event: the next patch's base
    deltas: list[Frames] = field(default_factory=list)   # deltas[i] has seq i + 1 ...
    first_seq: int = 1                                    # ... offset by the first one held
    complete: bool = True                                 # False after a restart until rebuilt
    snapshot: Frames | None = None
    recent: deque[Any] = field(default_factory=lambda: deque(maxlen=RECENT))


@dataclass(slots=True)
class Pending:
    record: Record
    ack: pr.Ack
    delta: Frames | None
    view: GameView | None
    view_builtins: Any
    generation: int = 0            # the fold it was computed on (see Hub._load)


class Hub:
    def __init__(self, store: Store, *, settings: Settings | None = None,
                 on_publish: Callable[[str, Frames], None] | None = None) -> None:
        self.store = store
        self.settings = settings or Settings()
        self.engine = Engine(self.settings)
        self.seqs: dict[str, int] = {}
        self.feeds: dict[str, GameFeed] = {}
        # (device, client_id) -> (digest, ack or the future of the first copy's ack)
        self.keys: dict[tuple[str, str], tuple[bytes, pr.Ack | asyncio.Future[pr.Ack]]] = {}
        self.on_publish = on_publish or (lambda game, frames: None)
        self.published: dict[str, int] = {}      # the last seq shown to this node's viewers
        self.tail = "0-0"                        # the last log entry folded (followable stores)
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
        await self._load()
        self.ready = True

    async def _load(self) -> None:
        """Fold the whole log: the state is what the log says."""
        if isinstance(self.store, Followable):
            entries = await self.store.read_after("0-0")
            records = [r for _, r in entries]
            self.tail = entries[-1][0] if entries else "0-0"
        else:
            records = await self.store.records()
        engine = Engine(self.settings)
        seqs: dict[str, int] = {}
        keys: dict[tuple[str, str], tuple[bytes, pr.Ack | asyncio.Future[pr.Ack]]] = {}
        for r in records:
            e = codec.decode_event(r.body)
            engine.feed(e)
            if r.game is not None and r.seq is not None:
                seqs[r.game] = r.seq
            keys[(r.device, r.client_id)] = (r.digest, pr.Ack(
                id=r.client_id, log_id=e.id, game=r.game, seq=r.seq, at=e.at, duplicate=True))
        self.engine, self.seqs, self.keys = engine, seqs, keys
        self.generation += 1
        self.feeds = {}
        for gid in engine.games:
            view = engine.view(gid)
            builtins = msgspec.to_builtins(view)
            self.feeds[gid] = GameFeed(seq=seqs.get(gid, 0), view=view, view_builtins=builtins,
                                       base=builtins, first_seq=seqs.get(gid, 0) + 1, complete=False)
        log.info("loaded", extra={"records": len(records), "games": len(engine.games)})

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
            prior = known[1]
            ack = prior if isinstance(prior, pr.Ack) else await asyncio.shield(prior)
            return msgspec.structs.replace(ack, duplicate=True, notices=[])

        notices = self.engine.apply(event)  # raises Refused: nothing applied, nothing stored
        game: str | None = getattr(event, "game", None)
        if isinstance(event, ev.Void):
            game = self.engine.owner.get(event.id)
        seq = None
        delta = view = builtins = None
        rendered = [render(n) for n in notices]
        if game is not None:
            seq = self.seqs.get(game, 0) + 1
            self.seqs[game] = seq
            view = self.engine.view(game)
            feed = self.feeds.get(game)
            if feed is None:  # a game.setup
                feed = self.feeds[game] = GameFeed()
            delta, builtins = self._delta(game, seq, rendered, view, feed)
        record = Record(game=game, seq=seq, device=device, client_id=client_id, official=official,
                        digest=payload_digest, received_at=now_ms(), body=codec.encode_event(event))
        ack = pr.Ack(id=client_id, log_id=event.id, game=game, seq=seq, at=event.at,
                     duplicate=False, notices=rendered)
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[pr.Ack] = loop.create_future()      # for retries of this event
        waiter: asyncio.Future[pr.Ack] = loop.create_future()   # for this submitter
        self.keys[key] = (payload_digest, fut)
        self._wake.set()
        # The commit runs as its own task: if the device goes away mid-commit,
        # the event still lands (or fails) whole, and a retry finds its ack.
        task = asyncio.create_task(self._commit(
            Pending(record, ack, delta, view, builtins, self.generation), key, fut, waiter))
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
        """Let every commit in flight finish, then close the store."""
        if self._inflight:
            await asyncio.gather(*self._inflight, return_exceptions=True)
        await self.store.close()

    def _delta(self, game: str, seq: int, rendered: list[Any], view: GameView,
               feed: GameFeed) -> tuple[Frames, Any]:
        # Against the last *applied* view: events in flight together chain their patches.
        after = msgspec.to_builtins(view)
        patch = [pr.Patch(p, v) for p, _, v in _diff(feed.base, after)]
        feed.base = after
        return Frames.of(pr.Delta(game=game, seq=seq, notices=rendered, patch=patch)), after

    def _committed(self, p: Pending) -> None:
        """Publish in seq order: commits complete in submission order."""
        if p.generation != self.generation:
            return  # folded again meanwhile: that fold shows the event
        game = p.record.game
        if game is None or p.delta is None:
            return
        feed = self.feeds[game]
        feed.seq = p.record.seq or feed.seq
        feed.view, feed.view_builtins, feed.snapshot = p.view, p.view_builtins, None
        feed.deltas.append(p.delta)
        feed.recent.extend(p.delta.msg.notices)
        if self.published.get(game, 0) < feed.seq:
            self.published[game] = feed.seq
            self.on_publish(game, p.delta)
        if p.record.seq == 1:
            self.on_game(game)

    async def _recover(self) -> None:
        """A commit failed: reload everything from the log, which is the truth."""
        if self.recovering:
            await self._recovered.wait()
            return
        self.recovering = True
        self._recovered.clear()
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
            delta, _ = self._delta(game, r.seq or 0, [render(n) for n in out], view, before)
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
        ack = pr.Ack(id=r.client_id, log_id=e.id, game=r.game, seq=r.seq, at=e.at, duplicate=True)
        self.keys[key] = (r.digest, ack)
        self._wake.set()
        if r.game is None or r.seq is None:
            return True
        self.seqs[r.game] = r.seq
        view = self.engine.view(r.game)
        feed = self.feeds.setdefault(r.game, GameFeed())
        delta, builtins = self._delta(r.game, r.seq, [render(n) for n in notices], view, feed)
        self._committed(Pending(r, ack, delta, view, builtins, self.generation))
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


def _diff(before: Any, after: Any) -> list[tuple[str, Any, Any]]:
    if before is None:
        return [("", None, after)]  # the whole view: a game just set up
    return diff_builtins(before, after)
