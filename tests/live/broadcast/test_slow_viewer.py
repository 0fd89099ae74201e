"""A viewer that stops reading is put on the skip-to-snapshot path, or dropped
after ``send_timeout``; the viewers that keep up get every delta, in order.

A viewer "stops reading" for real: a ``websockets`` client with ``max_queue=1``
(it stops taking bytes off the socket) and a tiny TCP receive buffer, whose
server-side kernel send buffer is also shrunk: a loopback socket would
otherwise hold megabytes before the server's writer ever has to wait, where
a slow network link would not. (aiohttp itself still buffers up to about
256 KiB per socket before its writer waits.)"""

from __future__ import annotations

import asyncio
import re
import socket
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import websockets

from stream.live.broadcast.fanout import Watcher
from stream.tools.device_client import Device

from ..conftest import RunningServer, Server, Viewer, eventually, view_after

QUEUE = 16


def metric(text: str, name: str) -> float:
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    assert m is not None, name
    return float(m.group(1))


def sample(server: Server, name: str) -> float:
    """A metric's current value, read in-process (no HTTP round trip in a hot loop)."""
    value = server.svc.metrics.registry.get_sample_value(name)
    assert value is not None, name
    return value


async def metrics(server: Server) -> str:
    async with aiohttp.ClientSession() as s, s.get(server.http + "/metrics") as r:
        assert r.status == 200
        return await r.text()


class Stalled:
    """A viewer that never reads, with as little buffering as the OS allows at both ends."""

    def __init__(self, ws: Any, watcher: Watcher, transport: asyncio.WriteTransport) -> None:
        self.ws = ws
        self.watcher = watcher
        self.transport = transport

    @classmethod
    async def open(cls, server: Server) -> Stalled:
        known = set(server.svc.fanout.watchers)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        sock.connect(("127.0.0.1", server.port))
        ws = await websockets.connect(f"{server.watch_url}?game=g1", sock=sock, max_queue=1)
        await eventually(lambda: bool(set(server.svc.fanout.watchers) - known))
        (watcher,) = set(server.svc.fanout.watchers) - known
        transport = watcher.transport
        assert transport is not None
        assert transport.get_extra_info("peername") == sock.getsockname()
        transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        return cls(ws, watcher, transport)


async def play(tk: Device, ump: Device, n: int) -> dict[str, Any]:
    """The n-th of a stream of valid events: the clock starts, a goal stops it, again."""
    if n % 2 == 0:
        return await tk.send({"type": "clock.start", "game": "g1"})
    return await ump.send({"type": "goal", "game": "g1", "team": "home", "player": "h1"})


async def collect(viewer: Viewer) -> None:
    """Read until cancelled (``viewer.frames`` keeps everything)."""
    while True:
        await viewer.next(timeout=60)


def latest_seq(frames: list[dict[str, Any]]) -> int:
    return max((f["seq"] for f in frames if f["type"] in ("delta", "snapshot")), default=0)


async def wait_for_seq(viewers: list[Viewer], seq: int, timeout: float = 10.0) -> None:
    await eventually(lambda: all(latest_seq(v.frames) >= seq for v in viewers), timeout)


def check_stream(frames: list[dict[str, Any]], final: int) -> list[int]:
    """Every delta follows the frame before it by exactly one ``seq`` (a snapshot
    may jump ahead); the stream ends at ``final``. Returns the snapshots' seqs."""
    seq: int | None = None
    snaps = []
    for f in frames:
        if f["type"] == "snapshot":
            assert seq is None or f["seq"] >= seq, (seq, f["seq"])
            seq = f["seq"]
            snaps.append(f["seq"])
        elif f["type"] == "delta":
            assert seq is not None and f["seq"] == seq + 1, (seq, f["seq"])
            seq = f["seq"]
    assert seq == final
    return snaps


