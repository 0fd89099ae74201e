"""``arena-stream bench fanout``: viewer latency, ack latency and memory per viewer,
each printed beside a reference measured in the same run.

One process tree, one run, bounded in time, and it stops by itself:

* **the service**, ``python -m stream serve --no-demo`` on a free port, one node
  on its SQLite store;
* with ``--nodes 2``, also **a two-node cluster**: a ``redis-server`` on a free
  port (AOF, ``appendfsync always``) and two service nodes on it, sharing one data
  directory (one ``secret.key``). The device talks to node A; viewers are spread
  round-robin over A and B, so the viewers on B see every event cross-node, through
  Redis and B's follower;
* **a bare websockets server** (``python -m stream.tools.bench_fanout bare``): for each
  device message, ``websockets.broadcast`` to every viewer and an ack: the
  transport's own limit, with frames padded to the service's mean delta size;
* **viewer workers** (``python -m stream.tools.bench_fanout viewers``, one or two
  processes, since the machine has two cores): many WebSocket clients each,
  on websockets' Sans-I/O protocol so that a frame is timestamped the moment
  its bytes arrive, not when a task gets round to it;
* **the device** (this process): a stream of valid events (``clock.start`` /
  ``whistle``) sent on schedule at ``--rate``, open loop: an event does not wait
  for the previous one's ack, so a slow server faces the same offered load as a
  fast one. The service allows each device socket ``Config.device_rate``
  events/s, so the stream is spread round-robin over as many device sockets
  (one token each) as that limit needs; the bare server gets the same.

Latency is a viewer's receive time minus the device's send time of the same
event (``time.time_ns()``, one machine clock), matched by ``seq`` from the ack.
Each server gets ``--rounds`` load rounds, interleaved (bare, service[, cluster],
bare, service[, cluster]), and the best round by viewer p99 is reported (for the
cluster: by the p99 of the viewers on node B): the machine is shared and noisy.
Lost, repeated and out-of-order frames are counted over every round.

Memory is measured first, on a service that has held no viewers yet (freed
memory would otherwise hide new growth): the ``VmRSS`` of the server process
before and after ``--idle-viewers`` idle, subscribed viewers, and the same
against the bare server. (Not for the cluster.) The load rounds then run on fresh
processes: 10,000 departed viewers leave aiohttp's per-connection objects as
cyclic garbage, and collecting it pauses the process once (about 0.4 s), which
is the cost of a mass departure rather than of steady fan-out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import math
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from array import array
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import aiohttp
import msgspec
import websockets
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

from ..live.config import Config
from ..store.sqlite import SCHEMA
from ..store.sqlite import connect as sqlite_connect
from .device_client import Device

GAME = "bench-fanout"
HOST = "127.0.0.1"

_enc = msgspec.json.Encoder()
_any = msgspec.json.Decoder(dict[str, Any])
_msgpack_enc = msgspec.msgpack.Encoder()
_msgpack_dec = msgspec.msgpack.Decoder(dict[str, Any])


class _Head(msgspec.Struct):
    """What a viewer needs of a frame; msgspec skips the rest of it."""

    type: str
    seq: int = -1


_head = msgspec.json.Decoder(_Head)


# ------------------------------------------------------------------ helpers


def raise_nofile() -> int:
    """Raise this process's open-file limit to the hard limit; return the new soft limit."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the child gets SIGKILL if the benchmark dies, so nothing outlives it."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def vm_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far, from ``/proc/<pid>/stat``."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(sorted_xs: Sequence[float], q: float) -> float:
    """Nearest rank; NaN for no samples."""
    if not sorted_xs:
        return math.nan
    return float(sorted_xs[min(len(sorted_xs) - 1, max(0, math.ceil(q * len(sorted_xs)) - 1))])


async def ack_histogram(http_base: str) -> dict[float, float]:
    """The service's own ``arena_ack_seconds`` histogram: cumulative count by upper bound (s)."""
    out: dict[float, float] = {}
    with contextlib.suppress(aiohttp.ClientError, OSError, ValueError, IndexError):
        async with aiohttp.ClientSession() as http, http.get(f"{http_base}/metrics") as r:
            for line in (await r.text()).splitlines():
                if line.startswith("arena_ack_seconds_bucket{"):
                    le = line.split('le="', 1)[1].split('"', 1)[0]
                    out[math.inf if le == "+Inf" else float(le)] = float(line.rsplit(" ", 1)[1])
    return out


def histogram_p99_bound(before: dict[float, float], after: dict[float, float]) -> float:
    """The smallest bucket bound (ms) holding 99 % of what was observed between two scrapes."""
    diff = {le: after.get(le, 0.0) - before.get(le, 0.0) for le in after}
    total = diff.get(math.inf, 0.0)
    if total <= 0:
        return math.nan
    return min(le for le, n in diff.items() if n >= 0.99 * total) * 1000


def bare_frame(seq: int, size: int) -> bytes:
    """A delta-like JSON frame of ``size`` bytes (or the smallest that holds ``seq``)."""
    head = b'{"type":"delta","game":"bench","seq":%d,"pad":"' % seq
    return head + b"x" * max(0, size - len(head) - 2) + b'"}'


# ------------------------------------------------------- the bare server


async def _bare_main(port: int, frame_bytes: int) -> None:
    """A plain websockets broadcast server: ``/watch`` viewers, ``/device`` senders."""
    raise_nofile()
    viewers: set[ServerConnection] = set()
    seq = 0

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

    async with serve(handler, HOST, port, compression=None, max_size=2**20):
        print("ready", flush=True)
        await asyncio.Future()  # until the benchmark kills us


# ------------------------------------------------------------ viewer workers


#: One receive buffer for every viewer of a worker: the loop hands it to one socket at a time.
#: (A plain Protocol would make asyncio allocate 256 KiB for every read: a syscall-heavy
#: cost per frame that would make the load generator, not the servers, the bottleneck.)
_RECV = memoryview(bytearray(256 * 1024))


