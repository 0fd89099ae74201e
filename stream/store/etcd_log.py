"""The etcd store's log entries, their positions, and the follower's watch.

An entry's value is MessagePack ``[index, Record]``: its index among the records of its
transaction (they share the transaction's revision). A **position** in the log is
``REVISION-INDEX`` (``START`` is ``0-0``): etcd's revision orders every transaction across
games, the index the records of one.

**Following** (``Tail``, the store's ``read_after`` with a wait): a watch on ``{p}log/``
from a revision, one stream on the member in use, resumed from the last entry it
delivered when it ends, or when the log's end (a linearizable read) seen at one quiet wait
is still not delivered at the next (its member cut off, say): then on the next member. A
follower that goes back (it folded the log again), or a watch whose revision etcd has
compacted away, reads the entries from the keys themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import deque
from collections.abc import Iterable
from typing import Any, Protocol

import msgspec

from ..errors import NotStored
from ..tasks import stop
from . import Record
from .etcd_client import Gateway, prefix_end, unb64

__all__ = ["TAIL", "Pos", "Tail", "entry_index", "position", "text"]

TAIL = 20_000        # entries the follower's watch holds ahead of the follower, at most


class FoldFields(msgspec.Struct):
    game: str | None
    seq: int | None
    device: str
    client_id: str
    digest: bytes
    body: bytes


class Entry(msgspec.Struct, array_like=True):
    """A record's value in etcd: its index among the records of its transaction (they share
    the transaction's revision), and the record."""

    i: int
    record: Record


class FoldEntry(msgspec.Struct, array_like=True):
    i: int
    record: FoldFields


dec_entry = msgspec.msgpack.Decoder(Entry)
dec_fold = msgspec.msgpack.Decoder(FoldEntry)

#: A position in the log: the revision of its transaction, and its index there.
Pos = tuple[int, int]


def position(position: str) -> Pos:
    """A position of this log (``REVISION-INDEX``; ``START`` is 0-0); LookupError otherwise."""
    rev, dash, i = position.partition("-")
    if not (rev.isdigit() and dash and i.isdigit()):
        raise LookupError(f"{position!r} is not a position of this log")
    return int(rev), int(i)


def text(pos: Pos) -> str:
    return f"{pos[0]}-{pos[1]}"




class Source(Protocol):
    """What the watch reads besides it: the store's calls and its log."""

    gateway: Gateway
    p: bytes

    async def end_pos(self) -> Pos: ...

    async def log_after(self, after: Pos = (0, 0)) -> list[tuple[Pos, bytes]]: ...


def entry_index(value: bytes) -> int:
    """The index an entry's value holds (its first field), without decoding the record."""
    return dec_index.decode(value).i


class Index(msgspec.Struct, array_like=True):
    i: int


dec_index = msgspec.msgpack.Decoder(Index)


class Tail:
    """The follower's watch on the log (the module docstring). ``buffer`` holds, in order,
    every entry after ``base`` up to ``through`` (the follower has read up to ``base``), at most
    ``TAIL``; past that the watch ends, and starts again once the follower has caught up."""

    def __init__(self, store: Source) -> None:
        self.store = store
        self.buffer: deque[tuple[Pos, Record]] = deque()
        self.base: Pos = (0, 0)
        self.through: Pos = (0, 0)
        self.task: asyncio.Task[None] | None = None
        self.arrived = asyncio.Event()
        self.compacted = False    # the watch's start was compacted away: read the log itself
        self.expected: Pos = (0, 0)  # the log's end at the last wait that got nothing
        self.started = 0.0           # when the watch was last started (loop time)
        self.closed = False          # the store closed: no watch starts again

    async def stop(self) -> None:
        if self.task is not None:
            await stop([self.task])
            self.task = None

    async def close(self) -> None:
        """The store is closing: no watch starts again; a read in progress ends at once."""
        self.closed = True
        await self.stop()
        self.arrived.set()

    async def _restart(self, after: Pos) -> None:
        await self.stop()
        self.started = asyncio.get_running_loop().time()
        self.buffer.clear()
        self.base = self.through = after
        # From the revision itself: its other entries, after ``after``'s index, are wanted.
        self.task = asyncio.create_task(self._watch(max(after[0], 1)), name="etcd-watch")

    async def read(self, after: Pos, count: int, wait: float) -> list[tuple[Pos, Record]]:
        if self.closed:
            raise NotStored("the store is closed")
        if self.compacted or after < self.base:
            # etcd keeps no history that old, or the follower went back (it folded the log
            # again): the entries are read as keys, and the watch starts after them.
            end = await self.store.end_pos()  # read first: the range holds all up to it
            got = (await self.store.log_after(after))[:count]
            rows = [(pos, dec_entry.decode(value).record) for pos, value in got]
            self.compacted = False
            await self._restart(rows[-1][0] if rows else max(after, end))
            return rows
        while self.buffer and self.buffer[0][0] <= after:
            self.base = self.buffer.popleft()[0]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while not self.buffer and not self.compacted and loop.time() < deadline:
            if self.closed:
                raise NotStored("the store is closed")
            if self.task is None or self.task.done():
                # Ended (its member gone, say): start again at once, on the next member.
                await asyncio.sleep(max(0.0, self.started + 0.05 - loop.time()))
                await self._restart(max(after, self.through))
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, deadline - loop.time())):
                    await self.arrived.wait()
        if not self.buffer and self.task is not None and not self.task.done():
            await self._check(after)
        return list(itertools.islice(self.buffer, count))

    async def _check(self, after: Pos) -> None:
        """Nothing came for a whole wait. If the log's end seen at the wait before is still
        not delivered, the watch is stuck (its member cut off, say): start it again, on the
        next member."""
        end = await self.store.end_pos()
        overdue, self.expected = self.expected, end
        if overdue > max(self.through, after):
            gateway = self.store.gateway
            gateway.member = (gateway.member + 1) % len(gateway.members)
            await self._restart(max(self.through, after))

    async def _watch(self, start: int) -> None:
        log_prefix = self.store.p + b"log/"
        try:
            async for result in self.store.gateway.watch(log_prefix, prefix_end(log_prefix), start):
                if int(result.get("compact_revision", 0)) > 0:
                    self.compacted = True  # compacted past ``start``: the log is read as keys
                    return
                if result.get("canceled"):
                    return
                if not self._take(result.get("events", ())):
                    return
        except NotStored:
            gateway = self.store.gateway
            gateway.member = (gateway.member + 1) % len(gateway.members)
        finally:
            self.arrived.set()

    def _take(self, events: Iterable[dict[str, Any]]) -> bool:
        """Keep the records of a watch answer; False once the buffer is full."""
        for e in events:
            if e.get("type") == "DELETE":
                continue
            kv = e.get("kv", {})
            entry = dec_entry.decode(unb64(kv.get("value")))
            pos = (int(kv.get("mod_revision", 0)), entry.i)
            if pos <= self.through:
                continue
            if len(self.buffer) >= TAIL:
                return False
            self.buffer.append((pos, entry.record))
            self.through = pos
            self.arrived.set()
        return True
