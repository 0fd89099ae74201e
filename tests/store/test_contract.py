"""One contract, every backend: what ``stream.store.Store`` promises, run
against a real SQLite file and a real three-member etcd cluster on loopback.

Each backend's test class inherits ``StoreContract`` and its backend
(``tests/store/backends.py``). What the service makes of a snapshot on each store (a
start from it and the records after it are the fold of the whole log) is
``tests/live/hub/test_snapshot_stores.py``'s.
"""

from __future__ import annotations

import asyncio
import hashlib

import msgspec
import pytest

from stream.errors import NotStored
from stream.store import (
    START,
    DuplicateKey,
    Followable,
    Record,
    SeqTaken,
    Store,
    StoreStats,
    TokenRecord,
    entry_key,
)
from stream.store.sqlite import SqliteStore

from .backends import Backend, EtcdBackend, SqliteBackend, rec, row


class StoreContract(Backend):
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
        # What follows in the game was built on the refused copy: refused until readmitted.
        with pytest.raises(SeqTaken):
            await store.append(rec(2, device="d2", client_id="e1"))
        store.readmit("g1")
        await store.append(rec(2, device="d2", client_id="e1"))  # another device may reuse the id
        assert [r.device for r in await store.records()] == ["d1", "d2"]

    async def test_a_retried_identical_record_holds_nothing_back(self, store: Store) -> None:
        """The same record twice (two nodes' timers logging one deadline tick): the second is
        a ``DuplicateKey`` carrying it, and the game's next append lands."""
        await store.append(rec(1))
        with pytest.raises(DuplicateKey) as info:
            await store.append(rec(1))
        assert info.value.existing == rec(1)
        await store.append(rec(2))
        assert [r.seq for r in await store.records()] == [1, 2]

    async def test_a_refused_seq_holds_the_game_until_readmitted(self, store: Store) -> None:
        """After a refused seq the game's appends are refused (built on the refused one), other
        games' are not; ``readmit`` takes the game's appends again."""
        await store.append(rec(1))
        with pytest.raises(SeqTaken):
            await store.append(rec(1, client_id="other"))
        with pytest.raises(SeqTaken):
            await store.append(rec(2))
        await store.append(rec(1, game="g2", client_id="g2-1"))
        store.readmit("g1")
        await store.append(rec(2))
        assert [(r.game, r.seq) for r in await store.records()] == [("g1", 1), ("g2", 1), ("g1", 2)]

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
        """Concurrent appends with a repeated dedup key and a taken seq among them: each
        of those fails with its reason, the others land; except that after a refused seq
        the game's later appends (built on the refused one) fail too, until a reload."""
        await store.append(rec(1))
        batch = [rec(2), rec(0, game=None, client_id="e1"), rec(3), rec(2, client_id="taken"), rec(4),
                 rec(1, game="g2", client_id="g2-1")]
        outcomes = await asyncio.gather(*(store.append(r) for r in batch), return_exceptions=True)
        assert outcomes[0] is None and outcomes[2] is None and outcomes[5] is None
        assert isinstance(outcomes[1], DuplicateKey) and outcomes[1].existing == rec(1)
        assert isinstance(outcomes[3], SeqTaken) and isinstance(outcomes[4], SeqTaken)
        assert await store.game_records("g1") == [rec(1), rec(2), rec(3)]
        assert await store.game_records("g2") == [rec(1, game="g2", client_id="g2-1")]
        assert len(await store.records()) == 4
        await store.reset_after_failure()  # the service has folded the log again
        await store.append(rec(4))
        assert [r.seq for r in await store.game_records("g1")] == [1, 2, 3, 4]

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

    async def test_stats_count_what_was_committed_since_the_store_opened(self, store: Store) -> None:
        assert store.stats() == StoreStats(commits=0, records=0)
        await asyncio.gather(*(store.append(rec(n)) for n in range(1, 21)))
        with pytest.raises(DuplicateKey):
            await store.append(rec(7))
        stats = store.stats()
        assert stats.records == 20  # the refused one is not among them
        assert 1 <= stats.commits <= 21
        again = await self.reopen(store)
        try:
            assert again.stats() == StoreStats(commits=0, records=0)
            await again.append(rec(21))
            assert again.stats() == StoreStats(commits=1, records=1)
        finally:
            await again.close()

    async def test_each_transaction_and_each_append_is_timed(self, store: Store) -> None:
        """``on_commit`` once per transaction, with its time alone; ``on_durable`` once per
        append, with its time from the call to durable, never less than a transaction's."""
        commits: list[float] = []
        durable: list[float] = []
        store.on_commit, store.on_durable = commits.append, durable.append
        await asyncio.gather(*(store.append(rec(n)) for n in range(1, 11)))
        assert len(durable) == 10 and len(commits) == store.stats().commits
        assert all(t > 0 for t in commits) and min(durable) >= min(commits)
        await store.append(rec(11))
        assert len(durable) == 11 and durable[-1] >= commits[-1]

    async def test_revocations_persist(self, store: Store) -> None:
        await store.revoke("jti-1", 1, "admin", "lost device")
        await store.revoke("jti-1", 2, "admin", "twice is harmless")
        assert await store.revoked() == {"jti-1"}
        again = await self.reopen(store)
        try:
            assert await again.revoked() == {"jti-1"}
        finally:
            await again.close()

    async def test_blobs_are_kept_by_digest_and_survive_a_restart(self, store: Store) -> None:
        png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
        sha = hashlib.sha256(png).hexdigest()
        assert await store.get_blob(sha) is None
        await store.put_blob(sha, "image/png", png)
        await store.put_blob(sha, "image/png", png)  # again: harmless
        other = b"GIF89a" + b"\x00\xff" * 10
        await store.put_blob(hashlib.sha256(other).hexdigest(), "image/gif", other)
        assert await store.get_blob(sha) == ("image/png", png)
        again = await self.reopen(store)
        try:
            assert await again.get_blob(sha) == ("image/png", png)
            assert await again.get_blob(hashlib.sha256(other).hexdigest()) == ("image/gif", other)
            assert await again.get_blob("0" * 64) is None
        finally:
            await again.close()

    async def test_tokens_issued_are_recorded_in_order_and_survive_a_restart(self, store: Store) -> None:
        assert await store.tokens() == []
        claims = [msgspec.json.encode({"sub": f"ump-{n}", "role": "umpire", "game": "g1", "jti": f"j{n}"})
                  for n in range(3)]
        for n, c in enumerate(claims):
            await store.record_token(c, 1_780_000_000_000 + n, "committee-ñandú")
        expected = [TokenRecord(claims=c, at=1_780_000_000_000 + n, by="committee-ñandú")
                    for n, c in enumerate(claims)]
        assert await store.tokens() == expected
        again = await self.reopen(store)
        try:
            assert await again.tokens() == expected
        finally:
            await again.close()

    # ------------------------------------------------------------ snapshots

    async def test_rows_after_a_position_are_the_records_after_it(self, store: Store) -> None:
        assert await store.rows_after(START) == (START, [])
        records = [rec(1), rec(2), rec(0, game=None, client_id="t1"), rec(3)]
        for r in records[:2]:
            await store.append(r)
        second, rows = await store.rows_after(START)
        assert rows == [row(r) for r in records[:2]]
        for r in records[2:]:
            await store.append(r)
        last, rows = await store.rows_after(second)
        assert rows == [row(r) for r in records[2:]]
        assert (await store.rows_after(START))[0] == last
        assert await store.rows_after(last) == (last, [])
        for bad in (self.beyond(last), "not a position"):
            with pytest.raises(LookupError):
                await store.rows_after(bad)

    async def test_a_snapshot_is_kept_replaced_and_survives_a_restart(self, store: Store) -> None:
        assert await store.load_snapshot() is None
        await store.append(rec(1))
        first, _ = await store.rows_after(START)
        await store.save_snapshot(first, b"one")
        assert await store.load_snapshot() == (first, b"one")
        await store.append(rec(2))
        second, _ = await store.rows_after(START)
        blob = bytes(range(256)) * 4096  # 1 MiB, every byte value
        await store.save_snapshot(second, blob)
        again = await self.reopen(store)
        try:
            assert await again.load_snapshot() == (second, blob)
            assert await again.records() == [rec(1), rec(2)]  # the log is untouched
        finally:
            await again.close()


