"""The Redis store's writes: one connection of their own, queued appends pipelined.

An append is one Lua script (``APPEND``), so Redis runs it whole or not at all: it
refuses a known dedup key (returning the stored record's id), refuses a ``seq`` that is
not the game's next (optimistic concurrency: two nodes can't both take seq 7), then adds
the record to both streams and the dedup key. It names every key it touches in
``KEYS`` (the rule Redis Cluster routes scripts by). Redis runs a batch in order and,
with ``appendfsync always``, writes and fsyncs its AOF once per batch before it replies.

**Replicas.** When acks wait for replicas, the same pipeline ends with a write that
every later ``WAIT`` covers (``INCR {p}mark``: a batch of known dedup keys writes nothing
of its own) and ``WAITAOF 1 N <ms>`` (Redis 7.2 and later: fsynced on the primary and on
N replicas) or ``WAIT N <ms>`` (before 7.2: received and applied by N replicas; see
docs/reliability.md for what that does and does not assert), with ``INFO replication``
just before them.
N is ``replicas``, or every replica the primary had online at the last count (that
``INFO`` of the batch before, or the check at connect) if more: the Sentinels promote
any replica they judge most up to date, from offsets they may have read a moment
before, so an ack on only some of the online replicas could be lost in a failover.
Fewer than N within the time: the batch's writes are on the primary, not confirmed on
a replica, and are answered ``WriteUnknown``, never acked (a replica gone since the
count costs one batch so).

**Replicas changed only on the Sentinels' word** (``redis_fence.py``). A replica that
left may have been promoted, and the replicas left behind (or one that joined since)
would then confirm writes that the failover drops: a primary only slow for a moment is
failed over, and keeps its other replica until the Sentinels move it. So on a new
connection, and whenever a count finds other replicas than before, nothing is sent
until every Sentinel answers, names this server as the primary and is not failing it
over (``RedisStore.unvouched``); until then the batch is ``NotStored`` and the
connection is dropped, so that the next one asks the Sentinels again where the primary
is. A batch whose own count finds other replicas is confirmed only if the Sentinels,
asked after its ``WAIT``, vouch for the primary and those replicas.

**What a failure means.** Until the batch has been handed to the connection, nothing of
it can have run: a failure then (Redis down, a connection that won't open or answer a
PING, a store on hold) is ``NotStored``. Once it has been sent, each reply that comes
back settles its append; if the connection drops (or times out) before an append's
reply, or the replicas do not confirm, Redis may have run it or not as far as anyone
may rely on: ``WriteUnknown`` (code ``unknown``). Its retry, the same event with the
same id, is settled by the dedup key. After either, the writer takes no further append
until the service has reloaded the log (``reset_after_failure``): nothing is built on a
write whose fate is not known.

Whenever the connection is made again (after a drop, a Redis restart, a failover) and
while the store is on hold, the store checks the server and the history on it before
anything of a batch is sent (``RedisStore.verify``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from redis.exceptions import BusyLoadingError, ResponseError

from ..errors import NotStored, WriteUnknown
from ..tasks import stop
from . import DuplicateKey, Hold, Record, SeqTaken
from .redis_connect import LINK_ERRORS, Outage, exchange, info, link_failed, quietly, replicas
from .redis_fence import Address, Fence, confirmed
from .redis_history import History


class Owner(Protocol):
    """What the writer uses of its store (``RedisStore``)."""

    prefix: str
    max_batch: int
    replicas: int
    wait_ms: int
    unsafe: bool
    outage: Outage
    replica_outage: Outage
    history: History
    encode: Callable[[Record], bytes]
    on_commit: Callable[[float], None] | None

    @property
    def hold(self) -> Hold | None: ...

    def talking(self) -> AbstractContextManager[None]: ...

    async def verify(self, conn: Any) -> None: ...

    @property
    def fence(self) -> Fence: ...

    async def unvouched(self, address: Address) -> str | None: ...

    async def record_at(self, entry_id: str) -> Record: ...

log = logging.getLogger("arena_stream.store")

#: KEYS: 1 the dedup hash, 2 the seq hash, 3 the log stream, 4 the game's stream (a game's
#: record only). ARGV: 1 the dedup key, 2 the game ('' for none), 3 its seq, 4 the record.
APPEND = """
local known = redis.call('HGET', KEYS[1], ARGV[1])
if known then return {'dup', known} end
local game = ARGV[2]
if game ~= '' then
  local cur = tonumber(redis.call('HGET', KEYS[2], game) or '0')
  if cur + 1 ~= tonumber(ARGV[3]) then return {'seq', tostring(cur)} end
  redis.call('HSET', KEYS[2], game, ARGV[3])
