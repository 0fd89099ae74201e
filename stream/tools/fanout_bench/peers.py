"""The servers ``arena-stream bench fanout`` holds the service against: a bare
``websockets`` broadcast server, and the same in Node on the ``ws`` library.

Both take ``/watch`` viewers and ``/device`` senders: a device's ``auth`` is
answered with a ``welcome`` and the first clock-sync ``ping``, as the service
answers it; for each event a device sends, one frame padded to the service's
mean delta size goes to every viewer, then the ack. The bare server is this module: ``python -m
stream.tools.fanout_bench.peers --port PORT --frame-bytes N`` (it prints
``ready``, then serves until it is ended), on the service's event loop (uvloop where it
is installed, ``ARENA_STREAM_LOOP`` if set: ``arena-stream serve``'s default).

Both run the service's loop-stall probe (``stream/live/ops/stall.py``: a 10 ms timer noting
its own lateness) and answer a plain ``GET /lag`` on their port with its window since
the previous read, which the read empties: ``{"p99_ms": .., "max_ms": .., "samples": n}``
(``null`` for no samples; ``harness.measure.peer_loop_lag`` reads it). Both listen with
the service's accept backlog, so that thousands of viewers connecting at once are taken
as the service takes them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
from prometheus_client import CollectorRegistry
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from ...live.ops import stall
from ...live.ops.loops import default_loop, loop_factory
from ..harness import GAME, HOST, DevicePool, Process, Processes, Viewer, free_port, raise_nofile
from ..harness.measure import LAG_PATH, lag_json

_enc = msgspec.json.Encoder()
_any = msgspec.json.Decoder(dict[str, Any])

#: The Node peer: ``bare_main`` in JavaScript, on the ``ws`` library.
NODE_WS_PEER = Path(__file__).resolve().parent.parent / "bench_peers" / "ws_peer.js"
NODE_WS_SPEC = "ws@8"  # pinned to a major version
NODE_WS_CACHE = Path.home() / ".cache" / "arena-stream" / "node-ws"
#: The accept backlog of both peers: the service's (``arena-stream serve``), so that a
#: storm of viewers connecting at once is queued, not dropped and retried a second later.
BACKLOG = 4096


class PeerServer(Process):
    """A peer server process on ``port``: ready once it prints ``ready``."""

    def __init__(self, name: str, argv: list[str], port: int) -> None:
        super().__init__(name, argv, stdout=True, ready_timeout=30.0)
        self.port = port

    def ready(self) -> bool:
        return self.readline(self.poll) == "ready"

    @property
    def device_url(self) -> str:
        return f"ws://{HOST}:{self.port}/device"

    def watch(self, game: str | None = None) -> str:
        return f"ws://{HOST}:{self.port}/watch"

    @property
    def http(self) -> str:
        """Its base URL: ``GET /lag`` there reads its loop-stall probe."""
        return f"http://{HOST}:{self.port}"


def bare_frame(seq: int, size: int) -> bytes:
    """A delta-like JSON frame of ``size`` bytes (or the smallest that holds ``seq``)."""
    head = b'{"type":"delta","game":"bench","seq":%d,"pad":"' % seq
    return head + b"x" * max(0, size - len(head) - 2) + b'"}'


def bare_server(group: Processes, frame_bytes: int, name: str = "bare") -> PeerServer:
    """The bare server on a free port, in ``group``, not started yet."""
    port = free_port()
    return group.add(PeerServer(name, [sys.executable, "-m", "stream.tools.fanout_bench.peers",
                                       "--port", str(port), "--frame-bytes", str(frame_bytes)], port))


async def peer_events(peer: PeerServer, tokens: list[str], events: int, prefix: str) -> None:
    """Send ``events`` events to ``peer``, one at a time, with one viewer watching: the
    work the service does after its idle viewers leave (``probe_delta_size``), so that a
    collection of their garbage can fall in the stall probe's window there too."""
    viewer = await Viewer.connect(peer.watch(), max_size=2**22, compression=None)
    try:
        await viewer.next(timeout=10)  # the hello
        async with DevicePool(peer.device_url, tokens, prefix) as pool:
            last = 0
            for i in range(events):
                _, _, reply = await pool.fire(i)
                if reply.get("type") != "ack":
                    raise RuntimeError(f"{peer.name}: an event refused: {reply}")
                last = int(reply["seq"])
        await viewer.until_seq("bench", last, timeout=10)  # bare_frame's game
    finally:
        await viewer.close()


async def start_bare(group: Processes, frame_bytes: int) -> PeerServer:
    peer = bare_server(group, frame_bytes)
    await peer.astart()
    return peer