class TestSqliteStore(SqliteBackend, StoreContract):
    async def test_a_failed_snapshot_write_fails_nothing_else(self, store: Store) -> None:
        assert isinstance(store, SqliteStore)
        await store.append(rec(1))
        first, _ = await store.rows_after(START)
        await store.save_snapshot(first, b"small")
        pages = await store._submit(lambda c: c.execute("PRAGMA page_count").fetchone()[0])
        await store._submit(lambda c: c.execute(f"PRAGMA max_page_count={pages + 8}"))  # nearly full
        results = await asyncio.gather(store.append(rec(2)), store.save_snapshot(first, b"x" * 2**20),
                                       store.append(rec(3)), return_exceptions=True)
        assert results[0] is None and results[2] is None
        assert isinstance(results[1], NotStored)
        await store.append(rec(4))  # no reload needed: appends were never refused
        assert await store.records() == [rec(1), rec(2), rec(3), rec(4)]
        assert await store.load_snapshot() == (first, b"small")

    async def test_group_commit_batches_concurrent_appends(self, store: Store) -> None:
        assert isinstance(store, SqliteStore)
        await asyncio.gather(*(store.append(rec(n)) for n in range(1, 301)))
        stats = store.stats()
        assert stats.records == 300
        assert stats.commits < 300  # several records shared one transaction (one fsync)

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


