"""Reaching Redis, and what it says about itself: the store's URL (``redis://`` or,
through Sentinel, ``redis+sentinel://``), the server's version, its replicas and
whether each of them keeps what it acknowledges; and how an outage is logged.

A Sentinel URL names the Sentinels and the service they watch::

    redis+sentinel://[[user]:password@]host:port[,host:port...]/<service>[?db=N]

The password (and user) are the Redis servers' (``requirepass``); the Sentinels are
asked without one. Every connection made from the client's pool asks a Sentinel
for the primary's address each time it connects, so a connection that broke in a
failover connects to the promoted replica the next time it is used.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.asyncio.sentinel import Sentinel
from redis.exceptions import RedisError, ResponseError

from .outage import Outage as Outage  # re-exported: its home is outage.py

log = logging.getLogger("arena_stream.store")

SENTINEL_SCHEME = "redis+sentinel"
#: The schemes ``RedisStore`` takes.
SCHEMES = ("redis", "rediss", "unix", SENTINEL_SCHEME)
#: The first Redis with ``WAITAOF``: an ack can then wait for the replicas' fsync itself.
WAITAOF_SINCE = (7, 2)


@dataclass(frozen=True)
class SentinelURL:
    sentinels: tuple[tuple[str, int], ...]
    service: str
    username: str | None = None
    password: str | None = None
    db: int = 0


def is_sentinel(url: str) -> bool:
    return url.startswith(SENTINEL_SCHEME + "://")


def parse_sentinel_url(url: str) -> SentinelURL:
    """``redis+sentinel://[[user]:password@]host:port[,host:port...]/service[?db=N]``;
    ValueError for anything else."""
    parts = urlsplit(url)
    if parts.scheme != SENTINEL_SCHEME:
        raise ValueError(f"not a {SENTINEL_SCHEME}:// URL")
    auth, _, hosts = parts.netloc.rpartition("@")
    username = password = None
    if auth:
        user, _, secret = auth.partition(":")
        username, password = (unquote(user) or None), (unquote(secret) or None)
    sentinels: list[tuple[str, int]] = []
    for item in hosts.split(","):
        host, _, port = item.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"{item!r} is not host:port (a Sentinel)")
        sentinels.append((host.strip("[]"), int(port)))
    service = unquote(parts.path.strip("/"))
    if not service or "/" in service:
        raise ValueError("the path must be the service's name, as the Sentinels monitor it")
    db = parse_qs(parts.query).get("db", ["0"])[-1]
    if not db.isdigit():
        raise ValueError(f"db={db!r} is not a number")
    return SentinelURL(tuple(sentinels), service, username, password, int(db))


def redacted(url: str) -> str:
    """The URL without its user and password, for the logs."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


#: What a call to Redis raises when the link to it failed: redis-py's errors, the OS's, and
#: uvloop's ``RuntimeError`` for a write to a transport already closed (a failover drops every
#: socket; asyncio's own loop ignores such a write: MagicStack/uvloop#506), which redis-py
#: lets through after dropping the connection. ``link_failed`` tells that one apart.
LINK_ERRORS = (RedisError, OSError, RuntimeError)


def link_failed(err: BaseException) -> bool:
    """Whether ``err``, one of ``LINK_ERRORS``, says the link failed (else it is a bug)."""
    return not isinstance(err, RuntimeError) or "handler is closed" in str(err)


@contextlib.contextmanager
def quietly() -> Iterator[None]:
    """Around a call to Redis whose failure changes nothing: a failed link is ignored."""
    try:
        yield
    except LINK_ERRORS as err:
        if not link_failed(err):
            raise


def client(url: str, **options: Any) -> tuple[Any, Sentinel | None]:
    """The client of the store's Redis (its primary, through Sentinel for a Sentinel URL),
    and the Sentinel client to close with it (None for a plain URL)."""
    if not is_sentinel(url):
        return aioredis.from_url(url, **options), None
    where = parse_sentinel_url(url)
    timeouts = {k: v for k, v in options.items() if k.startswith("socket_")}
    sentinel = Sentinel(list(where.sentinels), sentinel_kwargs=timeouts)  # type: ignore[no-untyped-call]
    primary = sentinel.master_for(where.service, username=where.username, password=where.password,
                                  db=where.db, **options)
    return primary, sentinel


