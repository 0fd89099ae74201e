"""The embedded store: one SQLite file, WAL mode, ``synchronous=FULL``, group commit.

One writer thread owns the write connection. ``append`` hands it a record and
waits; the thread takes everything queued at that moment, writes it in one
transaction and commits once, so a burst of devices costs one fsync, not one
each. Each record's dedup key is a UNIQUE column of the same row, so it is
committed in the same transaction by construction.

The layout: one table ``log``, keyed by the log position ``pos`` (``INTEGER
PRIMARY KEY``: each commit appends to its last pages), with two UNIQUE indexes,
``(device, client_id)`` (the dedup key) and ``(game, seq)`` (a game's order, and its
reads: a game's records since a seq are one index range). Each device's and each
game's next entry lands on a leaf page of its own, so a commit of n devices' events
dirties about 2n index pages, and those pages, more than the number of fsyncs, are
what a group commit costs (the same 50 rows a commit with no index: 2.9× as many
rows/s). Other layouts keep two keys apart and dirty as many pages: measured as
SQLite alone at 50 rows a commit, the dedup keys in a ``WITHOUT ROWID`` table of
their own (``(game, seq)`` an index, or a ``WITHOUT ROWID`` table too, or the dedup
row written by a trigger) did 0.95–0.97× this layout, the log clustered on
``(game, seq)`` 0.74× (medians of interleaved rounds); so the layout stays. Its
version is kept in ``meta`` (``SCHEMA_VERSION``).

A run of appends is one executemany with no savepoint around it (a savepoint makes
SQLite copy every page the run dirties into a statement journal: a fifth of a
group commit's time). If a row breaks a UNIQUE key, the whole transaction is rolled
back and the batch written again, one INSERT per append, so that only the offending
appends fail, each with its reason.

If a commit fails, that batch and everything queued behind it fail with
``NotStored`` and the store refuses further appends until the service has
reloaded its state from what *was* committed (``reset_after_failure``):
nothing built on an uncommitted event can reach the disk.

The snapshot (one row of ``snapshot``) is written by the same thread in a
transaction of its own, after the batch it was queued with: if it fails, only
it fails. A log position is the record's ``pos``, as a decimal string.
"""

from __future__ import annotations

