"""The SQLite store's file: files written before the layout was numbered open and keep
everything; a file of a later layout is refused; and a batch in which one append breaks a
UNIQUE key is written again, one INSERT each, with every other op in it stored once."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from pathlib import Path

import pytest

from stream.errors import StartupRefused
from stream.store import START, DuplicateKey, Record, SeqTaken, TokenRecord
from stream.store.sqlite import SCHEMA_VERSION, SqliteStore

from .backends import rec

#: The layout as the store wrote it before it kept its version in ``meta``: the text of
#: that ``SCHEMA``, kept here as it was so that this test keeps describing those files.
UNNUMBERED_SCHEMA = """
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


def write_unnumbered_file(path: Path, records: list[Record]) -> None:
    """A file as the store wrote it before its layout had a number: the same settings, an
    epoch, the records appended in one transaction each, a revocation, a blob and a token."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as c:
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("PRAGMA synchronous=FULL")
        c.executescript(UNNUMBERED_SCHEMA)
        c.execute("INSERT INTO meta VALUES ('epoch', 'a1b2c3d4e5f6')")
        for r in records:
            c.execute("BEGIN IMMEDIATE")
            c.execute("INSERT INTO log (game, seq, device, client_id, official, digest, received_at, "
                      "body) VALUES (?,?,?,?,?,?,?,?)",
                      (r.game, r.seq, r.device, r.client_id, r.official, r.digest, r.received_at,
                       r.body))
            c.execute("COMMIT")
        c.execute("INSERT INTO revoked VALUES ('jti-1', 5, 'admin', 'lost')")
        c.execute("INSERT INTO blob VALUES ('ab' , 'image/png', x'89504e47')")
        c.execute("INSERT INTO token (claims, at, by) VALUES (x'7b7d', 7, 'admin')")


async def test_a_file_written_before_the_layout_was_numbered_opens_with_everything(
        tmp_path: Path) -> None:
    path = tmp_path / "arena.sqlite"
    old = [rec(1), rec(2), rec(1, game="g2", device="d2"), rec(0, game=None, client_id="setup"),
           rec(3), rec(2, game="g2", device="d2")]
    write_unnumbered_file(path, old)

    store = SqliteStore(path)
    await store.open()
    try:
        assert store.epoch == "a1b2c3d4e5f6"  # the same log: resumes stay valid
        assert await store.records() == old
        assert await store.game_records("g1") == [rec(1), rec(2), rec(3)]
        assert await store.game_records("g2", after_seq=1) == [rec(2, game="g2", device="d2")]
        last, rows = await store.rows_after(START)
        assert last == str(len(old)) and len(rows) == len(old)
        # The dedup answers: a retry gets the record first stored, from any game.
        for r in old:
            with pytest.raises(DuplicateKey) as info:
                await store.append(r)
            assert info.value.existing == r
        # The seqs: a taken one is refused, the next one is taken.
        with pytest.raises(SeqTaken):
            await store.append(rec(3, client_id="d1-other"))
        store.readmit("g1")
        await store.append(rec(4))
        await store.append(rec(3, game="g2", device="d2"))
        assert await store.revoked() == {"jti-1"}
        assert await store.get_blob("ab") == ("image/png", b"\x89PNG")
        assert await store.tokens() == [TokenRecord(claims=b"{}", at=7, by="admin")]
    finally:
        await store.close()

    with contextlib.closing(sqlite3.connect(path)) as c:
        assert c.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (
            str(SCHEMA_VERSION),)
        assert c.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    store = SqliteStore(path)  # and it opens again as a numbered file
    await store.open()
    try:
        assert await store.records() == [*old, rec(4), rec(3, game="g2", device="d2")]
    finally:
        await store.close()


async def test_a_new_file_records_its_layout(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "arena.sqlite")
    await store.open()
    await store.close()
    with contextlib.closing(sqlite3.connect(tmp_path / "arena.sqlite")) as c:
        assert c.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (
            str(SCHEMA_VERSION),)


async def test_a_file_of_a_later_layout_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "arena.sqlite"
    write_unnumbered_file(path, [rec(1)])
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as c:
        c.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION + 1),))
    store = SqliteStore(path)
    with pytest.raises(StartupRefused):
        await store.open()
    with contextlib.closing(sqlite3.connect(path)) as c:
        assert c.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (
            str(SCHEMA_VERSION + 1),)
        assert c.execute("SELECT count(*) FROM log").fetchone() == (1,)


async def test_a_conflict_in_a_batch_stores_every_other_op_in_it_once(tmp_path: Path) -> None:
    """One batch holding a token, a revocation, a blob, appends and one append that repeats
    a dedup key: the batch is rolled back and written again one INSERT each, so the token is
    recorded once, and only the repeated append fails."""
    store = SqliteStore(tmp_path / "arena.sqlite")
    await store.open()
    try:
        await store.append(rec(1))
        entered, gate = threading.Event(), threading.Event()

        def hold(_: sqlite3.Connection) -> None:
            entered.set()
            gate.wait()

        held = asyncio.ensure_future(store._submit(hold))
        await asyncio.to_thread(entered.wait)  # the writer is inside a batch: the rest queue
        commits = store.stats().commits
        outcomes = asyncio.gather(
            store.record_token(b'{"sub":"d9"}', 11, "admin"), store.append(rec(2)),
            store.revoke("jti-9", 12, "admin", "lost"), store.append(rec(1)),
            store.put_blob("cd", "image/png", b"png"), store.append(rec(3)),
            return_exceptions=True)
        await asyncio.sleep(0)  # every op is queued before the writer takes the next batch
        gate.set()
        await held
        results = await outcomes
        assert store.stats().commits == commits + 2  # the held batch, then all the others in one
        assert [r is None for r in results] == [True, True, True, False, True, True]
        assert isinstance(results[3], DuplicateKey) and results[3].existing == rec(1)
        assert await store.records() == [rec(1), rec(2), rec(3)]
        assert await store.tokens() == [TokenRecord(claims=b'{"sub":"d9"}', at=11, by="admin")]
        assert await store.revoked() == {"jti-9"}
        assert await store.get_blob("cd") == ("image/png", b"png")
    finally:
        await store.close()
