"""The task-free viewer endpoint (stream/live/viewers/viewer_socket.py) behind the front door
(stream/live/viewers/front_door.py): a fresh connection asking for ``/ws/watch`` is served by
websockets' Sans-I/O protocol, an upgrade on a connection that served HTTP first by
aiohttp, and both speak the same protocol (docs/protocol-viewer.md, "Viewer protocol"); its
refusals and limits are the documented ones; a closed viewer leaves no reference cycle."""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import struct
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import websockets
from aiohttp import web
from websockets.frames import Frame, Opcode
from websockets.server import ServerProtocol
from websockets.typing import Origin

from stream.live.broadcast.fanout import Watcher, ws_frame
from stream.live.viewers.front_door import is_watch
from stream.live.viewers.viewer_socket import ViewerConnection

from ..conftest import Raw, RunningServer, Server, Viewer, eventually


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async with RunningServer(tmp_path, send_timeout=1.0) as s:
        await s.setup_game()
        yield s


def newest(server: Server, known: set[Watcher]) -> Watcher:
    (w,) = set(server.svc.fanout.watchers) - known
    return w


async def first_frames(ws: Any, n: int) -> list[dict[str, Any]]:
    return [json.loads(await asyncio.wait_for(ws.recv(), 5)) for _ in range(n)]


@pytest.mark.parametrize(("head", "watch"), [
    (b"GET /ws/watch?game=g1 HTTP/1.1\r\n", True),
    (b"GET /ws/watch HTTP/1.1\r\n", True),
    (b"GET /ws/watchers HTTP/1.1\r\n", False),
    (b"GET /ws/device HTTP/1.1\r\n", False),
    (b"POST /ws/watch HTTP/1.1\r\n", False),
    (b"GET /api/games HTTP/1.1\r\n", False),
])
def test_the_front_door_routes_by_the_request_line(head: bytes, watch: bool) -> None:
    assert is_watch(head) is watch


async def test_a_fresh_connection_is_served_without_a_task(server: Server) -> None:
    known = set(server.svc.fanout.watchers)
    async with websockets.connect(f"{server.watch_url}?game=g1") as ws:
        frames = await first_frames(ws, 3)
        assert [f["type"] for f in frames] == ["snapshot", "roster", "presence"]
        w = newest(server, known)
        assert isinstance(w.ws, ViewerConnection) and w.evented and w.task is None
        tk = await server.device("timekeeper")
        await tk.send({"type": "clock.start", "game": "g1"})
        while (delta := json.loads(await asyncio.wait_for(ws.recv(), 5)))["type"] == "presence":
            pass
        assert delta["type"] == "delta" and delta["seq"] == frames[0]["seq"] + 1
        await ws.send(json.dumps({"type": "ping", "device_time": 7}))
        pong = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert pong["type"] == "pong" and pong["device_time"] == 7
        await tk.close()
    await eventually(lambda: w not in server.svc.fanout.watchers)
    assert server.svc.open_sockets == 0


async def test_an_upgrade_after_http_on_the_same_connection_is_aiohttps(server: Server) -> None:
    known = set(server.svc.fanout.watchers)
    conn = aiohttp.TCPConnector(limit=1)
    async with aiohttp.ClientSession(connector=conn) as s:
        async with s.get(server.http + "/healthz") as r:
            assert r.status == 200
            await r.read()
        async with s.ws_connect(f"{server.watch_url}?game=g1") as ws:
            first = await ws.receive_json(timeout=5)
            assert first["type"] == "snapshot"
            w = newest(server, known)
            assert isinstance(w.ws, web.WebSocketResponse) and not w.evented
            await ws.send_json({"type": "ping", "device_time": 3})
            while (msg := await ws.receive_json(timeout=5))["type"] != "pong":
                pass
            assert msg["device_time"] == 3


