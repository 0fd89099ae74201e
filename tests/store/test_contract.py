"""One contract, every backend: what ``stream.store.Store`` promises, run
against a real SQLite file and a real redis-server on loopback.

Each backend's test class inherits ``StoreContract`` and provides ``open_store``
(a fresh store on fresh storage) and ``reopen`` (a new instance on the same
storage, as after a restart).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from stream.errors import NotStored
from stream.store import DuplicateKey, Record, Store
from stream.store.redis import RedisStore
from stream.store.sqlite import SqliteStore

from ..redis_server import RedisServer


def rec(n: int, *, game: str | None = "g1", seq: int | None = None, device: str = "d1",
        client_id: str | None = None, body: bytes | None = None) -> Record:
    return Record(game=game, seq=n if seq is None and game is not None else seq, device=device,
                  client_id=client_id or f"e{n}", official="Ump One", digest=bytes([n % 256]) * 16,
                  received_at=1_780_000_000_000 + n, body=body or b'{"n":%d}' % n)


class StoreContract:
    async def open_store(self) -> Store:
        raise NotImplementedError

    async def reopen(self, store: Store) -> Store:
        raise NotImplementedError

    @pytest.fixture
    async def store(self) -> AsyncIterator[Store]:
        s = await self.open_store()
        try:
            yield s
        finally:
            await s.close()

    async def test_appends_come_back_in_order_field_for_field(self, store: Store) -> None:
        records = [rec(1), rec(2), rec(0, game=None, client_id="t1"), rec(3)]
        for r in records:
            await store.append(r)
        assert await store.records() == records
        assert await store.game_records("g1") == [records[0], records[1], records[3]]
        assert await store.game_records("g1", after_seq=1) == [records[1], records[3]]
        assert await store.game_records("other") == []

    async def test_dedup_key_is_unique_forever_and_returns_the_first(self, store: Store) -> None:
        await store.append(rec(1))
        with pytest.raises(DuplicateKey) as info:
            await store.append(rec(2, client_id="e1", body=b"different"))
        assert info.value.existing == rec(1)
        await store.append(rec(2, device="d2", client_id="e1"))  # another device may reuse the id
        assert [r.device for r in await store.records()] == ["d1", "d2"]

    async def test_a_game_sequence_number_is_taken_once(self, store: Store) -> None:
        await store.append(rec(1))
        with pytest.raises(NotStored):
            await store.append(rec(1, client_id="other"))
        assert len(await store.records()) == 1

    async def test_concurrent_appends_all_land_in_submission_order(self, store: Store) -> None:
        records = [rec(n) for n in range(1, 201)]
        await asyncio.gather(*(store.append(r) for r in records))
        assert await store.records() == records

    async def test_a_refused_append_among_concurrent_ones_fails_alone(self, store: Store) -> None:
        """One batch of concurrent appends with a repeated dedup key and a taken
        seq among them: exactly those two fail, each with its reason; the rest land."""
        await store.append(rec(1))
        batch = [rec(2), rec(0, game=None, client_id="e1"), rec(3), rec(2, client_id="taken"), rec(4)]
        outcomes = await asyncio.gather(*(store.append(r) for r in batch), return_exceptions=True)
        assert outcomes[0] is None and outcomes[2] is None and outcomes[4] is None
        assert isinstance(outcomes[1], DuplicateKey) and outcomes[1].existing == rec(1)
        assert isinstance(outcomes[3], NotStored)
        assert await store.records() == [rec(1), rec(2), rec(3), rec(4)]

    async def test_what_was_appended_survives_a_restart(self, store: Store) -> None:
        records = [rec(n) for n in range(1, 21)]
        for r in records:
            await store.append(r)
        epoch = store.epoch
        again = await self.reopen(store)
        try:
            assert await again.records() == records
            assert again.epoch == epoch
            with pytest.raises(DuplicateKey):
                await again.append(rec(5))
        finally:
            await again.close()

    async def test_revocations_persist(self, store: Store) -> None:
        await store.revoke("jti-1", 1, "admin", "lost device")
        await store.revoke("jti-1", 2, "admin", "twice is harmless")
        assert await store.revoked() == {"jti-1"}
        again = await self.reopen(store)
        try:
            assert await again.revoked() == {"jti-1"}
        finally:
            await again.close()


class TestSqliteStore(StoreContract):
    @pytest.fixture(autouse=True)
    def _dir(self, tmp_path: Path) -> None:
        self.path = tmp_path / "arena.sqlite"

    async def open_store(self) -> Store:
        s = SqliteStore(self.path)
        await s.open()
        return s

    async def reopen(self, store: Store) -> Store:
        await store.close()
        return await self.open_store()

    async def test_group_commit_batches_concurrent_appends(self, store: Store) -> None:
        assert isinstance(store, SqliteStore)
        await asyncio.gather(*(store.append(rec(n)) for n in range(1, 301)))
        assert store.committed_records == 300
        assert store.commits < 300  # several records shared one transaction (one fsync)

    async def test_wal_and_full_sync_are_in_force(self, store: Store) -> None:
        import sqlite3

        c = sqlite3.connect(self.path)
        try:
            assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        finally:
            c.close()
        assert isinstance(store, SqliteStore)
        sync = await store._submit(lambda conn: conn.execute("PRAGMA synchronous").fetchone()[0])
        assert sync == 2  # FULL

    async def test_a_failed_commit_stores_nothing_until_reset(self, store: Store) -> None:
        assert isinstance(store, SqliteStore)
        await store.append(rec(1))
        pages = await store._submit(lambda c: c.execute("PRAGMA page_count").fetchone()[0])
        await store._submit(lambda c: c.execute(f"PRAGMA max_page_count={pages}"))  # the disk is full
        big = [rec(n, body=b"x" * 8192) for n in range(2, 6)]
        results = await asyncio.gather(*(store.append(r) for r in big), return_exceptions=True)
        assert all(isinstance(r, NotStored) for r in results)
        with pytest.raises(NotStored):  # still refusing: the service must reload first
            await store.append(rec(2))
        await store.reset_after_failure()
        await store._submit(lambda c: c.execute("PRAGMA max_page_count=1073741823"))  # space again
        await store.append(rec(2))
        assert [r.seq for r in await store.records()] == [1, 2]


# ----------------------------------------------------------------------- Redis


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    srv = RedisServer(tmp_path_factory.mktemp("redis"))
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


class TestRedisStore(StoreContract):
    @pytest.fixture(autouse=True)
    def _server(self, redis_server: RedisServer) -> None:
        self.url = redis_server.url
        self.prefix = f"t{uuid.uuid4().hex[:8]}:"

    async def open_store(self) -> Store:
        s = RedisStore(self.url, prefix=self.prefix)
        await s.open()
        return s

    async def reopen(self, store: Store) -> Store:
        await store.close()
        return await self.open_store()

    async def test_pipelined_appends_share_a_round_trip(self, store: Store) -> None:
        assert isinstance(store, RedisStore)
        await asyncio.gather(*(store.append(rec(n)) for n in range(1, 301)))
        assert store.committed_records == 300
        assert store.commits < 300  # one pipelined batch: one AOF fsync for many records


async def test_redis_that_could_lose_acked_events_is_refused(tmp_path: Path) -> None:
    srv = RedisServer(tmp_path / "lossy", fsync="everysec")
    srv.start()
    try:
        store = RedisStore(srv.url, prefix="x:")
        with pytest.raises(SystemExit, match="appendfsync"):
            await store.open()
        await store.close()
        unsafe = RedisStore(srv.url, prefix="x:", unsafe=True)
        await unsafe.open()
        await unsafe.append(rec(1))
        assert len(await unsafe.records()) == 1
        await unsafe.close()
    finally:
        srv.stop()
