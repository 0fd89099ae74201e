"""The Redis store through Sentinel, against real processes on loopback: a primary, its
replica and three Sentinels (``stream.tools.harness.SentinelGroup``).

* The URL: the Sentinels, the service's name, the database.
* An ack waits for the replica: with the replica down a write is answered ``unknown``
  (on the primary, not confirmed), never acked, and the fold reads nothing unconfirmed;
  with the replica back, the retry is settled by dedup and acks come again.
* A replica that could lose what it acknowledges (Redis 7.0: ``WAIT`` only says it
  received the write) is refused at start, and holds every write when found on a
  reconnect, until it is right again.
* A failover: the primary SIGKILLed, the replica promoted; the writer and the reads
  follow the new primary, and no acked write is missing.
* With two replicas online, an ack waits for both, though one is asked for: the
  Sentinels may promote either; and a primary failed over while it runs acks nothing
  that only the replica it keeps a moment longer confirms.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from stream.errors import NotStored, StartupRefused, WriteUnknown
from stream.store import START, DuplicateKey, Record
from stream.store.redis import WRITER_NAME, RedisStore
from stream.store.redis_connect import SentinelURL, parse_sentinel_url
from stream.tools.harness import HOST, Processes, RedisProcess, SentinelGroup

from ..tcp_proxy import Proxy
from .backends import rec

# How long an ack may wait for the replica to confirm (its fsync): a healthy pair takes about
# a millisecond, a busy disk has been seen to hold one fsync 372 ms. Where the replica is down
# the wait always runs out; where it is up, nothing but the machine's load decides.
ACK_BUDGET_MS = 2000


@pytest.fixture
def prefix() -> str:
    return f"h{uuid.uuid4().hex[:8]}:"


@pytest.fixture
async def store(sentinel_group: SentinelGroup, prefix: str) -> AsyncIterator[RedisStore]:
    s = RedisStore(sentinel_group.url, prefix=prefix, wait_ms=ACK_BUDGET_MS)
    await s.open()
    try:
        yield s
    finally:
        await s.close()


def direct(server: RedisProcess) -> Any:
    return aioredis.Redis(host=HOST, port=server.port)


async def logged(server: RedisProcess, prefix: str) -> list[str]:
    r = direct(server)
    try:
        from stream.store import redis as redis_store

        return [redis_store._dec.decode(f[b"r"]).client_id for _, f in await r.xrange(prefix + "log")]
    finally:
        await r.aclose()


def test_a_sentinel_url_names_the_sentinels_the_service_and_the_database() -> None:
    assert parse_sentinel_url("redis+sentinel://10.0.0.1:26379,10.0.0.2:26380/arena") == SentinelURL(
        (("10.0.0.1", 26379), ("10.0.0.2", 26380)), "arena")
    assert parse_sentinel_url("redis+sentinel://:s%40cret@s1:26379/arena?db=2") == SentinelURL(
        (("s1", 26379),), "arena", None, "s@cret", 2)
    assert parse_sentinel_url("redis+sentinel://me:pw@[::1]:26379/arena").sentinels == (("::1", 26379),)
    for bad in ("redis+sentinel://s1:26379/", "redis+sentinel://s1/arena", "redis://s1:6379/0",
                "redis+sentinel://s1:26379/arena?db=x", "redis+sentinel://s1:26379/a/b"):
        with pytest.raises(ValueError):
            parse_sentinel_url(bad)


async def test_with_the_replica_down_nothing_is_acked_and_the_retry_lands_once_it_is_back(
        store: RedisStore, sentinel_group: SentinelGroup, prefix: str) -> None:
    await store.append(rec(1))
    replica = sentinel_group.replica
    await asyncio.to_thread(replica.kill9)
    try:
        with pytest.raises(WriteUnknown) as info:
            await store.append(rec(2))
        assert info.value.code == "unknown" and "not confirmed on 1 replica" in info.value.detail
        assert await logged(sentinel_group.primary, prefix) == ["e1", "e2"], "it is on the primary"
        with pytest.raises(NotStored, match="not confirmed"):  # the fold reads nothing unconfirmed
            await store.rows_after(START)
        await store.reset_after_failure()
        with pytest.raises(WriteUnknown):  # still no replica: still no ack
            await store.append(rec(2))
    finally:
        await replica.astart()
        await asyncio.to_thread(sentinel_group.wait_synced)
    await store.reset_after_failure()
    with pytest.raises(DuplicateKey) as dup:  # the retry: the same event, the same id
        await store.append(rec(2))
    assert dup.value.existing == rec(2)
    await store.append(rec(3))
    assert await logged(replica, prefix) == ["e1", "e2", "e3"]
    assert [r[1] for r in (await store.rows_after(START))[1]] == [1, 2, 3]


async def test_a_replica_that_could_lose_what_it_acks_is_refused_then_held(
        sentinel_group: SentinelGroup, prefix: str) -> None:
    replica, primary = direct(sentinel_group.replica), direct(sentinel_group.primary)
    store = RedisStore(sentinel_group.url, prefix=prefix)
    try:
        await replica.config_set("appendfsync", "everysec")
        with pytest.raises(StartupRefused, match=r"the replica 127\.0\.0\.1:\d+ has appendonly=yes "
                                                 r"appendfsync=everysec"):
            await store.open()
        await store.close()
        unsafe = RedisStore(sentinel_group.url, prefix=prefix, unsafe=True)
        await unsafe.open()
        await unsafe.append(rec(1))
        await unsafe.close()

        await replica.config_set("appendfsync", "always")
        await store.open()
        await store.append(rec(2))
        # Found on a reconnect of the writer: every write held, with the reason.
        await replica.config_set("appendfsync", "everysec")
        assert await primary.client_kill_filter(_type="normal", skipme=True) >= 1
        with pytest.raises(NotStored, match="appendfsync=everysec"):
            await store.append(rec(3))
        assert store.hold is not None and store.hold.kind == "unsafe"
        await store.reset_after_failure()
        with pytest.raises(NotStored, match="appendfsync=everysec"):  # checked again at each attempt
            await store.append(rec(3))
        await replica.config_set("appendfsync", "always")
        await store.reset_after_failure()
        await store.append(rec(3))
        assert store.hold is None
        assert [r.client_id for r in await store.records()] == ["e1", "e2", "e3"]
    finally:
        await replica.config_set("appendfsync", "always")
        await store.close()
        await replica.aclose()
        await primary.aclose()


async def test_the_writer_connection_is_named_for_operators(store: RedisStore,
                                                           sentinel_group: SentinelGroup) -> None:
    await store.append(rec(1))
    primary = direct(sentinel_group.primary)
    try:
        assert any(c.get("name") == WRITER_NAME for c in await primary.client_list())
    finally:
        await primary.aclose()


async def test_a_failover_is_followed_and_no_acked_write_is_missing(tmp_path: Path) -> None:
    async with Processes(tmp_path) as processes:
        group = SentinelGroup(tmp_path, group=processes)
        await group.astart()
        store = RedisStore(group.url, prefix="f:", wait_ms=ACK_BUDGET_MS)
        await store.open()
        acked: list[Record] = []

        async def send_until_acked(r: Record) -> None:
            """As a device does: an unknown or refused write is sent again with the same id;
            a duplicate answer to a retry is its ack."""
            while True:
                try:
                    await store.append(r)
                except DuplicateKey:
                    pass
                except NotStored:
                    await asyncio.sleep(0.1)
                    await store.reset_after_failure()
                    continue
                acked.append(r)
                return

        try:
            await _in_order(send_until_acked, [rec(n) for n in range(1, 6)])
            old = await asyncio.to_thread(group.kill_primary)
            pending = [rec(n) for n in range(6, 11)]

            sender = asyncio.create_task(_in_order(send_until_acked, pending))
            new = await asyncio.to_thread(group.wait_promoted, old)
            assert new is not old
            await asyncio.sleep(0.5)
            assert not sender.done(), "acked with no replica to confirm it"
            await group.arejoin(old)
            async with asyncio.timeout(30):
                await sender
            records = await store.records()
            assert [r.client_id for r in records] == [r.client_id for r in acked]
            assert await logged(old, "f:") == [r.client_id for r in acked], "the old primary, a replica now"
        finally:
            await store.close()


async def test_with_two_replicas_online_an_ack_waits_for_both(tmp_path: Path) -> None:
    """One replica is asked for (the default), but the primary has two online: an event is
    acked only once both have it. One of them stalls (SIGSTOP) while an event is sent: the
    ack comes only after it resumes, and the primary then counts that replica past the
    offset the event was written at."""
    async with Processes(tmp_path) as processes:
        group = SentinelGroup(tmp_path, group=processes, replicas=2)
        await group.astart()
        store = RedisStore(group.url, prefix="t:", wait_ms=ACK_BUDGET_MS)
        await store.open()
        primary = direct(group.primary)
        try:
            await store.append(rec(1))
            slow = next(s for s in group.servers if s is not group.primary)
            assert slow.proc is not None
            before = int((await primary.info("replication"))["master_repl_offset"])
            os.kill(slow.proc.pid, signal.SIGSTOP)
            resumed = asyncio.get_running_loop().call_later(0.5, os.kill, slow.proc.pid, signal.SIGCONT)
            try:
                await store.append(rec(2))
            finally:
                resumed.cancel()
                os.kill(slow.proc.pid, signal.SIGCONT)
            _, _, replicas = await primary.execute_command("ROLE")
            offsets = {int(port): int(offset) for _, port, offset in replicas}
            assert offsets[slow.port] > before, "acked before the stalled replica had the event"
            assert await logged(slow, "t:") == ["e1", "e2"]
        finally:
            await primary.aclose()
            await store.close()


async def test_a_primary_failed_over_while_it_runs_acks_and_serves_nothing_its_other_replica_alone_confirms(
        tmp_path: Path) -> None:
    """Two replicas, and the Sentinels fail the primary over while it still runs (``SENTINEL
    FAILOVER``: as when it was only slow for a moment), and can't reach the other replica
    to move it (it is announced to them through a proxy, cut meanwhile). The old primary
    keeps that replica online for a while: a write confirmed there alone is dropped when it
    follows the new primary. Events are sent all along, one at a time, as the store's caller
    does (after a refusal, the writer is reset), and read back as a follower of the log
    does (what it is given is served to viewers): every acked one, and every one served,
    is in the new primary's log once the replicas follow it."""
    async with Processes(tmp_path) as processes, contextlib.AsyncExitStack() as stack:
        group = SentinelGroup(tmp_path, group=processes, replicas=2)
        kept = group.servers[2]
        proxy = await stack.enter_async_context(Proxy(kept.port))
        kept.extra += ["--replica-announce-port", str(proxy.port)]  # the Sentinels reach it by the proxy
        await group.astart()
        store = RedisStore(group.url, prefix="v:", wait_ms=ACK_BUDGET_MS)
        await store.open()
        stack.push_async_callback(store.close)
        acked: list[str] = []
        served: list[str] = []  # what a follower of the log was given, as another node's is
        refusals: list[str] = []
        done = asyncio.Event()

        async def send() -> None:
            n = 0
            while not done.is_set():
                n += 1
                r = rec(n, game=None, client_id=f"v{n}")
                try:
                    await store.append(r)
                    acked.append(r.client_id)
                except (NotStored, WriteUnknown) as err:
                    refusals.append(err.detail)
                    await store.reset_after_failure()
                    await asyncio.sleep(0.01)

        async def follow() -> None:
            last = START
            while not done.is_set():
                try:
                    got = await store.read_after(last, count=200)
                except NotStored:
                    got = []
                served.extend(r.client_id for _, r in got)
                last = got[-1][0] if got else last
                await asyncio.sleep(0.005)

        sender = asyncio.create_task(send())
        follower = asyncio.create_task(follow())
        try:
            await asyncio.sleep(0.5)
            old, before = group.primary, len(acked)
            proxy.down()
            await asyncio.to_thread(group.sentinels[0].client().execute_command, "SENTINEL", "FAILOVER",
                                    group.service)
            new = await asyncio.to_thread(group.wait_promoted, old)
            await asyncio.sleep(3.0)  # the failover times out on the replica it can't reach
            proxy.refuse = False      # reached again: the Sentinels move it to the new primary
            await asyncio.to_thread(group.wait_synced, 30.0, 2)
            await asyncio.sleep(0.5)
        finally:
            done.set()
            await asyncio.gather(sender, follower)
        in_log = set(await logged(new, "v:"))
        lost = [c for c in acked if c not in in_log]
        assert not lost, f"{len(lost)} of {len(acked)} acked event(s) lost, e.g. {lost[:3]}"
        unkept = [c for c in served if c not in in_log]
        assert not unkept, f"{len(unkept)} event(s) served to a follower and then lost, e.g. {unkept[:3]}"
        assert len(served) > 10, "the follower was served nothing"
        assert before > 10 and len(acked) > before and refusals, (before, len(acked), refusals)


async def _in_order(send: Any, records: list[Record]) -> None:
    for r in records:
        await send(r)