end
local id = redis.call('XADD', KEYS[3], '*', 'r', ARGV[4])
if game ~= '' then redis.call('XADD', KEYS[4], id, 'r', ARGV[4]) end
redis.call('HSET', KEYS[1], ARGV[1], id)
return {'ok', id}
"""

Item = tuple[Record | None, "asyncio.Future[str]"]
Batch = list[tuple[Record, "asyncio.Future[str]"]]


class Writer:
    def __init__(self, store: Owner) -> None:
        self.store = store
        self.conn: Any = None   # a redis.asyncio Connection of the store's pool, the writer's alone
        self.queue: asyncio.Queue[Item] = asyncio.Queue()
        # Appends waiting for a later batch: a game's next append is sent only once the one
        # before it is answered, so that none is ever built on one that was refused.
        self.held: deque[Item] = deque()
        # Games with a refused seq since the last reload: their appends fail at once.
        self.stale: set[str] = set()
        # Why a batch failed (not stored, or not known), since the last reload: every
        # append fails at once until then.
        self.failed: str | None = None
        self.waitaof = False    # the primary has WAITAOF (looked up at each connect)
        self.online: list[Address] = []   # the replicas the primary had online at the last count
        self.task: asyncio.Task[None] | None = None
        self.commits = 0
        self.committed_records = 0

    def start(self, conn: Any) -> None:
        self.conn = conn
        self.task = asyncio.create_task(self._loop(), name="redis-writer")

    async def stop(self) -> None:
        if self.task is not None:
            await stop([self.task])
            self.task = None
        if self.conn is not None:
            await self.conn.disconnect()
            self.conn = None

    async def append(self, record: Record) -> str:
        if self.task is None:
            raise NotStored("the store is closed")
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        await self.queue.put((record, fut))
        return await fut

    async def reset_after_failure(self) -> None:
        """Once every append queued before now has been answered (those of a game with a
        refused seq, and all of them after a failed batch: refused), take appends again."""
        if self.task is None:
            self.stale.clear()
            self.failed = None
            return
        done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        await self.queue.put((None, done))
        await done

    # ---------------------------------------------------------------- the loop

    async def _loop(self) -> None:
        """One connection, queued appends pipelined in order: one AOF fsync per batch.

        At most one append per game in a batch. The script checks a game's seq, not
        what this node built the event on: if seq N is refused (another node wrote N),
        this node's N+1 was built on its own N and must not land as the next after the
        other node's. So a game's next append waits for the answer to the one before,
        and after a refusal the game's appends fail at once, until the hub has caught the
        game up (``readmit``) or reloaded the log (``reset_after_failure``). After a batch
        that failed (not stored, or not known), every append fails at once until then."""
        held = self.held
        while True:
            if not held:
                held.append(await self.queue.get())
            while not self.queue.empty():
                held.append(self.queue.get_nowait())
            batch: Batch = []
            games: set[str] = set()
            later: list[Item] = []
            while held and len(batch) < self.store.max_batch:
                item = held.popleft()
                record, fut = item
                if record is None:  # reset_after_failure: after everything queued before it
                    if batch or later:
                        held.appendleft(item)
                        break
                    self.stale.clear()
                    self.failed = None
                    if not fut.done():
                        fut.set_result("")
                    continue
                game = record.game or ""
                if self.failed is not None:
                    if not fut.done():
                        fut.set_exception(NotStored(
                            f"not sent: an earlier write failed ({self.failed}); send it again"))
                elif game in self.stale:
                    if not fut.done():
                        fut.set_exception(SeqTaken(-1))
                elif game and game in games:
                    later.append(item)
                else:
                    games.add(game)
                    batch.append((record, fut))
            held.extendleft(reversed(later))
            if not batch:
                continue
            try:
                await self._commit(batch)
            except Exception as err:  # a bug: never leave a waiter hanging, nor claim "not stored"
                self.failed = type(err).__name__
                log.exception("append batch failed")
                _fail(batch, WriteUnknown(f"the write failed ({type(err).__name__}); it may be "
                                          "stored or not: send the same event again with the same id"))

    def command(self, record: Record) -> tuple[Any, ...]:
        p = self.store.prefix
        keys = [p + "dedup", p + "seq", p + "log"] + ([p + "game:" + record.game] if record.game else [])
        return ("EVAL", APPEND, len(keys), *keys, _key(record.device, record.client_id),
                record.game or "", record.seq or 0, self.store.encode(record))

    @property
    def wanted(self) -> int:
        """How many replicas must confirm a write (the module docstring): 0 when acks wait for
        none; else ``replicas``, or every replica the primary had online at the last count."""
        n = self.store.replicas
        return 0 if n <= 0 else max(n, self.store.fence.floor)

    @property
    def address(self) -> Address | None:
        conn = self.conn
        return (str(conn.host), int(conn.port)) if conn is not None and conn.is_connected else None

    def count(self, replication: Any) -> None:
        """The primary's ``INFO replication`` on the writer's connection: its replicas online now."""
        self.online = replicas(info(replication))
        if (address := self.address) is not None:
            self.store.fence.counted(address, self.online)

    def confirm_commands(self, n: int) -> list[tuple[Any, ...]]:
        """What makes Redis answer only once ``n`` replicas (``wanted``) have what came before
        (none when ``n`` is 0): a write of its own, then WAITAOF or WAIT."""
        ms = self.store.wait_ms
        if n <= 0:
            return []
        wait = ("WAITAOF", 0 if self.store.unsafe else 1, n, ms) if self.waitaof else ("WAIT", n, ms)
        return [("INCR", self.store.prefix + "mark"), wait]

    async def _ready(self) -> None:
        """The writer's connection, open and answering (a PING when it has been idle a
        while), and the store's checks passed when it is new or the store holds, before
        anything of a batch is sent on it."""
        conn = self.conn
        if conn.is_connected:
            with quietly():
                if await conn.can_read():  # the server closed it (a restart), or stray bytes
                    await conn.disconnect()
        fresh = not conn.is_connected
        await conn.connect()
        await conn.check_health()
        if fresh or self.store.hold is not None:
            await self.store.verify(conn)
        address = self.address
        if self.store.replicas > 0 and address is not None and not self.store.fence.vouched(address):
            self.count((await exchange(conn, [("INFO", "replication")]))[0])  # counted, then vouched
            reason = await self.store.fence.after(address, self.online, self.store.unvouched)
            if reason is not None:
                await conn.disconnect()  # the next connection asks the Sentinels again
                raise NotStored(f"not sent: {reason}; a failover may be under way: send the event again")

    async def _commit(self, batch: Batch) -> None:
        conn = self.conn
        try:
            await self._ready()
        except NotStored as err:  # the store holds (its history, or Redis's settings): nothing sent
            self.failed = "not stored"
            _fail(batch, NotStored(err.detail))
            return
        except (*LINK_ERRORS, asyncio.CancelledError) as err:  # nothing of it was sent
            if not link_failed(err):
                raise
            self.failed = "not stored"
            _fail(batch, NotStored(f"Redis did not take the write ({type(err).__name__}); "
                                   "nothing was stored"))
            if isinstance(err, asyncio.CancelledError):
                raise
            self.store.outage.failed(err)
            return
        n = self.wanted
        confirm = self.confirm_commands(n)
        count = [("INFO", "replication")] if confirm else []
        stored: list[tuple[Record, asyncio.Future[str], str]] = []
        dups: list[tuple[Record, asyncio.Future[str], str]] = []
        sent = time.perf_counter()
        try:
            await conn.send_packed_command(
                conn.pack_commands([*(self.command(r) for r, _ in batch), *count, *confirm]),
                check_health=False)
            for record, fut in batch:
                try:
                    reply = await conn.read_response()
                except ResponseError as err:  # Redis answered that it did not run the script
                    reply = err
                except BusyLoadingError as err:  # answered (it is loading its AOF): not run; and
                    _fail([(record, fut)], NotStored(f"Redis did not take the write: {err}"))
                    raise                        # redis-py has dropped the connection
                if isinstance(reply, ResponseError):
                    self.failed = "not stored"
                    _fail([(record, fut)], NotStored(f"Redis refused the write: {reply}"))
                else:
                    self._settle(record, fut, reply, stored, dups)
            if count:  # read before the confirmation: nothing is read after a batch is confirmed
                self.count(await conn.read_response())
            confirmed = await self._confirmed(conn, confirm, max(n, len(self.online)))
            # Other replicas than the fence counted on (one gone, or new): confirmed only if the
            # Sentinels vouch now, after the confirmation, for the primary and those replicas.
            if confirm and confirmed and (address := self.address) is not None:
                confirmed = await self.store.fence.after(address, self.online, self.store.unvouched) is None
            took = time.perf_counter() - sent
        except (*LINK_ERRORS, asyncio.CancelledError) as err:
            if not link_failed(err):
                raise
            # Sent, and the connection is gone: what was not answered may have run or not (and
            # what was answered, when acks wait for replicas, was not confirmed).
            await conn.disconnect(nowait=True)
            self.failed = "not known"
            if not confirm:
                self._acked(stored)
            _fail(batch, WriteUnknown(
                f"the connection to Redis was lost before it answered ({type(err).__name__}): the "
                "event may be stored or not; send the same event again with the same id"))
            if isinstance(err, asyncio.CancelledError):
                raise
            self.store.outage.failed(err)
            return
        self.store.outage.ok()
        if not confirmed:
            self.failed = "not confirmed"
            ms = self.store.wait_ms
            self.store.replica_outage.failed(RuntimeError(
                f"fewer than {n} replica(s) confirmed a write within {ms} ms"))
            _fail(batch, WriteUnknown(
                f"stored on the Redis primary, not confirmed on {n} replica(s) within {ms} ms: it "
                "may be kept or lost; send the same event again with the same id"))
            return
        if confirm:
            self.store.replica_outage.ok()
        self.commits += 1
        if self.store.on_commit is not None:
            self.store.on_commit(took)
        self._acked(stored)
        for record, fut, entry_id in dups:
            try:
                with self.store.talking():
                    existing = await self.store.record_at(entry_id)
            except NotStored as err:
                if record.game:
                    self.stale.add(record.game)
                fut.set_exception(err)
                continue
            if record.game and (existing.game, existing.seq, existing.body) != (
                    record.game, record.seq, record.body):
                # Another node stored this event at another place in the game: what this
                # node built after it is built on a record the log does not have.
                self.stale.add(record.game)
            fut.set_exception(DuplicateKey(existing))

    def _acked(self, stored: list[tuple[Record, asyncio.Future[str], str]]) -> None:
        for record, fut, entry_id in stored:
            self.committed_records += 1
            self.store.history.saw(entry_id, _key(record.device, record.client_id).encode())
            fut.set_result(entry_id)

    async def _confirmed(self, conn: Any, confirm: list[tuple[Any, ...]], n: int) -> bool:
        """The replies to ``confirm_commands``: whether ``n`` replicas confirmed (True if none asked)."""
        if not confirm:
            return True
        replies = []
        for _ in confirm:
            try:
                replies.append(await conn.read_response())
            except ResponseError as err:  # WAIT refused (a replica was asked): not confirmed
                replies.append(err)
        return confirmed(replies[-1], n)

    def _settle(self, record: Record, fut: asyncio.Future[str], reply: Any,
                stored: list[tuple[Record, asyncio.Future[str], str]],
                dups: list[tuple[Record, asyncio.Future[str], str]]) -> None:
        """One script's answer: stored (acked once the replicas confirm), a seq another node
        took, or a known dedup key (its record is read once the batch is confirmed)."""
        kind, value = reply[0].decode(), reply[1].decode()
        if fut.done():
            return
        if kind == "ok":
            stored.append((record, fut, value))
        elif kind == "seq":
            if record.game:
                self.stale.add(record.game)
            fut.set_exception(SeqTaken(int(value)))
        else:
            dups.append((record, fut, value))


def _fail(items: Batch, err: NotStored) -> None:
    for _, fut in items:
        if not fut.done():
            fut.set_exception(err)


def _key(device: str, client_id: str) -> str:
    return f"{device}\x00{client_id}"
