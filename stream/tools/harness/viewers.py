"""Many viewers in one process, each a frame clock: websockets' Sans-I/O client on
an asyncio ``BufferedProtocol``, so a frame is stamped (``time.time_ns()``) the
moment its bytes arrive, not when a task gets round to it.
(``viewer_worker`` runs them in a process of their own.)
"""

from __future__ import annotations

import asyncio
import sys
import time
from array import array
from collections.abc import AsyncIterator

import msgspec
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

__all__ = ["CaughtUp", "TimedViewer", "open_viewers", "stdin_lines"]


class _Head(msgspec.Struct):
    """What a viewer needs of a frame; msgspec skips the rest of it."""

    type: str
    seq: int = -1


_head = msgspec.json.Decoder(_Head)

#: One receive buffer for every viewer of a process: the loop hands it to one socket at a time.
#: (A plain Protocol would make asyncio allocate 256 KiB for every read: a syscall-heavy
#: cost per frame that would make the load generator, not the servers, the bottleneck.)
_RECV = memoryview(bytearray(256 * 1024))


class TimedViewer(asyncio.BufferedProtocol):
    """One viewer. ``first`` resolves at its first snapshot (or a bare server's hello);
    each delta's ``seq`` and arrival time go to ``seqs`` and ``times``; a later snapshot
    counts as a reset. Subclasses read frames their own way by overriding ``on_frame``."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.ws = ClientProtocol(parse_uri(url), max_size=2**22)
        self.transport: asyncio.Transport | None = None
        self.first: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.first_seq = -1
        self.max_seq = -1
        self.seqs = array("q")
        self.times = array("q")
        self.resets = 0
        self.closed = False
        self.waiter: CaughtUp | None = None
        self._parts: list[bytes] = []

    async def connect(self, wait_s: float) -> None:
        """Connect, and wait for ``first``; closed again if that fails."""
        uri = parse_uri(self.url)
        try:
            async with asyncio.timeout(wait_s):
                await asyncio.get_running_loop().create_connection(lambda: self, uri.host, uri.port)
                await self.first
        except BaseException:
            self.close()
            raise

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.ws.send_request(self.ws.connect())
        self._flush()

    def get_buffer(self, sizehint: int) -> memoryview:
        return _RECV

    def buffer_updated(self, nbytes: int) -> None:
        now = time.time_ns()
        self.ws.receive_data(_RECV[:nbytes].tobytes())
        for ev in self.ws.events_received():
            if isinstance(ev, Frame):
                if ev.opcode not in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT):
                    continue  # pings are answered by the protocol; see _flush
                if not ev.fin:
                    self._parts.append(bytes(ev.data))
                    continue
                payload = b"".join([*self._parts, bytes(ev.data)]) if self._parts else bytes(ev.data)
                self._parts.clear()
                self.on_frame(payload, now)
            elif isinstance(ev, Response) and self.ws.handshake_exc is not None and not self.first.done():
                self.first.set_exception(ConnectionError(f"handshake failed: {self.ws.handshake_exc}"))
        self._flush()

    def on_frame(self, payload: bytes, now: int) -> None:
        """One whole message, received at ``now`` (ns)."""
        head = _head.decode(payload)
        if head.type == "delta":
            self.seqs.append(head.seq)
            self.times.append(now)
            self.max_seq = max(self.max_seq, head.seq)
        elif head.type in ("snapshot", "hello"):
            if self.first.done():
                self.resets += 1  # a resync: the service dropped this viewer's backlog
            else:
                self.first_seq = head.seq
                self.first.set_result(head.seq)
            self.max_seq = max(self.max_seq, head.seq)
        else:
            return
        if self.waiter is not None:
            self.waiter.check(self)

    def _flush(self) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        for data in self.ws.data_to_send():
            if data:
                self.transport.write(data)
            elif self.transport.can_write_eof():
                self.transport.write_eof()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.ws.receive_eof()
        if self.waiter is not None:
            self.waiter.check(self)
        if not self.first.done():
            self.first.set_exception(ConnectionError(f"connection lost: {exc}"))

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def report(self) -> dict[str, object]:
        """What it got, as the worker writes it (``LoadResult`` reads it)."""
        return {"url": self.url, "first": self.first_seq, "seqs": self.seqs.tobytes(),
                "times": self.times.tobytes(), "resets": self.resets, "closed": self.closed}


class CaughtUp:
    """Set ``event`` once every viewer has seen ``seq`` (or lost its connection)."""

    def __init__(self, viewers: list[TimedViewer], seq: int) -> None:
        self.seq = seq
        self.event = asyncio.Event()
        self.waiting = set(viewers)
        for v in viewers:
            v.waiter = self
            self.check(v)

    def check(self, v: TimedViewer) -> None:
        if v in self.waiting and (v.max_seq >= self.seq or v.closed):
            self.waiting.discard(v)
            if not self.waiting:
                self.event.set()


async def open_viewers(targets: list[tuple[str, int]], *, stop_at_error: bool = False,
                       concurrency: int = 100, open_timeout: float = 30.0,
                       ) -> tuple[list[TimedViewer], int, str]:
    """``count`` viewers of each ``(url, count)``, each up to its first frame, ``concurrency``
    at a time: (the viewers, errors, the first error)."""
    viewers: list[TimedViewer] = []
    errors = 0
    first_error = ""
    stop = False
    sem = asyncio.Semaphore(concurrency)

    async def one(url: str) -> None:
        nonlocal errors, first_error, stop
        async with sem:
            if stop:
                return
            v = TimedViewer(url)
            try:
                await v.connect(open_timeout)
            except (OSError, TimeoutError, ConnectionError) as err:
                errors += 1
                first_error = first_error or f"{type(err).__name__}: {err}"
                stop = stop or stop_at_error
                return
            viewers.append(v)

    await asyncio.gather(*(one(url) for url, n in targets for _ in range(n)))
    return viewers, errors, first_error


async def stdin_lines() -> AsyncIterator[list[str]]:
    """A worker's commands: the words of each line on stdin, until it ends."""
    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                       sys.stdin)
    while words := (await reader.readline()).decode().split():
        yield words