import asyncio
import queue
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import NotStored, StartupRefused
from . import START, DuplicateKey, FoldRow, Record, SeqTaken, Store, StoreStats, TokenRecord

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS log (
    pos         INTEGER PRIMARY KEY,
    game        TEXT,
    seq         INTEGER,
    device      TEXT NOT NULL,
    client_id   TEXT NOT NULL,
    official    TEXT NOT NULL,
    digest      BLOB NOT NULL,
    received_at INTEGER NOT NULL,
    body        BLOB NOT NULL,
    UNIQUE (device, client_id),
    UNIQUE (game, seq)
);
CREATE TABLE IF NOT EXISTS revoked (
    jti TEXT PRIMARY KEY, at INTEGER NOT NULL, by TEXT NOT NULL, reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS blob (
    digest TEXT PRIMARY KEY, content_type TEXT NOT NULL, data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS token (
    pos INTEGER PRIMARY KEY, claims BLOB NOT NULL, at INTEGER NOT NULL, by TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS snapshot (
    id INTEGER PRIMARY KEY CHECK (id = 1), position TEXT NOT NULL, blob BLOB NOT NULL
);
"""

#: The layout ``SCHEMA`` describes, kept in ``meta`` as ``schema``. A file without it was
#: written before the layout was numbered, in this same layout (version 1). A later
#: layout migrates older files at open, in one transaction (see ``_layout``).
SCHEMA_VERSION = 1

_COLUMNS = "game, seq, device, client_id, official, digest, received_at, body"
_STOP = object()
Op = Callable[[sqlite3.Connection], Any]   # or a Record: an append, or a _Snapshot


class _Snapshot:
    """A snapshot to write: the writer gives it a transaction of its own."""

    __slots__ = ("blob", "position")

    def __init__(self, position: str, blob: bytes | bytearray) -> None:
        self.position, self.blob = position, blob


def _pos(position: str) -> int:
    if position == START:
        return 0
    try:
        pos = int(position)
    except ValueError:
        raise LookupError(f"{position!r} is not a position of this log") from None
    if pos < 0:
        raise LookupError(f"{position!r} is not a position of this log")
    return pos


def _row(r: tuple[Any, ...]) -> Record:
    return Record(game=r[0], seq=r[1], device=r[2], client_id=r[3], official=r[4],
                  digest=bytes(r[5]), received_at=r[6], body=bytes(r[7]))


def connect(path: Path, *, synchronous: str = "FULL") -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute("PRAGMA busy_timeout=5000")
    return conn


def _layout(conn: sqlite3.Connection) -> None:
    """Create the tables of a new file, or check an existing file's layout and record its
    version, in one transaction. A file of a later layout than this code knows is refused:
    opening it could write rows its readers would not find."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        version = SCHEMA_VERSION if row is None else int(row[0])
        if version > SCHEMA_VERSION:
            raise StartupRefused(f"the SQLite file is of layout {version}; this version of "
                                 f"arena-stream knows layouts up to {SCHEMA_VERSION}")
        if row is None:
            conn.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


class SqliteStore(Store):
    def __init__(self, path: Path, *, max_batch: int = 512, synchronous: str = "FULL") -> None:
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be FULL or NORMAL, not {synchronous!r}")
        self.path = path
        self.max_batch = max_batch
        #: FULL: a commit is on disk when it returns. NORMAL (only with --unsafe-store,
        #: for the power-loss proof's control run): a power cut may lose the last commits.
        self.synchronous = synchronous
        self._ops: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._failed = False
        self._stale: set[str] = set()   # games with a refused seq, until the next reload
        self._reader: sqlite3.Connection | None = None
        self._read_lock = threading.Lock()
        #: Commits and batch sizes, for metrics and the group-commit benchmark.
        self.commits = 0
        self.committed_records = 0

    # ------------------------------------------------------------- lifecycle

    def stats(self) -> StoreStats:
        return StoreStats(commits=self.commits, records=self.committed_records)

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        writer = connect(self.path, synchronous=self.synchronous)
        try:
            _layout(writer)
        except BaseException:
            writer.close()
            raise
        row = writer.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
        if row is None:
            self.epoch = secrets.token_hex(6)
            writer.execute("INSERT INTO meta VALUES ('epoch', ?)", (self.epoch,))
        else:
            self.epoch = row[0]
        self._reader = connect(self.path, synchronous=self.synchronous)
        self._thread = threading.Thread(target=self._write_loop, args=(writer,),
                                        name="sqlite-writer", daemon=True)
        self._thread.start()

    async def close(self) -> None:
        if self._thread is not None:
            self._ops.put(_STOP)
            await asyncio.to_thread(self._thread.join)
            self._thread = None
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    # ----------------------------------------------------------------- writes

    def _submit(self, op: Op | Record | _Snapshot) -> asyncio.Future[Any]:
        """Queue ``op`` for the writer thread: the future it resolves. (A plain function, not a
        coroutine: an append, the hot path, awaits the future with no frame in between.)"""
        if self._thread is None or self._loop is None:
            raise NotStored("the store is closed")
        fut: asyncio.Future[Any] = self._loop.create_future()
        self._ops.put((op, fut))
        return fut

    async def append(self, record: Record) -> None:
        # The record itself is the op: the writer inserts a run of appends with
        # one executemany (see _append_run).
        t = time.perf_counter()
        await self._submit(record)
        if self.on_durable is not None:
            self.on_durable(time.perf_counter() - t)

    async def save_snapshot(self, position: str, blob: bytes | bytearray) -> None:
        _pos(position)
        await self._submit(_Snapshot(position, blob))

    async def revoke(self, jti: str, at: int, by: str, reason: str) -> None:
        await self._submit(lambda c: c.execute(
            "INSERT OR IGNORE INTO revoked VALUES (?,?,?,?)", (jti, at, by, reason)))

    async def put_blob(self, digest: str, content_type: str, data: bytes) -> None:
        await self._submit(lambda c: c.execute(
            "INSERT OR IGNORE INTO blob VALUES (?,?,?)", (digest, content_type, data)))

    async def record_token(self, claims_json: bytes, at: int, by: str) -> None:
        await self._submit(lambda c: c.execute(
            "INSERT INTO token (claims, at, by) VALUES (?,?,?)", (claims_json, at, by)))

    async def reset_after_failure(self) -> None:
        await asyncio.to_thread(self._reset)

    def readmit(self, game: str) -> None:
        self._stale.discard(game)  # no append of the game is in flight (the caller's promise)

    def _reset(self) -> None:
        self._failed = False
        self._stale.clear()

    def _write_loop(self, conn: sqlite3.Connection) -> None:
        try:
            while True:
                first = self._ops.get()
                if first is _STOP:
                    return
                batch = [first]
                stop = False
                while len(batch) < self.max_batch:
                    try:
                        nxt = self._ops.get_nowait()
                    except queue.Empty:
                        break
                    if nxt is _STOP:
                        stop = True
                        break
                    batch.append(nxt)
                snapshots = [b for b in batch if isinstance(b[0], _Snapshot)]
                if snapshots:
                    batch = [b for b in batch if not isinstance(b[0], _Snapshot)]
                if batch:
                    self._commit(conn, batch)
                for snap, fut in snapshots:
                    self._write_snapshot(conn, snap, fut)
                if stop:
                    return
        finally:
            conn.close()

    def _commit(self, conn: sqlite3.Connection, batch: list[tuple[Op | Record, asyncio.Future[Any]]]) -> None:
        if self._failed:
            self._resolve([(f, None, NotStored("the store is recovering from a failed commit"))
                           for _, f in batch])
            return
        try:
            try:
                results = self._apply(conn, batch, careful=False)
            except _Conflict:
                conn.execute("ROLLBACK")  # rare: again, row by row, each refusal with its reason
                results = self._apply(conn, batch, careful=True)
            t = time.perf_counter()
            conn.execute("COMMIT")
            took = time.perf_counter() - t
        except sqlite3.Error as err:
            if conn.in_transaction:
                conn.rollback()
            self._failed = True
            failure = NotStored(f"the commit failed ({err}); nothing in this batch was stored")
            self._resolve([(f, None, failure) for _, f in batch])
            return
        self.commits += 1
        self.committed_records += sum(1 for _, _, e in results if e is None)
        if self.on_commit is not None:
            self.on_commit(took)
        self._resolve(results)

    def _apply(self, conn: sqlite3.Connection, batch: list[tuple[Op | Record, asyncio.Future[Any]]],
               *, careful: bool) -> list[tuple[asyncio.Future[Any], Any, BaseException | None]]:
        """Open the batch's transaction and write its ops in it; each run of appends in one
        executemany, unless ``careful``: one INSERT each (see ``_append_run``)."""
        results: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        conn.execute("BEGIN IMMEDIATE")
        i = 0
        while i < len(batch):
            op, fut = batch[i]
            if isinstance(op, Record):
                j = i + 1
                while j < len(batch) and isinstance(batch[j][0], Record):
                    j += 1
                _append_run(conn, batch[i:j], results, self._stale, careful=careful)
                i = j
                continue
            try:
                results.append((fut, op(conn), None))
            except (DuplicateKey, NotStored) as err:
                results.append((fut, None, err))
            i += 1
        return results

    def _write_snapshot(self, conn: sqlite3.Connection, snap: _Snapshot, fut: asyncio.Future[Any]) -> None:
        """One transaction for the snapshot alone: its failure fails nothing else."""
        if self._failed:
            self._resolve([(fut, None, NotStored("the store is recovering from a failed commit"))])
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT OR REPLACE INTO snapshot (id, position, blob) VALUES (1, ?, ?)",
                         (snap.position, snap.blob))
            conn.execute("COMMIT")
        except sqlite3.Error as err:
            if conn.in_transaction:
                conn.rollback()
            self._resolve([(fut, None, NotStored(f"the snapshot was not written ({err})"))])
            return
        self._resolve([(fut, None, None)])

    def _resolve(self, results: list[tuple[asyncio.Future[Any], Any, BaseException | None]]) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(_settle, results)

    # ------------------------------------------------------------------ reads

    def _read(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        assert self._reader is not None, "the store is not open"
        with self._read_lock:
            return self._reader.execute(sql, args).fetchall()

    async def records(self) -> list[Record]:
        rows = await asyncio.to_thread(self._read, f"SELECT {_COLUMNS} FROM log ORDER BY pos")
        return [_row(r) for r in rows]

    async def rows_after(self, position: str) -> tuple[str, list[FoldRow]]:
        after = _pos(position)

        def read() -> tuple[int, list[FoldRow]]:
            assert self._reader is not None, "the store is not open"
            with self._read_lock:
                (last,) = self._reader.execute("SELECT coalesce(max(pos), 0) FROM log").fetchone()
                if after > last:
                    raise LookupError(f"position {after} is beyond the end of the log ({last})")
                # Up to the last record seen above: the position returned is the last row's.
                return last, self._reader.execute(
                    "SELECT game, seq, device, client_id, digest, body FROM log "
                    "WHERE pos > ? AND pos <= ? ORDER BY pos", (after, last)).fetchall()

        last, rows = await asyncio.to_thread(read)
        return (str(last) if rows else position), rows

    async def load_snapshot(self) -> tuple[str, bytes] | None:
        rows = await asyncio.to_thread(self._read, "SELECT position, blob FROM snapshot WHERE id = 1")
        return (rows[0][0], rows[0][1]) if rows else None

    async def game_records(self, game: str, after_seq: int = 0) -> list[Record]:
        rows = await asyncio.to_thread(
            self._read, f"SELECT {_COLUMNS} FROM log WHERE game = ? AND seq > ? ORDER BY seq",
            (game, after_seq))
        return [_row(r) for r in rows]

    async def revoked(self) -> set[str]:
        rows = await asyncio.to_thread(self._read, "SELECT jti FROM revoked")
        return {r[0] for r in rows}

    async def get_blob(self, digest: str) -> tuple[str, bytes] | None:
        rows = await asyncio.to_thread(self._read, "SELECT content_type, data FROM blob WHERE digest = ?",
                                       (digest,))
        return (rows[0][0], bytes(rows[0][1])) if rows else None

    async def tokens(self) -> list[TokenRecord]:
        rows = await asyncio.to_thread(self._read, "SELECT claims, at, by FROM token ORDER BY pos")
        return [TokenRecord(claims=bytes(r[0]), at=r[1], by=r[2]) for r in rows]


_INSERT = f"INSERT INTO log ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)"


class _Conflict(Exception):
    """A run of appends broke a UNIQUE key: the batch is written again, ``careful``."""


def _append_run(conn: sqlite3.Connection, run: list[tuple[Any, asyncio.Future[Any]]],
                results: list[tuple[asyncio.Future[Any], Any, BaseException | None]],
                stale: set[str], *, careful: bool) -> None:
    """Insert a run of appends inside the batch's transaction: one executemany, or, if any
    row breaks a UNIQUE key, ``_Conflict`` (the caller rolls the transaction back and
    writes the batch again ``careful``: one INSERT each, so that only the offending
    appends fail, each with its reason). No savepoint guards the executemany (why: the
    module's docstring). A refused
    seq makes its game ``stale``: its later appends were built on the refused one, and
    fail too, until the service has reloaded the log (as on etcd)."""
    if stale:
        for record, fut in run:
            if record.game in stale:
                results.append((fut, None, SeqTaken(-1)))
        run = [(record, fut) for record, fut in run if record.game not in stale]
    rows = [(r.game, r.seq, r.device, r.client_id, r.official, r.digest, r.received_at, r.body)
            for r, _ in run]
    if not careful:
        try:
            conn.executemany(_INSERT, rows)
        except sqlite3.IntegrityError:
            raise _Conflict from None
        results.extend((fut, None, None) for _, fut in run)
        return
    for (record, fut), row in zip(run, rows, strict=True):
        if record.game in stale:
            results.append((fut, None, SeqTaken(-1)))
            continue
        try:
            conn.execute(_INSERT, row)
        except sqlite3.IntegrityError:
            found = conn.execute(f"SELECT {_COLUMNS} FROM log WHERE device = ? AND client_id = ?",
                                 (record.device, record.client_id)).fetchone()
            err: BaseException
            if found is None:
                err = SeqTaken((record.seq or 1) - 1)
                stale.add(record.game)
            else:
                existing = _row(found)
                err = DuplicateKey(existing)
                if record.game and (existing.game, existing.seq, existing.body) != (
                        record.game, record.seq, record.body):
                    stale.add(record.game)  # stored elsewhere: what follows was built on it
            results.append((fut, None, err))
        else:
            results.append((fut, None, None))


def _settle(results: list[tuple[asyncio.Future[Any], Any, BaseException | None]]) -> None:
    for fut, value, err in results:
        if fut.done():  # the waiter was cancelled; the outcome stands in the log
            continue
        if err is None:
            fut.set_result(value)
        else:
            fut.set_exception(err)
