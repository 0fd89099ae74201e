"""Clients of a running service: a viewer that keeps every frame, a pool of
officials' devices, an event stream sent on schedule, and the bench game set
up through the HTTP API. (The handheld itself is ``stream.tools.device_client``.)"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import msgspec
import websockets

from ..device_client import Device
from .processes import ServiceProcess

#: The game the benchmarks and the fan-out proofs play.
GAME = "bench-fanout"

__all__ = ["GAME", "Burst", "DevicePool", "EventStream", "Viewer", "setup_game", "wait_for_game"]


#: The frames ``Viewer.next`` skips unless asked for: they come beside the game's updates.
_ASIDE = ("heartbeat", "presence", "roster")


class Viewer:
    """A watch connection that keeps every frame it receives (``frames``) and its size in
    bytes (``sizes``): JSON text frames or MessagePack binary ones."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []
        self.sizes: list[int] = []

    @classmethod
    async def open(cls, url: str, **query: Any) -> Viewer:
        """``url`` with ``query`` as its query string (``game=``, ``format=``, ``since=`` …)."""
        qs = "&".join(f"{k}={v}" for k, v in query.items())
        return await cls.connect(f"{url}?{qs}" if qs else url)

    #: Connect as a browser may: on a connection that served an HTTP request first (kept
    #: alive), which the service's aiohttp handler upgrades (``watch.watch_ws``) rather than
    #: its task-free endpoint. The service's viewer tests run once each way (tests/run.sh).
    after_http = False

    @classmethod
    async def connect(cls, url: str, **options: Any) -> Viewer:
        """``url`` as it is, with ``websockets.connect`` ``options`` (``max_size`` …)."""
        if cls.after_http and "sock" not in options:
            options["sock"] = await asyncio.to_thread(_served_http, url)
        return cls(await websockets.connect(url, **options))

    async def next(self, kind: str | None = None, timeout: float = 5.0,  # noqa: ASYNC109
                   ) -> dict[str, Any]:
        """The next frame (of ``kind``; heartbeats, presence and rosters are skipped unless asked for)."""
        async with asyncio.timeout(timeout):
            while True:
                raw = await self.ws.recv()
                msg: dict[str, Any] = (msgspec.json.decode(raw) if isinstance(raw, str)
                                       else msgspec.msgpack.decode(raw))
                self.frames.append(msg)
                self.sizes.append(len(raw.encode()) if isinstance(raw, str) else len(raw))
                if (kind is None and msg["type"] not in _ASIDE) or msg["type"] == kind:
                    return msg

    async def until_seq(self, game: str, seq: int, timeout: float = 5.0,  # noqa: ASYNC109
                        ) -> list[dict[str, Any]]:
        """Every frame up to the one of ``game`` at ``seq`` or later."""
        got: list[dict[str, Any]] = []
        async with asyncio.timeout(timeout):
            while True:
                m = await self.next()
                got.append(m)
                if m.get("game") == game and m.get("seq", -1) >= seq:
                    return got

    async def close(self) -> None:
        await self.ws.close()


def _served_http(url: str) -> socket.socket:
    """A connection to ``url``'s host that has served ``GET /healthz`` whole and is kept alive."""
    where = urlsplit(url)
    host, port = where.hostname or "127.0.0.1", where.port or 80
    sock = socket.create_connection((host, port), timeout=10)
    sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    got = b""
    while True:
        head, ended, body = got.partition(b"\r\n\r\n")
        if ended:
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            if len(body) >= length:
                break
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError(f"{host}:{port} closed the connection before answering GET /healthz")
        got += chunk
    sock.settimeout(None)
    return sock


async def setup_game(http: str, admin: str, *, game: str = GAME, arena: str = "bench-arena",
                     devices: int = 1, device_prefix: str = "bench-device") -> list[str]:
    """Set ``game`` up (a Club game of event ``bench``) through the HTTP API at ``http`` with
    the ``admin`` token; issue one admin token per device socket, scoped to the game."""
    body = {"id": f"setup-{game}", "game": game, "event": "bench", "class": "club", "handicap": 8,
            "arena": arena,
            "teams": {"home": {"team": f"{game}-home", "players": ["h1", "h2", "h3"], "subs": ["h4"]},
                      "away": {"team": f"{game}-away", "players": ["a1", "a2", "a3"], "subs": ["a4"]}}}
    tokens = []
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {admin}"}) as session:
        async with session.post(f"{http}/api/games", json=body) as r:
            if r.status != 201:
                raise RuntimeError(f"game setup refused: {r.status} {await r.text()}")
        for i in range(devices):
            req = {"role": "admin", "device": f"{device_prefix}-{i}", "official": "bench", "game": game}
            async with session.post(f"{http}/api/tokens", json=req) as r:
                if r.status != 201:
                    raise RuntimeError(f"token refused: {r.status} {await r.text()}")
                tokens.append(str((await r.json())["token"]))
    return tokens


async def wait_for_game(http: str, seq: int, *, game: str = GAME, within: float = 30.0) -> None:
    """Until the service at ``http`` serves ``game`` at ``seq`` or later (a follower catching up)."""
    deadline = time.monotonic() + within
    async with aiohttp.ClientSession() as session:
        while True:
            with contextlib.suppress(aiohttp.ClientError, OSError, ValueError, KeyError, TypeError):
                async with session.get(f"{http}/api/games/{game}") as r:
                    if r.status == 200 and int((await r.json())["seq"]) >= seq:
                        return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{http} has not caught up with game {game} (seq {seq}) in {within:g} s")
            await asyncio.sleep(0.05)