@pytest.mark.parametrize("after_http", [False, True])
async def test_the_test_viewer_takes_either_route_as_asked(server: Server, after_http: bool,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The service's viewer tests run once on each route (``ARENA_VIEWER_AFTER_HTTP``,
    tests/run.sh): the harness viewer reaches the one it is asked for."""
    monkeypatch.setattr(Viewer, "after_http", after_http)
    known = set(server.svc.fanout.watchers)
    viewer = await Viewer.open(server.watch_url, game="g1")
    try:
        assert (await viewer.next("snapshot"))["game"] == "g1"
        w = newest(server, known)
        assert isinstance(w.ws, web.WebSocketResponse if after_http else ViewerConnection)
    finally:
        await viewer.close()


HANDSHAKE = (b"tch?game=g1 HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
             b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
             b"Sec-WebSocket-Version: 13\r\n\r\n")


async def test_a_request_line_in_pieces_is_waited_for(server: Server) -> None:
    """The front door decides on the whole request line, however it is cut."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"GET /ws/wa")
    await writer.drain()
    await asyncio.sleep(0.05)
    writer.write(HANDSHAKE)
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert head.startswith(b"HTTP/1.1 101 ")
    assert b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in head   # RFC 6455's example key's accept
    b0, b1 = await asyncio.wait_for(reader.readexactly(2), 5)
    assert b0 == 0x81   # a final text frame, unmasked: the snapshot
    n = b1 & 0x7F
    if n == 126:
        n = int.from_bytes(await reader.readexactly(2), "big")
    elif n == 127:
        n = int.from_bytes(await reader.readexactly(8), "big")
    assert json.loads(await reader.readexactly(n))["type"] == "snapshot"
    writer.close()


async def test_a_message_in_fragments_is_one_message(server: Server) -> None:
    async with websockets.connect(f"{server.watch_url}?game=g1") as ws:
        await first_frames(ws, 3)
        await ws.send(iter(['{"type":"pi', 'ng","device', '_time":5}']))
        pong = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert pong == {**pong, "type": "pong", "device_time": 5}


async def test_refusals_before_the_upgrade(server: Server) -> None:
    """Another site's page: 403 (docs/protocol.md, "Framing"); not a WebSocket handshake: refused."""
    plain = server.watch_url.replace("ws:", "http:") + "?game=g1"
    async with aiohttp.ClientSession() as s, s.get(plain, headers={"Connection": "close"}) as r:
        assert r.status == 426   # a fresh connection without the Upgrade header
        assert "WebSocket" in await r.text()
    with pytest.raises(websockets.InvalidStatus) as refused:
        async with websockets.connect(f"{server.watch_url}?game=g1", origin=Origin("https://elsewhere.example")):
            pass
    assert refused.value.response.status_code == 403
    assert refused.value.response.body == b"origin not allowed\n"


async def test_a_message_over_8_kib_closes_with_1009(server: Server) -> None:
    async with websockets.connect(f"{server.watch_url}?game=g1", max_size=None) as ws:
        await first_frames(ws, 3)
        await ws.send("x" * 8193)
        with pytest.raises(websockets.ConnectionClosed) as closed:
            while True:
                await asyncio.wait_for(ws.recv(), 5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


async def test_a_closed_viewer_leaves_no_reference_cycle(server: Server) -> None:
    """Frozen (heap.py), a cycle would never be freed: a viewer's connection is freed by
    reference counting alone, with the collector off."""
    kinds = (ViewerConnection, Watcher, ServerProtocol)
    gc.collect()
    gc.disable()
    try:
        before = {id(o) for o in gc.get_objects() if type(o) in kinds}   # other tests' servers'
        for _ in range(5):   # closed as the protocol says
            async with websockets.connect(f"{server.watch_url}?game=g1") as ws:
                await first_frames(ws, 3)
        for _ in range(5):   # cut: a reset, no closing handshake, no end of stream
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"GET /ws/wa" + HANDSHAKE)
            await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            await eventually(lambda: server.svc.open_sockets == 1)
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            await eventually(lambda: server.svc.open_sockets == 0)
        await eventually(lambda: server.svc.open_sockets == 0)
        # The ping ring lets go of a closed viewer when it next comes round to it.
        await asyncio.sleep(server.svc.config.heartbeat * 3 + 0.5)
        alive = [type(o).__name__ for o in gc.get_objects() if type(o) in kinds and id(o) not in before]
        assert alive == []
    finally:
        gc.enable()


