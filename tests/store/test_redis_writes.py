"""The Redis store's writes and failures, against a real redis-server on loopback:
the append script names every key it touches; a write whose answer is lost is
``unknown`` (it may have run or not, and dedup settles its retry), one Redis never
got is ``not_stored``; after either, nothing is appended until the reload; reads
answer right after a Redis restart; and an outage is logged once, then at most
every 30 s, without a traceback.

The lost answers are real: ``tests/tcp_proxy.py`` sits between the store and
redis-server and drops the connection after Redis has run the script and before
its reply reaches the store (or before the script reaches Redis)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from stream.errors import NotStored, WriteUnknown
from stream.store import DuplicateKey, Record, SeqTaken
from stream.store import redis as redis_store
from stream.store.redis import APPEND, Outage, RedisStore
from stream.store.redis_connect import redacted

from ..redis_server import RedisServer
from ..tcp_proxy import Proxy
from .backends import rec


@pytest.fixture
def prefix() -> str:
    return f"w{uuid.uuid4().hex[:8]}:"


@pytest.fixture
async def direct(redis_server: RedisServer) -> AsyncIterator[Any]:
    """A plain client of the same redis-server, around any proxy: what Redis holds."""
    client = aioredis.from_url(redis_server.url)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
async def proxy(redis_server: RedisServer) -> AsyncIterator[Proxy]:
    async with Proxy(redis_server.port) as p:
        yield p


@pytest.fixture
async def store(proxy: Proxy, prefix: str) -> AsyncIterator[RedisStore]:
    s = RedisStore(proxy.url, prefix=prefix)
    await s.open()
    try:
        yield s
    finally:
        await s.close()


async def logged(direct: Any, prefix: str) -> list[Record]:
    return [redis_store._dec.decode(f[b"r"]) for _, f in await direct.xrange(prefix + "log")]


# ------------------------------------------------------------------ the script


#: Runs before the store's script, in the same script: ``redis.call`` checks that the
#: key of every call is one the caller declared in KEYS (the Redis Cluster rule, which a
#: standalone Redis does not enforce), and knows which argument is the key.
CHECKED = """
local declared = {}
for _, k in ipairs(KEYS) do declared[k] = true end
local real = redis
local redis = setmetatable({call = function(cmd, key, ...)
  local c = string.upper(cmd)
  if c ~= 'HGET' and c ~= 'HSET' and c ~= 'XADD' then error('not a command this check knows: ' .. c) end
  if not declared[key] then error('undeclared key ' .. tostring(key)) end
  return real.call(cmd, key, ...)
end}, {__index = real})
"""


async def test_the_append_script_names_every_key_it_touches(direct: Any, prefix: str) -> None:
    store = RedisStore("redis://unused", prefix=prefix)

    async def run(record: Record, script: str = APPEND) -> list[bytes]:
        _, _, *rest = store.writer.command(record)
        return list(await direct.eval(CHECKED + script, *rest))

    assert (await run(rec(1)))[0] == b"ok"                               # a game's record
    assert (await run(rec(0, game=None, client_id="t1")))[0] == b"ok"   # no game's
    assert (await run(rec(1)))[0] == b"dup"                              # a known dedup key
    assert (await run(rec(5, client_id="e5")))[0] == b"seq"             # not the game's next
    assert [(r.game, r.seq) for r in await logged(direct, prefix)] == [("g1", 1), (None, None)]
    assert len(await direct.xrange(prefix + "game:g1")) == 1
    # The check fails a script that reaches a key it did not declare (as the script did
    # before, building its keys from a prefix passed in ARGV).
    with pytest.raises(ResponseError, match="undeclared key"):
        await run(rec(2), "return redis.call('HGET', ARGV[1] .. 'dedup', 'x')")


# ------------------------------------------------------------------ lost answers


async def test_a_write_whose_answer_is_lost_is_unknown_and_dedup_settles_it(
        store: RedisStore, proxy: Proxy, direct: Any, prefix: str) -> None:
    await store.append(rec(1))
    proxy.cut_after(b"EVAL")   # Redis runs the script; its reply never reaches the store
    with pytest.raises(WriteUnknown) as info:
        await store.append(rec(2))
    assert proxy.cut.is_set()
    assert (info.value.code, isinstance(info.value, NotStored)) == ("unknown", True)
    assert "may be stored or not" in info.value.detail
    assert await logged(direct, prefix) == [rec(1), rec(2)], "it did land"
    await store.reset_after_failure()  # the service has reloaded the log
    with pytest.raises(DuplicateKey) as dup:  # the retry: the same event, the same id
        await store.append(rec(2))
    assert dup.value.existing == rec(2)
    await store.append(rec(3))
    assert await store.records() == [rec(1), rec(2), rec(3)]


async def test_a_write_cut_before_redis_got_it_is_unknown_too_and_its_retry_lands(
        store: RedisStore, proxy: Proxy, direct: Any, prefix: str) -> None:
    await store.append(rec(1))
    proxy.cut_before(b"EVAL")  # the connection drops on the way: the store can't tell this case
    with pytest.raises(WriteUnknown):
        await store.append(rec(2))
    assert proxy.cut.is_set()
    assert await logged(direct, prefix) == [rec(1)], "it did not land"
    await store.reset_after_failure()
    await store.append(rec(2))  # the retry lands, once
    assert await store.records() == [rec(1), rec(2)]


async def test_a_write_to_a_redis_that_is_not_there_is_not_stored(
        store: RedisStore, proxy: Proxy, direct: Any, prefix: str) -> None:
    await store.append(rec(1))
    proxy.refuse = True
    await store.writer.conn.disconnect()  # the writer's connection is lost while idle: it must connect again
    with pytest.raises(NotStored) as info:
        await store.append(rec(2))
    assert not isinstance(info.value, WriteUnknown) and info.value.code == "not_stored"
    assert "nothing was stored" in info.value.detail
    assert await logged(direct, prefix) == [rec(1)]
    proxy.refuse = False
    await store.reset_after_failure()
    await store.append(rec(2))
    assert await store.records() == [rec(1), rec(2)]


async def test_after_a_failed_write_nothing_is_appended_until_the_reload(
        store: RedisStore, proxy: Proxy, direct: Any, prefix: str) -> None:
    """As on SQLite: an append queued after one whose fate is not known (of any game: it
    may have been built on it) fails until the service has reloaded the log."""
    proxy.cut_after(b"EVAL")
    with pytest.raises(WriteUnknown):
        await store.append(rec(1))
    for later in (rec(2), rec(1, game="g2", client_id="other"), rec(0, game=None, client_id="t")):
        with pytest.raises(NotStored, match="an earlier write failed"):
            await store.append(later)
    assert await logged(direct, prefix) == [rec(1)]
    await store.reset_after_failure()
    await store.append(rec(2))
    assert [r.client_id for r in await store.records()] == ["e1", "e2"]


# ------------------------------------------------------------------ restarts and outages


async def test_reads_and_writes_answer_right_after_a_redis_restart(tmp_path: Path) -> None:
    srv = RedisServer(tmp_path / "redis")
    srv.start()
    store = RedisStore(srv.url, prefix="r:")
    try:
        await store.open()
        await store.append(rec(1))
        assert await store.records() == [rec(1)]
        await asyncio.to_thread(srv.restart)  # every connection the store holds is now dead
        assert await store.records() == [rec(1)]   # the read retries once, on a new connection
        assert await store.game_records("g1") == [rec(1)]
        await store.append(rec(2))                  # the writer notices before it sends
        assert await store.records() == [rec(1), rec(2)]
    finally:
        await store.close()
        srv.stop()


def test_an_outage_is_said_once_then_every_30_s_and_when_it_ends(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    outage = Outage("redis://10.0.0.5:6379/0", clock=lambda: now[0], what="Redis")
    with caplog.at_level(logging.INFO, logger="arena_stream.store"):
        for _ in range(60):  # a call failing every 0.5 s for 30 s
            outage.failed(ConnectionError("Error 111 connecting to 10.0.0.5:6379"))
            now[0] += 0.5
        outage.failed(ConnectionError("Error 111 connecting to 10.0.0.5:6379"))
        outage.ok()
        outage.ok()
    said = [(r.levelname, r.getMessage(), getattr(r, "for_s", None), getattr(r, "failures", None))
            for r in caplog.records]
    assert said == [("ERROR", "Redis unavailable", None, None),
                    ("ERROR", "Redis still unavailable", 30, 61),
                    ("WARNING", "Redis available again", None, 61)]
    assert all(r.exc_info is None for r in caplog.records), "an expected outage: no traceback"
    assert caplog.records[0].reason == "ConnectionError: Error 111 connecting to 10.0.0.5:6379"  # type: ignore[attr-defined]


async def test_a_store_whose_redis_is_down_logs_it_once(tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    srv = RedisServer(tmp_path / "redis")
    srv.start()
    store = RedisStore(srv.url, prefix="o:")
    try:
        await store.open()
        await asyncio.to_thread(srv.stop)
        with caplog.at_level(logging.INFO, logger="arena_stream.store"):
            for n in range(5):
                with pytest.raises(NotStored):
                    await store.records()
                with pytest.raises(NotStored):
                    await store.append(rec(n + 1))
                await store.reset_after_failure()
            await asyncio.to_thread(srv.start)
            await store.records()
        said = [(r.levelname, r.getMessage()) for r in caplog.records]
        assert said == [("ERROR", "Redis unavailable"), ("WARNING", "Redis available again")]
        assert all(r.exc_info is None for r in caplog.records)
        assert caplog.records[0].store == srv.url  # type: ignore[attr-defined]
    finally:
        await store.close()
        srv.stop()


def test_the_logs_never_show_the_password_of_a_redis_url() -> None:
    assert redacted("redis://:hunter2@redis:6379/0") == "redis://redis:6379/0"
    assert redacted("rediss://arena:hunter2@10.0.0.5:6380/1") == "rediss://10.0.0.5:6380/1"
    assert redacted("unix:///run/redis.sock?db=0") == "unix:///run/redis.sock?db=0"


async def test_a_known_dedup_key_still_reads_its_record_and_a_taken_seq_refuses(
        store: RedisStore) -> None:
    """The answers that are not failures are unchanged (the contract tests have more)."""
    await store.append(rec(1))
    with pytest.raises(DuplicateKey):
        await store.append(rec(2, client_id="e1"))
    with pytest.raises(SeqTaken):
        await store.append(rec(1, client_id="other"))


async def test_a_connection_closed_under_a_read_is_not_stored_and_the_next_read_answers(
        store: RedisStore, prefix: str) -> None:
    """Every socket of the store's pool closed under it (a failover drops them all): a read
    answers, or is ``NotStored``, never another error that would end the caller (the log's
    follower). On uvloop a write to a closed transport raises ``RuntimeError`` (asyncio's
    loop ignores it; MagicStack/uvloop#506), which redis-py lets through. The read after
    reconnects."""
    await store.append(rec(1))
    assert store.redis is not None
    pool = store.redis.connection_pool
    for conn in pool._available_connections:
        assert conn._writer is not None
        conn._writer.transport.abort()
    await asyncio.sleep(0)
    try:
        first = await store.read_after("0-0")
    except NotStored:
        first = None
    assert first is None or [r for _, r in first] == [rec(1)]
    assert [r for _, r in await store.read_after("0-0")] == [rec(1)]
