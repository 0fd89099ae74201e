"""The store on etcd (Raft), for several service nodes.

etcd commits a write once a quorum of its members has it on disk: an ack here means
that, and a leader change loses nothing acked (docs/reliability.md). Reached through
``etcd_client.py`` (the JSON gateway, across the members, with deadlines).

Layout (``p`` is the URL's prefix, ``arena/`` by default)::

    {p}epoch                          this log's epoch, written once
    {p}log/g/{game}/{seq:010}         a game's record: MessagePack [index in its transaction, Record]
    {p}log/t/{device}/{client_id}     a tournament's record (``event.setup``…: no game), the same
    {p}id/{device}/{client_id}        the dedup key: the key of its record
    {p}head                           rewritten by every append: its mod revision and its value (the
                                      last index) are the log's end
    {p}snapshot                       the fold up to a position: (position, chunks, SHA-256, archive)
    {p}snapshot/{n}/{i:06}            … its chunks (etcd takes requests of 1.5 MiB at most)
    {p}archived                       rewritten by every archive (``forget``): the log's archive
    {p}blob/{sha256}                  (content type, data): a file the log names
    {p}token/{n}                      a token issued (MessagePack ``TokenRecord``), in order
    {p}revoked/{jti}                  a revocation: when, by whom, why

Names inside keys are percent-encoded, so a ``/`` in a game's name can't reach another's.

**One transaction per batch of a game's appends** (``_txn``): for each record it compares
that its dedup key and its own key do not exist and, for the first, that the game's
record ``seq - 1`` does (optimistic concurrency: two nodes can't both take seq 7); then
puts each record (with its index in the transaction), its dedup key, and the head. A
record's **position** is ``REVISION-INDEX``: etcd's revision is one total order across
games, and a node follows the log from one. A refused batch is sent again record by
record; a refused record reads its dedup key and the game's last record, to say why:
``DuplicateKey`` or ``SeqTaken``.

A game's appends queue on this node; whoever holds the game's lock sends all those
waiting (up to ``BATCH``), then the next batch once that one is answered. Different
games' batches go at once, and etcd's Raft puts what arrives together into one fsync on
each member. After a refused ``seq`` the game's later appends fail at once
(``SeqTaken``), until ``readmit`` or ``reset_after_failure``: they were built on the
refused one. After a write whose fate is not known (``WriteUnknown``) every append fails
at once until ``reset_after_failure``: nothing is built on it.

**A resend is harmless.** The client sends a transaction again, to the next member, when
one is not answered (``etcd_client.Gateway``): if the first was committed, the resend
finds its own dedup key holding the very same record, and that is the ack.

**Archiving** (``forget``, ``arena-stream archive``) deletes an event's records and their
dedup keys, in log order, in transactions, and rewrites ``{p}archived``. A snapshot names
the archive of the log its fold was loaded from (read at ``open``, and again at each
``load_snapshot``, which comes before every whole load): one made before an archive, or by a
node that has folded the archived records and not loaded the log since, holds them, and is
not loaded again. A running node keeps what it folded until it loads the log again.

**Following** (``read_after``): a watch on the log from a position (``etcd_log.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
import secrets
import statistics
import time
from collections import deque
from typing import Any
from urllib.parse import quote

import msgspec

from ..errors import NotStored, StartupRefused, WriteUnknown
from ..tasks import stop
from . import DuplicateKey, FoldRow, Record, SeqTaken, Store, StoreStats, StoreStatus, TokenRecord
from .etcd_client import (
    KV,
    EtcdRefused,
    Gateway,
    Unanswered,
    created,
    delete_op,
    exists,
    get_op,
    kvs,
    parse_url,
    prefix_end,
    put_op,
    redacted,
    responses,
    revision,
)
from .etcd_log import Entry, Pos, Tail, dec_entry, dec_fold, entry_index, text
from .etcd_log import position as parse_position
from .outage import Outage

__all__ = ["CHUNK", "EtcdStore"]

log = logging.getLogger("arena_stream.store")

_enc = msgspec.msgpack.Encoder()
_dec_token = msgspec.msgpack.Decoder(TokenRecord)
PAGE = 2000
BATCH = 60           # a game's appends in one transaction, at most (etcd takes 128 operations)
FORGET_BATCH = 60    # records deleted in one transaction: two operations each, etcd takes 128
CHUNK = 512 * 1024   # a snapshot's chunk: well under etcd's 1.5 MiB request


class _Snapshot(msgspec.Struct, array_like=True):
    position: str
    generation: str
    chunks: int
    sha256: bytes
    archived: bytes = b""   # the log's archive (``{p}archived``) when its fold was loaded


def _name(text: str) -> bytes:
    return quote(text, safe="").encode()


class EtcdStore(Store):
    def __init__(self, url: str, *, deadline: float = 0.5, budget: float = 3.0,
                 ca: str | None = None, cert: str | None = None, key: str | None = None) -> None:
        parsed = parse_url(url)
        self.url = url
        self.where = redacted(url)
        self.p = parsed.prefix.encode()
        self.outage = Outage(self.where, what="etcd")
        self.gateway = Gateway(parsed.members, tls=parsed.tls, user=parsed.user,
                               password=parsed.password, deadline=deadline, budget=budget,
                               ca=ca, cert=cert, key=key, on_failure=self.outage.failed)
        self.epoch = ""
        #: ``{p}archived`` as this node last loaded the log: its snapshots hold that log's fold.
        self.archived = b""
        self._locks: dict[str, asyncio.Lock] = {}
        self._queues: dict[str, list[tuple[Record, asyncio.Future[None]]]] = {}
        self._inflight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self.stale: set[str] = set()
        self.failed: str | None = None
        self._commits = 0
        self._records = 0
        self._open = False
        self.tail = Tail(self)
        self._status = StoreStatus(kind="etcd", member=self.gateway.address)
        self._status_task: asyncio.Task[None] | None = None
        self._recent: deque[float] = deque(maxlen=64)  # the last transactions' times (s)

    # ------------------------------------------------------------- lifecycle

    def stats(self) -> StoreStats:
        return StoreStats(commits=self._commits, records=self._records)

    async def open(self) -> None:
        await self.gateway.open()
        try:
            epoch = self.p + b"epoch"
            reply = await self.gateway.txn([created(epoch)], [put_op(epoch, secrets.token_hex(6).encode())],
                                           [get_op(epoch)])
            got = kvs(await self.gateway.range(epoch) if reply.get("succeeded") else responses(reply)[0])
        except EtcdRefused as err:
            await self.gateway.close()
            raise StartupRefused(f"etcd at {self.where} refused the store: {err.detail}") from None
        except NotStored as err:
            await self.gateway.close()
            raise NotStored(f"etcd at {self.where} is not reachable: {err.detail}") from None
        self.outage.ok()
        self.epoch = got[0].value.decode()
        self.archived = await self._archived()
        self._open = True
        self._status_task = asyncio.create_task(self._follow_status(), name="etcd-status")

    async def close(self) -> None:
        self._open = False
        if self._status_task is not None:
            await stop([self._status_task])
            self._status_task = None
        await self.tail.close()
        await self.gateway.close()

    async def _answer(self, call: Any) -> Any:
        """An awaited call to etcd, its outage said once it answers again."""
        reply = await call
        self.outage.ok()
        return reply

    def status(self) -> StoreStatus:
        median = statistics.median(self._recent) if self._recent else None
        return msgspec.structs.replace(self._status, member=self.gateway.address, commit_seconds=median)

    async def _follow_status(self, every: float = 1.0) -> None:
        """Every ``every`` seconds: the member in use's status (its leader, the Raft term) and,
        when the leader is one this node has not placed yet, the cluster's members."""
        names: dict[str, str] = {}
        while True:
            with contextlib.suppress(NotStored):
                s = await self.gateway.status()
                leader = str(s.get("leader", "0"))
                if leader != "0" and leader not in names:
                    listed = await self.gateway.call("/v3/cluster/member/list", {})
                    names = {str(m.get("ID")): (m.get("clientURLs") or [m.get("name", "?")])[0]
                             for m in listed.get("members", ())}
                self._status = StoreStatus(
                    kind="etcd", member=self.gateway.address,
                    leader=names.get(leader, "").removeprefix("http://").removeprefix("https://") or None,
                    raft_term=int(s.get("raftTerm", 0)), members=len(names) or None,
                    checked_at=time.time_ns() // 1_000_000)
            await asyncio.sleep(every)

    # ----------------------------------------------------------------- keys

    def _record_key(self, r: Record) -> bytes:
        if r.game is not None:
            return self.p + b"log/g/" + _name(r.game) + b"/" + b"%010d" % (r.seq or 0)
        return self.p + b"log/t/" + _name(r.device) + b"/" + _name(r.client_id)

    def _game_prefix(self, game: str) -> bytes:
        return self.p + b"log/g/" + _name(game) + b"/"

    def _id_key(self, device: str, client_id: str) -> bytes:
        return self.p + b"id/" + _name(device) + b"/" + _name(client_id)

    # ----------------------------------------------------------------- writes

    async def append(self, record: Record) -> None:
        t = time.perf_counter()
        if not self._open:
            raise NotStored("the store is closed")
        self._inflight += 1
        self._idle.clear()
        try:
            if record.game is None:
                self._refuse_if_held(None)
                await self._txn([record])
            else:
                await self._queued(record, record.game)
        finally:
            self._inflight -= 1
            if self._inflight == 0:
                self._idle.set()
        if self.on_durable is not None:
            self.on_durable(time.perf_counter() - t)

    def _refuse_if_held(self, game: str | None) -> None:
        if self.failed is not None:
            raise NotStored(f"not sent: an earlier write failed ({self.failed}); send it again")
        if game is not None and game in self.stale:
            raise SeqTaken(-1)

    async def _queued(self, record: Record, game: str) -> None:
        """A game's appends wait in its queue; whoever holds the game's lock sends every one
        waiting (up to ``BATCH``) in one transaction, so a busy game costs one round trip per
        batch, not per event."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue = self._queues.setdefault(game, [])
        queue.append((record, fut))
        async with self._locks.setdefault(game, asyncio.Lock()):
            if not fut.done():
                batch, queue[:] = queue[:BATCH], queue[BATCH:]
                try:
                    self._refuse_if_held(game)
                    await self._send(batch)
                except BaseException as err:
                    for _, f in batch:
                        if not f.done():
                            f.set_exception(err)
                            f.exception()  # retrieved: its own append raises it below
                    if not isinstance(err, Exception):
                        raise
        await fut

    async def _send(self, batch: list[tuple[Record, asyncio.Future[None]]]) -> None:
        """A game's batch: one transaction; if etcd refuses it (a seq another node took, a
        known dedup key), each record alone, to say which and why."""
        records = [r for r, _ in batch]
        consecutive = all(b.seq == (a.seq or 0) + 1 for a, b in itertools.pairwise(records))
        resent = False
        if len(records) > 1 and consecutive:
            stored, resent = await self._txn(records, alone=False)
            if stored:
                for _, f in batch:
                    f.set_result(None)
                return
        for r, f in batch:
            try:
                self._refuse_if_held(r.game)
                await self._txn([r], resent=resent)
            except Exception as err:
                f.set_exception(err)
                f.exception()
            else:
                f.set_result(None)

    async def _txn(self, records: list[Record], *, alone: bool = True,
                   resent: bool = False) -> tuple[bool, bool]:
        """``records`` (one game's, consecutive; or one record) in one transaction: whether
        they were stored, and whether the transaction was sent more than once. Refused: with
        ``alone`` (one record), raise why; else (False, …), nothing stored. ``resent``: an
        earlier transaction with this record went unanswered (a batch sent again), so the
        record found stored as it is, is this node's own."""
        first = records[0]
        game = first.game
        compare: list[dict[str, Any]] = []
        success: list[dict[str, Any]] = []
        for i, r in enumerate(records):
            key, id_key = self._record_key(r), self._id_key(r.device, r.client_id)
            compare += [created(id_key), created(key)]
            success += [put_op(key, _enc.encode(Entry(i, r))), put_op(id_key, key)]
        if game is not None and (first.seq or 0) > 1:
            compare.append(exists(self._game_prefix(game) + b"%010d" % ((first.seq or 0) - 1)))
        success.append(put_op(self.p + b"head", str(len(records) - 1).encode()))
        failure = [get_op(self._id_key(first.device, first.client_id))] if alone else []
        if alone and game is not None:
            prefix = self._game_prefix(game)
            failure.append(get_op(prefix, prefix_end(prefix), limit=1, descend=True))
        sent = time.perf_counter()
        try:
            reply, again = await self.gateway.txn_resent(compare, success, failure)
        except Unanswered as err:
            self.failed = "not known"
            raise WriteUnknown(f"{err.detail}; send the same event again with the same id") from None
        except NotStored:
            self.failed = "not stored"
            raise
        took = time.perf_counter() - sent
        self.outage.ok()
        if reply.get("succeeded"):
            self._committed(took, len(records))
            return True, again
        if not alone:
            return False, again
        r = first
        found = responses(reply)
        known = kvs(found[0])
        if known:
            existing = await self._existing(known[0].value)
            if (again or resent) and existing == r:  # this node's own write, answered the second time
                self._committed(took, 1)
                return True, again
            if game is not None and (existing.game, existing.seq, existing.body) != (r.game, r.seq, r.body):
                self.stale.add(game)  # what this node built after it is built on another record
            raise DuplicateKey(existing)
        if game is None:  # pragma: no cover - only a dedup key can refuse a tournament's record
            raise NotStored("etcd refused the record")
        last = kvs(found[1])
        current = int(last[0].key.rpartition(b"/")[2]) if last else 0
        self.stale.add(game)
        raise SeqTaken(current)

    def _committed(self, took: float, records: int) -> None:
        self._recent.append(took)
        self._commits += 1
        self._records += records
        if self.on_commit is not None:
            self.on_commit(took)

    async def _existing(self, record_key: bytes) -> Record:
        got = kvs(await self._answer(self.gateway.range(record_key)))
        if not got:
            raise NotStored("the dedup key's record is missing")
        return dec_entry.decode(got[0].value).record

    def readmit(self, game: str) -> None:
        self.stale.discard(game)

    async def reset_after_failure(self) -> None:
        """Once every append in flight has been answered, take appends again."""
        await self._idle.wait()
        self.stale.clear()
        self.failed = None

    async def _put(self, key: bytes, value: bytes) -> None:
        try:
            await self._answer(self.gateway.put(key, value))
        except Unanswered as err:
            raise NotStored(err.detail) from None

    async def forget(self, records: list[Record], archived: bytes) -> int:
        """Delete ``records`` (each one's key and dedup key), in their order (an event's set-up
        first: what a failure midway leaves of it, the fold refuses), in transactions of
        ``FORGET_BATCH``, then name the log's archive ``archived`` (``{p}archived``). Deleting
        a key again is harmless. The keys deleted (records and dedup keys)."""
        deleted = 0
        ordered = list(records)
        for i in range(0, len(ordered), FORGET_BATCH):
            ops = [delete_op(k) for r in ordered[i:i + FORGET_BATCH]
                   for k in (self._record_key(r), self._id_key(r.device, r.client_id))]
            try:
                reply = await self._answer(self.gateway.txn([], ops, []))
            except Unanswered as err:
                raise NotStored(err.detail) from None
            deleted += sum(int(r.get("deleted", 0)) for r in responses(reply))
        await self._put(self.p + b"archived", archived)
        return deleted

    async def _archived(self) -> bytes:
        got = kvs(await self._answer(self.gateway.range(self.p + b"archived")))
        return got[0].value if got else b""

    async def revoke(self, jti: str, at: int, by: str, reason: str) -> None:
        key = self.p + b"revoked/" + _name(jti)
        value = msgspec.json.encode({"at": at, "by": by, "reason": reason})
        try:
            await self._answer(self.gateway.txn([created(key)], [put_op(key, value)], []))
        except Unanswered as err:
            raise NotStored(err.detail) from None

    async def revoked(self) -> set[str]:
        prefix = self.p + b"revoked/"
        return {kv.key[len(prefix):].decode() for kv in await self._range(prefix, keys_only=True)}

    async def put_blob(self, digest: str, content_type: str, data: bytes) -> None:
        await self._put(self.p + b"blob/" + _name(digest), _enc.encode((content_type, data)))

    async def get_blob(self, digest: str) -> tuple[str, bytes] | None:
        got = kvs(await self._answer(self.gateway.range(self.p + b"blob/" + _name(digest))))
        if not got:
            return None
        kind, data = msgspec.msgpack.decode(got[0].value, type=tuple[str, bytes])
        return kind, data

    async def record_token(self, claims_json: bytes, at: int, by: str) -> None:
        key = self.p + b"token/" + f"{time.time_ns():020d}-{secrets.token_hex(4)}".encode()
        await self._put(key, _enc.encode(TokenRecord(claims=claims_json, at=at, by=by)))

    async def tokens(self) -> list[TokenRecord]:
        got = await self._range(self.p + b"token/")
        return [_dec_token.decode(kv.value) for kv in sorted(got, key=lambda kv: kv.mod_revision)]

    # ------------------------------------------------------------------ reads

    async def _range(self, prefix: bytes, start: bytes | None = None, *, keys_only: bool = False,
                     min_mod_revision: int = 0) -> list[KV]:
        """Every key under ``prefix`` (from ``start``), read page by page at one revision."""
        end = prefix_end(prefix)
        key = start or prefix
        at = 0
        out: list[KV] = []
        while True:
            reply = await self._answer(self.gateway.range(
                key, end, limit=PAGE, revision=at, keys_only=keys_only, min_mod_revision=min_mod_revision))
            at = at or revision(reply)
            page = kvs(reply)
            out.extend(page)
            if not reply.get("more") or not page:
                return out
            key = page[-1].key + b"\x00"

    async def log_after(self, after: Pos = (0, 0)) -> list[tuple[Pos, bytes]]:
        """The log's entries after ``after``, in the log's order: (position, value)."""
        got = await self._range(self.p + b"log/", min_mod_revision=after[0])
        entries = sorted(((kv.mod_revision, entry_index(kv.value)), kv.value) for kv in got)
        return [(pos, value) for pos, value in entries if pos > after]

    async def records(self) -> list[Record]:
        return [dec_entry.decode(value).record for _, value in await self.log_after()]

    async def game_records(self, game: str, after_seq: int = 0) -> list[Record]:
        prefix = self._game_prefix(game)
        got = await self._range(prefix, prefix + b"%010d" % (after_seq + 1))
        return [dec_entry.decode(kv.value).record for kv in got]

    async def end(self) -> str:
        return text(await self.end_pos())

    async def end_pos(self) -> Pos:
        """The newest entry's position (``head``: rewritten by every append, with the index of
        its transaction's last record)."""
        got = kvs(await self._answer(self.gateway.range(self.p + b"head")))
        return (got[0].mod_revision, int(got[0].value or b"0")) if got else (0, 0)

    async def rows_after(self, position: str) -> tuple[str, list[FoldRow]]:
        after = parse_position(position)
        if after > await self.end_pos():
            raise LookupError(f"position {position} is beyond the end of the log")
        out: list[FoldRow] = []
        last = after
        for pos, value in await self.log_after(after):
            r = dec_fold.decode(value).record
            out.append((r.game, r.seq, r.device, r.client_id, r.digest, r.body))
            last = pos
        return (text(last) if out else position), out

    async def read_after(self, entry_id: str, count: int | None = None,
                         block_ms: int | None = None) -> list[tuple[str, Record]]:
        """Up to ``count`` (position, record) after ``entry_id``; with ``block_ms``, from the
        follower's watch, waiting that long for one."""
        after = parse_position(entry_id)
        if block_ms is None:
            got = await self.log_after(after)
            return [(text(pos), dec_entry.decode(value).record) for pos, value in got[:count or None]]
        return [(text(pos), r) for pos, r in await self.tail.read(after, count or 1000, block_ms / 1000)]

    # -------------------------------------------------------------- snapshot

    async def save_snapshot(self, position: str, blob: bytes | bytearray) -> None:
        parse_position(position)
        generation = secrets.token_hex(4)
        data = bytes(blob)
        chunks = [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)] or [b""]
        base = self.p + b"snapshot/" + generation.encode() + b"/"
        for i, chunk in enumerate(chunks):
            await self._put(base + b"%06d" % i, chunk)
        pointer = self.p + b"snapshot"
        old = kvs(await self._answer(self.gateway.range(pointer)))
        await self._put(pointer, _enc.encode(_Snapshot(position, generation, len(chunks),
                                                       hashlib.sha256(data).digest(), self.archived)))
        if old:  # the one before: no longer named
            before = msgspec.msgpack.decode(old[0].value, type=_Snapshot)
            gone = self.p + b"snapshot/" + before.generation.encode() + b"/"
            with contextlib.suppress(NotStored):
                await self.gateway.delete(gone, prefix_end(gone))

    async def load_snapshot(self) -> tuple[str, bytes] | None:
        self.archived = await self._archived()   # the log this node is about to load
        got = kvs(await self._answer(self.gateway.range(self.p + b"snapshot")))
        if not got:
            return None
        s = msgspec.msgpack.decode(got[0].value, type=_Snapshot)
        if s.archived != self.archived:
            return None   # the fold of a log before an archive: it holds what was archived
        base = self.p + b"snapshot/" + s.generation.encode() + b"/"
        data = b"".join(kv.value for kv in await self._range(base))
        if hashlib.sha256(data).digest() != s.sha256:
            return None  # cut short (a save that stopped midway): fold the whole log
        return s.position, data
