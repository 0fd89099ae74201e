"""The listening socket: a fresh connection's first request line decides who serves it.

``GET /ws/watch`` goes to the task-free viewer endpoint (``viewer_socket.py``); anything
else to aiohttp, which then serves the connection as it would have from the start (an
upgrade to ``/ws/watch`` on a connection that served HTTP first included). The bytes
read so far are handed over whole, and nothing else is read before the choice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import cast

from aiohttp import web

from ..service import Service
from .viewer_socket import ViewerConnection

#: The longest request line the front door waits for before handing the connection to aiohttp
#: (which then refuses what it must).
MAX_REQUEST_LINE = 8192
_WATCH = b"GET /ws/watch"


def is_watch(head: bytes) -> bool:
    """Does this request line (its start, at least up to the end of the path) ask for
    ``/ws/watch``?"""
    return head.startswith(_WATCH) and head[len(_WATCH):len(_WATCH) + 1] in (b"?", b" ")


class FrontDoor(asyncio.Protocol):
    __slots__ = ("buffer", "http", "svc", "transport")

    def __init__(self, svc: Service, http: Callable[[], asyncio.Protocol]) -> None:
        self.svc = svc
        self.http = http
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)   # (uvloop's is not a subclass)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if b"\n" not in self.buffer and len(self.buffer) < MAX_REQUEST_LINE:
            return   # the request line is not all here yet
        t = self.transport
        assert t is not None
        head = bytes(self.buffer)
        self.buffer = bytearray()
        if is_watch(head):
            viewer = ViewerConnection(self.svc, t)
            t.set_protocol(viewer)
            viewer.data_received(head)
        else:
            proto = self.http()
            t.set_protocol(proto)
            proto.connection_made(t)
            proto.data_received(head)

    def eof_received(self) -> bool | None:
        return None   # before a whole request line: nothing to answer

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


class FrontServer:
    """The service's listening socket, with the front door before aiohttp's handler.

    Built on aiohttp's public runner (``AppRunner.server``, the handler a connection is
    given to) and asyncio's own server: no aiohttp site, so nothing private of aiohttp is
    touched. ``close`` stops listening; it comes before ``AppRunner.cleanup``, as a site's
    stop does, which then closes the connections aiohttp serves."""

    def __init__(self, runner: web.AppRunner, host: str | None, port: int, *, backlog: int = 128) -> None:
        self._runner = runner
        self._host, self._port, self._backlog = host, port, backlog
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        http = self._runner.server
        if http is None:
            raise RuntimeError("the runner is not set up: call AppRunner.setup() first")
        svc = self._runner.app[Service.KEY]
        self._server = await asyncio.get_running_loop().create_server(
            lambda: FrontDoor(svc, http), self._host, self._port, backlog=self._backlog)

    @property
    def port(self) -> int:
        """The port it listens on (the one the system chose, for port 0)."""
        sockets = self._server.sockets if self._server is not None else ()
        return int(sockets[0].getsockname()[1]) if sockets else self._port

    def close(self) -> None:
        """Stop listening (the connections already open go on)."""
        if self._server is not None:
            self._server.close()
            self._server = None
