"""``/ws/watch`` without a task: websockets' Sans-I/O protocol over an ``asyncio.Protocol``.

A viewer is mostly idle: it reads what the fan-out writes and answers a ping
now and then. Here it costs its transport, websockets' ``ServerProtocol`` (the
handshake, the frames it sends, the pongs and the closing handshake), a
``Watcher`` and a ``WatchSession``: no handler task, no queue, no timer of its own.

- The transport calls ``data_received``; the bytes go to the ``ServerProtocol``, its
  events to the session (messages) or to the ping ring (pongs), and what it has to
  send back (the handshake's answer, pongs, a close) is written at once.
- The fan-out writes its prebuilt frames straight to the transport, as it does to
  every viewer (``fanout.py``). When the buffer passes the high-water mark the
  transport calls ``pause_writing``, and the fan-out keeps the viewer's backlog;
  ``resume_writing`` drains it (``Fanout.drain``). A viewer paused for
  ``send_timeout`` is closed (1013), and cut ``send_timeout`` later if it never
  takes the close.
- Closing (ours or the viewer's): the watcher leaves the fan-out at once (nothing
  may follow a close frame), the close frame is written, and a viewer that never
  completes the closing handshake is cut ``send_timeout`` later.

``front_door.py`` gives every fresh connection whose request is ``GET /ws/watch`` to
this endpoint; aiohttp's handler (``watch.py``) serves an upgrade on a connection
that served HTTP first.
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import cast

from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import State
from websockets.server import ServerProtocol
from yarl import URL

from ..broadcast.fanout import Watcher
from ..broadcast.pings import heard
from ..service import Service
from ..wire import protocol as pr
from .watch import WatchSession

# websockets logs every connection's opening and closing at INFO: thousands of viewers.
_wire_log = logging.getLogger("arena_stream.watch.wire")
_wire_log.setLevel(logging.WARNING)


class ViewerConnection(asyncio.Protocol):
    """One viewer's connection, from its handshake to its end."""

    __slots__ = ("__weakref__", "cut", "parts", "paused", "proto", "session", "svc", "transport", "w")

    def __init__(self, svc: Service, transport: asyncio.Transport) -> None:
        self.svc = svc
        self.transport = transport
        self.proto = ServerProtocol(max_size=pr.WATCH_MAX_FRAME, logger=_wire_log)
        self.w: Watcher | None = None
        self.session: WatchSession | None = None
        self.parts: list[bytes] | None = None   # a fragmented message, so far
        self.paused: asyncio.TimerHandle | None = None   # the send timeout while paused
        self.cut: asyncio.TimerHandle | None = None      # the abort of a closing that hangs

    # ------------------------------------------------------- asyncio.Protocol

    def data_received(self, data: bytes) -> None:
        self.proto.receive_data(data)
        self._events()

    def eof_received(self) -> bool | None:
        # The viewer is gone (or half gone: it can't answer a close any more). Nothing is
        # owed to it; with thousands leaving at once, every microsecond here is a stall.
        self.proto.receive_eof()   # its state is CLOSED: nothing more is framed for it
        self._leave()
        return None   # the transport closes itself, and calls connection_lost

    def connection_lost(self, exc: Exception | None) -> None:
        self._leave()
        for timer in (self.paused, self.cut):
            if timer is not None:
                timer.cancel()
        self.paused = self.cut = None
        # The ServerProtocol's parser is a generator that holds it: a reference cycle, which
        # only a collection would free (and never, once frozen: heap.py). Closed, it holds
        # nothing; closing it costs a few microseconds, so it waits its turn (``Departures``).
        self.svc.fanout.departures.add(self.proto.parser.close)

    def pause_writing(self) -> None:
        if self.paused is None and self.w is not None:
            self.paused = asyncio.get_running_loop().call_later(
                self.svc.config.send_timeout, self._too_slow)

    def resume_writing(self) -> None:
        if self.paused is not None:
            self.paused.cancel()
            self.paused = None
        if self.w is not None and self.w.backlog:
            self.svc.fanout.drain(self.w)

    # ----------------------------------------------------- the Socket of a Watcher

    @property
    def closed(self) -> bool:
        return self.proto.state is not State.OPEN or self.transport.is_closing()

    async def close(self, *, code: int = 1000, message: bytes = b"") -> bool:
        self.close_soon(code, message)
        return True

    def close_soon(self, code: int, reason: bytes) -> None:
        """Leave the fan-out, write the close frame, and cut the connection if the viewer
        never answers it."""
        self._leave()
        if self.proto.state is State.OPEN:
            self.proto.send_close(code, reason.decode("utf-8", "replace"))
            self._flush()
        if self.cut is None and not self.transport.is_closing():
            self.cut = asyncio.get_running_loop().call_later(
                self.svc.config.send_timeout, self.transport.abort)

    # ------------------------------------------------------------------ inside

    def _events(self) -> None:
        for event in self.proto.events_received():
            if isinstance(event, Request):
                self._handshake(event)
            elif isinstance(event, Frame):
                self._frame(event)
        self._flush()
        if self.proto.state is not State.OPEN and self.proto.state is not State.CONNECTING:
            self._leave()   # closing: nothing may follow the close frame

    def _handshake(self, request: Request) -> None:
        svc = self.svc
        refused = svc.refusal(request.headers.get("Origin"), request.headers.get("Host"))
        if refused is not None:
            status, text, headers = refused
            response = self.proto.reject(status, text)
            for name, value in headers.items():
                response.headers[name] = value
            self.proto.send_response(response)
            return
        response = self.proto.accept(request)
        self.proto.send_response(response)
        if response.status_code != 101:
            return
        query = URL(request.path).query
        fmt: pr.Format = "msgpack" if query.get("format") == "msgpack" else "json"
        w = self.w = Watcher(self, fmt, svc.config.watcher_queue, self.transport, evented=True)
        # What the session sends first (a snapshot, the roster, presence) goes out with the
        # handshake's answer, in one write: a crowd connecting at once costs a write each.
        cork = _Cork()
        w.transport = cast(asyncio.Transport, cork)
        svc.viewer_opened(w)
        self.session = WatchSession(svc, w, self, query)
        if self.w is w:
            w.transport = self.transport
        self._flush(cork.chunks)

    def _frame(self, frame: Frame) -> None:
        if self.w is None or self.session is None:
            return
        heard(self.w)
        op = frame.opcode
        if op is Opcode.TEXT or op is Opcode.BINARY:
            if frame.fin:
                self.session.message(bytes(frame.data))
            else:
                self.parts = [bytes(frame.data)]
        elif op is Opcode.CONT and self.parts is not None:
            self.parts.append(bytes(frame.data))
            if frame.fin:
                data, self.parts = b"".join(self.parts), None
                self.session.message(data)
        # A ping is answered by the ServerProtocol itself, a close too: _flush writes them.

    def _flush(self, then: list[bytes] | None = None) -> None:
        """Write what the ServerProtocol has to send (and ``then``, after it), at once."""
        data = self.proto.data_to_send()
        if self.transport.is_closing():
            return   # (gone: nothing more can reach it)
        end = b"" in data   # the end of the connection, after a refused handshake or a close
        if then:
            data += then
        out = b"".join(data)
        if out:
            self.transport.write(out)
        if end:
            self.transport.close()

    def _too_slow(self) -> None:
        self.paused = None
        self.svc.metrics.viewer_drops.inc()
        self.close_soon(pr.CloseCode.TOO_SLOW, b"too slow")

    def _leave(self) -> None:
        """The viewer is sent nothing more, from now on (its transport is no longer its
        watcher's); it leaves the fan-out and the ping ring in its turn (``Departures``)."""
        w, self.w = self.w, None
        if w is None:
            return
        w.transport = None
        session, self.session = self.session, None
        self.svc.fanout.departures.add(partial(_left, self.svc, w, session))


class _Cork:
    """A new viewer's transport while its session starts: what is written is kept, to go out
    with the handshake's answer."""

    __slots__ = ("chunks",)

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.chunks.append(data)

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0


def _left(svc: Service, w: Watcher, session: WatchSession | None) -> None:
    if session is not None:
        session.close()
    svc.viewer_closed(w)