@pytest.mark.slow
async def test_slow_viewer_gets_a_fresh_snapshot_while_others_keep_pace(tmp_path: Path) -> None:
    srv = RunningServer(tmp_path, watcher_queue=QUEUE, send_timeout=30.0, heartbeat=5.0,
                        device_rate=1e6, device_burst=10**6)
    async with srv as server:
        await server.setup_game()
        stalled = await Stalled.open(server)
        normal = [await Viewer.open(server.watch_url, game="g1") for _ in range(3)]
        for v in normal:
            assert (await v.next("snapshot"))["seq"] == 1
        readers = [asyncio.create_task(collect(v)) for v in normal]
        tk, ump = await server.device("timekeeper"), await server.device("umpire")

        max_queued = max_buffered = sent = 0
        last = 0
        while sent < 300 or sample(server, "arena_queue_drops_total") == 0:
            assert sent < 2000, "the stalled viewer never fell behind"
            ack = await play(tk, ump, sent)
            assert ack["seq"] == last + 1 or last == 0
            last = ack["seq"]
            sent += 1
            max_queued = max(max_queued, len(stalled.watcher.backlog or ()))
            max_buffered = max(max_buffered, stalled.transport.get_write_buffer_size())

        # the ones that read got everything, in order, with no reset
        await wait_for_seq(normal, last)
        for r in readers:
            r.cancel()
        for v in normal:
            assert check_stream(v.frames, last) == [1]
            assert [f["seq"] for f in v.frames if f["type"] == "delta"] == list(range(2, last + 1))
        # the stalled one cost a bounded amount of memory, and was counted
        text = await metrics(server)
        assert metric(text, "arena_queue_drops_total") >= 1
        assert metric(text, "arena_viewer_disconnects_total") == 0
        assert max_queued <= QUEUE
        assert max_buffered <= 512 * 1024  # aiohttp's own write limit (256 KiB) and a frame
        assert stalled.watcher in server.svc.fanout.watchers  # still connected

        # when it reads again: what was in flight, then a fresh snapshot, then live deltas
        slow = Viewer(stalled.ws)
        async with asyncio.timeout(10):
            while latest_seq(slow.frames) < last:
                await slow.next()
        resets = [f for f in slow.frames if f["type"] == "snapshot" and f["reset"]]
        assert resets and {f["reason"] for f in resets} == {"slow"}
        # every snapshot, the fresh ones included, is followed at once by the game's roster
        if slow.frames[-1]["type"] == "snapshot":
            await slow.next("roster")
        after = [slow.frames[i + 1]["type"] for i, f in enumerate(slow.frames) if f["type"] == "snapshot"]
        assert after == ["roster"] * (len(resets) + 1)
        check_stream(slow.frames, last)
        assert len([f for f in slow.frames if f["type"] == "delta"]) < last - 1  # it did skip
        _, now = await server.api("GET", "/api/games/g1")
        assert now["seq"] == last
        assert view_after(slow.frames) == now["view"]
        assert view_after(normal[0].frames) == now["view"]

        # and from then on it is an ordinary viewer
        ack = await play(tk, ump, sent)
        delta = await slow.next("delta")
        assert delta["seq"] == ack["seq"] == last + 1
        await tk.close()
        await ump.close()
        for v in (slow, *normal):
            await v.close()


async def test_viewer_that_cannot_take_a_frame_in_time_is_dropped(tmp_path: Path) -> None:
    srv = RunningServer(tmp_path, watcher_queue=QUEUE, send_timeout=0.5, heartbeat=5.0,
                        device_rate=1e6, device_burst=10**6)
    async with srv as server:
        await server.setup_game()
        stalled = await Stalled.open(server)
        viewer = await Viewer.open(server.watch_url, game="g1")
        await viewer.next("snapshot")
        reader = asyncio.create_task(collect(viewer))
        tk, ump = await server.device("timekeeper"), await server.device("umpire")
        sent = last = 0
        while sample(server, "arena_queue_drops_total") == 0:  # until its writer is stuck
            assert sent < 4000, "the stalled viewer never fell behind"
            last = (await play(tk, ump, sent))["seq"]
            sent += 1
        # then send_timeout (0.5 s) runs out
        await eventually(lambda: sample(server, "arena_viewer_disconnects_total") > 0, 10)
        text = await metrics(server)
        assert metric(text, "arena_viewer_disconnects_total") == 1
        # the others never noticed
        await wait_for_seq([viewer], last)
        reader.cancel()
        check_stream(viewer.frames, last)
        # the stalled client, reading at last, finds its connection closed "try again later"
        with pytest.raises(websockets.ConnectionClosed) as closed:
            async with asyncio.timeout(10):
                while True:
                    await stalled.ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
        await eventually(lambda: stalled.watcher not in server.svc.fanout.watchers)  # and it is forgotten
        for c in (tk, ump, viewer):
            await c.close()
