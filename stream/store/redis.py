"""The store on Redis (Streams), for several service nodes.

Layout (``prefix`` defaults to ``arena:``):

    {p}log            stream: every record, in the one global order
    {p}game:{game}    stream: the same records of one game (the per-game read path)
    {p}seq            hash: game -> last seq
    {p}dedup          hash: device NUL client_id -> the record's id in {p}log
    {p}revoked        hash: jti -> JSON {at, by, reason}
    {p}epoch          string
    {p}snapshot       hash: position (an id in {p}log), blob: the fold up to there, cached

An append is one Lua script, so Redis runs it whole or not at all: it refuses
a known dedup key (returning the stored record's id), refuses a ``seq`` that
is not the game's next (optimistic concurrency: two nodes can't both take
seq 7), then adds the record to both streams and the dedup key. It names every
key it touches in ``KEYS`` (the rule Redis Cluster routes scripts by). Appends
go out through one writer connection of their own, queued ones pipelined
together: Redis runs them in order and, with ``appendfsync always``, writes and
fsyncs its AOF once per batch before it replies. So a reply means durable, as
with SQLite.

**What a failure means.** Until the batch has been handed to the connection,
nothing of it can have run: a failure then (Redis down, a connection that
won't open or answer a PING) is ``NotStored``. Once it has been sent, each
reply that comes back settles its append; if the connection drops (or times
out) before an append's reply, Redis may have run it or not, and no one can
tell from here: ``WriteUnknown`` (code ``unknown``). Its retry, the same event
with the same id, is settled by the dedup key. After either, the store takes no
further append until the service has reloaded the log (``reset_after_failure``),
as on SQLite: nothing is built on a write whose fate is not known.

Reads retry once on a broken connection (one Redis restarted under the pool).
Redis being unreachable is logged once, then at most every 30 s, with the
reason and no traceback, and once more when it answers again.

A log position is an entry id of ``{p}log``. The snapshot is one key, written
with one HSET (never needed for an ack: losing it costs a full fold); Redis
takes no string longer than 512 MiB, so a bigger one is not written.

``open`` refuses a Redis that could lose an acked event (AOF off, or fsync
less often than always) unless the operator passes ``unsafe=True``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import msgspec
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import BusyLoadingError, RedisError, ResponseError

from ..errors import NotStored, StartupRefused, WriteUnknown
from . import START, DuplicateKey, FoldRow, Record, SeqTaken, Store

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

_enc = msgspec.msgpack.Encoder()
_dec = msgspec.msgpack.Decoder(Record)
MAX_SNAPSHOT = 512 * 2**20  # Redis's proto-max-bulk-len


class _FoldFields(msgspec.Struct):
    """What the fold reads of a record (the others are skipped when decoding)."""

    game: str | None
    seq: int | None
    device: str
    client_id: str
    digest: bytes
    body: bytes


_dec_fold = msgspec.msgpack.Decoder(_FoldFields)


def _entry_id(position: str) -> tuple[int, int]:
    ms, _, n = position.partition("-")
    try:
        return int(ms), int(n or 0)
    except ValueError:
        raise LookupError(f"{position!r} is not a position of this log") from None


class Outage:
    """Redis failing, said the way an operator can use: once when it starts (with the
    reason), then at most every ``every`` seconds while it lasts (with how long and how
    many calls failed), and once when Redis answers again; never a traceback, since an
    outage is expected. ``clock`` is for the tests."""

    def __init__(self, where: str, every: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.where = where
        self.every = every
        self.clock = clock
        self.since: float | None = None   # when the outage began
        self.said = 0.0                   # when it was last logged
        self.failures = 0                 # failed calls since it began

    def failed(self, err: BaseException) -> None:
        now = self.clock()
        self.failures += 1
        reason = f"{type(err).__name__}: {err}"
        if self.since is None:
            self.since = self.said = now
            log.error("Redis unavailable", extra={"store": self.where, "reason": reason})
        elif now - self.said >= self.every:
            self.said = now
            log.error("Redis still unavailable", extra={
                "store": self.where, "reason": reason, "for_s": round(now - self.since),
                "failures": self.failures})

    def ok(self) -> None:
        if self.since is not None:
            log.warning("Redis available again", extra={
                "store": self.where, "after_s": round(self.clock() - self.since, 1),
                "failures": self.failures})
            self.since, self.failures = None, 0


def _redacted(url: str) -> str:
    """The URL without its user and password, for the logs."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