class DevicePool:
    """The officials' device: one stream of valid events, alternately ``clock.start`` and
    ``whistle``, round-robin over one socket per token. A whistle is valid whether the
    clock runs or not, so should the server take two events from different sockets in the
    other order, at most one ``clock.start`` is refused and the stream heals itself."""

    REPLY_TIMEOUT = 30.0

    def __init__(self, url: str, tokens: list[str], prefix: str, *, game: str = GAME) -> None:
        self.game = game
        self.devices = [Device(url, t, prefix=f"{prefix}{i}") for i, t in enumerate(tokens)]

    async def __aenter__(self) -> DevicePool:
        await asyncio.gather(*(d.connect() for d in self.devices))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.gather(*(d.close() for d in self.devices), return_exceptions=True)

    async def fire(self, i: int) -> tuple[int, int, dict[str, Any]]:
        """Send event ``i``: (send ns, reply ns, reply), ``time.time_ns()``."""
        d = self.devices[i % len(self.devices)]
        event = {"type": "clock.start" if i % 2 == 0 else "whistle", "game": self.game, "id": d.new_id()}
        t_send = time.time_ns()
        try:
            reply = await d.send_once(event, wait_s=self.REPLY_TIMEOUT)
        except (TimeoutError, ConnectionError, websockets.ConnectionClosed) as err:
            reply = {"type": "error", "code": "no_reply", "detail": f"{type(err).__name__}: {err}"}
        return t_send, time.time_ns(), reply

    async def stop_clock(self) -> None:
        """One whistle, waited for: the clock is stopped, whatever happened before."""
        d = self.devices[0]
        await d.send_once({"type": "whistle", "game": self.game, "id": d.new_id()},
                          wait_s=self.REPLY_TIMEOUT)


@dataclass
class Burst:
    """What one ``EventStream.run`` sent and got back."""

    sends: dict[int, int]       # acked seq → send time (``time.time_ns()``)
    ack_ms: list[float]         # send to ack, per acked event
    refused: list[dict[str, Any]]
    fired: int                  # events sent, acked or not
    send_seconds: float         # from the first send to the last
    seconds: float              # from the first send to the last reply


@dataclass
class EventStream:
    """A ``DevicePool`` sending on schedule at ``rate`` per second, open loop: an event
    does not wait for the previous one's ack, so a slow server faces the same offered
    load as a fast one. ``sends``, ``acks`` (seq → ms) and ``refused`` add up every run."""

    url: str
    tokens: list[str]
    rate: float
    prefix: str = "stream"
    game: str = GAME
    sends: dict[int, int] = field(default_factory=dict)
    acks: dict[int, float] = field(default_factory=dict)
    refused: list[dict[str, Any]] = field(default_factory=list)
    n: int = 0  # events fired so far: their parity keeps the clock start/stop alternating
    pool: DevicePool | None = None

    @classmethod
    async def for_game(cls, service: ServiceProcess, rate: float, *, devices: int = 1,
                       prefix: str = "proof", game: str = GAME) -> EventStream:
        """Set ``game`` up on ``service`` (with its admin token) and connect ``devices`` sockets."""
        tokens = await setup_game(service.http, service.admin, game=game, devices=devices)
        return await cls(service.device_url, tokens, rate, prefix, game).open()

    async def open(self) -> EventStream:
        self.pool = await DevicePool(self.url, self.tokens, self.prefix, game=self.game).__aenter__()
        return self

    async def close(self) -> None:
        if self.pool is not None:
            await self.pool.__aexit__(None, None, None)
            self.pool = None

    async def __aenter__(self) -> EventStream:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def run(self, seconds: float | None = None, stop: asyncio.Event | None = None,
                  count: int | None = None) -> Burst:
        """Send ``count`` events, or for ``seconds``, or until ``stop`` is set, ending on an even
        count (the clock stopped); then wait for every reply."""
        assert self.pool is not None, "the stream is not open"
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        k = 0
        tasks = []
        while True:
            if count is not None and k >= count:
                break
            timed_out = seconds is not None and loop.time() - t0 >= seconds
            if (timed_out or (stop is not None and stop.is_set())) and self.n % 2 == 0:
                break
            delay = t0 + k / self.rate - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(self.pool.fire(self.n)))
            self.n += 1
            k += 1
        send_s = loop.time() - t0
        burst = Burst({}, [], [], k, send_s, 0.0)
        for t_send, t_reply, reply in await asyncio.gather(*tasks):
            if reply.get("type") == "ack" and isinstance(reply.get("seq"), int):
                seq = int(reply["seq"])
                burst.sends[seq] = t_send
                burst.ack_ms.append((t_reply - t_send) / 1e6)
                self.acks[seq] = burst.ack_ms[-1]
            else:
                burst.refused.append(reply)
        burst.seconds = loop.time() - t0
        self.sends |= burst.sends
        self.refused += burst.refused
        return burst

    async def stop_clock(self) -> None:
        assert self.pool is not None
        await self.pool.stop_clock()
