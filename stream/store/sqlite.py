"""The embedded store: one SQLite file, WAL mode, ``synchronous=FULL``, group commit.

One writer thread owns the write connection. ``append`` hands it a record and
waits; the thread takes everything queued at that moment, writes it in one
transaction and commits once, so a burst of devices costs one fsync, not one
each. Each record's dedup key is a UNIQUE column of the same row, so it is
committed in the same transaction by construction.

If a commit fails, that batch and everything queued behind it fail with
``NotStored`` and the store refuses further appends until the service has
reloaded its state from what *was* committed (``reset_after_failure``):
nothing built on an uncommitted event can reach the disk.
"""

from __future__ import annotations

import asyncio
import queue
import secrets
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import NotStored
from . import DuplicateKey, Record, Store

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
"""

_COLUMNS = "game, seq, device, client_id, official, digest, received_at, body"
_STOP = object()
Op = Callable[[sqlite3.Connection], Any]


def _row(r: tuple[Any, ...]) -> Record:
    return Record(game=r[0], seq=r[1], device=r[2], client_id=r[3], official=r[4],
                  digest=bytes(r[5]), received_at=r[6], body=bytes(r[7]))


def connect(path: Path, *, synchronous: str = "FULL") -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute("PRAGMA busy_timeout=5000")
    return conn


class SqliteStore(Store):
    def __init__(self, path: Path, *, max_batch: int = 512) -> None:
        self.path = path
        self.max_batch = max_batch
        self._ops: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._failed = False
        self._reader: sqlite3.Connection | None = None
        self._read_lock = threading.Lock()
        #: Commits and batch sizes, for metrics and the group-commit benchmark.
        self.commits = 0
        self.committed_records = 0

    # ------------------------------------------------------------- lifecycle

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        writer = connect(self.path)
        writer.executescript(SCHEMA)
        row = writer.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
        if row is None:
            self.epoch = secrets.token_hex(6)
            writer.execute("INSERT INTO meta VALUES ('epoch', ?)", (self.epoch,))
        else:
            self.epoch = row[0]
        self._reader = connect(self.path)
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

    async def _submit(self, op: Op) -> Any:
        if self._thread is None or self._loop is None:
            raise NotStored("the store is closed")
        fut: asyncio.Future[Any] = self._loop.create_future()
        self._ops.put((op, fut))
        return await fut

    async def append(self, record: Record) -> None:
        def op(conn: sqlite3.Connection) -> None:
            try:
                conn.execute(f"INSERT INTO log ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)", (
                    record.game, record.seq, record.device, record.client_id, record.official,
                    record.digest, record.received_at, record.body))
            except sqlite3.IntegrityError:
                row = conn.execute(f"SELECT {_COLUMNS} FROM log WHERE device = ? AND client_id = ?",
                                   (record.device, record.client_id)).fetchone()
                if row is None:
                    raise NotStored(f"sequence {record.game}/{record.seq} is taken") from None
                raise DuplicateKey(_row(row)) from None

        await self._submit(op)

    async def revoke(self, jti: str, at: int, by: str, reason: str) -> None:
        await self._submit(lambda c: c.execute(
            "INSERT OR IGNORE INTO revoked VALUES (?,?,?,?)", (jti, at, by, reason)))

    async def reset_after_failure(self) -> None:
        await asyncio.to_thread(self._reset)

    def _reset(self) -> None:
        self._failed = False

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
                self._commit(conn, batch)
                if stop:
                    return
        finally:
            conn.close()

    def _commit(self, conn: sqlite3.Connection, batch: list[tuple[Op, asyncio.Future[Any]]]) -> None:
        if self._failed:
            self._resolve([(f, None, NotStored("the store is recovering from a failed commit"))
                           for _, f in batch])
            return
        results: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            for op, fut in batch:
                try:
                    results.append((fut, op(conn), None))
                except (DuplicateKey, NotStored) as err:
                    results.append((fut, None, err))
            conn.execute("COMMIT")
        except sqlite3.Error as err:
            if conn.in_transaction:
                conn.rollback()
            self._failed = True
            failure = NotStored(f"the commit failed ({err}); nothing in this batch was stored")
            self._resolve([(f, None, failure) for _, f in batch])
            return
        self.commits += 1
        self.committed_records += sum(1 for _, _, e in results if e is None)
        self._resolve(results)

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

    async def game_records(self, game: str, after_seq: int = 0) -> list[Record]:
        rows = await asyncio.to_thread(
            self._read, f"SELECT {_COLUMNS} FROM log WHERE game = ? AND seq > ? ORDER BY seq",
            (game, after_seq))
        return [_row(r) for r in rows]

    async def revoked(self) -> set[str]:
        rows = await asyncio.to_thread(self._read, "SELECT jti FROM revoked")
        return {r[0] for r in rows}


def _settle(results: list[tuple[asyncio.Future[Any], Any, BaseException | None]]) -> None:
    for fut, value, err in results:
        if fut.done():  # the waiter was cancelled; the outcome stands in the log
            continue
        if err is None:
            fut.set_result(value)
        else:
            fut.set_exception(err)
