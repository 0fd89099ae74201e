"""A real service on loopback for each test: aiohttp in this process, a real
SQLite file in a temporary directory, real WebSocket clients. (The service as a
subprocess, etcd, the viewer and the devices: ``stream.tools.harness``.) The ``etcd``
fixture is a cluster of the test's own (three members), for a test that stops it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest
import websockets
from aiohttp import web

from stream.live.app import build_app
from stream.live.ops.config import Config
from stream.live.service import Service
from stream.live.viewers.front_door import FrontServer
from stream.tools.harness import Device, EtcdCluster, Processes, Viewer, free_port

from ..rules.script import AWAY, HOME
from ..sdk import sdk

__all__ = ["Raw", "RunningServer", "Server", "Viewer", "admin_device", "etcd", "eventually",
           "free_port", "game_setup_body", "metric", "server", "store_down", "view_after"]


def game_setup_body(game: str = "g1", *, sides: tuple[str, str] | None = None,
                    player: Callable[[str], str] = str, **over: Any) -> dict[str, Any]:
    """The ``game.setup`` of a game of "cup" (handicap 8) between the teams ``sides`` names
    (by default ``{game}-home`` and ``{game}-away``): ``HOME`` and ``AWAY`` start, h4 and a4
    on the bench, each named by ``player`` (a game's own ids, say); ``over`` sets any field
    (``teams`` the whole of both sides)."""
    home, away = sides or (f"{game}-home", f"{game}-away")
    body: dict[str, Any] = {
        "id": f"setup-{game}", "game": game, "event": "cup", "handicap": 8,
        "teams": {"home": {"team": home, "players": [player(x) for x in HOME], "subs": [player("h4")]},
                  "away": {"team": away, "players": [player(x) for x in AWAY], "subs": [player("a4")]}}}
    body.update(over)
    return body


class Server:
    def __init__(self, app: web.Application, port: int, data: Path) -> None:
        self.app = app
        self.port = port
        self.data = data
        self.http = f"http://127.0.0.1:{port}"
        self.device_url = f"ws://127.0.0.1:{port}/ws/device"
        self.watch_url = f"ws://127.0.0.1:{port}/ws/watch"
        self.svc: Service = app[Service.KEY]
        self.admin = self.token("admin", "admin")
        self.n = 0

    def token(self, role: str, device: str, *, game: str | None = None, arena: str | None = None,
              ttl: int = 3600, official: str = "", event: str | None = None) -> str:
        return self.svc.issue(sub=device, role=role, game=game, arena=arena, official=official,
                              event=event, exp=int(time.time()) + ttl)[0]

    async def api(self, method: str, path: str, body: Any = None, token: str | None = None,
                  ) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token or self.admin}"}
        async with aiohttp.ClientSession() as s, s.request(
                method, self.http + path, json=body, headers=headers) as r:
            text = await r.text()
            try:
                return r.status, json.loads(text)
            except ValueError:
                return r.status, text

    async def committee_token(self, event: str = "cup", *, device: str | None = None,
                              official: str = "Host Committee") -> str:
        """A committee token for ``event``, minted by the admin over the API."""
        status, doc = await self.api("POST", "/api/tokens", {
            "role": "committee", "device": device or f"htc-{event}", "official": official, "event": event})
        assert status == 201, doc
        claims = doc["claims"]
        assert (claims["role"], claims["event"], claims["game"]) == ("committee", event, None)
        return str(doc["token"])

    async def setup_game(self, game: str = "g1", arena: str = "a1", **over: Any) -> None:
        body = game_setup_body(game, arena=arena, **over)
        if not self.svc.hub.engine.has_event(str(body["event"])):
            # A game of an event never set up says it is a Club game (docs/log-format.md).
            body.setdefault("class", "club")
        status, reply = await self.api("POST", "/api/games", body)
        assert status == 201, reply

    async def device(self, role: str = "umpire", game: str = "g1", name: str | None = None) -> Device:
        self.n += 1
        d = Device(self.device_url, self.token(role, name or f"{role}-{self.n}", game=game),
                   prefix=f"{role}{self.n}")
        await d.connect()
        return d

    def log_rows(self) -> list[tuple[Any, ...]]:
        import sqlite3

        with sqlite3.connect(self.data / "arena.sqlite") as c:
            return c.execute("SELECT game, seq, device, client_id, body FROM log ORDER BY pos").fetchall()


class RunningServer:
    """A service like the ``server`` fixture's, with its own settings, that a test
    starts and stops itself (``async with RunningServer(tmp_path, watcher_queue=8) as s``).
    Starting a second one on the same ``data`` directory is a restart: same log,
    same secret, same epoch."""

    def __init__(self, data: Path, *, port: int | None = None, **overrides: Any) -> None:
        self.data = data
        self.port = port or free_port()
        self.settings: dict[str, Any] = {"data_dir": data, "port": self.port, "demo": False,
                                         "heartbeat": 0.5, "auth_timeout": 1.0, "ping_interval": 0.5,
                                         **overrides}
        self.runner: web.AppRunner | None = None
        self.front: FrontServer | None = None

    async def __aenter__(self) -> Server:
        app = build_app(Config(**self.settings))
        self.runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
        await self.runner.setup()
        self.front = FrontServer(self.runner, "127.0.0.1", self.port)
        await self.front.start()
        return Server(app, self.port, self.data)

    async def __aexit__(self, *exc: object) -> None:
        if self.front is not None:
            self.front.close()
            self.front = None
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async with RunningServer(tmp_path) as s:
        yield s


class Raw:
    """A bare WebSocket client for protocol tests: send any bytes, read the replies
    (skipping the server's clock-sync pings), and see how the connection ended."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    @classmethod
    async def connect(cls, url: str, **kw: Any) -> Raw:
        return cls(await websockets.connect(url, open_timeout=10, **kw))

    @classmethod
    async def device(cls, server: Server, token: str) -> Raw:
        """A device socket past authentication (the welcome frame read)."""
        raw = await cls.connect(server.device_url, max_size=2**22)
        await raw.send(json.dumps({"type": "auth", "token": token}))
        welcome = await raw.reply()
        assert welcome["type"] == "welcome", welcome
        return raw

    async def send(self, data: str | bytes, *, text: bool | None = None) -> None:
        await self.ws.send(data, text=text)

    async def reply(self, timeout: float = 5.0) -> dict[str, Any]:
        """The next frame that isn't a server ping, or ``{"type": "closed", "code": N}``."""
        async with asyncio.timeout(timeout):
            while True:
                try:
                    raw = await self.ws.recv()
                except websockets.ConnectionClosed as err:
                    return {"type": "closed", "code": err.rcvd.code if err.rcvd else None}
                msg: dict[str, Any] = (msgspec.json.decode(raw) if isinstance(raw, str)
                                       else msgspec.msgpack.decode(raw))
                if msg.get("type") != "ping":
                    return msg

    async def close(self) -> None:
        await self.ws.close()


def view_after(frames: list[dict[str, Any]]) -> Any:
    """The view a display shows: the last snapshot, then each delta's patch."""
    last = max(i for i, f in enumerate(frames) if f["type"] == "snapshot")
    view = msgspec.json.decode(msgspec.json.encode(frames[last]["view"]))
    for f in frames[last + 1:]:
        if f["type"] == "delta":
            # The one patch rule of the Python client: a path not in the view fails the test.
            view = sdk.apply_patch(view, [sdk.pr.Patch(path, value) for path, value in f["patch"]])
    return view


async def admin_device(server: Server, name: str = "admin-dev") -> Device:
    """A device with an unscoped admin token (the only kind that may set things up)."""
    dev = Device(server.device_url, server.token("admin", name), prefix=name)
    await dev.connect()
    return dev


async def eventually(check: Any, timeout: float = 5.0) -> None:
    """Poll ``check()`` (state a test can't await: a metric, the SQLite file) until it holds."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


async def metric(server: Server, name: str) -> float:
    """The value of the sample ``name`` (with its labels, if any) on the server's ``/metrics``."""
    status, text = await server.api("GET", "/metrics")
    assert status == 200
    return float(next(line.split()[-1] for line in str(text).splitlines() if line.startswith(name + " ")))


@pytest.fixture
async def etcd(tmp_path: Path) -> AsyncIterator[EtcdCluster]:
    """Three etcd members of the test's own (real processes, the production settings), that
    the test may stop, kill and start again; ended after it, the followers first."""
    work = tmp_path / "etcd"
    async with Processes(work) as group:
        cluster = EtcdCluster(work, group=group)
        await cluster.astart()
        try:
            yield cluster
        finally:
            await cluster.astop()


def store_down(cluster: EtcdCluster) -> None:
    """Every member killed at once (SIGKILL to each, then each reaped; their data kept, as a
    power cut leaves it): the store is down. ``cluster.astart()`` brings it back."""
    for m in cluster.members:
        os.kill(m.process.pid, signal.SIGKILL)
    for m in cluster.members:
        cluster.kill(m)
