"""A handheld's connection, in Python: what the simulator, the tests and the
benchmarks use to act as officials' devices (docs/protocol.md).

Every event is kept until it is acked; a lost connection or a ``retry``
error resends the *same* event (same id), so nothing is lost and nothing is
doubled. Server pings are answered with the device clock, so the server can
use the event's own ``at``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from typing import Any

import msgspec
import websockets

_enc = msgspec.json.Encoder()
_dec = msgspec.json.Decoder(dict[str, Any])


def _now_ms() -> int:
    return int(time.time() * 1000)


class DeviceError(Exception):
    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__(f"{reply.get('code')}: {reply.get('detail')}")
        self.reply = reply


class Device:
    """One handheld. ``url`` may list several nodes of one service (on Redis):
    when a node can't be reached the device moves on to the next, and resends
    its pending event there (same id, so never twice)."""

    def __init__(self, url: str | list[str], token: str, *, prefix: str = "d") -> None:
        self.urls = [url] if isinstance(url, str) else list(url)
        self.url = self.urls[0]
        self.token = token
        self.welcome: dict[str, Any] = {}
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = (f"{prefix}-{n}" for n in itertools.count(1))
        self._lock = asyncio.Lock()

    async def connect(self) -> None:
        self._ws = await websockets.connect(self.url, max_size=2**20, open_timeout=10)
        await self._ws.send(_enc.encode({"type": "auth", "token": self.token}).decode())
        first = _dec.decode(await self._ws.recv())
        if first.get("type") != "welcome":
            await self._ws.close()
            raise DeviceError(first)
        self.welcome = first
        self._reader = asyncio.create_task(self._read(), name="device-reader")

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._ws is not None:
            await self._ws.close()

    async def _read(self) -> None:
        try:
            async for raw in self._ws:
                msg = _dec.decode(raw)
                kind = msg.get("type")
                if kind == "ping":
                    await self._ws.send(_enc.encode({"type": "pong", "server_time": msg["server_time"],
                                                     "device_time": _now_ms()}).decode())
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
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[event["id"]] = fut
        try:
            await self._ws.send(_enc.encode({"type": "send", "event": event}).decode())
            return await asyncio.wait_for(fut, wait_s)
        finally:
            if self._waiting.get(event["id"]) is fut:
                del self._waiting[event["id"]]

    async def send(self, event: dict[str, Any], *, attempts: int = 50) -> dict[str, Any]:
        """Send until acked: reconnect and resend the same event on any loss."""
        event.setdefault("id", self.new_id())
        for n in range(attempts):
            try:
                async with self._lock:
                    if self._ws is None or self._reader is None or self._reader.done():
                        await self.connect()
                reply = await self.send_once(event)
            except (OSError, ConnectionError, TimeoutError, websockets.WebSocketException):
                self._reader = None
                self.url = self.urls[(self.urls.index(self.url) + 1) % len(self.urls)]
                await asyncio.sleep(min(2.0, 0.05 * 2**n))
                continue
            if reply["type"] == "ack":
                return reply
            if not reply.get("retry"):
                raise DeviceError(reply)
            await asyncio.sleep(min(2.0, 0.05 * 2**n))
        raise DeviceError({"code": "gave_up", "detail": f"no ack after {attempts} attempts"})
