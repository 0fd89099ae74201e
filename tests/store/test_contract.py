"""One contract, every backend: what ``stream.store.Store`` promises, run
against a real SQLite file and a real redis-server on loopback.

Each backend's test class inherits ``StoreContract`` and provides ``open_store``
(a fresh store on fresh storage), ``reopen`` (a new instance on the same
storage, as after a restart), ``unopened`` (the same, not opened yet) and
``beyond`` (a position past a given one).

The snapshot tests run a ``Hub`` on the store: a start from a snapshot and the
records after it must be the fold of the whole log (state, seqs, dedup answers).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import redis.asyncio as aioredis

from stream.errors import Conflict, NotStored, StartupRefused
from stream.live import protocol as pr
from stream.live import snapshot as snap
from stream.live.dedup import digest
from stream.live.hub import Hub
from stream.rules import codec
from stream.rules.engine import Engine
from stream.store import START, DuplicateKey, Record, SeqTaken, Store, TokenRecord
from stream.store.redis import RedisStore
from stream.store.sqlite import SqliteStore
from stream.tools.harness import HOST, SentinelGroup

from ..redis_server import RedisServer
from ..rules.script import AWAY, HOME, T0, game_setup
from ..sinks import Deltas


def rec(n: int, *, game: str | None = "g1", seq: int | None = None, device: str = "d1",
        client_id: str | None = None, body: bytes | None = None) -> Record:
    return Record(game=game, seq=n if seq is None and game is not None else seq, device=device,
                  client_id=client_id or f"e{n}", official="Ump One", digest=bytes([n % 256]) * 16,
                  received_at=1_780_000_000_000 + n, body=body or b'{"n":%d}' % n)


def row(r: Record) -> tuple[Any, ...]:
    return (r.game, r.seq, r.device, r.client_id, r.digest, r.body)


_CYCLE = ("clock.start", "whistle", "clock.start", "goal", "clock.start", "whistle", "clock.start",
          "card", "whistle", "void")


def bodies(game: str, first: int, n: int) -> list[dict[str, Any]]:
    """Events ``first`` to ``first + n - 1`` of ``game`` (0 is its set-up), all accepted: play,
    stoppages, goals, yellows that arrive late (stamped in the stoppage before the last
    clock.start), and every other one voided."""
    out: list[dict[str, Any]] = []
    for k in range(first, first + n):
        at = T0 + k * 10_000
        kind = _CYCLE[(k - 1) % len(_CYCLE)]
        cycle = (k - 1) // len(_CYCLE)
        body: dict[str, Any] = {"type": kind}
        if k == 0:
            body = game_setup(game, at=T0 - 60_000)
        elif kind == "goal":
            body = {"type": "goal", "team": ("home", "away")[cycle % 2]}
        elif kind == "card":
            body = {"type": "card", "player": (*HOME, *AWAY)[cycle % 6], "color": "yellow",
                    "conduct": "arguing", "at": at - 15_000}
        elif kind == "void":
            body = ({"type": "void", "target": f"ump/{game}-{k - 2}"} if cycle % 2
                    else {"type": "horn", "split": True})
        out.append({"id": f"{game}-{k}", "at": at, "game": game, **body})
    return out


async def send(hub: Hub, body: dict[str, Any]) -> pr.Ack:
    """As a device's event reaches the hub: its digest as sent, its log id ``device/id``."""
    event = codec.decode_event(msgspec.json.encode({**body, "id": f"ump/{body['id']}"}))
    return await hub.submit(device="ump", official="Ump One", client_id=body["id"],
                            payload_digest=digest(msgspec.json.encode(body)), event=event)


def full_fold(records: list[Record]) -> Engine:
    engine = Engine()
    for r in records:
        engine.feed(codec.decode_event(r.body))
    return engine


