"""The hub's snapshot on every store (SQLite, etcd): a start
from the snapshot and the records after it is the fold of the whole log (state, seqs,
dedup answers), and a snapshot the hub can't use is ignored for a full fold. The stores
themselves keep a snapshot as ``tests/store/test_contract.py`` says."""

from __future__ import annotations

import logging
from typing import Any

import msgspec
import pytest

from stream.errors import Conflict
from stream.live.hub import snapshot as snap
from stream.live.hub.dedup import digest
from stream.live.hub.hub import Hub
from stream.live.ops.wallclock import now_ms
from stream.live.wire import protocol as pr
from stream.rules import codec
from stream.rules.engine import Engine
from stream.store import Record, Store

from ...rules.script import AWAY, HOME, T0, game_setup
from ...sinks import Deltas
from ...store.backends import Backend, EtcdBackend, SqliteBackend

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
                            payload_digest=digest(msgspec.json.encode(body)), event=event,
                            received_at=now_ms())


def full_fold(records: list[Record]) -> Engine:
    engine = Engine()
    for r in records:
        engine.feed(codec.decode_event(r.body))
    return engine


class HubSnapshots(Backend):
    async def start_hub(self, store: Store) -> Hub:
        """A hub started on the storage of ``store``, which is closed first (a restart)."""
        await store.close()
        hub = Hub(self.unopened(), Deltas())
        await hub.start()
        return hub

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


class TestSqlite(SqliteBackend, HubSnapshots):
    pass


class TestEtcd(EtcdBackend, HubSnapshots):
    pass
