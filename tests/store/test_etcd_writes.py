"""The etcd store's writes when a member goes away mid-call, on a real three-member
cluster: a proxy in front of one member loses a transaction's answer (etcd committed
it), or takes nothing at all.

* An answer lost on one member: the transaction is sent again to the next member, finds
  its own record under its dedup key, and that is the ack: stored once.
* Nothing answered anywhere: ``WriteUnknown``, and every later append ``NotStored`` until
  the service has reloaded (``reset_after_failure``); the event's own resend then finds it
  stored (``DuplicateKey`` with the very same record: the hub acks it).
* No member reachable: ``NotStored``, never "unknown".
* A snapshot larger than one etcd request is kept in chunks, and comes back whole.
* ``status()`` names the member in use and the leader (``/readyz``, ``/metrics``).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import AsyncIterator

import pytest

from stream.errors import NotStored, WriteUnknown
from stream.store import START, DuplicateKey
from stream.store.etcd import CHUNK, EtcdStore
from stream.store.etcd_client import Unreachable, parse_url

from ..tcp_proxy import Proxy
from .backends import rec


@pytest.fixture
async def proxy(etcd_url: str) -> AsyncIterator[Proxy]:
    """A proxy in front of the cluster's first member."""
    _host, port = parse_url(etcd_url).members[0]
    async with Proxy(port) as p:
        yield p


def _through(etcd_url: str, proxy: Proxy, *, alone: bool = False) -> str:
    """``etcd_url`` with its first member reached through ``proxy`` (and, ``alone``, no other)."""
    parsed = parse_url(etcd_url)
    members = [f"127.0.0.1:{proxy.port}"] + ([] if alone else [f"{h}:{p}" for h, p in parsed.members[1:]])
    return f"etcd://{','.join(members)}/{parsed.prefix}"


async def test_an_answer_lost_on_one_member_is_acked_by_the_resend(etcd_url: str, proxy: Proxy) -> None:
    store = EtcdStore(_through(etcd_url, proxy))
    await store.open()
    try:
        proxy.cut_after(b"/v3/kv/txn")
        await store.append(rec(1))           # committed, answer lost, resent: the ack
        assert proxy.cut.is_set()
        assert store.gateway.member == 1     # the next member answered, and stays in use
        await store.append(rec(2))
        assert await store.records() == [rec(1), rec(2)]
        assert store.stats().records == 2
    finally:
        await store.close()


async def test_nothing_answered_is_unknown_and_holds_every_append(etcd_url: str, proxy: Proxy) -> None:
    store = EtcdStore(_through(etcd_url, proxy, alone=True), budget=1.0)
    await store.open()
    try:
        proxy.cut_after(b"/v3/kv/txn", down=True)  # answer lost, then the member is out of reach
        with pytest.raises(WriteUnknown):
            await store.append(rec(1))
        proxy.refuse = False
        with pytest.raises(NotStored) as held:
            await store.append(rec(2))
        assert "earlier write failed" in held.value.detail
        await store.reset_after_failure()    # the service has folded the log again
        with pytest.raises(DuplicateKey) as info:  # the event's resend: it was stored
            await store.append(rec(1))
        assert info.value.existing == rec(1)
        await store.append(rec(2))
        assert [r.seq for r in await store.records()] == [1, 2]
    finally:
        await store.close()


async def test_no_member_reachable_is_not_stored(etcd_url: str, proxy: Proxy) -> None:
    store = EtcdStore(_through(etcd_url, proxy, alone=True), budget=1.0)
    await store.open()
    try:
        await proxy.close()  # the member's address refuses connections
        with pytest.raises(NotStored) as info:
            await store.append(rec(1))
        assert not isinstance(info.value, WriteUnknown)
        with pytest.raises(Unreachable):
            await store.records()
    finally:
        await store.close()
    again = EtcdStore(etcd_url)
    await again.open()
    try:
        assert await again.records() == []
    finally:
        await again.close()


async def test_a_snapshot_larger_than_a_request_is_kept_in_chunks(etcd_url: str) -> None:
    store = EtcdStore(etcd_url)
    await store.open()
    try:
        await store.append(rec(1))
        position, _ = await store.rows_after(START)
        blob = hashlib.sha256(b"x").digest() * (3 * CHUNK // 32 + 5)  # four chunks
        await store.save_snapshot(position, blob)
        await store.save_snapshot(position, blob[::-1])  # the one before is deleted
        assert await store.load_snapshot() == (position, blob[::-1])
        left = await store._range(store.p + b"snapshot/", keys_only=True)
        assert len(left) == 4, "only the newest snapshot's chunks are kept"
    finally:
        await store.close()


async def test_status_names_the_member_in_use_and_the_leader(etcd_url: str) -> None:
    store = EtcdStore(etcd_url)
    await store.open()
    try:
        await store.append(rec(1))
        for _ in range(50):
            status = store.status()
            if status.leader is not None:
                break
            await asyncio.sleep(0.1)
        members = {f"{h}:{p}" for h, p in parse_url(etcd_url).members}
        assert status.kind == "etcd" and status.member in members
        assert status.leader in members and status.members == 3
        assert status.raft_term is not None and status.raft_term >= 1
        assert status.commit_seconds is not None and status.commit_seconds > 0
    finally:
        await store.close()


async def test_one_member_away_is_no_outage_and_all_away_is_said_once(
        etcd_url: str, proxy: Proxy, caplog: pytest.LogCaptureFixture) -> None:
    """A member out of reach while others answer is logged as nothing (the next answers);
    every member out of reach is said once, then once when etcd answers again."""
    store = EtcdStore(_through(etcd_url, proxy), budget=1.0)
    await store.open()
    try:
        with caplog.at_level(logging.INFO, logger="arena_stream.store"):
            proxy.down()
            await store.append(rec(1))
            assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    finally:
        await store.close()
    proxy.refuse = False
    alone = EtcdStore(_through(etcd_url, proxy, alone=True), budget=0.5)
    await alone.open()
    try:
        with caplog.at_level(logging.INFO, logger="arena_stream.store"):
            proxy.down()
            for _ in range(3):
                with pytest.raises(NotStored):
                    await alone.records()
            proxy.refuse = False
            assert len(await alone.records()) == 1
        said = [(r.levelname, r.getMessage()) for r in caplog.records]
        assert said == [("ERROR", "etcd unavailable"), ("WARNING", "etcd available again")], said
    finally:
        await alone.close()
