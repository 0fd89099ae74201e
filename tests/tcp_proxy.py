"""A TCP proxy on loopback in front of a real server (an etcd member, the service), that
cuts a connection at the one moment a test needs:

* ``cut_after(marker)``: the next bytes from a client that hold ``marker`` (an etcd
  call's path, say ``b"/v3/kv/txn"``) go to the server, and so does the rest of
  what that client sends; when the server's answer starts to come back, it is
  dropped and the connection is closed on both sides. The server ran the command;
  the client never hears so. With ``hold``, the answer is held that long first (a
  slow link: other connections go on meanwhile); with ``down``, every connection is
  then closed and new ones refused (``refuse``) until the test lets them in again.
* ``cut_before(marker)``: those bytes are not forwarded: the connection is closed on
  both sides. The server never got the command; the client can't tell that either.
  With ``down``, every connection is then closed and new ones refused, as above.
* ``delay(marker, seconds)``: the next bytes that hold ``marker`` reach the server that
  late (other connections go on meanwhile); its answer comes back as usual.
* ``refuse``: every new connection is closed at once; ``down()`` also closes every
  open one (a server out of reach), until ``refuse`` is unset.

Each cut happens once (``cut`` is set when it has). Runs in the test's event loop.
``through(url, proxy)``: an etcd store's URL whose one member is the proxy's.
"""

from __future__ import annotations

import asyncio
import contextlib

from stream.store.etcd_client import parse_url
from stream.tools.harness import HOST


class Proxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self.refuse = False
        self.cut = asyncio.Event()
        self._arm: tuple[str, bytes] | None = None
        self._hold = 0.0
        self._take_down = False
        self._delay: tuple[bytes, float] | None = None
        self._clients: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> Proxy:
        self._server = await asyncio.start_server(self._client, HOST, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for t in list(self._tasks):
            t.cancel()
        for t in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await t

    async def __aenter__(self) -> Proxy:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def cut_after(self, marker: bytes, *, hold: float = 0.0, down: bool = False) -> None:
        self.cut.clear()
        self._arm = ("after", marker)
        self._hold, self._take_down = hold, down

    def cut_before(self, marker: bytes, *, down: bool = False) -> None:
        self.cut.clear()
        self._arm = ("before", marker)
        self._hold, self._take_down = 0.0, down

    def delay(self, marker: bytes, seconds: float) -> None:
        self._delay = (marker, seconds)

    def down(self) -> None:
        """Every connection closed, and new ones refused until ``refuse`` is unset."""
        self._down_all()

    def _down_all(self) -> None:
        self.refuse = True
        for other in list(self._clients):
            other.transport.abort()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            if self.refuse:
                return
            self._clients.add(writer)
            up_reader, up_writer = await asyncio.open_connection(HOST, self.upstream_port)
            sent = asyncio.Event()      # this connection sent the marked command upstream
            try:
                await asyncio.gather(self._up(reader, up_writer, sent, writer),
                                     self._down(up_reader, writer, sent))
            finally:
                up_writer.close()
        except (OSError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:  # closing: ended quietly (asyncio logs a handler's cancel)
            pass
        finally:
            writer.close()
            self._clients.discard(writer)
            self._tasks.discard(task)

    async def _up(self, reader: asyncio.StreamReader, up: asyncio.StreamWriter, sent: asyncio.Event,
                  client: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            late = self._delay
            if late is not None and late[0] in data:
                self._delay = None
                await asyncio.sleep(late[1])
            arm = self._arm
            if arm is not None and arm[1] in data:
                self._arm = None
                if arm[0] == "before":
                    if self._take_down:
                        self._down_all()
                    self.cut.set()
                    client.transport.abort()
                    up.close()
                    return
                sent.set()
            up.write(data)
            await up.drain()
        up.close()

    async def _down(self, up: asyncio.StreamReader, client: asyncio.StreamWriter,
                    sent: asyncio.Event) -> None:
        while data := await up.read(65536):
            if sent.is_set():  # the answer to the marked command: lost, and the connection with it
                if self._hold:
                    await asyncio.sleep(self._hold)
                if self._take_down:
                    self._down_all()
                self.cut.set()
                client.transport.abort()
                return
            client.write(data)
            await client.drain()
        client.close()


def through(url: str, proxy: Proxy) -> str:
    """``url`` (an ``etcd://`` URL) with one member only, the proxy's: a store that reaches
    etcd through the proxy alone, so that a cut, or ``down``, takes the whole store away."""
    return f"etcd://{HOST}:{proxy.port}/{parse_url(url).prefix}"