class StoreContract:
    async def open_store(self) -> Store:
        raise NotImplementedError

    async def reopen(self, store: Store) -> Store:
        raise NotImplementedError

    def beyond(self, position: str) -> str:
        """A position after ``position`` that no record has yet."""
        raise NotImplementedError

    def unopened(self) -> Store:
        """A new instance on the same storage, not yet opened (``Hub.start`` opens it)."""
        raise NotImplementedError

    async def start_hub(self, store: Store) -> Hub:
        """A hub started on the storage of ``store``, which is closed first (a restart)."""
        await store.close()
        hub = Hub(self.unopened(), Deltas())
        await hub.start()
        return hub

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

    async def test_a_restart_folds_the_snapshot_then_the_tail_as_the_whole_log(self, store: Store) -> None:
        hub = await self.start_hub(store)
        first = {b["id"]: await send(hub, b) for b in bodies("g1", 0, 60) + bodies("g2", 0, 25)}
        await hub.close()  # a clean shutdown: a snapshot of all 85
        hub = await self.start_hub(hub.store)
        try:
            assert (hub.folded, hub.snapshots.position) == (0, hub.position)
            assert hub.engine.state_hash() == full_fold(await hub.store.records()).state_hash()
            assert hub.seqs == {"g1": 60, "g2": 25}
            # A retry of an event folded from the snapshot: its first ack, as a duplicate.
            for b in (bodies("g1", 0, 1)[0], bodies("g1", 48, 1)[0], bodies("g2", 24, 1)[0]):
                again = await send(hub, b)
                assert again == msgspec.structs.replace(first[b["id"]], duplicate=True, notices=[])
            with pytest.raises(Conflict):
                await send(hub, {**bodies("g1", 48, 1)[0], "type": "whistle"})
            # Play on: late cards and voids reach into the games the snapshot holds.
            later = {b["id"]: await send(hub, b) for b in bodies("g1", 60, 30) + bodies("g2", 25, 10)}
            live = hub.engine.state_hash()
            snapshot_at = hub.snapshots.position
        finally:
            await hub.store.close()  # a crash: no snapshot at shutdown
        hub = await self.start_hub(hub.store)
        try:
            assert (hub.folded, hub.snapshots.position) == (40, snapshot_at)
            assert hub.engine.state_hash() == live == full_fold(await hub.store.records()).state_hash()
            assert hub.seqs == {"g1": 90, "g2": 35}
            for b in (bodies("g1", 3, 1)[0], bodies("g1", 89, 1)[0], bodies("g2", 30, 1)[0]):
                acks = first | later
                assert await send(hub, b) == msgspec.structs.replace(acks[b["id"]], duplicate=True,
                                                                    notices=[])
            assert (await send(hub, bodies("g1", 90, 1)[0])).seq == 91
        finally:
            await hub.close()

    async def test_a_bad_snapshot_is_ignored_for_a_full_fold(self, store: Store,
                                                             caplog: pytest.LogCaptureFixture,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
        hub = await self.start_hub(store)
        for b in bodies("g1", 0, 40):
            await send(hub, b)
        expected = hub.engine.state_hash()
        await hub.close()
        store = await self.reopen(hub.store)
        found = await store.load_snapshot()
        assert found is not None
        at, good = found
        engine = full_fold(await store.records())
        beyond = self.beyond(at)

        def made(**kw: Any) -> bytes:
            args: dict[str, Any] = {"epoch": store.epoch, "position": at, **kw}
            return bytes(snap.capture(engine, {}, {}, **args))

        with monkeypatch.context() as m:
            m.setattr(snap, "FORMAT", snap.FORMAT - 1)
            old_version = made()
        flipped = bytearray(good)
        flipped[len(good) // 2] ^= 0x40
        cases = {"not msgpack": (at, b"\xc1 not a snapshot"), "truncated": (at, good[:-100]),
                 "a flipped bit": (at, bytes(flipped)), "older code": (at, old_version),
                 "another log": (at, made(epoch="another")), "another position": (at, made(position=beyond)),
                 "beyond the log": (beyond, made(position=beyond))}
        for case, (position, blob) in cases.items():
            await store.save_snapshot(position, blob)
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="arena_stream.hub"):
                hub = await self.start_hub(store)
            try:
                assert (hub.folded, hub.snapshots.position) == (40, None), case
                assert hub.engine.state_hash() == expected, case
                warned = [r.message for r in caplog.records]
                assert warned == ["snapshot ignored; folding the whole log"], case
            finally:
                await hub.close()  # writes a good one again
            store = await self.reopen(hub.store)
            assert await store.load_snapshot() == (at, good), case
        await store.close()

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

    def beyond(self, position: str) -> str:
        return str(int(position) + 1)

    def unopened(self) -> Store:
        return SqliteStore(self.path)

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

    def beyond(self, position: str) -> str:
        return f"{int(position.partition('-')[0]) + 1}-0"

    def unopened(self) -> Store:
        return RedisStore(self.url, prefix=self.prefix)

    async def test_pipelined_appends_share_a_round_trip(self, store: Store) -> None:
        """Appends of different games share a pipelined batch (one AOF fsync for many);
        a game's appends go one batch after another, in order."""
        assert isinstance(store, RedisStore)
        records = [rec(n, game=f"g{n % 10}", seq=n // 10 + 1) for n in range(300)]
        await asyncio.gather(*(store.append(r) for r in records))
        assert store.committed_records == 300
        assert store.commits <= 40  # 30 per game, 10 games a batch
        assert await store.game_records("g3") == [r for r in records if r.game == "g3"]

    async def test_an_append_built_on_a_refused_one_never_lands(self, store: Store) -> None:
        """Two nodes on one Redis. Node Y takes seq 2 and 3 of a game while node X has
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


async def test_redis_that_could_lose_acked_events_is_refused(tmp_path: Path) -> None:
    srv = RedisServer(tmp_path / "lossy", fsync="everysec")
    srv.start()
    try:
        store = RedisStore(srv.url, prefix="x:")
        with pytest.raises(StartupRefused, match="appendfsync"):
            await store.open()
        await store.close()
        unsafe = RedisStore(srv.url, prefix="x:", unsafe=True)
        await unsafe.open()
        await unsafe.append(rec(1))
        assert len(await unsafe.records()) == 1
        await unsafe.close()
    finally:
        srv.stop()


# ----------------------------------------------------------------------- Redis through Sentinel


class TestSentinelStore(TestRedisStore):
    """The same contract through Sentinel (a primary, its replica, three Sentinels), with
    every ack waiting for the replica (``replicas`` 1, the default on such a URL)."""

    @pytest.fixture(autouse=True)
    def _server(self, sentinel_group: SentinelGroup) -> None:
        self.group = sentinel_group
        self.url = sentinel_group.url
        self.prefix = f"s{uuid.uuid4().hex[:8]}:"

    async def test_an_ack_comes_once_the_replica_has_the_write(self, store: Store) -> None:
        assert isinstance(store, RedisStore) and store.replicas == 1
        replica = aioredis.Redis(host=HOST, port=self.group.replica.port)
        try:
            for n in range(1, 21):
                await store.append(rec(n))
                # Read on the replica the moment the ack is given: it is there already.
                got = await replica.xrange(self.prefix + "log", "-", "+") or []
                assert len(got) == n, f"acked record {n} is not on the replica yet"
        finally:
            await replica.aclose()
