"""Every store, on fresh storage: the backends a test class runs against, and records to
append. Nothing of the service: the store's tests and the service's (the hub's snapshot on
every store, ``tests/live/hub/test_snapshot_stores.py``) both use them.

A test class inherits one backend (``SqliteBackend``, ``EtcdBackend``) and a set of tests
written against ``Backend``: ``open_store`` (a fresh store on fresh storage), ``reopen`` (a
new instance on the same storage, as after a restart), ``unopened`` (the same, not opened
yet) and ``beyond`` (a position past a given one); the ``store`` fixture is an open one,
closed after the test. etcd needs the fixture ``etcd_url`` (a real three-member cluster for
the module, a key prefix of the test's own: tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from stream.store import Record, Store
from stream.store.etcd import EtcdStore
from stream.store.sqlite import SqliteStore


def rec(n: int, *, game: str | None = "g1", seq: int | None = None, device: str = "d1",
        client_id: str | None = None, body: bytes | None = None) -> Record:
    return Record(game=game, seq=n if seq is None and game is not None else seq, device=device,
                  client_id=client_id or f"e{n}", official="Ump One", digest=bytes([n % 256]) * 16,
                  received_at=1_780_000_000_000 + n, body=body or b'{"n":%d}' % n)


def row(r: Record) -> tuple[Any, ...]:
    return (r.game, r.seq, r.device, r.client_id, r.digest, r.body)


class Backend:
    async def open_store(self) -> Store:
        s = self.unopened()
        await s.open()
        return s

    async def reopen(self, store: Store) -> Store:
        await store.close()
        return await self.open_store()

    def beyond(self, position: str) -> str:
        """A position after ``position`` that no record has yet."""
        raise NotImplementedError

    def unopened(self) -> Store:
        """A new instance on the same storage, not yet opened."""
        raise NotImplementedError

    @pytest.fixture
    async def store(self) -> AsyncIterator[Store]:
        s = await self.open_store()
        try:
            yield s
        finally:
            await s.close()


class SqliteBackend(Backend):
    @pytest.fixture(autouse=True)
    def _dir(self, tmp_path: Path) -> None:
        self.path = tmp_path / "arena.sqlite"

    def beyond(self, position: str) -> str:
        return str(int(position) + 1)

    def unopened(self) -> Store:
        return SqliteStore(self.path)


class EtcdBackend(Backend):
    """A real three-member etcd cluster (``etcd_cluster``, started from Debian's package for
    the module), each test under a key prefix of its own."""

    @pytest.fixture(autouse=True)
    def _cluster(self, etcd_url: str) -> None:
        self.url = etcd_url

    def beyond(self, position: str) -> str:
        return f"{int(position.partition('-')[0]) + 1}-0"

    def unopened(self) -> Store:
        return EtcdStore(self.url)
