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
seq 7), then adds the record to both streams and the dedup key. Appends go
out through one writer connection, queued ones pipelined together: Redis runs
them in order and, with ``appendfsync always``, writes and fsyncs its AOF once
per batch before it replies. So a reply means durable, as with SQLite.

A log position is an entry id of ``{p}log``. The snapshot is one key, written
with one HSET (never needed for an ack: losing it costs a full fold); Redis
takes no string longer than 512 MiB, so a bigger one is not written.

``open`` refuses a Redis that could lose an acked event (AOF off, or fsync
less often than always) unless the operator passes ``unsafe=True``.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections import deque
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError

from ..errors import NotStored, StartupRefused
from . import START, DuplicateKey, FoldRow, Record, SeqTaken, Store

APPEND = """
local prefix = ARGV[1]
local key = ARGV[2]
local game = ARGV[3]
local seq = tonumber(ARGV[4])
local known = redis.call('HGET', prefix .. 'dedup', key)
if known then return {'dup', known} end
if game ~= '' then
  local cur = tonumber(redis.call('HGET', prefix .. 'seq', game) or '0')
  if cur + 1 ~= seq then return {'seq', tostring(cur)} end
  redis.call('HSET', prefix .. 'seq', game, seq)
end
local id = redis.call('XADD', prefix .. 'log', '*', 'r', ARGV[5])
if game ~= '' then redis.call('XADD', prefix .. 'game:' .. game, id, 'r', ARGV[5]) end
redis.call('HSET', prefix .. 'dedup', key, id)
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
        self._queue: asyncio.Queue[tuple[Record | None, asyncio.Future[str]]] = asyncio.Queue()
        # Appends waiting for a later batch: a game's next append is sent only once the one
        # before it is answered, so that none is ever built on one that was refused.
        self._held: deque[tuple[Record | None, asyncio.Future[str]]] = deque()
        # Games with a refused seq since the last reload: their appends fail at once.
        self._stale: set[str] = set()
        self._writer: asyncio.Task[None] | None = None
        self._append: Any = None
        self.commits = 0
        self.committed_records = 0

    # ------------------------------------------------------------- lifecycle

    async def open(self) -> None:
        self.redis = aioredis.from_url(self.url, socket_timeout=5, socket_connect_timeout=5,
                                       health_check_interval=10)
        try:
            await self.check_durability()
            self._append = self.redis.register_script(APPEND)
            await self.redis.set(self.prefix + "epoch", secrets.token_hex(6), nx=True)
            self.epoch = (await self.redis.get(self.prefix + "epoch")).decode()
        except RedisError as err:
            raise NotStored(f"Redis at {self.url} is not reachable: {err}") from None
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
        if self.redis is not None:
            await self.redis.aclose()
            self.redis = None

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
        and after a refusal the game's appends fail at once, until the hub has reloaded
        the log (``reset_after_failure``)."""
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
                    if not fut.done():
                        fut.set_result("")
                    continue
                game = record.game or ""
                if game in self._stale:
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
            except Exception as err:  # never leave a waiter hanging: the batch is not stored
                for _, fut in batch:
                    if not fut.done():
                        fut.set_exception(NotStored(f"the write failed ({type(err).__name__})"))

    async def _commit(self, batch: list[tuple[Record, asyncio.Future[str]]]) -> None:
        assert self.redis is not None
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                # A registered script reloads itself into a Redis that lost its
                # script cache (a restart): the pipeline checks before it runs.
                for record, _ in batch:
                    await self._append(keys=[], client=pipe, args=[
                        self.prefix, _key(record.device, record.client_id), record.game or "",
                        record.seq or 0, _enc.encode(record)])
                replies = await pipe.execute(raise_on_error=False)
        except (RedisError, OSError) as err:
            failure = NotStored(f"Redis did not confirm the write ({type(err).__name__}); "
                                "nothing was acknowledged")
            for _, fut in batch:
                if not fut.done():
                    fut.set_exception(failure)
            return
        self.commits += 1
        for (record, fut), reply in zip(batch, replies, strict=True):
            if fut.done():
                continue
            if isinstance(reply, ResponseError | Exception):
                fut.set_exception(NotStored(f"Redis refused the write: {reply}"))
                continue
            kind, value = reply[0].decode(), reply[1].decode()
            if kind == "ok":
                self.committed_records += 1
                fut.set_result(value)
            elif kind == "seq":
                if record.game:
                    self._stale.add(record.game)
                fut.set_exception(SeqTaken(int(value)))
            else:
                try:
                    existing = await self._record_at(value)
                except RedisError as err:
                    fut.set_exception(NotStored(f"Redis: {err}"))
                    continue
                fut.set_exception(DuplicateKey(existing))

    async def _record_at(self, entry_id: str) -> Record:
        assert self.redis is not None
        rows = await self.redis.xrange(self.prefix + "log", entry_id, entry_id)
        return _dec.decode(rows[0][1][b"r"])

    async def revoke(self, jti: str, at: int, by: str, reason: str) -> None:
        assert self.redis is not None
        try:
            await self.redis.hsetnx(self.prefix + "revoked", jti,
                                    msgspec.json.encode({"at": at, "by": by, "reason": reason}))
        except RedisError as err:
            raise NotStored(f"Redis: {err}") from None

    async def reset_after_failure(self) -> None:
        """The hub has reloaded the log: once every append queued before now has been
        answered (those of a game with a refused seq: refused), take appends again."""
        if self._writer is None:
            self._stale.clear()
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
        try:
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
        except RedisError as err:
            raise NotStored(f"Redis: {err}") from None

    async def rows_after(self, position: str) -> tuple[str, list[FoldRow]]:
        assert self.redis is not None
        after = _entry_id(position)
        out: list[FoldRow] = []
        last = position
        try:
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
        except RedisError as err:
            raise NotStored(f"Redis: {err}") from None

    async def save_snapshot(self, position: str, blob: bytes | bytearray) -> None:
        assert self.redis is not None
        _entry_id(position)
        if len(blob) > MAX_SNAPSHOT:
            raise NotStored(f"the snapshot ({len(blob):,} bytes) is longer than Redis takes")
        try:
            await self.redis.hset(self.prefix + "snapshot",
                                  mapping={"position": position, "blob": memoryview(blob)})
        except RedisError as err:
            raise NotStored(f"Redis: {err}") from None

    async def load_snapshot(self) -> tuple[str, bytes] | None:
        assert self.redis is not None
        try:
            position, blob = await self.redis.hmget(self.prefix + "snapshot", ["position", "blob"])
        except RedisError as err:
            raise NotStored(f"Redis: {err}") from None
        if position is None or blob is None:
            return None
        return position.decode(), blob

    async def game_records(self, game: str, after_seq: int = 0) -> list[Record]:
        assert self.redis is not None
        try:
            rows = await self.redis.xrange(self.prefix + "game:" + game, "-", "+")
        except RedisError as err:
            raise NotStored(f"Redis: {err}") from None
        records = [_dec.decode(f[b"r"]) for _, f in rows]
        return [r for r in records if (r.seq or 0) > after_seq]

    async def revoked(self) -> set[str]:
        assert self.redis is not None
        try:
            return {k.decode() for k in await self.redis.hkeys(self.prefix + "revoked")}
        except RedisError as err:
            raise NotStored(f"Redis: {err}") from None



def _key(device: str, client_id: str) -> str:
    return f"{device}\x00{client_id}"