class _Viewer(asyncio.BufferedProtocol):
    """One viewer on websockets' Sans-I/O client: every frame is stamped when its bytes arrive."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.ws = ClientProtocol(parse_uri(url), max_size=2**22)
        self.transport: asyncio.Transport | None = None
        self.first: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.first_seq = -1
        self.max_seq = -1
        self.seqs = array("q")
        self.times = array("q")
        self.resets = 0
        self.closed = False
        self.waiter: _CaughtUp | None = None
        self._parts: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.ws.send_request(self.ws.connect())
        self._flush()

    def get_buffer(self, sizehint: int) -> memoryview:
        return _RECV

    def buffer_updated(self, nbytes: int) -> None:
        now = time.time_ns()
        self.ws.receive_data(_RECV[:nbytes].tobytes())
        for ev in self.ws.events_received():
            if isinstance(ev, Frame):
                if ev.opcode not in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT):
                    continue  # pings are answered by the protocol; see _flush
                if not ev.fin:
                    self._parts.append(bytes(ev.data))
                    continue
                payload = b"".join([*self._parts, bytes(ev.data)]) if self._parts else bytes(ev.data)
                self._parts.clear()
                self._message(payload, now)
            elif isinstance(ev, Response) and self.ws.handshake_exc is not None and not self.first.done():
                self.first.set_exception(ConnectionError(f"handshake failed: {self.ws.handshake_exc}"))
        self._flush()

    def _message(self, payload: bytes, now: int) -> None:
        head = _head.decode(payload)
        if head.type == "delta":
            self.seqs.append(head.seq)
            self.times.append(now)
            self.max_seq = max(self.max_seq, head.seq)
        elif head.type in ("snapshot", "hello"):
            if self.first.done():
                self.resets += 1  # a resync: the service dropped this viewer's backlog
            else:
                self.first_seq = head.seq
                self.first.set_result(head.seq)
            self.max_seq = max(self.max_seq, head.seq)
        else:
            return
        if self.waiter is not None:
            self.waiter.check(self)

    def _flush(self) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        for data in self.ws.data_to_send():
            if data:
                self.transport.write(data)
            elif self.transport.can_write_eof():
                self.transport.write_eof()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.ws.receive_eof()
        if self.waiter is not None:
            self.waiter.check(self)
        if not self.first.done():
            self.first.set_exception(ConnectionError(f"connection lost: {exc}"))

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class _CaughtUp:
    """Set ``event`` once every viewer has seen ``seq`` (or lost its connection)."""

    def __init__(self, viewers: list[_Viewer], seq: int) -> None:
        self.seq = seq
        self.event = asyncio.Event()
        self.waiting = set(viewers)
        for v in viewers:
            v.waiter = self
            self.check(v)

    def check(self, v: _Viewer) -> None:
        if v in self.waiting and (v.max_seq >= self.seq or v.closed):
            self.waiting.discard(v)
            if not self.waiting:
                self.event.set()


def _write_report(out: Path, viewers: list[_Viewer], errors: int, first_error: str) -> None:
    out.write_bytes(_msgpack_enc.encode({
        "opened": len(viewers), "errors": errors, "first_error": first_error,
        "viewers": [{"url": v.url, "first": v.first_seq, "seqs": v.seqs.tobytes(),
                     "times": v.times.tobytes(), "resets": v.resets, "closed": v.closed}
                    for v in viewers]}))


async def _open_viewers(targets: list[tuple[str, int]], *, stop_at_error: bool, concurrency: int,
                        open_timeout: float) -> tuple[list[_Viewer], int, str]:
    """Open the viewers, each up to its first frame (snapshot or hello)."""
    loop = asyncio.get_running_loop()
    viewers: list[_Viewer] = []
    errors = 0
    first_error = ""
    stop = False
    sem = asyncio.Semaphore(concurrency)

    async def one(url: str) -> None:
        nonlocal errors, first_error, stop
        async with sem:
            if stop:
                return
            v = _Viewer(url)
            uri = parse_uri(url)
            try:
                async with asyncio.timeout(open_timeout):
                    await loop.create_connection(lambda: v, uri.host, uri.port)
                    await v.first
            except (OSError, TimeoutError, ConnectionError) as err:
                v.close()
                errors += 1
                first_error = first_error or f"{type(err).__name__}: {err}"
                if stop_at_error:
                    stop = True
                return
            viewers.append(v)

    await asyncio.gather(*(one(url) for url, n in targets for _ in range(n)))
    return viewers, errors, first_error


async def _viewers_main(targets: list[tuple[str, int]], out: Path, *, stop_at_error: bool,
                        concurrency: int, open_timeout: float) -> None:
    """A viewer worker: open, say ``ready``, wait for ``stop LAST_SEQ DRAIN_S`` on stdin,
    wait until every viewer has ``LAST_SEQ`` (or the drain time is up), write the
    samples to ``out``, say ``done``."""
    raise_nofile()
    loop = asyncio.get_running_loop()
    viewers, errors, first_error = await _open_viewers(
        targets, stop_at_error=stop_at_error, concurrency=concurrency, open_timeout=open_timeout)
    gc.collect()
    gc.freeze()  # the connections are long-lived: keep them out of the collector's way
    print(f"ready {len(viewers)} {errors} {first_error}".rstrip(), flush=True)

    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    line = (await reader.readline()).decode().split()
    if not line or line[0] != "stop":
        return  # the benchmark went away
    last_seq, drain = int(line[1]), float(line[2])
    if last_seq > 0 and viewers:
        caught_up = _CaughtUp(viewers, last_seq)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(caught_up.event.wait(), drain)
    _write_report(out, viewers, errors, first_error)
    for v in viewers:
        v.close()
    await asyncio.sleep(0.2)
    print("done", flush=True)


# ------------------------------------------------------------- processes


class Children:
    """Every process the benchmark starts; ``kill_all`` ends them, in a ``finally``."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.procs: list[tuple[str, asyncio.subprocess.Process]] = []
        self._logs: list[TextIO] = []

    def log_path(self, name: str) -> Path:
        return self.workdir / f"{name}.log"

    async def start(self, name: str, *args: str, stdin: bool = False, stdout: bool = False,
                    program: str = sys.executable) -> asyncio.subprocess.Process:
        """Start ``program`` (this Python by default) with ``args``, logging to ``NAME.log``."""
        log = self._open_log(name)
        proc = await asyncio.create_subprocess_exec(
            program, *args, stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE if stdout else log, stderr=log,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        self.procs.append((name, proc))
        return proc

    def _open_log(self, name: str) -> TextIO:
        log = open(self.log_path(name), "w")  # noqa: SIM115 - closed by kill_all
        self._logs.append(log)
        return log

    def tail(self, name: str, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path(name).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    async def stop(self, proc: asyncio.subprocess.Process, grace: float = 5.0,
                   wait_first: float = 0.0) -> None:
        """End ``proc``: let it exit by itself for ``wait_first`` s, then SIGTERM, then SIGKILL."""
        if wait_first > 0 and proc.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), wait_first)
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), grace)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()

    async def kill_all(self) -> None:
        for _, proc in reversed(self.procs):
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.terminate()
        for _, proc in reversed(self.procs):
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        for log in self._logs:
            log.close()