def ensure_node_ws(cache: Path = NODE_WS_CACHE, timeout: float = 180.0) -> tuple[Path | None, str]:
    """The ``ws`` package for the Node peer, installed with npm into ``cache`` (outside the
    repository) if it is not there yet: (the package's directory, a note saying which node
    and ws), or (None, why not)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None:
        return None, "not measured: node not found"
    module = cache / "node_modules" / "ws"
    major = NODE_WS_SPEC.split("@", 1)[1]

    def installed() -> str:
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            version = str(_any.decode((module / "package.json").read_bytes())["version"])
            if version.split(".", 1)[0] == major:
                return version
        return ""

    if not installed():
        if npm is None:
            return None, "not measured: npm not found (needed to install ws)"
        cache.mkdir(parents=True, exist_ok=True)
        try:
            res = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-save", "--prefix",
                                  str(cache), NODE_WS_SPEC], capture_output=True, text=True,
                                 timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return None, f"not measured: npm install {NODE_WS_SPEC} took over {timeout:g} s"
        if res.returncode != 0 or not installed():
            last = (res.stderr.strip().splitlines() or ["?"])[-1]
            return None, f"not measured: npm install {NODE_WS_SPEC} failed ({last})"
    try:
        node_version = subprocess.run([node, "--version"], capture_output=True, text=True,
                                      timeout=10, check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        node_version = "node ?"
    return module, f"node {node_version}, ws {installed()}"


def node_ws_server(group: Processes, frame_bytes: int, ws_module: Path,
                   name: str = "node-ws") -> PeerServer:
    """The Node peer on a free port, in ``group``, not started yet: the bare server's paths,
    replies and frames."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node not found")
    port = free_port()
    return group.add(PeerServer(name, [node, str(NODE_WS_PEER), str(port), str(frame_bytes),
                                       str(ws_module)], port))


async def start_node_ws(group: Processes, frame_bytes: int, ws_module: Path) -> PeerServer:
    peer = node_ws_server(group, frame_bytes, ws_module)
    await peer.astart()
    return peer


def lag_response(window: stall.LagWindow) -> Response:
    """The answer to ``GET /lag``: ``window`` since the previous read, emptied."""
    body = lag_json(*window.take())
    return Response(200, "OK", Headers([("Content-Type", "application/json"),
                                        ("Content-Length", str(len(body))), ("Connection", "close")]),
                    body)


async def bare_main(port: int, frame_bytes: int) -> None:
    """A plain websockets broadcast server: ``/watch`` viewers, ``/device`` senders; the
    stall probe, read by ``GET /lag``."""
    raise_nofile()
    viewers: set[ServerConnection] = set()
    seq = 0
    window = stall.LagWindow()
    probe = asyncio.create_task(stall.run(stall.lag_histogram(CollectorRegistry()), window))

    def process_request(ws: ServerConnection, request: Request) -> Response | None:
        return lag_response(window) if request.path == LAG_PATH else None

    async def handler(ws: ServerConnection) -> None:
        nonlocal seq
        path = ws.request.path if ws.request is not None else ""
        if path.startswith("/watch"):
            viewers.add(ws)
            # broadcast() writes synchronously: no delta can slip in ahead of the hello.
            broadcast([ws], _enc.encode({"type": "hello", "seq": seq}), text=True)
            try:
                await ws.wait_closed()
            finally:
                viewers.discard(ws)
            return
        async for raw in ws:
            msg = _any.decode(raw)
            kind = msg.get("type")
            if kind == "auth":
                await ws.send(_enc.encode({"type": "welcome", "device": "bare", "role": "admin",
                                           "official": "", "game": None, "arena": None,
                                           "server_time": time.time_ns() // 1_000_000,
                                           "epoch": "bare"}), text=True)
                # The first clock-sync ping follows the welcome, as the service sends it: a
                # device waits for it (FIRST_PING_S) before it sends anything.
                await ws.send(_enc.encode({"type": "ping", "server_time": time.time_ns() // 1_000_000}),
                              text=True)
            elif kind == "send":
                event = msg.get("event")
                eid = event.get("id") if isinstance(event, dict) else None
                seq += 1
                broadcast(viewers, bare_frame(seq, frame_bytes), text=True)
                await ws.send(_enc.encode({"type": "ack", "id": eid, "log_id": eid, "game": GAME,
                                           "seq": seq, "at": time.time_ns() // 1_000_000,
                                           "duplicate": False, "notices": []}), text=True)
            elif kind == "ping":
                await ws.send(_enc.encode({"type": "pong", "server_time": time.time_ns() // 1_000_000,
                                           "device_time": msg.get("device_time")}), text=True)

    try:
        async with serve(handler, HOST, port, compression=None, max_size=2**20,
                         process_request=process_request, backlog=BACKLOG):
            print("ready", flush=True)
            await asyncio.Future()  # until the benchmark ends us
    finally:
        probe.cancel()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m stream.tools.fanout_bench.peers",
                                description="the bare websockets broadcast server of bench fanout")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--frame-bytes", type=int, default=1024)
    args = p.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt), \
            asyncio.Runner(loop_factory=loop_factory(default_loop())) as runner:
        runner.run(bare_main(args.port, args.frame_bytes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
