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

from .service import Service
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


class FrontSite(web.TCPSite):
    """aiohttp's TCP site, with the front door before its request handler."""

    def __init__(self, runner: web.AppRunner, host: str | None, port: int,
                 *, backlog: int = 128) -> None:
        super().__init__(runner, host, port, backlog=backlog)
        self._svc = runner.app[Service.KEY]

    async def start(self) -> None:
        await web.BaseSite.start(self)   # registers the site with its runner
        loop = asyncio.get_running_loop()
        server = self._runner.server
        assert server is not None
        svc = self._svc
        self._server = await loop.create_server(
            lambda: FrontDoor(svc, server), self._host, self._port, backlog=self._backlog)
        sockets = self._server.sockets
        self._bound_port = sockets[0].getsockname()[1] if sockets else self._port