class SharedLogContract(Backend):
    """What a store several nodes share adds (``Followable``): a node's append built on one
    the log refused never lands, and a node follows what the others append."""

    async def test_an_append_built_on_a_refused_one_never_lands(self, store: Store) -> None:
        """Two nodes on one log. Node Y takes seq 2 and 3 of a game while node X has
        already written its own seq 2: Y's 2 is refused, and Y's 3, built on Y's 2, must
        not land as the next after X's. After Y reloads, it appends again."""
        y = await self.open_store()
        try:
            await store.append(rec(1))
            await store.append(rec(2, client_id="x-2"))           # node X's seq 2
            mine = [rec(2, client_id="y-2"), rec(3, client_id="y-3")]
            outcomes = await asyncio.gather(*(y.append(r) for r in mine), return_exceptions=True)
            assert all(isinstance(o, SeqTaken) for o in outcomes), outcomes
            assert [r.client_id for r in await store.game_records("g1")] == ["e1", "x-2"]
            with pytest.raises(SeqTaken):  # still refused: Y has not reloaded yet
                await y.append(rec(3, client_id="y-3b"))
            await y.reset_after_failure()  # Y has folded the log again
            await y.append(rec(3, client_id="y-3"))
            assert [r.client_id for r in await store.game_records("g1")] == ["e1", "x-2", "y-3"]
        finally:
            await y.close()

    async def test_another_node_follows_every_append_in_order(self, store: Store) -> None:
        """A second node's ``read_after`` waits for the first node's appends and gives each
        once, in the log's order, and resumes from any position it gave."""
        other = await self.open_store()
        try:
            assert isinstance(other, Followable) and isinstance(store, Followable)
            assert await other.end() == START
            assert await other.read_after(START, block_ms=200) == []
            seen: list[tuple[str, Record]] = []

            async def follow() -> None:
                position = START
                while len(seen) < 30:
                    got = await other.read_after(position, block_ms=1000)
                    seen.extend(got)
                    position = got[-1][0] if got else position

            follower = asyncio.create_task(follow())
            records = [rec(n, game=f"g{n % 3}", seq=n // 3 + 1) for n in range(30)]
            for r in records:
                await store.append(r)
            await asyncio.wait_for(follower, 20)
            assert [r for _, r in seen] == records
            positions = [p for p, _ in seen]
            assert positions == sorted(positions, key=entry_key) and len(set(positions)) == 30
            assert await other.end() == positions[-1]
            middle = positions[9]
            assert [r for _, r in await other.read_after(middle, block_ms=100)] == records[10:]
            assert [r for _, r in await other.read_after(middle)] == records[10:]
        finally:
            await other.close()


# ----------------------------------------------------------------------- etcd


class TestEtcdStore(EtcdBackend, StoreContract, SharedLogContract):
    """The contract on a real three-member cluster."""

    async def test_a_games_waiting_appends_share_a_transaction(self, store: Store) -> None:
        """Appends of a game that wait while one is in flight go together in the next
        transaction, in order; different games' go at once."""
        records = [rec(n, game=f"g{n % 3}", seq=n // 3 + 1) for n in range(120)]
        await asyncio.gather(*(store.append(r) for r in records))
        stats = store.stats()
        assert stats.records == 120
        assert stats.commits < 30, stats  # 40 appends a game, in a few batches each
        for g in ("g0", "g1", "g2"):
            assert await store.game_records(g) == [r for r in records if r.game == g]
        assert isinstance(store, Followable)
        positions = [p for p, _ in await store.read_after(START)]
        assert len(set(positions)) == 120, "every record has its own position"
