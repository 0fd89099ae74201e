"""A handheld's connection, in Python: what the simulator, the tests and the
benchmarks use to act as officials' devices (docs/protocol-device.md).

Every event is kept until it is acked; a lost connection or a ``retry`` error
(``not_stored``, ``unknown``, ``rate_limited``) resends the *same* event (same
id), so nothing is lost and nothing is doubled. Server pings are answered with
the device clock, so the server can use the event's own ``at``: on every
(re)connect the first ping is answered before anything is sent, since the clock
sync is per socket. Moving to another node closes the socket to the old one.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable
from typing import Any

import msgspec
import websockets

_enc = msgspec.json.Encoder()
_dec = msgspec.json.Decoder(dict[str, Any])

#: How long the handshake may take; how long to wait, after the ``welcome``, for the ping
#: that follows it (the service sends both at once, and so do the benchmarks' bare peers;
#: a server that sends none costs every connect this wait, then is spoken to without a
#: sync); and a close.
HANDSHAKE_S = 10.0
FIRST_PING_S = 1.0
CLOSE_S = 1.0


def _now_ms() -> int:
    return int(time.time() * 1000)


class DeviceError(Exception):
    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__(f"{reply.get('code')}: {reply.get('detail')}")
        self.reply = reply


class Device:
    """One handheld. ``url`` may list several nodes of one service (on etcd):
    when a node can't be reached (or doesn't answer within ``wait_s``) the device
    closes its socket there, moves on to the next, and resends its pending event
    (same id, so never twice). ``clock`` is the device's own clock (ms), what its
    pongs and its events' ``at`` are in."""

    def __init__(self, url: str | list[str], token: str, *, prefix: str = "d",
                 clock: Callable[[], int] = _now_ms) -> None:
        self.urls = [url] if isinstance(url, str) else list(url)
        self.url = self.urls[0]
        self.token = token
        self.clock = clock
        self.welcome: dict[str, Any] = {}
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = (f"{prefix}-{n}" for n in itertools.count(1))
        self._lock = asyncio.Lock()

    async def connect(self) -> None:
        """Open a socket, authenticate, and answer the server's first ``ping`` (it
        follows the ``welcome``): only then may events be sent, or the server would
        stamp them with their receive time, not the device's ``at``. A socket already
        open is closed first."""
        await self._drop()
        ws = await websockets.connect(self.url, max_size=2**20, open_timeout=HANDSHAKE_S,
                                      close_timeout=CLOSE_S)
        try:
            async with asyncio.timeout(HANDSHAKE_S):
                await ws.send(_enc.encode({"type": "auth", "token": self.token}).decode())
                first = _dec.decode(await ws.recv())
                if first.get("type") != "welcome":
                    raise DeviceError(first)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(FIRST_PING_S):
                    while (ping := _dec.decode(await ws.recv())).get("type") != "ping":
                        pass  # nothing else comes before it (nothing has been sent to answer)
                    await self._pong(ws, ping)
        except BaseException:
            await _shut(ws)
            raise
        self.welcome = first
        self._ws = ws
        self._reader = asyncio.create_task(self._read(ws), name="device-reader")

    @property
    def connected(self) -> bool:
        """A socket is open and being read (``send_once`` may be called)."""
        return self._ws is not None and self._reader is not None and not self._reader.done()

    async def close(self) -> None:
        await self._drop()

    async def move_to(self, url: str) -> None:
        """Send to ``url`` (a node of the same service) from the next event on, closing the
        socket to the node it leaves. Call it with no event waiting for its reply."""
        async with self._lock:
            if url != self.url:
                await self._drop()
                self.url = url

    async def _drop(self) -> None:
        """Stop reading and close the socket (bounded: a node that doesn't answer the
        close is cut off), so no socket is left open to a node this device has left."""
        reader, ws = self._reader, self._ws
        self._reader = self._ws = None
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        if ws is not None:
            await _shut(ws)

    async def _pong(self, ws: Any, ping: dict[str, Any]) -> None:
        await ws.send(_enc.encode({"type": "pong", "server_time": ping["server_time"],
                                   "device_time": self.clock()}).decode())

    async def _read(self, ws: Any) -> None:
        try:
            async for raw in ws:
                msg = _dec.decode(raw)
                kind = msg.get("type")
                if kind == "ping":
                    await self._pong(ws, msg)
                elif kind in ("ack", "error"):
                    fut = self._waiting.pop(msg.get("id") or "", None)
                    if fut is not None and not fut.done():
                        fut.set_result(msg)
        except websockets.ConnectionClosed:
            pass
        finally:
            for fut in self._waiting.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("connection lost"))
            self._waiting.clear()

    def new_id(self) -> str:
        return next(self._ids)

    async def send_once(self, event: dict[str, Any], wait_s: float = 10) -> dict[str, Any]:
        """Send one event and wait for its one reply (ack or error)."""
        if self._ws is None:
            raise ConnectionError("not connected")
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[event["id"]] = fut
        try:
            await self._ws.send(_enc.encode({"type": "send", "event": event}).decode())
            return await asyncio.wait_for(fut, wait_s)
        finally:
            if self._waiting.get(event["id"]) is fut:
                del self._waiting[event["id"]]
            if fut.done() and not fut.cancelled():
                fut.exception()  # the connection was lost while sending: the caller has heard

    async def send(self, event: dict[str, Any], *, attempts: int = 50,
                   wait_s: float = 10, resend_s: float | None = None) -> dict[str, Any]:
        """Send until acked: reconnect and resend the same event on any loss, on the
        next node if there are several; ``wait_s`` for each reply. Resends back off from
        0.05 s, doubling to 2 s, as docs/protocol-device.md suggests; or every ``resend_s``."""
        event.setdefault("id", self.new_id())
        for n in range(attempts):
            ws = None
            try:
                async with self._lock:
                    if self._ws is None or self._reader is None or self._reader.done():
                        await self.connect()
                    ws = self._ws
                reply = await self.send_once(event, wait_s)
            except (OSError, ConnectionError, TimeoutError, websockets.WebSocketException):
                async with self._lock:
                    if ws is None or self._ws is ws:  # (not one another sender has opened since)
                        await self._drop()  # never leave the old socket open
                        self.url = self.urls[(self.urls.index(self.url) + 1) % len(self.urls)]
                await asyncio.sleep(resend_s or min(2.0, 0.05 * 2**n))
                continue
            if reply["type"] == "ack":
                return reply
            if not reply.get("retry"):
                raise DeviceError(reply)
            await asyncio.sleep(resend_s or min(2.0, 0.05 * 2**n))
        raise DeviceError({"code": "gave_up", "detail": f"no ack after {attempts} attempts"})


async def _shut(ws: Any) -> None:
    """Close a socket within ``CLOSE_S``; past that (a peer that doesn't answer), abort it."""
    with contextlib.suppress(Exception):  # whatever happened, the socket goes
        async with asyncio.timeout(CLOSE_S + 0.5):
            await ws.close()
    transport = getattr(ws, "transport", None)
    if transport is not None and not transport.is_closing():
        transport.abort()