@dataclass
class Node:
    """One server process: a service node or the bare server."""

    name: str
    proc: asyncio.subprocess.Process
    port: int
    watch_path: str
    device_path: str

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def http(self) -> str:
        return f"http://{HOST}:{self.port}"

    def watch_url(self) -> str:
        return f"ws://{HOST}:{self.port}{self.watch_path}"

    def device_url(self) -> str:
        return f"ws://{HOST}:{self.port}{self.device_path}"


async def start_service_nodes(children: Children, names: list[str], data: Path,
                              store: str | None = None, extra: Sequence[str] = ()) -> list[Node]:
    """One service process per name, all on ``data`` (and on ``store``, a redis:// URL, if
    given: else each on the SQLite store in ``data``), with ``extra`` serve flags; each
    ready on /readyz."""
    nodes = []
    for name in names:
        port = free_port()
        args = ["-m", "stream", "serve", "--no-demo", "--data", str(data), "--port", str(port)]
        if store is not None:
            args += ["--store", store]
        proc = await children.start(name, *args, *extra)
        nodes.append(Node(name, proc, port, f"/ws/watch?game={GAME}", "/ws/device"))
    async with aiohttp.ClientSession() as http:
        for node in nodes:
            deadline = time.monotonic() + 60
            while True:
                if node.proc.returncode is not None:
                    raise RuntimeError(f"{node.name} exited ({node.proc.returncode}):\n"
                                       f"{children.tail(node.name)}")
                with contextlib.suppress(aiohttp.ClientError, OSError):
                    async with http.get(f"{node.http}/readyz") as r:
                        if r.status == 200:
                            break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{node.name} not ready in 60 s:\n{children.tail(node.name)}")
                await asyncio.sleep(0.1)
    return nodes


async def start_redis(children: Children, workdir: Path) -> Node:
    """A ``redis-server`` on a free loopback port, durable as the service requires (AOF,
    ``appendfsync always``, no RDB snapshots), ready when it answers PING."""
    program = shutil.which("redis-server")
    if program is None:
        raise SystemExit("bench fanout: --nodes 2 needs redis-server on the PATH")
    await asyncio.to_thread(workdir.mkdir, parents=True, exist_ok=True)
    port = free_port()
    proc = await children.start("redis", "--port", str(port), "--bind", HOST, "--dir", str(workdir),
                                "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                                "--protected-mode", "yes", program=program)
    node = Node("redis", proc, port, "", "")
    deadline = time.monotonic() + 30
    while True:
        if proc.returncode is not None:
            raise RuntimeError(f"redis-server exited ({proc.returncode}):\n{children.tail('redis')}")
        with contextlib.suppress(OSError, TimeoutError):
            async with asyncio.timeout(1):
                reader, writer = await asyncio.open_connection(HOST, port)
                try:
                    writer.write(b"PING\r\n")
                    if (await reader.readline()).startswith(b"+PONG"):
                        return node
                finally:
                    writer.close()
        if time.monotonic() > deadline:
            raise RuntimeError(f"redis-server not ready in 30 s:\n{children.tail('redis')}")
        await asyncio.sleep(0.05)


async def wait_for_game(node: Node, seq: int) -> None:
    """Until ``node`` serves the bench game at ``seq`` or later (a follower catching up)."""
    deadline = time.monotonic() + 30
    async with aiohttp.ClientSession() as http:
        while True:
            with contextlib.suppress(aiohttp.ClientError, OSError, ValueError, KeyError, TypeError):
                async with http.get(f"{node.http}/api/games/{GAME}") as r:
                    if r.status == 200 and int((await r.json())["seq"]) >= seq:
                        return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{node.name} has not caught up with game {GAME} (seq {seq}) "
                                   "in 30 s")
            await asyncio.sleep(0.05)


async def start_bare(children: Children, frame_bytes: int) -> Node:
    port = free_port()
    proc = await children.start("bare", "-m", "stream.tools.bench_fanout", "bare", "--port", str(port),
                                "--frame-bytes", str(frame_bytes), stdout=True)
    assert proc.stdout is not None
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
    except TimeoutError:
        line = b""
    if line.strip() != b"ready":
        raise RuntimeError(f"the bare server did not start:\n{children.tail('bare')}")
    return Node("bare", proc, port, "/watch", "/device")


#: The Node peer: ``_bare_main`` in JavaScript, on the ``ws`` library.
NODE_WS_PEER = Path(__file__).resolve().parent / "bench_peers" / "ws_peer.js"
NODE_WS_SPEC = "ws@8"  # pinned to a major version
NODE_WS_CACHE = Path.home() / ".cache" / "arena-stream" / "node-ws"


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


