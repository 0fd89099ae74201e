"""Which server may confirm a write or a read: the Sentinels' word on the primary.

A write (or a read of the log's newest entries) counts as kept once the primary's
replicas confirm it (``WAIT``). That holds only while those replicas follow the primary
the Sentinels will keep: a replica that left may have been promoted, and then whatever
the replicas left behind (or one that joined since) confirm is dropped when the
Sentinels move them to the new primary. A primary only slow for a moment is failed over
so, and keeps its other replica until the Sentinels reach it.

So the store keeps a ``Fence``: the primary the Sentinels last vouched for, and the
replicas it had online then. A count (``INFO replication``, in the same pipeline as the
``WAIT``) that finds another server, or other replicas (one gone, or one new: counts are
moments, and a replica may have joined and been promoted between two of them), takes the
vouching back: the confirmation it came with counts, and anything more is confirmed
there, only once every Sentinel, asked after it, answers, names that server as the
primary and is not failing it over (``unvouched``). A Sentinel leading a failover flags
the old primary from before it promotes a replica, and names the promoted one once it is
promoted, so whichever side of the promotion a count falls on, the Sentinels' answer
after it tells. What no count can tell: a replica that joined and was promoted between
two counts that found the same other replicas.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from redis.asyncio.sentinel import Sentinel
from redis.exceptions import ResponseError

from ..errors import NotStored
from .redis_connect import LINK_ERRORS, info, replicas

Address = tuple[str, int]


class Fence:
    """The primary the Sentinels last vouched for and the replicas it had online then: what
    a write or a read may count on to confirm it (``RedisStore``'s, shared by its writer and
    its reads). A count that finds another server or other replicas takes the vouching
    back until the Sentinels give it again (``unvouched``)."""

    def __init__(self) -> None:
        self.address: Address | None = None
        self.replicas: frozenset[Address] = frozenset()

    @property
    def floor(self) -> int:
        """How many replicas a confirmation waits for, at least."""
        return len(self.replicas)

    def vouched(self, address: Address) -> bool:
        return self.address == address

    def counted(self, address: Address, online: Iterable[Address]) -> None:
        """A count of the replicas ``address`` has online now."""
        if address != self.address or frozenset(online) != self.replicas:
            self.address = None

    async def after(self, address: Address, online: list[Address],
                    unvouched_at: Callable[[Address], Awaitable[str | None]]) -> str | None:
        """After a count of ``online`` and the confirmation that came with it: None if the
        fence holds for ``address`` (the same replicas, or the Sentinels vouch now, after
        the confirmation, for it and those), else why not."""
        self.counted(address, online)
        if self.vouched(address):
            return None
        if (reason := await unvouched_at(address)) is None:
            self.vouch(address, online)
        return reason

    def vouch(self, address: Address, online: Iterable[Address]) -> None:
        """The Sentinels vouched for ``address``, after a count of ``online``."""
        self.address, self.replicas = address, frozenset(online)


async def unvouched(sentinel: Sentinel, service: str, host: str, port: int) -> str | None:
    """Why the Sentinels do not all vouch for the server at ``host:port`` as ``service``'s
    primary, or None when they do: every one of them answers, names it, and is not failing
    it over. (A Sentinel that leads a failover has it flagged from before it promotes a
    replica; once the replica is promoted it names that one, though its record of the old
    primary keeps the flag until the other replicas follow.)"""
    for i, s in enumerate(sentinel.sentinels, 1):
        try:
            addr: Any = await s.sentinel_get_master_addr_by_name(service)
            state: dict[str, Any] = await s.sentinel_master(service)  # type: ignore[assignment]
        except LINK_ERRORS as err:
            return f"Sentinel {i} did not answer ({type(err).__name__})"
        named = (_text(addr[0]), int(addr[1])) if addr else None
        if named != (host, port):
            return f"Sentinel {i} names {'no primary' if named is None else f'{named[0]}:{named[1]}'}"
        flags = state.get("flags", "")
        flags = set(flags) if isinstance(flags, set) else set(_text(flags).split(","))
        if "failover_in_progress" in flags and (_text(state.get("ip", "")), int(state.get("port", 0))) == (
                host, port):
            return f"Sentinel {i} is failing {host}:{port} over"
    return None


def _text(x: Any) -> str:
    return x.decode() if isinstance(x, bytes) else str(x)


async def fenced(client: Any, fence: Fence, unvouched_at: Callable[[Address], Awaitable[str | None]],
                 commands: list[tuple[Any, ...]], n: int,
                 confirm_commands: Callable[[int], list[tuple[Any, ...]]]) -> tuple[list[Any], bool]:
    """``commands``, then the replicas' count and their confirmation of all that came before,
    on one connection of ``client``'s pool: the replies to ``commands`` (parsed as the
    client parses them; an error is returned, not raised), and whether the confirmation
    holds: ``n`` replicas or more, every one counted, and the fence held (``Fence.after``).
    ``NotStored`` if the Sentinels don't vouch for that server."""
    pool = client.connection_pool
    conn = await pool.get_connection()
    try:
        address = (str(conn.host), int(conn.port))
        replies = await _parsed(client, conn, [*commands, ("INFO", "replication"), *confirm_commands(n)])
        online = replicas(info(replies[len(commands)]))
        if (reason := await fence.after(address, online, unvouched_at)) is not None:
            await conn.disconnect()  # the next connection asks the Sentinels again
            raise NotStored(f"the log's newest entries can't be confirmed: {reason}")
        return replies[:len(commands)], confirmed(replies[-1], max(n, len(online)))
    except LINK_ERRORS:
        await conn.disconnect()
        raise
    finally:
        await pool.release(conn)


async def _parsed(client: Any, conn: Any, commands: list[tuple[Any, ...]]) -> list[Any]:
    await conn.send_packed_command(conn.pack_commands(commands), check_health=False)
    out: list[Any] = []
    for command in commands:
        try:
            out.append(await client.parse_response(conn, command[0]))
        except ResponseError as err:
            out.append(err)
    return out


def confirmed(reply: Any, n: int) -> bool:
    """Whether a WAIT (a count) or WAITAOF (``[local, replicas]``) reply says ``n`` replicas."""
    if isinstance(reply, int):
        return reply >= n
    if isinstance(reply, list | tuple) and len(reply) == 2:
        return int(reply[1]) >= n
    return False