async def _close_after(server: Server, path: bytes, frame: bytes) -> tuple[int, bytes]:
    """Upgrade a fresh connection to ``path``, send ``frame``: the close code and reason."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"GET " + path + HANDSHAKE[HANDSHAKE.index(b" HTTP/1.1"):])
    await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    writer.write(frame)
    while True:   # the server's frames, up to its close frame
        b0, b1 = await asyncio.wait_for(reader.readexactly(2), 5)
        n = b1 & 0x7F
        if n >= 126:
            n = int.from_bytes(await reader.readexactly(2 if n == 126 else 8), "big")
        payload = await reader.readexactly(n)
        if b0 & 0x0F == 0x8:
            writer.close()
            return int.from_bytes(payload[:2], "big"), payload[2:]


@pytest.mark.parametrize("path", [b"/ws/watch?game=g1", b"/ws/device"])
async def test_a_frame_with_an_unknown_opcode_closes_with_1002(server: Server, path: bytes) -> None:
    """docs/protocol.md, "Close codes": 1002, closed by the WebSocket layer."""
    unknown_opcode = bytes([0x83, 0x80 | 1]) + b"\x01\x02\x03\x04" + bytes([ord("x") ^ 1])
    code, _ = await _close_after(server, path, unknown_opcode)
    assert code == 1002


@pytest.mark.parametrize("size", [0, 1, 125, 126, 65535, 65536, 70000])
@pytest.mark.parametrize("first", [0x81, 0x82])
def test_the_shared_frame_is_what_websockets_frames(size: int, first: int) -> None:
    """Every viewer is written one frame made once (``fanout.ws_frame``): byte for byte the
    frame websockets itself would send, at each length's boundary (RFC 6455 §5.2)."""
    payload = bytes(range(256)) * (size // 256) + bytes(range(size % 256))
    opcode = Opcode.TEXT if first == 0x81 else Opcode.BINARY
    assert ws_frame(first, payload) == Frame(opcode, payload).serialize(mask=False, extensions=[])


@pytest.mark.parametrize("route", ["fresh", "after_http", "device"])
async def test_a_revocation_counts_only_the_sockets_it_closed(server: Server, route: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/protocol.md, "Tokens and roles": `POST /api/tokens/revoke` closes the sockets the
    token opened and says how many. Sockets closed before are not counted, nor kept: a
    long-lived display token's viewer sessions leave nothing of theirs behind (a viewer on
    either route to the watch socket, and a device on its own)."""
    monkeypatch.setattr(Viewer, "after_http", route == "after_http")
    role = "umpire" if route == "device" else "display"
    status, issued = await server.api("POST", "/api/tokens",
                                      {"role": role, "device": "board-1", "game": "g1"})
    assert status == 201, issued
    token, jti = issued["token"], issued["claims"]["jti"]

    async def session() -> Any:
        if route == "device":
            raw = await Raw.device(server, token)
            return raw.ws
        viewer = await Viewer.connect(f"{server.watch_url}?game=g1")
        await viewer.ws.send(json.dumps({"type": "auth", "token": token}))
        assert (await viewer.next("snapshot"))["game"] == "g1"   # authenticated, then subscribed
        return viewer.ws

    for _ in range(3):
        ws = await session()
        await ws.close()
    await eventually(lambda: server.svc.open_sockets == 0)
    last = await session()
    status, reply = await server.api("POST", "/api/tokens/revoke", {"jti": jti, "reason": "lost"})
    assert (status, reply) == (200, {"revoked": jti, "sockets_closed": 1})
    with pytest.raises(websockets.ConnectionClosed) as closed:
        while True:
            await asyncio.wait_for(last.recv(), 5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401
    await eventually(lambda: server.svc.open_sockets == 0)
    assert jti not in server.svc.by_jti   # the token's registry holds none of its closed sockets