async def start_node_ws(children: Children, frame_bytes: int, ws_module: Path) -> Node:
    """The Node peer on a free port: the bare server's paths, replies and frames."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node not found")
    port = free_port()
    proc = await children.start("node-ws", str(NODE_WS_PEER), str(port), str(frame_bytes), str(ws_module),
                                stdout=True, program=node)
    assert proc.stdout is not None
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
    except TimeoutError:
        line = b""
    if line.strip() != b"ready":
        raise RuntimeError(f"the Node ws peer did not start:\n{children.tail('node-ws')}")
    return Node("node-ws", proc, port, "/watch", "/device")


async def setup_game(node: Node, admin: str, devices: int) -> list[str]:
    """Set the game up through the HTTP API; issue one device token per device socket."""
    headers = {"Authorization": f"Bearer {admin}"}
    body = {"id": f"setup-{GAME}", "game": GAME, "event": "bench", "class": "club", "handicap": 8,
            "arena": "bench-arena",
            "teams": {"home": {"team": "bench-home", "players": ["h1", "h2", "h3"], "subs": ["h4"]},
                      "away": {"team": "bench-away", "players": ["a1", "a2", "a3"], "subs": ["a4"]}}}
    tokens = []
    async with aiohttp.ClientSession(headers=headers) as http:
        async with http.post(f"{node.http}/api/games", json=body) as r:
            if r.status != 201:
                raise RuntimeError(f"game setup refused: {r.status} {await r.text()}")
        for i in range(devices):
            req = {"role": "admin", "device": f"bench-device-{i}", "official": "bench", "game": GAME}
            async with http.post(f"{node.http}/api/tokens", json=req) as r:
                if r.status != 201:
                    raise RuntimeError(f"token refused: {r.status} {await r.text()}")
                tokens.append(str((await r.json())["token"]))
    return tokens


# ---------------------------------------------------------------- the device


class DevicePool:
    """The officials' device: one stream of valid events, alternately ``clock.start`` and
    ``whistle``, sent on schedule (open loop: an event does not wait for the previous one's
    ack), round-robin over one socket per token. A whistle is valid whether the clock runs
    or not, so should the server take two events from different sockets in the other order,
    at most one ``clock.start`` is refused and the stream heals itself; refusals are counted."""

    REPLY_TIMEOUT = 30.0

    def __init__(self, url: str, tokens: list[str], prefix: str) -> None:
        self.devices = [Device(url, t, prefix=f"{prefix}{i}") for i, t in enumerate(tokens)]

    async def __aenter__(self) -> DevicePool:
        await asyncio.gather(*(d.connect() for d in self.devices))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.gather(*(d.close() for d in self.devices), return_exceptions=True)

    async def fire(self, i: int) -> tuple[int, int, dict[str, Any]]:
        """Send event ``i``: (send ns, reply ns, reply)."""
        d = self.devices[i % len(self.devices)]
        event = {"type": "clock.start" if i % 2 == 0 else "whistle", "game": GAME, "id": d.new_id()}
        t_send = time.time_ns()
        try:
            reply = await d.send_once(event, wait_s=self.REPLY_TIMEOUT)
        except (TimeoutError, ConnectionError, websockets.ConnectionClosed) as err:
            reply = {"type": "error", "code": "no_reply", "detail": f"{type(err).__name__}: {err}"}
        return t_send, time.time_ns(), reply

    async def stop_clock(self) -> None:
        """One whistle, waited for: the clock is stopped, whatever happened before."""
        d = self.devices[0]
        await d.send_once({"type": "whistle", "game": GAME, "id": d.new_id()}, wait_s=self.REPLY_TIMEOUT)


@dataclass
class Workers:
    """Viewer worker processes, and what they report."""

    children: Children
    procs: list[asyncio.subprocess.Process] = field(default_factory=list)
    outs: list[Path] = field(default_factory=list)

    @staticmethod
    def plan(count: int, urls: list[str], workers: int) -> list[list[tuple[str, int]]]:
        """Viewer i goes to node i mod nodes and to worker (i div nodes) mod workers, so that
        every worker holds as many viewers of each node (and no node has a worker to itself)."""
        counts: list[dict[str, int]] = [{} for _ in range(workers)]
        for i in range(count):
            url = urls[i % len(urls)]
            w = (i // len(urls)) % workers
            counts[w][url] = counts[w].get(url, 0) + 1
        return [list(c.items()) for c in counts if c]

    async def start(self, name: str, count: int, urls: list[str], workers: int, *,
                    stop_at_error: bool) -> tuple[int, int, str]:
        """Start the workers and wait until each has opened its viewers: (opened, errors, first error)."""
        for w, targets in enumerate(self.plan(count, urls, workers)):
            out = self.children.workdir / f"{name}-w{w}.msgpack"
            args = ["-m", "stream.tools.bench_fanout", "viewers", "--out", str(out)]
            for url, n in targets:
                args += ["--target", f"{n}={url}"]
            if stop_at_error:
                args.append("--stop-at-error")
            self.procs.append(await self.children.start(f"{name}-w{w}", *args, stdin=True, stdout=True))
            self.outs.append(out)
        opened = errors = 0
        first_error = ""
        for w, proc in enumerate(self.procs):
            assert proc.stdout is not None
            try:
                line = await asyncio.wait_for(proc.stdout.readline(), 120 + count / 50)
            except TimeoutError:
                line = b""
            parts = line.decode().split(maxsplit=3)
            if not parts or parts[0] != "ready":
                raise RuntimeError(f"viewer worker {name}-w{w} failed:\n{self.children.tail(f'{name}-w{w}')}")
            opened += int(parts[1])
            errors += int(parts[2])
            first_error = first_error or (parts[3] if len(parts) > 3 else "")
        return opened, errors, first_error

    async def stop(self, last_seq: int, drain: float) -> list[dict[str, Any]]:
        """Tell the workers to finish once every viewer has ``last_seq``; their reports."""
        for proc in self.procs:
            assert proc.stdin is not None
            proc.stdin.write(f"stop {last_seq} {drain}\n".encode())
            await proc.stdin.drain()
        reports = []
        for proc, out in zip(self.procs, self.outs, strict=True):
            assert proc.stdout is not None and proc.stdin is not None
            line = await asyncio.wait_for(proc.stdout.readline(), drain + 120)
            if line.strip() != b"done":
                raise RuntimeError(f"a viewer worker did not finish:\n{self.children.tail(out.stem)}")
            reports.append(_msgpack_dec.decode(out.read_bytes()))
            out.unlink()
            proc.stdin.close()
            await self.children.stop(proc, wait_first=5.0)
        return reports


# ---------------------------------------------------------------- the phases


@dataclass
class LoadResult:
    name: str
    viewers: int
    sent: int
    acked: int
    refused: int
    seconds: float
    lat_ms: list[float]
    ack_ms: list[float]
    lost: int
    dup: int
    other: int
    resets: int
    dropped: int
    misordered: int = 0
    send_seconds: float = 0.0
    server_ack_p99_bound: float = math.nan
    by_url: dict[str, LoadResult] = field(default_factory=dict)
    server_cpu: float = 0.0
    viewer_cpu: float = 0.0

    def p(self, q: float) -> float:
        return percentile(self.lat_ms, q)

    def ack_p(self, q: float) -> float:
        return percentile(self.ack_ms, q)


def analyse(name: str, reports: list[dict[str, Any]], sends: dict[int, int], ack_ms: list[float],
            sent: int, refused: int, seconds: float, url: str | None = None) -> LoadResult:
    """Latency samples over all viewers (or those on ``url``); frames lost, repeated or out
    of ``seq`` order per viewer."""
    lat: list[float] = []
    lost = dup = other = resets = dropped = viewers = misordered = 0
    expected_all = sorted(sends)
    for rep in reports:
        for v in rep["viewers"]:
            if url is not None and v.get("url") != url:
                continue
            viewers += 1
            first = int(v["first"])
            resets += int(v["resets"])
            dropped += bool(v["closed"])
            seqs = array("q")
            seqs.frombytes(v["seqs"])
            times = array("q")
            times.frombytes(v["times"])
            seen: set[int] = set()
            last = first
            for s, t in zip(seqs, times, strict=True):
                if s in seen or s <= first:
                    dup += 1  # twice, or already covered by the viewer's snapshot
                    continue
                if s < last:
                    misordered += 1  # after a later seq
                last = max(last, s)
                seen.add(s)
                st = sends.get(s)
                if st is None:
                    other += 1  # an event the bench did not send (a deadline tick)
                    continue
                lat.append((t - st) / 1e6)
            lost += sum(1 for s in expected_all if s > first and s not in seen)
    lat.sort()
    ack_ms = sorted(ack_ms)
    return LoadResult(name=name, viewers=viewers, sent=sent, acked=len(sends), refused=refused,
                      seconds=seconds, lat_ms=lat, ack_ms=ack_ms, lost=lost, dup=dup, other=other,
                      resets=resets, dropped=dropped, misordered=misordered)


async def load_phase(children: Children, name: str, servers: list[Node], viewer_urls: list[str],
                     device_url: str, tokens: list[str], *, viewers: int, workers: int, rate: float,
                     seconds: float, prefix: str, metrics_from: str | None = None) -> LoadResult:
    """``viewers`` viewers, the device at ``rate`` for ``seconds``; ``metrics_from``: a service's
    base URL, to read its own ack-time histogram too."""
    pool_workers = Workers(children)
    try:
        opened, errors, first_error = await pool_workers.start(name, viewers, viewer_urls, workers,
                                                               stop_at_error=False)
        if errors or opened != viewers:
            raise RuntimeError(f"{name}: only {opened} of {viewers} viewers opened ({first_error})")
        await asyncio.sleep(0.5)
        loop = asyncio.get_running_loop()
        n_events = 2 * max(1, round(rate * seconds / 2))  # even: the clock ends stopped
        async with DevicePool(device_url, tokens, prefix) as pool:
            cpu0 = sum(cpu_seconds(n.pid) for n in servers)
            wcpu0 = sum(cpu_seconds(p.pid) for p in pool_workers.procs)
            hist0 = await ack_histogram(metrics_from) if metrics_from else {}
            tasks = []
            t0 = loop.time()
            for i in range(n_events):
                delay = t0 + i / rate - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(pool.fire(i)))
            send_s = loop.time() - t0
            outcomes = await asyncio.gather(*tasks)
            elapsed = loop.time() - t0
            cpu = sum(cpu_seconds(n.pid) for n in servers) - cpu0
            wcpu = sum(cpu_seconds(p.pid) for p in pool_workers.procs) - wcpu0
            hist1 = await ack_histogram(metrics_from) if metrics_from else {}
            sends: dict[int, int] = {}
            ack_ms: list[float] = []
            refusals: list[dict[str, Any]] = []
            for t_send, t_reply, reply in outcomes:
                if reply.get("type") == "ack" and isinstance(reply.get("seq"), int):
                    sends[int(reply["seq"])] = t_send
                    ack_ms.append((t_reply - t_send) / 1e6)
                else:
                    refusals.append(reply)
            reports = await pool_workers.stop(max(sends, default=0), drain=15)
            await pool.stop_clock()
    finally:
        for proc in pool_workers.procs:
            await children.stop(proc)
    if refusals:
        print(f"  {name}: {len(refusals)} event(s) refused or unanswered, the first: {refusals[0]}",
              flush=True)
    result = analyse(name, reports, sends, ack_ms, n_events, len(refusals), elapsed)
    if len(set(viewer_urls)) > 1:
        result.by_url = {url: analyse(name, reports, sends, ack_ms, n_events, len(refusals), elapsed, url)
                         for url in dict.fromkeys(viewer_urls)}
    result.send_seconds, result.server_cpu, result.viewer_cpu = send_s, cpu, wcpu
    if metrics_from:
        result.server_ack_p99_bound = histogram_p99_bound(hist0, hist1)
    return result


async def probe_delta_size(node: Node, tokens: list[str], events: int,
                           viewer_node: Node | None = None) -> float:
    """Send ``events`` events to ``node``, one at a time, with one viewer watching (on
    ``viewer_node``, if given): the mean size of a delta frame (bytes). Also warms the
    service up, and leaves the game's clock stopped."""
    sizes: list[int] = []
    watch = (viewer_node or node).watch_url()
    async with websockets.connect(watch, max_size=2**22, compression=None) as viewer:
        first = _any.decode(await viewer.recv(decode=False))
        if first.get("type") != "snapshot":
            raise RuntimeError(f"the service sent {first.get('type')!r} before a snapshot")
        async with DevicePool(node.device_url(), tokens, "probe") as pool:
            last = 0
            for i in range(2 * max(1, events // 2)):
                _, _, reply = await pool.fire(i)
                if reply.get("type") != "ack":
                    raise RuntimeError(f"probe event refused: {reply}")
                last = int(reply["seq"])
        async with asyncio.timeout(10):
            while True:
                raw = await viewer.recv(decode=False)
                msg = _any.decode(raw)
                if msg.get("type") == "delta":
                    sizes.append(len(raw))
                    if msg["seq"] >= last:
                        break
    return sum(sizes) / len(sizes)


async def idle_phase(children: Children, name: str, nodes: list[Node], count: int,
                     workers: int, settle: float) -> tuple[int, int, str, float]:
    """Open up to ``count`` idle viewers; (opened, errors, first error, KiB of RSS each)."""
    pool_workers = Workers(children)
    try:
        before = sum(vm_rss_kib(n.pid) for n in nodes)
        opened, errors, first_error = await pool_workers.start(
            name, count, [n.watch_url() for n in nodes], workers, stop_at_error=True)
        await asyncio.sleep(settle)
        after = sum(vm_rss_kib(n.pid) for n in nodes)
        await pool_workers.stop(0, 0)
    finally:
        for proc in pool_workers.procs:
            await children.stop(proc)
    return opened, errors, first_error, (after - before) / opened if opened else math.nan


def sqlite_commit_ms(path: Path, n: int) -> list[float]:
    """``n`` single-row INSERT+COMMITs into the service's own schema, WAL, synchronous=FULL."""
    conn = sqlite_connect(path, synchronous="FULL")
    try:
        conn.executescript(SCHEMA)
        body = b'{"type":"whistle","id":"bench/x","at":1780000000000,"game":"bench-fanout"}'
        out = []
        for i in range(n):
            t = time.perf_counter_ns()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO log (game, seq, device, client_id, official, digest, received_at, body)"
                         " VALUES (?,?,?,?,?,?,?,?)",
                         (GAME, i + 1, "bench", f"c{i}", "bench", os.urandom(16), i, body))
            conn.execute("COMMIT")
            out.append((time.perf_counter_ns() - t) / 1e6)
    finally:
        conn.close()
    return sorted(out)


# ----------------------------------------------------------------- the run


@dataclass
class FanoutOptions:
    viewers: int = 1000
    rate: float = 50.0
    seconds: float = 20.0
    idle_viewers: int = 10_000
    nodes: int = 1
    rounds: int = 2
    settle: float = 3.0
    #: The ``ws`` package's directory (``ensure_node_ws``): also measure the Node peer.
    node_ws: Path | None = None


def _workers_for(count: int) -> int:
    return 1 if count < 200 else 2


def _fmt(x: float, spec: str = ".2f") -> str:
    return "n/a" if math.isnan(x) else format(x, spec)


@contextlib.asynccontextmanager
async def _workdir() -> AsyncIterator[Path]:
    with tempfile.TemporaryDirectory(prefix="arena-bench-fanout-") as d:
        yield Path(d)


async def bench_fanout(opts: FanoutOptions) -> dict[str, float]:
    if opts.nodes not in (1, 2):
        raise SystemExit("bench fanout: --nodes accepts 1 or 2")
    nofile = raise_nofile()
    # bare[, node-ws], service[, cluster]
    servers = (2 if opts.nodes == 1 else 3) + (opts.node_ws is not None)
    budget = 900 + 2 * servers * opts.seconds * opts.rounds + opts.idle_viewers / 20  # whatever happens
    async with _workdir() as work, asyncio.timeout(budget):
        children = Children(work)
        try:
            return await _run(children, work, opts, nofile)
        finally:
            await children.kill_all()


async def _run(children: Children, work: Path, opts: FanoutOptions, nofile: int) -> dict[str, float]:
    data = work / "data"
    device_sockets = max(1, math.ceil(opts.rate / (0.8 * Config().device_rate)))
    print(f"bench fanout: {opts.viewers} viewers, {opts.rate:g} events/s for {opts.seconds:g} s, "
          f"{opts.idle_viewers} idle viewers, {opts.nodes} node(s); open-file limit {nofile}; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (other processes add noise)",
          flush=True)

    nodes = await start_service_nodes(children, ["service0"], data)
    admin = (data / "admin.token").read_text().strip()
    tokens = await setup_game(nodes[0], admin, device_sockets)
    delta_bytes = await probe_delta_size(nodes[0], tokens, 20)
    frame_bytes = round(delta_bytes)
    bare = await start_bare(children, frame_bytes)
    peer = await start_node_ws(children, frame_bytes, opts.node_ws) if opts.node_ws else None
    padded = "bare and Node ws frames" if peer else "bare frames"
    print(f"  service delta: {delta_bytes:.0f} bytes on average; {padded} padded to {frame_bytes}",
          flush=True)
    print(f"  device: one event stream, sent on schedule (open loop), over {device_sockets} device socket(s) "
          f"(the service allows {Config().device_rate:g} events/s per socket)", flush=True)

    # Memory first, while the service's heap holds nothing freed by earlier viewers.
    idle_workers = _workers_for(opts.idle_viewers)
    svc_idle = await idle_phase(children, "idle-service", nodes, opts.idle_viewers, idle_workers,
                                opts.settle)
    print(f"  idle, arena-stream: {svc_idle[0]} opened, {svc_idle[1]} errors {svc_idle[2]}".rstrip(),
          flush=True)
    bare_idle = await idle_phase(children, "idle-bare", [bare], opts.idle_viewers, idle_workers,
                                 opts.settle)
    print(f"  idle, bare websockets: {bare_idle[0]} opened, {bare_idle[1]} errors {bare_idle[2]}".rstrip(),
          flush=True)

    # The idle viewers are gone, but not their connections' objects: aiohttp leaves each
    # closed connection as cyclic garbage (about 31 objects), and the next full collection
    # of 10,000 of them pauses the process once, for about 0.4 s on this kind of machine.
    # That is the cost of a mass departure, not of steady fan-out: the load rounds run on
    # fresh processes (same data directory, same tokens), the bare server's too.
    if opts.idle_viewers:
        await children.stop(nodes[0].proc)
        nodes = await start_service_nodes(children, ["service1"], data)
        await children.stop(bare.proc)
        bare = await start_bare(children, frame_bytes)

    # The cluster: after the memory phases, before any load, so that every server gets its
    # load rounds interleaved with the others'.
    cluster: list[Node] = []
    cluster_servers: list[Node] = []
    cluster_tokens: list[str] = []
    if opts.nodes > 1:
        redis, cluster, cluster_tokens, cluster_delta = await start_cluster(children, work, opts.nodes,
                                                                             device_sockets)
        cluster_servers = [*cluster, redis]
        print(f"  cluster: redis-server on port {redis.port} (AOF, appendfsync always) and "
              f"{len(cluster)} nodes on it sharing one data directory; the device on node A, viewers "
              f"round-robin over {', '.join(_node_label(i) for i in range(len(cluster)))}; "
              f"delta {cluster_delta:.0f} bytes on average (device on A, viewer on "
              f"{_node_label(len(cluster) - 1)})", flush=True)
        print("  idle viewers: not measured on the cluster (only for --nodes 1)", flush=True)

    # Best of ``rounds`` for each, interleaved (bare, service[, cluster], bare, service ...),
    # so that a noisy moment on this shared machine hurts no side more than another; lost
    # and repeated frames are counted over every round.
    workers = _workers_for(opts.viewers)
    bare_rounds: list[LoadResult] = []
    node_rounds: list[LoadResult] = []
    svc_rounds: list[LoadResult] = []
    cluster_rounds: list[LoadResult] = []
    commit_rounds: list[list[float]] = []
    for k in range(1, opts.rounds + 1):
        res = await load_phase(children, f"bare{k}", [bare], [bare.watch_url()], bare.device_url(),
                               tokens, viewers=opts.viewers, workers=workers, rate=opts.rate,
                               seconds=opts.seconds, prefix=f"bare{k}-")
        _report(res)
        bare_rounds.append(res)
        if peer:
            res = await load_phase(children, f"node-ws{k}", [peer], [peer.watch_url()], peer.device_url(),
                                   tokens, viewers=opts.viewers, workers=workers, rate=opts.rate,
                                   seconds=opts.seconds, prefix=f"node{k}-")
            _report(res)
            node_rounds.append(res)
        res = await load_phase(children, f"service{k}", nodes, [n.watch_url() for n in nodes],
                               nodes[0].device_url(), tokens, viewers=opts.viewers, workers=workers,
                               rate=opts.rate, seconds=opts.seconds, prefix=f"svc{k}-",
                               metrics_from=nodes[0].http)
        _report(res)
        svc_rounds.append(res)
        if cluster:
            res = await load_phase(children, f"cluster{k}", cluster_servers,
                                   [n.watch_url() for n in cluster], cluster[0].device_url(),
                                   cluster_tokens, viewers=opts.viewers, workers=workers,
                                   rate=opts.rate, seconds=opts.seconds, prefix=f"cl{k}-",
                                   metrics_from=cluster[0].http)
            _report(res)
            _report_nodes(res, cluster)
            cluster_rounds.append(res)
        commits = await asyncio.to_thread(sqlite_commit_ms, work / f"raw-commit{k}.sqlite",
                                          max(200, min(1000, res.acked)))
        print(f"  raw SQLite commit (WAL, synchronous=FULL): {len(commits)} commits, "
              f"p50 {_fmt(percentile(commits, 0.5))} ms p99 {_fmt(percentile(commits, 0.99))} ms; "
              f"load average now {os.getloadavg()[0]:.2f}", flush=True)
        commit_rounds.append(commits)
    await children.stop(bare.proc)
    if peer:
        await children.stop(peer.proc)
    for node in cluster_servers:  # the nodes, then redis-server
        await children.stop(node.proc)

    bare_res = min(bare_rounds, key=lambda x: _nan_last(x.p(0.99)))
    svc_res = min(svc_rounds, key=lambda x: _nan_last(x.p(0.99)))
    ack_p99 = min(_nan_last(x.ack_p(0.99)) for x in svc_rounds)
    raw_p99 = min(_nan_last(percentile(c, 0.99)) for c in commit_rounds)
    results = {"bare": bare_rounds, "svc": svc_rounds} | ({"node": node_rounds} if peer else {})
    lost = {key: sum(x.lost for x in rs) for key, rs in results.items()}
    dup = {key: sum(x.dup for x in rs) for key, rs in results.items()}
    ratio = svc_res.p(0.99) / bare_res.p(0.99)
    svc_kib, bare_kib = svc_idle[3], bare_idle[3]
    rows = [("bare websockets", "bare", bare_res)]
    node_res = min(node_rounds, key=lambda x: _nan_last(x.p(0.99))) if peer else None
    if node_res is not None:
        rows.append(("node ws", "node", node_res))
    rows.append(("arena-stream", "svc", svc_res))
    print()
    print(f"fanout: {opts.viewers} viewers, {opts.rate:g} events/s for {opts.seconds:g} s, "
          f"delta {delta_bytes / 1024:.1f} KiB ({delta_bytes:.0f} bytes); best of {opts.rounds} "
          f"round(s) each; lost/dup over all rounds")
    print(f"{'':22}{'p50 ms':>6}   {'p99 ms':>6}   {'lost':>4}  {'dup':>3}")
    for label, key, r in rows:
        print(f"{label:22}{_fmt(r.p(0.5)):>6}   {_fmt(r.p(0.99)):>6}   {lost[key]:>4}  {dup[key]:>3}")
    for label, _, r in rows:
        if r.refused or r.sent / r.send_seconds < 0.95 * opts.rate:
            print(f"  (against {label}: {r.refused} event(s) refused or unanswered; the device sent "
                  f"{r.sent / r.send_seconds:.1f} events/s)")
    print(f"{'viewer p99 ratio':21}{_fmt(ratio):>5}   (goal <= 1.25)")
    node_figures: dict[str, float] = {}
    if node_res is not None:
        node_ratio = svc_res.p(0.99) / node_res.p(0.99)
        print(f"{'p99 ratio vs node ws':21}{_fmt(node_ratio):>5}   (arena-stream p99 / Node ws p99; "
              f"goal <= 1.25)")
        node_figures = {"node_p50_ms": node_res.p(0.5), "node_p99_ms": node_res.p(0.99),
                        "node_ratio": node_ratio}
    print(f"{'ack p99':21}{_fmt(ack_p99)} ms  raw SQLite FULL commit p99 {_fmt(raw_p99)} ms"
          f"  (goal <= raw + 2 ms)")
    print(f"{'idle viewers':21}{svc_idle[0]} opened: {_fmt(svc_kib, '.1f')} KiB each "
          f"(bare websockets: {_fmt(bare_kib, '.1f')} KiB)  (goal <= 12 KiB)", flush=True)
    figures = _cluster_summary(opts, cluster, cluster_rounds, svc_rounds, svc_res) if cluster else {}
    return figures | node_figures | {
        "delta_bytes": delta_bytes,
        "bare_p50_ms": bare_res.p(0.5), "bare_p99_ms": bare_res.p(0.99),
        "svc_p50_ms": svc_res.p(0.5), "svc_p99_ms": svc_res.p(0.99),
        "ratio": ratio,
        "lost": float(sum(lost.values())), "dup": float(sum(dup.values())),
        "ack_p99_ms": ack_p99, "raw_commit_p99_ms": raw_p99,
        "idle_opened": float(svc_idle[0]), "idle_kib": svc_kib, "bare_idle_kib": bare_kib,
    }


def _node_label(i: int) -> str:
    return f"node {chr(ord('A') + i)}"


async def start_cluster(children: Children, work: Path, n: int,
                        device_sockets: int) -> tuple[Node, list[Node], list[str], float]:
    """A redis-server and ``n`` service nodes on it, sharing one data directory; the bench
    game set up on node A and followed by the others, warmed up with a device on A and a
    viewer on the last node. (redis-server, nodes, device tokens, mean delta bytes.)"""
    redis = await start_redis(children, work / "redis")
    data = work / "cluster-data"
    store = f"redis://{HOST}:{redis.port}/0"
    nodes: list[Node] = []
    for i in range(n):  # one at a time: the first writes secret.key and admin.token for all
        nodes += await start_service_nodes(children, [f"node-{chr(ord('a') + i)}"], data, store=store)
    admin = (data / "admin.token").read_text().strip()
    tokens = await setup_game(nodes[0], admin, device_sockets)
    for node in nodes[1:]:
        await wait_for_game(node, 1)
    delta_bytes = await probe_delta_size(nodes[0], tokens, 20, viewer_node=nodes[-1])
    return redis, nodes, tokens, delta_bytes


def _report_nodes(res: LoadResult, cluster: list[Node]) -> None:
    for i, node in enumerate(cluster):
        r = res.by_url[node.watch_url()]
        how = "same node as the device" if i == 0 else "cross-node"
        print(f"  {res.name}, {_node_label(i)} ({how}): {len(r.lat_ms):,} frames timed over {r.viewers} "
              f"viewers; viewer p50 {_fmt(r.p(0.5))} ms p99 {_fmt(r.p(0.99))} ms max {_fmt(r.p(1.0), '.1f')} "
              f"ms; lost {r.lost}, dup {r.dup}, out of order {r.misordered}, resyncs {r.resets}, "
              f"viewers dropped {r.dropped}", flush=True)


def _cluster_summary(opts: FanoutOptions, cluster: list[Node], rounds: list[LoadResult],
                     svc_rounds: list[LoadResult], svc_res: LoadResult) -> dict[str, float]:
    """The cluster's table, beside the single node's best round; its figures."""
    a_url, b_url = cluster[0].watch_url(), cluster[-1].watch_url()
    best = min(rounds, key=lambda x: _nan_last(x.by_url[b_url].p(0.99)))
    on_a, cross = best.by_url[a_url], best.by_url[b_url]
    ratio = cross.p(0.99) / svc_res.p(0.99)
    a_ratio = on_a.p(0.99) / svc_res.p(0.99)
    ack_p99 = min(_nan_last(x.ack_p(0.99)) for x in rounds)

    def total(results: list[LoadResult], what: str) -> int:
        return sum(int(getattr(x, what)) for x in results)

    a_rounds = [x.by_url[a_url] for x in rounds]
    b_rounds = [x.by_url[b_url] for x in rounds]
    print()
    print(f"cluster: {len(cluster)} nodes on one redis-server (AOF, appendfsync always), the device on "
          f"node A, viewers round-robin over them ({on_a.viewers} on A, {cross.viewers} on B); "
          f"best of {opts.rounds} round(s) by node B's p99; lost/dup/out of order over all rounds")
    print(f"{'':26}{'p50 ms':>6}   {'p99 ms':>6}   {'lost':>4}  {'dup':>3}  {'order':>5}")
    for label, r, rs in (("single node (SQLite)", svc_res, svc_rounds),
                         ("cluster, node A", on_a, a_rounds),
                         ("cluster, cross-node (B)", cross, b_rounds)):
        print(f"{label:26}{_fmt(r.p(0.5)):>6}   {_fmt(r.p(0.99)):>6}   {total(rs, 'lost'):>4}  "
              f"{total(rs, 'dup'):>3}  {total(rs, 'misordered'):>5}")
    if best.refused or best.sent / best.send_seconds < 0.95 * opts.rate:
        print(f"  (against the cluster: {best.refused} event(s) refused or unanswered; the device sent "
              f"{best.sent / best.send_seconds:.1f} events/s)")
    print(f"{'cross-node p99 ratio':25}{_fmt(ratio):>5}   (cross-node p99 / single-node p99; goal <= 1.5)")
    print(f"{'node A p99 ratio':25}{_fmt(a_ratio):>5}   (node A p99 / single-node p99; for reference)")
    print(f"{'cluster ack p99':25}{_fmt(ack_p99)} ms  (device on node A, Redis appendfsync always; "
          f"for reference)")
    print(f"{'cluster idle viewers':25}not measured (only for --nodes 1)", flush=True)
    return {
        "cluster_a_p50_ms": on_a.p(0.5), "cluster_a_p99_ms": on_a.p(0.99),
        "cross_p50_ms": cross.p(0.5), "cross_p99_ms": cross.p(0.99),
        "cross_ratio": ratio, "cluster_a_ratio": a_ratio, "cluster_ack_p99_ms": ack_p99,
        "cluster_lost": float(total(rounds, "lost")), "cluster_dup": float(total(rounds, "dup")),
        "cluster_misordered": float(total(rounds, "misordered")),
    }


def _nan_last(x: float) -> float:
    return math.inf if math.isnan(x) else x


def _report(r: LoadResult) -> None:
    print(f"  {r.name}: {r.sent} events sent in {r.send_seconds:.1f} s ({r.sent / r.send_seconds:.1f}/s), "
          f"{r.acked} acked, {len(r.lat_ms):,} frames timed over {r.viewers} viewers; "
          f"viewer p50 {_fmt(r.p(0.5))} ms p99 {_fmt(r.p(0.99))} ms max {_fmt(r.p(1.0), '.1f')} ms; "
          f"ack p50 {_fmt(r.ack_p(0.5))} ms p99 {_fmt(r.ack_p(0.99))} ms; lost {r.lost}, dup {r.dup}, "
          f"resyncs {r.resets}, viewers dropped {r.dropped}, other deltas {r.other}", flush=True)
    per = 1e6 * r.server_cpu / max(1, r.acked * r.viewers)
    print(f"  {r.name}: server CPU {r.server_cpu:.1f} s "
          f"({100 * r.server_cpu / r.seconds:.0f} % of a core, {per:.1f} µs per frame sent), "
          f"viewer workers' CPU {r.viewer_cpu:.1f} s", flush=True)
    if not math.isnan(r.server_ack_p99_bound):
        print(f"  {r.name}: the service's own arena_ack_seconds histogram (arrival to ack ready): "
              f"p99 <= {r.server_ack_p99_bound:g} ms", flush=True)


def run(args: argparse.Namespace) -> int:
    opts = FanoutOptions(viewers=args.viewers, rate=args.rate, seconds=args.seconds,
                         idle_viewers=args.idle_viewers, nodes=args.nodes, rounds=args.rounds)
    if min(opts.viewers, opts.idle_viewers, opts.rounds) < 1 or opts.rate <= 0 or opts.seconds <= 0:
        raise SystemExit("bench fanout: --viewers, --rate, --seconds, --idle-viewers and --rounds "
                         "must be positive")
    if args.node_ws:
        opts.node_ws, note = ensure_node_ws()
        print(f"bench fanout: Node ws peer: {note}", flush=True)
    figures = asyncio.run(bench_fanout(opts))
    # Figures are printed whatever they are; a lost or repeated frame is a failure, not a figure
    # (and, on the cluster, a frame out of seq order).
    failures = ("lost", "dup", "cluster_lost", "cluster_dup", "cluster_misordered")
    return 1 if any(figures.get(k) for k in failures) else 0


# ------------------------------------------------------ the child processes


def _main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m stream.tools.bench_fanout",
                                description="child processes of arena-stream bench fanout")
    sub = p.add_subparsers(dest="role", required=True)
    b = sub.add_parser("bare", help="a bare websockets broadcast server")
    b.add_argument("--port", type=int, required=True)
    b.add_argument("--frame-bytes", type=int, default=1024)
    v = sub.add_parser("viewers", help="a viewer worker")
    v.add_argument("--target", action="append", required=True, help="COUNT=URL")
    v.add_argument("--out", type=Path, required=True)
    v.add_argument("--stop-at-error", action="store_true")
    v.add_argument("--concurrency", type=int, default=100)
    v.add_argument("--timeout", type=float, default=30.0)
    args = p.parse_args(argv)
    if args.role == "bare":
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_bare_main(args.port, args.frame_bytes))
        return 0
    targets = [(url, int(n)) for n, url in (t.split("=", 1) for t in args.target)]
    asyncio.run(_viewers_main(targets, args.out, stop_at_error=args.stop_at_error,
                              concurrency=args.concurrency, open_timeout=args.timeout))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