class RedisStore(Store):
    def __init__(self, url: str, *, prefix: str = "arena:", unsafe: bool = False,
                 max_batch: int = 256) -> None:
        self.url = url
        self.prefix = prefix
        self.unsafe = unsafe
        self.max_batch = max_batch
        # redis-py's replies are typed as unions of bytes, str and None for every
        # decode setting; this client never decodes, so replies are handled as bytes.
        self.redis: Any = None
        self._conn: Any = None   # the writer's own connection (redis.asyncio.Connection)
        self._queue: asyncio.Queue[tuple[Record | None, asyncio.Future[str]]] = asyncio.Queue()
        # Appends waiting for a later batch: a game's next append is sent only once the one
        # before it is answered, so that none is ever built on one that was refused.
        self._held: deque[tuple[Record | None, asyncio.Future[str]]] = deque()
        # Games with a refused seq since the last reload: their appends fail at once.
        self._stale: set[str] = set()
        # Why a batch failed (not stored, or not known), since the last reload: every
        # append fails at once until then.
        self._failed: str | None = None
        self._writer: asyncio.Task[None] | None = None
        self.outage = Outage(_redacted(url))
        self.commits = 0
        self.committed_records = 0

    # ------------------------------------------------------------- lifecycle

    async def open(self) -> None:
        # Every command but the writer's is a read or idempotent: one retry on a broken
        # connection (the pool's, after a Redis restart) answers instead of failing.
        self.redis = aioredis.from_url(self.url, socket_timeout=5, socket_connect_timeout=5,
                                       health_check_interval=10, retry=Retry(NoBackoff(), 1))
        try:
            with self._talking():
                await self.check_durability()
                await self.redis.set(self.prefix + "epoch", secrets.token_hex(6), nx=True)
                self.epoch = (await self.redis.get(self.prefix + "epoch")).decode()
        except NotStored as err:
            raise NotStored(f"Redis at {_redacted(self.url)} is not reachable: "
                            f"{err.detail.removeprefix('Redis: ')}") from None
        # Not one of the pool's: the writer alone uses it, and knows what it has sent on it.
        self._conn = self.redis.connection_pool.make_connection()
        self._writer = asyncio.create_task(self._write_loop(), name="redis-writer")

    async def check_durability(self) -> None:
        """Refuse a Redis configured to lose acknowledged writes."""
        assert self.redis is not None
        conf = await self.redis.config_get("append*")
        aof, fsync = conf.get("appendonly"), conf.get("appendfsync")
        if (aof, fsync) != ("yes", "always") and not self.unsafe:
            raise StartupRefused(
                f"refusing to start: Redis has appendonly={aof} appendfsync={fsync}; an acked event "
                "could be lost on a crash. Set 'appendonly yes' and 'appendfsync always' "
                "(deploy/redis.conf), or pass --unsafe-store to run anyway.")

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
            self._writer = None
        if self._conn is not None:
            await self._conn.disconnect()
            self._conn = None
        if self.redis is not None:
            await self.redis.aclose()
            self.redis = None

    @contextlib.contextmanager
    def _talking(self) -> Iterator[None]:
        """Around a call to Redis: a failure is ``NotStored`` (and an outage, logged)."""
        try:
            yield
        except (RedisError, OSError) as err:
            self.outage.failed(err)
            raise NotStored(f"Redis: {err}") from None
        self.outage.ok()

    # ----------------------------------------------------------------- writes

    async def append(self, record: Record) -> None:
        if self._writer is None:
            raise NotStored("the store is closed")
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        await self._queue.put((record, fut))
        await fut

    async def _write_loop(self) -> None:
        """One connection, queued appends pipelined in order: one AOF fsync per batch.

        At most one append per game in a batch. The script checks a game's seq, not
        what this node built the event on: if seq N is refused (another node wrote N),
        this node's N+1 was built on its own N and must not land as the next after the
        other node's. So a game's next append waits for the answer to the one before,
        and after a refusal the game's appends fail at once, until the hub has caught the
        game up (``readmit``) or reloaded the log (``reset_after_failure``). After a batch
        that failed (not stored, or not known), every append fails at once until then."""
        held = self._held
        while True:
            if not held:
                held.append(await self._queue.get())
            while not self._queue.empty():
                held.append(self._queue.get_nowait())
            batch: list[tuple[Record, asyncio.Future[str]]] = []
            games: set[str] = set()
            later: list[tuple[Record | None, asyncio.Future[str]]] = []
            while held and len(batch) < self.max_batch:
                item = held.popleft()
                record, fut = item
                if record is None:  # reset_after_failure: after everything queued before it
                    if batch or later:
                        held.appendleft(item)
                        break
                    self._stale.clear()
                    self._failed = None
                    if not fut.done():
                        fut.set_result("")
                    continue
                game = record.game or ""
                if self._failed is not None:
                    if not fut.done():
                        fut.set_exception(NotStored(
                            f"not sent: an earlier write failed ({self._failed}); send it again"))
                elif game in self._stale:
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
                self._failed = type(err).__name__
                log.exception("append batch failed")
                _fail(batch, WriteUnknown(f"the write failed ({type(err).__name__}); it may be "
                                          "stored or not: send the same event again with the same id"))

    def _command(self, record: Record) -> tuple[Any, ...]:
        p = self.prefix
        keys = [p + "dedup", p + "seq", p + "log"] + ([p + "game:" + record.game] if record.game else [])
        return ("EVAL", APPEND, len(keys), *keys, _key(record.device, record.client_id),
                record.game or "", record.seq or 0, _enc.encode(record))

    async def _ready(self) -> None:
        """The writer's connection, open and answering (a PING when it has been idle a
        while), before anything of a batch is sent on it."""
        conn = self._conn
        if conn.is_connected:
            with contextlib.suppress(RedisError, OSError):
                if await conn.can_read():  # the server closed it (a restart), or stray bytes
                    await conn.disconnect()
        await conn.connect()
        await conn.check_health()

    async def _commit(self, batch: list[tuple[Record, asyncio.Future[str]]]) -> None:
        conn = self._conn
        try:
            await self._ready()
        except (RedisError, OSError, asyncio.CancelledError) as err:  # nothing of it was sent
            self._failed = "not stored"
            _fail(batch, NotStored(f"Redis did not take the write ({type(err).__name__}); "
                                   "nothing was stored"))
            if isinstance(err, asyncio.CancelledError):
                raise
            self.outage.failed(err)
            return
        answered = 0
        dups: list[tuple[Record, asyncio.Future[str], str]] = []
        try:
            await conn.send_packed_command(conn.pack_commands(self._command(r) for r, _ in batch),
                                           check_health=False)
            for record, fut in batch:
                try:
                    reply = await conn.read_response()
                except ResponseError as err:  # Redis answered that it did not run the script
                    reply = err
                except BusyLoadingError as err:  # answered (it is loading its AOF): not run; and
                    answered += 1                # redis-py has dropped the connection
                    _fail([(record, fut)], NotStored(f"Redis did not take the write: {err}"))
                    raise
                answered += 1
                if isinstance(reply, ResponseError):
                    self._failed = "not stored"
                    _fail([(record, fut)], NotStored(f"Redis refused the write: {reply}"))
                else:
                    self._settle(record, fut, reply, dups)
        except (RedisError, OSError, asyncio.CancelledError) as err:
            # Sent, and the connection is gone: what was not answered may have run or not.
            await conn.disconnect(nowait=True)
            self._failed = "not known"
            _fail(batch[answered:], WriteUnknown(
                f"the connection to Redis was lost before it answered ({type(err).__name__}): the "
                "event may be stored or not; send the same event again with the same id"))
            if isinstance(err, asyncio.CancelledError):
                raise
            self.outage.failed(err)
            return
        self.outage.ok()
        self.commits += 1
        for record, fut, entry_id in dups:
            try:
                with self._talking():
                    existing = await self._record_at(entry_id)
            except NotStored as err:
                if record.game:
                    self._stale.add(record.game)
                fut.set_exception(err)
                continue
            if record.game and (existing.game, existing.seq, existing.body) != (
                    record.game, record.seq, record.body):
                # Another node stored this event at another place in the game: what this
                # node built after it is built on a record the log does not have.
                self._stale.add(record.game)
            fut.set_exception(DuplicateKey(existing))

    def _settle(self, record: Record, fut: asyncio.Future[str], reply: Any,
                dups: list[tuple[Record, asyncio.Future[str], str]]) -> None:
        """One script's answer: stored, a seq another node took, or a known dedup key
        (its record is read once the batch is answered)."""
        kind, value = reply[0].decode(), reply[1].decode()
        if fut.done():
            return
        if kind == "ok":
            self.committed_records += 1
            fut.set_result(value)
        elif kind == "seq":
            if record.game:
                self._stale.add(record.game)
            fut.set_exception(SeqTaken(int(value)))
        else:
            dups.append((record, fut, value))

    async def _record_at(self, entry_id: str) -> Record:
        assert self.redis is not None
        rows = await self.redis.xrange(self.prefix + "log", entry_id, entry_id)
        return _dec.decode(rows[0][1][b"r"])

    async def revoke(self, jti: str, at: int, by: str, reason: str) -> None:
        assert self.redis is not None
        with self._talking():
            await self.redis.hsetnx(self.prefix + "revoked", jti,
                                    msgspec.json.encode({"at": at, "by": by, "reason": reason}))

    def readmit(self, game: str) -> None:
        self._stale.discard(game)

    async def reset_after_failure(self) -> None:
        """The hub has reloaded the log: once every append queued before now has been
        answered (those of a game with a refused seq, and all of them after a failed
        batch: refused), take appends again."""
        if self._writer is None:
            self._stale.clear()
            self._failed = None
            return
        done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        await self._queue.put((None, done))
        await done

    # ------------------------------------------------------------------ reads

    async def records(self) -> list[Record]:
        return [r for _, r in await self.read_after("0-0")]

    async def read_after(self, entry_id: str, count: int | None = None,
                         block_ms: int | None = None) -> list[tuple[str, Record]]:
        """(entry id, record) after ``entry_id`` in the global log; with ``block_ms``,
        wait that long for at least one (the tail other nodes follow)."""
        assert self.redis is not None
        out: list[tuple[str, Record]] = []
        with self._talking():
            if block_ms is not None:
                got = await self.redis.xread({self.prefix + "log": entry_id}, count=count or 1000,
                                             block=block_ms)
                for _, entries in got:
                    out.extend((i.decode(), _dec.decode(f[b"r"])) for i, f in entries)
                return out
            start = "(" + entry_id if entry_id != "0-0" else "-"
            while True:
                rows = await self.redis.xrange(self.prefix + "log", start, "+", count=5000)
                out.extend((i.decode(), _dec.decode(f[b"r"])) for i, f in rows)
                if len(rows) < 5000:
                    return out
                start = "(" + rows[-1][0].decode()

    async def rows_after(self, position: str) -> tuple[str, list[FoldRow]]:
        assert self.redis is not None
        after = _entry_id(position)
        out: list[FoldRow] = []
        last = position
        with self._talking():
            newest = await self.redis.xrevrange(self.prefix + "log", "+", "-", count=1)
            if after > (_entry_id(newest[0][0].decode()) if newest else (0, 0)):
                raise LookupError(f"position {position} is beyond the end of the log")
            start = "(" + position if position != START else "-"
            while True:
                rows = await self.redis.xrange(self.prefix + "log", start, "+", count=5000)
                for _, f in rows:
                    r = _dec_fold.decode(f[b"r"])
                    out.append((r.game, r.seq, r.device, r.client_id, r.digest, r.body))
                if rows:
                    last = rows[-1][0].decode()
                if len(rows) < 5000:
                    return last, out
                start = "(" + last

    async def save_snapshot(self, position: str, blob: bytes | bytearray) -> None:
        assert self.redis is not None
        _entry_id(position)
        if len(blob) > MAX_SNAPSHOT:
            raise NotStored(f"the snapshot ({len(blob):,} bytes) is longer than Redis takes")
        with self._talking():
            await self.redis.hset(self.prefix + "snapshot",
                                  mapping={"position": position, "blob": memoryview(blob)})

    async def load_snapshot(self) -> tuple[str, bytes] | None:
        assert self.redis is not None
        with self._talking():
            position, blob = await self.redis.hmget(self.prefix + "snapshot", ["position", "blob"])
        if position is None or blob is None:
            return None
        return position.decode(), blob

    async def game_records(self, game: str, after_seq: int = 0) -> list[Record]:
        assert self.redis is not None
        with self._talking():
            rows = await self.redis.xrange(self.prefix + "game:" + game, "-", "+")
        records = [_dec.decode(f[b"r"]) for _, f in rows]
        return [r for r in records if (r.seq or 0) > after_seq]

    async def revoked(self) -> set[str]:
        assert self.redis is not None
        with self._talking():
            return {k.decode() for k in await self.redis.hkeys(self.prefix + "revoked")}


def _fail(items: list[tuple[Record, asyncio.Future[str]]], err: NotStored) -> None:
    for _, fut in items:
        if not fut.done():
            fut.set_exception(err)


def _key(device: str, client_id: str) -> str:
    return f"{device}\x00{client_id}"