def server_options(url: str) -> dict[str, Any]:
    """What it takes to connect to another server of the same set (a replica): its password."""
    if is_sentinel(url):
        where = parse_sentinel_url(url)
        return {"username": where.username, "password": where.password}
    parts = urlsplit(url)
    return {"username": unquote(parts.username) if parts.username else None,
            "password": unquote(parts.password) if parts.password else None}


# ------------------------------------------------------------------ talking on one connection


async def exchange(conn: Any, commands: Sequence[Iterable[Any]]) -> list[Any]:
    """Send ``commands`` pipelined on one connection and read every reply, raw (a Redis
    error is returned, not raised, so that the replies after it are still read)."""
    await conn.send_packed_command(conn.pack_commands(commands), check_health=False)
    out: list[Any] = []
    for _ in commands:
        try:
            out.append(await conn.read_response())
        except ResponseError as err:
            out.append(err)
    return out


def pairs(reply: Any) -> dict[bytes, bytes]:
    """A hash (HGETALL, CONFIG GET) as a dict, raw (a flat list) or parsed by redis-py."""
    if isinstance(reply, dict):
        return {_b(k): _b(v) for k, v in reply.items()}
    if isinstance(reply, list):
        return {_b(k): _b(v) for k, v in zip(reply[::2], reply[1::2], strict=True)}
    return {}


def entries(reply: Any) -> list[tuple[str, dict[bytes, bytes]]]:
    """Stream entries (XRANGE), raw or parsed by redis-py, as (id, fields)."""
    if not isinstance(reply, list):
        return []
    return [(_b(i).decode(), pairs(fields)) for i, fields in reply]


def info(reply: Any) -> dict[str, Any]:
    """An INFO reply, raw (text) or parsed by redis-py, as {field: value}."""
    if isinstance(reply, dict):
        return {str(k): v for k, v in reply.items()}
    out: dict[str, Any] = {}
    for line in _b(reply).decode(errors="replace").splitlines():
        key, sep, value = line.partition(":")
        if sep and not line.startswith("#"):
            out[key.strip()] = value.strip()
    return out


def version(server: dict[str, Any]) -> tuple[int, ...]:
    """``redis_version`` of an INFO server section, as numbers."""
    return tuple(int(p) for p in str(server.get("redis_version", "0")).split(".") if p.isdigit())


def replicas(replication: dict[str, Any]) -> list[tuple[str, int]]:
    """The replicas a primary's INFO replication lists as online, as (host, port)."""
    out: list[tuple[str, int]] = []
    for key, value in replication.items():
        if key.startswith("slave") and key[5:].isdigit():
            fields = ({str(k): str(v) for k, v in value.items()} if isinstance(value, dict)
                      else dict(f.split("=", 1) for f in str(value).split(",") if "=" in f))
            if fields.get("state") == "online":
                out.append((fields.get("ip", ""), int(fields.get("port", "0"))))
    return out


def durability(conf: dict[bytes, bytes], who: str) -> str | None:
    """Why a server configured so could lose an acknowledged write, or None."""
    aof, fsync = conf.get(b"appendonly", b"").decode(), conf.get(b"appendfsync", b"").decode()
    if (aof, fsync) == ("yes", "always"):
        return None
    return (f"{who} has appendonly={aof or '?'} appendfsync={fsync or '?'}; an acked event could be lost "
            "on a crash. Set 'appendonly yes' and 'appendfsync always' (deploy/redis.conf)")


async def replica_durability(hosts: list[tuple[str, int]], options: dict[str, Any]) -> list[str]:
    """For each replica: why it could lose what it acknowledged (or that it did not answer)."""
    problems: list[str] = []
    for host, port in hosts:
        r = aioredis.Redis(host=host, port=port, socket_timeout=2, socket_connect_timeout=2, **options)
        try:
            problem = durability(pairs(await r.config_get("append*")), f"the replica {host}:{port}")
        except LINK_ERRORS as err:
            if not link_failed(err):
                raise
            problem = f"the replica {host}:{port} did not answer ({type(err).__name__}: {err})"
        finally:
            await r.aclose()
        if problem:
            problems.append(problem)
    return problems


def _b(x: Any) -> bytes:
    return x if isinstance(x, bytes) else str(x).encode()


# ------------------------------------------------------------------ outages
