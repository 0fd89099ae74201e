"""The store on Redis (Streams), for several service nodes.

Layout (``prefix`` defaults to ``arena:``):

    {p}log            stream: every record, in the one global order
    {p}game:{game}    stream: the same records of one game (the per-game read path)
    {p}seq            hash: game -> last seq
    {p}dedup          hash: device NUL client_id -> the record's id in {p}log
    {p}revoked        hash: jti -> JSON {at, by, reason}
    {p}blob:{sha}     hash: type, data: a file the log names by its SHA-256 (a team's logo)
    {p}tokens         list: the tokens issued, as MessagePack {claims, at, by}
    {p}epoch          string
    {p}snapshot       hash: position (an id in {p}log), blob: the fold up to there, cached
    {p}diverged       hash: reason, by, at: a node found the history behind what it served
    {p}accepted       hash: epoch, previous, by, at, reason: the operator's last acceptance
    {p}mark           counter: written with every confirmation, so that WAIT covers what came before

It is reached through a ``redis://`` URL, or through Sentinel
(``redis+sentinel://host:port,host:port/service``, ``redis_connect.py``), whose
connections follow the primary across failovers.

Writes go out through one writer connection of its own, queued appends pipelined
together (``redis_writer.py``): Redis runs them in order and, with ``appendfsync
always``, writes and fsyncs its AOF once per batch before it replies. With
``replicas`` > 0 (the default through Sentinel) an append is acked only once that many
replicas confirm it too, and every replica the primary has online if more (``WAITAOF``,
or ``WAIT`` before Redis 7.2), on a primary the Sentinels vouch for (``redis_fence.py``).
A reply means durable, as with SQLite; a write whose fate is not known is ``WriteUnknown``.

**Checks.** ``open`` refuses a Redis that could lose an acked event (AOF off, or fsync
less often than always; before Redis 7.2 with ``replicas`` > 0, a replica so configured)
unless the operator passes ``unsafe=True``. The same is checked again whenever the
writer connects again, with the epoch and the history (``redis_history.py``); reads that
feed the fold check the history too, and read only what the replicas have confirmed.
What fails holds every write until it is right again (or the operator accepts the
history Redis holds: ``accept``).

Reads retry once on a broken connection (one Redis restarted under the pool).
Redis being unreachable is logged once, then at most every 30 s, with the
reason and no traceback, and once more when it answers again.

A log position is an entry id of ``{p}log``. The snapshot is one key, written
with one HSET (never needed for an ack: losing it costs a full fold); Redis
takes no string longer than 512 MiB, so a bigger one is not written.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import Iterator
from typing import Any

import msgspec
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ResponseError

from ..errors import NotStored, StartupRefused
from . import START, Accepted, FoldRow, Hold, Record, Store, StoreStats, TokenRecord
from . import redis_history as history
from .redis_connect import (
    LINK_ERRORS,
    WAITAOF_SINCE,
    Outage,
    client,
    durability,
    entries,
    exchange,
    info,
    is_sentinel,
    link_failed,
    pairs,
    parse_sentinel_url,
    quietly,
    replica_durability,
    replicas,
    server_options,
    version,
)
from .redis_connect import redacted as _redacted
from .redis_fence import Address, Fence, fenced, unvouched
from .redis_history import CHECKS, Check, History, key_of
from .redis_writer import APPEND, Writer

__all__ = ["APPEND", "MAX_SNAPSHOT", "WRITER_NAME", "Outage", "RedisStore"]

log = logging.getLogger("arena_stream.store")

_enc = msgspec.msgpack.Encoder()
_dec = msgspec.msgpack.Decoder(Record)
_dec_token = msgspec.msgpack.Decoder(TokenRecord)
MAX_SNAPSHOT = 512 * 2**20  # Redis's proto-max-bulk-len
WRITER_NAME = "arena-stream-writer"
PAGE = 5000


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
                 max_batch: int = 256, replicas: int | None = None, wait_ms: int = 1000) -> None:
        self.url = url
        self.prefix = prefix
        self.unsafe = unsafe
        self.max_batch = max_batch
        #: Replicas that must confirm a write before it is acked: 1 through Sentinel, else 0.
        self.replicas = (1 if is_sentinel(url) else 0) if replicas is None else replicas
        self.wait_ms = wait_ms
        # redis-py's replies are typed as unions of bytes, str and None for every
        # decode setting; this client never decodes, so replies are handled as bytes.
        self.redis: Any = None
        self._sentinel: Any = None
        self.encode = _enc.encode
        self.fence = Fence()
        self.writer = Writer(self)
        self.history = History(prefix, _redacted(url))
        self.history.on_replaced = self._replaced
        self.outage = Outage(_redacted(url), what="Redis")
        self.replica_outage = Outage(_redacted(url), what="Redis replicas")
        self.loaded = False   # a fold has read the log (the first may read a history on hold)

    # ------------------------------------------------------------- lifecycle

    @property
    def epoch(self) -> str:
        return self.history.epoch

    @epoch.setter
    def epoch(self, value: str) -> None:
        self.history.epoch = value

    @property
    def hold(self) -> Hold | None:
        return self.history.hold

    def stats(self) -> StoreStats:
        return StoreStats(commits=self.writer.commits, records=self.writer.committed_records)

    def _replaced(self, reason: str) -> None:
        if self.on_replaced is not None:
            self.on_replaced(reason)

    async def open(self) -> None:
        # Every command but the writer's is a read or idempotent: one retry on a broken
        # connection (the pool's, after a Redis restart) answers instead of failing.
        self.redis, self._sentinel = client(
            self.url, socket_timeout=max(5.0, self.wait_ms / 1000 + 2), socket_connect_timeout=5,
            health_check_interval=10, retry=Retry(NoBackoff(), 1))
        try:
            with self.talking():
                problems = await self._server_problems(await self.redis.config_get("append*"),
                                                       await self.redis.info("server"),
                                                       await self.redis.info("replication"))
                if problems and not self.unsafe:
                    raise StartupRefused(f"refusing to start: {'; '.join(problems)}; or pass "
                                         "--unsafe-store to run anyway.")
                await self.redis.set(self.prefix + "epoch", secrets.token_hex(6), nx=True)
                self.history.epoch = (await self.redis.get(self.prefix + "epoch")).decode()
                flagged = pairs(await self.redis.hgetall(self.prefix + "diverged"))
        except NotStored as err:
            raise NotStored(f"Redis at {_redacted(self.url)} is not reachable: "
                            f"{err.detail.removeprefix('Redis: ')}") from None
        if flagged:
            self.history.hold_on("diverged", flagged.get(b"reason", b"").decode())
        # Not one of the pool's: the writer alone uses it, and knows what it has sent on it.
        # (Through Sentinel it asks for the primary's address each time it connects.) Its
        # name tells it apart in CLIENT LIST.
        conn = self.redis.connection_pool.make_connection()
        conn.client_name = WRITER_NAME
        self.writer.start(conn)

    async def close(self) -> None:
        await self.writer.stop()
        if self.redis is not None:
            await self.redis.aclose()
            self.redis = None
        if self._sentinel is not None:
            await self._sentinel.aclose()
            self._sentinel = None

    @contextlib.contextmanager
    def talking(self) -> Iterator[None]:
        """Around a call to Redis: a failure is ``NotStored`` (and an outage, logged)."""
        try:
            yield
        except LINK_ERRORS as err:
            if not link_failed(err):
                raise
            self.outage.failed(err)
            raise NotStored(f"Redis: {err}") from None
        self.outage.ok()

    # ----------------------------------------------------------------- checks

    async def _server_problems(self, conf: Any, server: Any, replication: Any) -> list[str]:
        """Why this Redis could lose an acked write (the primary's settings; before Redis
        7.2, when acks wait for replicas, each online replica's too), or nothing."""
        problems = [p for p in [durability(pairs(conf), "Redis")] if p]
        self.writer.waitaof = version(info(server)) >= WAITAOF_SINCE
        self.writer.count(replication)
        if self.replicas > 0 and not self.writer.waitaof and not self.unsafe:
            online = replicas(info(replication))
            problems += await replica_durability(online, server_options(self.url))
        return problems

    def _unsafe(self, problems: list[str]) -> None:
        if problems and not self.unsafe:
            self.history.hold_on("unsafe", "; ".join(problems))
        else:
            self.history.release("unsafe")

    def _refuse_if_unsafe(self) -> None:
        hold = self.history.holds.get("unsafe")
        if hold is not None:
            raise NotStored(f"the store takes no writes: {hold.reason}")

    async def verify(self, conn: Any) -> None:
        """On the writer's connection, as it connects (and at each attempt while the store
        holds): the server's durability settings, then the history. Raises ``NotStored``
        with the reason if writes must wait."""
        check = self.history.check()
        replies = await exchange(conn, [("CONFIG", "GET", "append*"), ("INFO", "server"),
                                        ("INFO", "replication"), *check.commands])
        self._unsafe(await self._server_problems(*replies[:3]))
        await self._settle(check, replies[3:], lambda cmds: exchange(conn, cmds))
        self._refuse_if_unsafe()

    async def unvouched(self, address: Address) -> str | None:
        """Why the Sentinels don't vouch for ``address`` as the primary; None: they do (or no Sentinel)."""
        if self._sentinel is None:
            return None
        return await unvouched(self._sentinel, parse_sentinel_url(self.url).service, *address)

    async def _settle(self, check: Check, replies: list[Any], run: Any) -> None:
        v = self.history.judge(check, replies)
        if v.flag and "diverged" not in self.history.holds and check.changes == self.history.changes:
            with quietly():  # the flag is for the other nodes
                await run(self.history.flag_commands(v))
        self.history.settle(check, v)

    async def _pipeline(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        pipe = self.redis.pipeline(transaction=False)
        for c in commands:
            pipe.execute_command(*c)
        return list(await pipe.execute(raise_on_error=False))

    async def _fenced(self, commands: list[tuple[Any, ...]], n: int) -> tuple[list[Any], bool]:
        return await fenced(self.redis, self.fence, self.unvouched, commands, n, self.writer.confirm_commands)

    async def _checked(self, reads: list[tuple[Any, ...]], *, confirm: bool = False,
                       strict: bool = True) -> list[Any]:
        """``reads`` after the history's check, in one pipeline on one connection, then (with
        ``confirm``, when acks wait for replicas) the replicas' confirmation of all that came
        before. Raises ``NotStored`` if the history is not whole (unless not ``strict``: the
        first load may read a history on hold) or not confirmed."""
        n = self.writer.wanted
        extra = confirm and n > 0
        check = self.history.check()
        with self.talking():
            if extra:
                replies, held = await self._fenced([*check.commands, *reads], n)
            else:
                replies = await self._pipeline([*check.commands, *reads])
            if "unsafe" in self.history.holds:
                self._unsafe(await self._server_problems(*await self._pipeline(
                    [("CONFIG", "GET", "append*"), ("INFO", "server"), ("INFO", "replication")])))
        try:
            await self._settle(check, replies[:CHECKS], self._pipeline)
            self._refuse_if_unsafe()
        except NotStored:
            if strict:
                raise
        out = replies[CHECKS:CHECKS + len(reads)]
        for reply in out:
            if isinstance(reply, ResponseError):
                raise NotStored(f"Redis refused a read: {reply}")
        if extra:
            if not held:
                self.replica_outage.failed(RuntimeError(
                    f"fewer than {n} replica(s) confirmed within {self.wait_ms} ms"))
                raise NotStored("the log's newest entries are not confirmed on a replica yet")
            self.replica_outage.ok()
        return out

    async def _confirm(self, last: str, strict: bool) -> None:
        """When acks wait for replicas: ``last`` (the newest entry just read) is in the log
        the replicas confirm, so nothing read can be lost in a failover."""
        if self.replicas > 0:
            [found] = await self._checked([("XRANGE", self.prefix + "log", last, last)], confirm=True,
                                          strict=strict)
            if not entries(found):
                raise NotStored("the log changed while it was read; read it again")

    async def accept(self, by: str, reason: str) -> Accepted:
        """Take the history Redis holds as the log (``redis_history.accept``); this node
        adopts its new epoch at once, the others at their next check."""
        if "diverged" not in self.history.holds:
            raise NotStored("the store's history is not in question: nothing to accept")
        with self.talking():
            done = await history.accept(self.redis, self.prefix, previous=self.history.epoch,
                                        by=by, reason=reason)
            n, held = self.writer.wanted, False
            with contextlib.suppress(NotStored):  # not vouched for: not confirmed, as for a WAIT short
                held = n <= 0 or (await self._fenced([], n))[1]
            if not held:
                log.warning("the acceptance is not confirmed on a replica yet",
                            extra={"store": self.history.where, "epoch": done.epoch})
        self.history.adopt(done.epoch)
        log.warning("the operator accepted the history Redis holds", extra={
            "store": self.history.where, "epoch": done.epoch, "previous": done.previous, "by": by,
            "reason": reason, "repaired": repr(done.repaired)})
        self._replaced(reason)
        return done

    # ----------------------------------------------------------------- writes

    async def append(self, record: Record) -> None:
        t = time.perf_counter()
        await self.writer.append(record)
        if self.on_durable is not None:
            self.on_durable(time.perf_counter() - t)

    async def record_at(self, entry_id: str) -> Record:
        assert self.redis is not None
        rows = await self.redis.xrange(self.prefix + "log", entry_id, entry_id)
        return _dec.decode(rows[0][1][b"r"])

    async def revoke(self, jti: str, at: int, by: str, reason: str) -> None:
        assert self.redis is not None
        with self.talking():
            await self.redis.hsetnx(self.prefix + "revoked", jti,
                                    msgspec.json.encode({"at": at, "by": by, "reason": reason}))

    async def _write_confirmed(self, command: tuple[Any, ...]) -> None:
        """One write, answered once the replicas acks wait for have it too (as an append is)."""
        assert self.redis is not None
        n = self.writer.wanted
        with self.talking():
            replies, held = await self._fenced([command], n) if n > 0 else (
                await self._pipeline([command]), True)
        if isinstance(replies[0], Exception):
            raise NotStored(f"Redis refused the write: {replies[0]}")
        if not held:
            raise NotStored(f"fewer than {n} replica(s) confirmed the write within {self.wait_ms} ms")

    async def put_blob(self, digest: str, content_type: str, data: bytes) -> None:
        await self._write_confirmed(("HSET", f"{self.prefix}blob:{digest}", "type", content_type,
                                     "data", data))

    async def get_blob(self, digest: str) -> tuple[str, bytes] | None:
        assert self.redis is not None
        with self.talking():
            kind, data = await self.redis.hmget(f"{self.prefix}blob:{digest}", ["type", "data"])
        return None if kind is None or data is None else (kind.decode(), data)

    async def record_token(self, claims_json: bytes, at: int, by: str) -> None:
        await self._write_confirmed(("RPUSH", self.prefix + "tokens",
                                     _enc.encode(TokenRecord(claims=claims_json, at=at, by=by))))

    async def tokens(self) -> list[TokenRecord]:
        assert self.redis is not None
        with self.talking():
            rows = await self.redis.lrange(self.prefix + "tokens", 0, -1)
        return [_dec_token.decode(r) for r in rows]

    def readmit(self, game: str) -> None:
        self.writer.stale.discard(game)

    async def reset_after_failure(self) -> None:
        """The hub has reloaded the log: once every append queued before now has been
        answered (those of a game with a refused seq, and all of them after a failed
        batch: refused), take appends again."""
        await self.writer.reset_after_failure()

    # ------------------------------------------------------------------ reads

    async def records(self) -> list[Record]:
        assert self.redis is not None
        out: list[Record] = []
        start = "-"
        with self.talking():
            while True:
                rows = await self.redis.xrange(self.prefix + "log", start, "+", count=PAGE)
                out.extend(_dec.decode(f[b"r"]) for _, f in rows)
                if len(rows) < PAGE:
                    return out
                start = "(" + rows[-1][0].decode()

    async def read_after(self, entry_id: str, count: int | None = None,
                         block_ms: int | None = None) -> list[tuple[str, Record]]:
        """Up to ``count`` (entry id, record) after ``entry_id`` in the global log, checked
        and confirmed as the fold needs them; with ``block_ms``, wait that long for at least
        one (the tail other nodes follow)."""
        assert self.redis is not None
        key = self.prefix + "log"
        if block_ms is not None:
            read: tuple[Any, ...] = ("XREAD", "COUNT", count or 1000, "BLOCK", block_ms, "STREAMS", key,
                                     entry_id)
        else:
            read = ("XRANGE", key, "(" + entry_id if entry_id != START else "-", "+", "COUNT", count or PAGE)
        [got] = await self._checked([read])
        rows = (got[0][1] if got else []) if block_ms is not None else got
        out = [(i.decode(), _dec.decode(f[b"r"])) for i, f in rows]
        if out:
            await self._confirm(out[-1][0], strict=True)
            last = out[-1][1]
            self.history.saw(out[-1][0], f"{last.device}\x00{last.client_id}".encode())
        return out

    async def end(self) -> str:
        assert self.redis is not None
        [got] = await self._checked([("XREVRANGE", self.prefix + "log", "+", "-", "COUNT", 1)])
        return got[0][0].decode() if got else START

    async def rows_after(self, position: str) -> tuple[str, list[FoldRow]]:
        assert self.redis is not None
        after = _entry_id(position)
        strict = self.loaded  # the first load may read a history on hold (nothing was served yet)
        epoch = self.history.epoch
        key = self.prefix + "log"
        start = "(" + position if position != START else "-"
        newest, rows = await self._checked([("XREVRANGE", key, "+", "-", "COUNT", 1),
                                            ("XRANGE", key, start, "+", "COUNT", PAGE)], strict=strict)
        if after > (_entry_id(newest[0][0].decode()) if newest else (0, 0)):
            raise LookupError(f"position {position} is beyond the end of the log")
        out: list[FoldRow] = []
        last = position
        blob = b""
        with self.talking():
            while True:
                for _, f in rows:
                    blob = f[b"r"]
                    r = _dec_fold.decode(blob)
                    out.append((r.game, r.seq, r.device, r.client_id, r.digest, r.body))
                if rows:
                    last = rows[-1][0].decode()
                if len(rows) < PAGE:
                    break
                rows = await self.redis.xrange(key, "(" + last, "+", count=PAGE)
        if out:
            await self._confirm(last, strict)
        if self.history.epoch != epoch:
            raise NotStored("the history was replaced while it was read; read it again")
        if out:
            self.history.saw(last, key_of(blob))
        self.loaded = True
        return last, out

    async def save_snapshot(self, position: str, blob: bytes | bytearray) -> None:
        assert self.redis is not None
        _entry_id(position)
        if len(blob) > MAX_SNAPSHOT:
            raise NotStored(f"the snapshot ({len(blob):,} bytes) is longer than Redis takes")
        with self.talking():
            await self.redis.hset(self.prefix + "snapshot",
                                  mapping={"position": position, "blob": memoryview(blob)})

    async def load_snapshot(self) -> tuple[str, bytes] | None:
        assert self.redis is not None
        with self.talking():
            position, blob = await self.redis.hmget(self.prefix + "snapshot", ["position", "blob"])
        if position is None or blob is None:
            return None
        return position.decode(), blob

    async def game_records(self, game: str, after_seq: int = 0) -> list[Record]:
        """As the fold reads them: checked, and confirmed by the replicas acks wait for (a
        catch-up folds them; a resume's deltas are rebuilt from them)."""
        assert self.redis is not None
        [rows] = await self._checked([("XRANGE", self.prefix + "game:" + game, "-", "+")], confirm=True)
        records = [_dec.decode(f[b"r"]) for _, f in rows]
        return [r for r in records if (r.seq or 0) > after_seq]

    async def revoked(self) -> set[str]:
        assert self.redis is not None
        with self.talking():
            return {k.decode() for k in await self.redis.hkeys(self.prefix + "revoked")}
