"""Proof: a stalled viewer and a dead one cost the healthy viewers nothing.

The service runs as a subprocess (as in production, and the measuring clients
stay off its event loop) with ``--heartbeat 0.5``: WebSocket pings every
1.5 s (3 × heartbeat), and a viewer that leaves one unanswered for 0.75 s (half
of that, aiohttp's pong wait) is dropped, so a dead peer is closed at most
``WINDOW`` = 2.25 s after it goes silent. N healthy viewers (in worker
processes) follow the game while the device sends a steady stream of events,
in rounds of phases interleaved against the machine's noise: baseline,
faulty, baseline, faulty (three rounds in a full run). The store is on tmpfs
where there is one (``ram_dir``): the shared disk's fsync noise would drown
the fan-out's. Each faulty phase adds

* a **stalled** viewer: a raw socket with a tiny receive buffer that
  subscribes and then never reads again. It never answers a ping either, so it
  is dropped by the heartbeat, on the same window. (The backlog policy, a
  ``slow`` snapshot after 64 frames and 1013 after ``send_timeout``, starts
  only once the socket stops taking bytes: on loopback the kernel takes about
  1.7 MB first, which this stream fills in minutes, not seconds. The in-process
  tests in tests/live/broadcast/test_slow_viewer.py shrink the server's socket buffer
  to prove that policy; the two at the end of this file prove that such a
  viewer, its bytes stuck in the service's buffer, is still let go of.)
* a **dead** viewer, through a black-hole TCP proxy in this test that, a moment
  into the phase, stops forwarding in both directions and closes neither
  side: the service sees a live TCP peer that answers nothing. The proxy keeps
  swallowing what the service sends, so it sees the moment the service closes.

Pass: the healthy viewers lose nothing and get nothing twice or out of order;
both faulty viewers are closed, their server-side sockets released (checked in
``/proc/PID/fd``), within the heartbeat window; the server's memory (VmRSS)
grows by less than ``RSS_LIMIT_MIB`` over the faulty phases. The healthy
viewers' delivery p99 with faults over without (the best round of each, as
``bench fanout`` reports; all rounds pooled is printed too) is printed always
and asserted (< 1.10) only in full runs: a timing assert on a shared 2-core CI
machine is flaky.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec
import websockets
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.uri import parse_uri

from stream.tools.harness import (
    GAME,
    HOST,
    EventStream,
    Processes,
    ServiceProcess,
    ViewerWorkers,
    analyse,
    cpu_seconds,
    metric,
    percentile,
    scrape,
    vm_rss_kib,
    workers_for,
)

from ..live.broadcast.test_slow_viewer import Stalled, play, sample
from ..live.conftest import RunningServer, Server, eventually
from .conftest import FULL, Figures, scale
from .determinism import live_equals_replay

HEARTBEAT = 0.5
WINDOW = 1.5 * 3 * HEARTBEAT     # a ping every 3 × heartbeat, its pong waited for half of that
SLACK = 0.5                      # the service's event loop is busy fanning out on a shared machine
RATE = 40.0                      # events per second from the device
# When the proxy goes silent, in seconds after the dead viewer connected: in the first faulty
# phase well before its first ping (at 1.5 s), in the second just after that ping was answered,
# the worst case: the next ping goes 1.5 s later, and is given up on 0.75 s after that.
CUTS = (0.5, 1.6)
RSS_LIMIT_MIB = 16.0
P99_RATIO_LIMIT = 1.10


# ---------------------------------------------------------------- sockets


def server_socket(server_port: int, peer_port: int) -> int:
    """The inode of the service's end of the loopback connection from ``peer_port``."""
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            cols = line.split()
            local, remote = cols[1].split(":")[1], cols[2].split(":")[1]
            if int(local, 16) == server_port and int(remote, 16) == peer_port:
                return int(cols[9])
    raise AssertionError(f"no server socket for peer port {peer_port}")


def fd_of(pid: int, inode: int) -> str:
    """The ``/proc/PID/fd/N`` link through which ``pid`` holds socket ``inode``."""
    target = f"socket:[{inode}]"
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                return f"/proc/{pid}/fd/{fd}"
    raise AssertionError(f"process {pid} holds no socket {inode}")


async def released(link: str, inode: int, timeout: float) -> float | None:
    """``time.monotonic()`` when the process lets go of socket ``inode``, held through ``link``
    (None: not within ``timeout``). One readlink per poll: light on the measuring process."""
    target = f"socket:[{inode}]"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            held = os.readlink(link) == target
        except OSError:
            held = False
        if not held:
            return time.monotonic()
        await asyncio.sleep(0.02)
    return None


# ----------------------------------------------------------- the faulty two


class BlackHole:
    """A TCP proxy in front of the service that can go silent: after ``cut()`` it forwards
    nothing either way and closes neither side, a half-open path. It keeps reading what the
    service sends (and drops it), so it sees the moment the service closes its end."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.silent = asyncio.Event()
        self.cut_at: float | None = None
        self.closed_at: float | None = None     # when the service closed (EOF or reset)
        self.upstream_port = 0                  # the proxy's port towards the service
        self.connected = asyncio.Event()
        self._writers: list[asyncio.StreamWriter] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._server: asyncio.Server | None = None

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._accept, HOST, 0)
        return int(self._server.sockets[0].getsockname()[1])

    def cut(self) -> None:
        self.cut_at = time.monotonic()
        self.silent.set()

    async def _accept(self, down_r: asyncio.StreamReader, down_w: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection(HOST, self.target)
        self.upstream_port = up_w.get_extra_info("sockname")[1]
        self._writers += [down_w, up_w]
        self.connected.set()
        self._tasks += [asyncio.create_task(self._to_service(down_r, up_w)),
                        asyncio.create_task(self._to_viewer(up_r, down_w))]

    async def _to_service(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while (data := await src.read(65536)) and not self.silent.is_set():
                dst.write(data)
                await dst.drain()
        await asyncio.Event().wait()  # silent: read nothing more, close nothing

    async def _to_viewer(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await src.read(65536):
                if not self.silent.is_set():
                    dst.write(data)
                    await dst.drain()
        self.closed_at = time.monotonic()
        await asyncio.Event().wait()

    async def close(self) -> None:
        for t in self._tasks:
            t.cancel()
        for w in self._writers:
            w.transport.abort()
        if self._server is not None:
            self._server.close()


class NeverReads:
    """A viewer that subscribes, then never reads again: a raw socket with a tiny receive
    buffer, on websockets' Sans-I/O protocol (to make the handshake, and to read, at the
    end, what it was sent)."""

    def __init__(self, sock: socket.socket, proto: ClientProtocol, opened_at: float, inode: int) -> None:
        self.sock, self.proto, self.opened_at, self.inode = sock, proto, opened_at, inode

    @classmethod
    async def open(cls, node: ServiceProcess) -> NeverReads:
        loop = asyncio.get_running_loop()
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        sock.setblocking(False)
        await loop.sock_connect(sock, (HOST, node.port))
        proto = ClientProtocol(parse_uri(node.watch(GAME)))
        proto.send_request(proto.connect())
        for data in proto.data_to_send():
            await loop.sock_sendall(sock, data)
        head = b""
        while not head.endswith(b"\r\n\r\n"):  # the 101 response, and not one byte more
            byte = await loop.sock_recv(sock, 1)
            assert byte, "the service closed the handshake"
            head += byte
        opened_at = time.monotonic()
        proto.receive_data(head)
        assert proto.state is State.OPEN, proto.handshake_exc
        return cls(sock, proto, opened_at, server_socket(node.port, sock.getsockname()[1]))

    async def read_all(self, timeout: float = 10.0) -> dict[str, Any]:
        """Read, at last, everything it was sent, to the end: what it got, and how it ended."""
        loop = asyncio.get_running_loop()
        with contextlib.suppress(TimeoutError, ConnectionError):
            async with asyncio.timeout(timeout):
                while data := await loop.sock_recv(self.sock, 65536):
                    self.proto.receive_data(data)
        self.proto.receive_eof()
        kinds: dict[str, int] = {}
        reasons: list[str] = []
        for ev in self.proto.events_received():
            if isinstance(ev, Frame) and ev.opcode in (Opcode.TEXT, Opcode.BINARY):
                msg = msgspec.json.decode(ev.data)
                kinds[msg["type"]] = kinds.get(msg["type"], 0) + 1
                if msg["type"] == "snapshot" and msg.get("reset"):
                    reasons.append(msg.get("reason", ""))
        close = self.proto.close_rcvd
        self.sock.close()
        return {"frames": kinds, "resets": reasons, "close": close.code if close is not None else 1006}


class Faults:
    """One faulty phase's stalled viewer and dead viewer."""

    def __init__(self, node: ServiceProcess) -> None:
        self.node = node
        self.proxy = BlackHole(node.port)
        self.stalled: NeverReads | None = None
        self.dead: Any = None
        self.dead_inode = 0
        self._reader: asyncio.Task[None] | None = None
        self.dead_frames = 0
        self.opened_at = 0.0

    async def open(self) -> None:
        self.stalled = await NeverReads.open(self.node)
        port = await self.proxy.start()
        self.dead = await websockets.connect(f"ws://{HOST}:{port}/ws/watch?game={GAME}", ping_interval=None,
                                             max_size=2**22, compression=None)
        await self.proxy.connected.wait()
        assert msgspec.json.decode(await self.dead.recv())["type"] == "snapshot"
        self.opened_at = time.monotonic()
        self.dead_inode = server_socket(self.node.port, self.proxy.upstream_port)
        self._reader = asyncio.create_task(self._read_dead())

    async def _read_dead(self) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for _ in self.dead:
                self.dead_frames += 1

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        if self.dead is not None:
            self.dead.transport.abort()
        await self.proxy.close()


# ------------------------------------------------------------------- the test


async def test_stalled_and_dead_viewers_cost_the_healthy_ones_nothing(tmp_path: Path,
                                                                       figures: Figures) -> None:
    viewers = scale(150, 1000)
    phase_s = scale(4, 8)
    rounds = scale(2, 3)  # of (baseline, faulty)
    group = Processes(tmp_path)
    shm = ram_dir(tmp_path)
    data = Path(shm.name) / "data"
    stream: EventStream | None = None
    faults: list[Faults] = []
    try:
        node = group.service(data, args=["--heartbeat", str(HEARTBEAT),
                                         "--device-rate", "1000000", "--device-burst", "1000000"])
        await node.astart()
        stream = await EventStream.for_game(node, RATE)
        healthy = ViewerWorkers(group)
        opened, errors, first_error = await healthy.start("healthy", viewers, [node.watch(GAME)],
                                                          workers_for(viewers), stop_at_error=True)
        assert (opened, errors) == (viewers, 0), first_error
        await stream.run(scale(1, 3))                       # warm up
        base_text = await scrape(node.http)
        rss = {"start": vm_rss_kib(node.pid)}
        cpu: dict[str, tuple[float, float]] = {}
        phases: list[tuple[str, dict[int, int]]] = []
        detections: list[dict[str, Any]] = []
        for k, kind in enumerate(("baseline", "faulty") * rounds, 2):
            name = f"{kind}{k // 2}"
            cpu0 = cpu_seconds(node.pid), sum(cpu_seconds(p.pid) for p in healthy.procs)
            if kind == "baseline":
                t0 = time.monotonic()
                phases.append((name, (await stream.run(phase_s)).sends))
                rss[name] = vm_rss_kib(node.pid)
                cpu[name] = _cpu_share(node, healthy, cpu0, time.monotonic() - t0)
                continue
            f = Faults(node)
            faults.append(f)
            await f.open()
            t0 = time.monotonic()
            assert f.stalled is not None
            stalled_gone = asyncio.create_task(released(fd_of(node.pid, f.stalled.inode), f.stalled.inode,
                                                        phase_s + WINDOW + 5))
            dead_link = fd_of(node.pid, f.dead_inode)
            sending = asyncio.create_task(stream.run(phase_s))
            await asyncio.sleep(f.opened_at + CUTS[(len(faults) - 1) % len(CUTS)] - time.monotonic())
            f.proxy.cut()
            dead_gone = asyncio.create_task(released(dead_link, f.dead_inode, phase_s + WINDOW + 5))
            phases.append((name, (await sending).sends))
            cpu[name] = _cpu_share(node, healthy, cpu0, time.monotonic() - t0)
            stalled_at, dead_at = await stalled_gone, await dead_gone
            rss[name] = vm_rss_kib(node.pid)
            assert f.proxy.cut_at is not None
            detections.append({
                "stalled_s": None if stalled_at is None else stalled_at - f.stalled.opened_at,
                "dead_closed_s": None if f.proxy.closed_at is None else f.proxy.closed_at - f.proxy.cut_at,
                "dead_released_s": None if dead_at is None else dead_at - f.proxy.cut_at,
                "stalled_got": await f.stalled.read_all(),
            })
        end_text = await scrape(node.http)  # the faulty viewers gone, the healthy ones all there
        last = max(stream.sends)
        reports = await healthy.finish(last, drain=15)
        state = await asyncio.to_thread(live_equals_replay, node.http, token=node.admin)
    finally:
        for f in faults:
            await f.close()
        if stream is not None:
            await stream.close()
        await group.aclose()
        shm.cleanup()

    overall = analyse("all", reports, stream.sends, [], len(stream.sends), 0, 0.0)
    by_phase = {name: analyse(name, reports, sends, [], len(sends), 0, phase_s) for name, sends in phases}
    pooled = {kind: sorted(x for name, r in by_phase.items() if name.startswith(kind) for x in r.lat_ms)
              for kind in ("baseline", "faulty")}
    p99 = {kind: percentile(lat, 0.99) for kind, lat in pooled.items()}
    ratio = p99["faulty"] / p99["baseline"]
    # Best of the rounds, as bench fanout reports: the least disturbed phase of each kind.
    best = {kind: min(r.p(0.99) for name, r in by_phase.items() if name.startswith(kind))
            for kind in ("baseline", "faulty")}
    best_ratio = best["faulty"] / best["baseline"]
    # What each phase added to the service's RSS (the faulty ones: from before their viewers opened).
    names = list(rss)
    added = {kind: sum(rss[b] - rss[a] for a, b in itertools.pairwise(names) if b.startswith(kind))
             / 1024 for kind in ("baseline", "faulty")}
    growth_mib = (rss[names[-1]] - rss["start"]) / 1024

    def delta(name: str) -> float:
        return metric(end_text, name) - metric(base_text, name)

    figures(f"{viewers} healthy viewers, {RATE:g} events/s, {rounds} rounds of (baseline, faulty) "
            f"phases of {phase_s} s each; heartbeat {HEARTBEAT:g} s: pings every {3 * HEARTBEAT:g} s, "
            f"dead within {WINDOW:g} s", viewers=viewers, rate=RATE, phase_s=phase_s, window_s=WINDOW)
    figures("healthy p99 by phase: " + ", ".join(f"{n} {r.p(0.99):.2f} ms" for n, r in by_phase.items()),
            **{f"p99_{n}_ms": r.p(0.99) for n, r in by_phase.items()})
    ack_p99 = {name: percentile(sorted(stream.acks[s] for s in sends), 0.99) for name, sends in phases}
    figures(f"device ack p99 by phase (durable commit, store on {data.parent.parent}): "
            + ", ".join(f"{n} {v:.2f} ms" for n, v in ack_p99.items()),
            **{f"ack_p99_{n}_ms": v for n, v in ack_p99.items()})
    figures(f"healthy p99 with faults / without, best round of each: {best['faulty']:.2f} / "
            f"{best['baseline']:.2f} ms = {best_ratio:.3f} (goal < {P99_RATIO_LIMIT}; asserted in full "
            f"runs only); all rounds pooled: {p99['faulty']:.2f} / {p99['baseline']:.2f} ms = {ratio:.3f}",
            p99_best_faulty_ms=best["faulty"], p99_best_baseline_ms=best["baseline"],
            p99_best_ratio=best_ratio, p99_faulty_ms=p99["faulty"], p99_baseline_ms=p99["baseline"],
            p99_ratio=ratio)
    figures(f"healthy viewers: lost {overall.lost}, dup {overall.dup}, out of order {overall.misordered}, "
            f"resyncs {overall.resets}, dropped {overall.dropped}",
            lost=overall.lost, dup=overall.dup, misordered=overall.misordered, resyncs=overall.resets,
            healthy_dropped=overall.dropped)
    for i, d in enumerate(detections, 1):
        got = d["stalled_got"]
        figures(f"faulty{i}: stalled viewer dropped {_s(d['stalled_s'])} after it subscribed "
                f"(it was sent {got['frames']}, slow resets {len(got['resets'])}, close {got['close']}); "
                f"dead viewer closed {_s(d['dead_closed_s'])} after the cut, its socket released "
                f"{_s(d['dead_released_s'])} after",
                **{f"faulty{i}_stalled_s": d["stalled_s"], f"faulty{i}_dead_s": d["dead_closed_s"]})
    figures("CPU, % of a core, service / viewer workers: "
            + ", ".join(f"{n} {a:.0f} / {b:.0f}" for n, (a, b) in cpu.items()),
            **{f"cpu_{n}": a for n, (a, b) in cpu.items()})
    figures("server VmRSS MiB: " + ", ".join(f"{k} {v / 1024:.1f}" for k, v in rss.items())
            + f"; grew {growth_mib:+.1f} MiB in all (limit {RSS_LIMIT_MIB:g}): {added['faulty']:+.1f} in "
            f"the faulty phases, {added['baseline']:+.1f} in the baseline ones (the history kept for "
            "resume grows either way)", rss_growth_mib=growth_mib, rss_faulty_mib=added["faulty"],
            rss_baseline_mib=added["baseline"])
    watching = metric(end_text, 'arena_connections{kind="watch"}')
    figures(f"service counters over the run: slow resyncs {delta('arena_queue_drops_total'):g}, "
            f"1013 drops {delta('arena_viewer_disconnects_total'):g}; watch sockets after the last phase "
            f"{watching:g}; state hash live == replay ({state[:12]})", watch_sockets_end=watching)
    print(*figures.lines, sep="\n", file=sys.stderr)

    assert (overall.lost, overall.dup, overall.misordered) == (0, 0, 0)
    assert (overall.resets, overall.dropped) == (0, 0)
    for d in detections:
        assert d["stalled_s"] is not None and d["stalled_s"] <= WINDOW + SLACK, d
        assert d["dead_closed_s"] is not None and d["dead_closed_s"] <= WINDOW + SLACK, d
        assert d["dead_released_s"] is not None and d["dead_released_s"] <= WINDOW + SLACK + 0.1, d
    assert watching == viewers  # the faulty ones are gone, every healthy one is still there
    assert growth_mib < RSS_LIMIT_MIB
    # Timing: asserted only in a full run. In CI, on a shared 2-core machine, one hiccup of a
    # neighbour moves a p99 by more than 10 % either way, faults or none.
    if FULL:
        assert best_ratio < P99_RATIO_LIMIT, f"healthy p99 {best_ratio:.3f}x with faulty viewers"


def ram_dir(fallback: Path) -> tempfile.TemporaryDirectory[str]:
    """A directory on tmpfs, when there is one. The service's store goes there: on this shared
    disk an fsync'd commit varies by tens of ms from one second to the next (the ack p99 per
    phase shows it), which drowns the fan-out's share of the latency, the share a faulty viewer
    could touch. The service runs the same code either way."""
    ram = Path("/dev/shm")
    return tempfile.TemporaryDirectory(dir=ram if ram.is_dir() and os.access(ram, os.W_OK) else fallback)


def _cpu_share(node: ServiceProcess, workers: ViewerWorkers, before: tuple[float, float],
               seconds: float) -> tuple[float, float]:
    """The service's and the viewer workers' CPU over a phase, in % of one core."""
    svc = cpu_seconds(node.pid) - before[0]
    viewers = sum(cpu_seconds(p.pid) for p in workers.procs) - before[1]
    return 100 * svc / seconds, 100 * viewers / seconds


def _s(x: float | None) -> str:
    return "never" if x is None else f"{x:.2f} s"


# ------------------------------------------- a stalled viewer is let go of, not held
#
# On loopback the kernel takes ~1.7 MB from a socket nobody reads before the service's own
# buffer fills, so the test above never gets there. These two, in-process, shrink the
# service's socket buffer (as tests/live/broadcast/test_slow_viewer.py does): a viewer that stops
# reading, its bytes stuck in the service's buffer, must still be let go of, its socket closed.


async def _stall(server: Server, until: Any) -> Stalled:
    stalled = await Stalled.open(server)
    tk, ump = await server.device("timekeeper"), await server.device("umpire")
    sent = 0
    while not until(stalled):
        assert sent < 4000, "the stalled viewer never fell behind"
        await play(tk, ump, sent)
        sent += 1
    await tk.close()
    await ump.close()
    return stalled


def _socket_closed(server: Server, stalled: Stalled) -> bool:
    """The service has forgotten the viewer and closed its socket."""
    return (stalled.watcher not in server.svc.fanout.watchers
            and stalled.transport.get_extra_info("socket").fileno() == -1)


async def test_a_viewer_that_cannot_take_the_1013_close_is_cut(tmp_path: Path, figures: Figures) -> None:
    """The 1013 close is a frame too: a viewer that takes nothing can't take it. Before, the
    close waited for it for ever (and the ping that would have caught it was cancelled)."""
    send_timeout = 0.5
    srv = RunningServer(tmp_path, watcher_queue=16, send_timeout=send_timeout, heartbeat=60.0,
                        device_rate=1e6, device_burst=10**6)
    async with srv as server:
        await server.setup_game()
        stalled = await _stall(server, lambda _: sample(server, "arena_queue_drops_total") > 0)
        await eventually(lambda: sample(server, "arena_viewer_disconnects_total") > 0, 10)
        t0 = time.monotonic()
        await eventually(lambda: _socket_closed(server, stalled), 2 * send_timeout + 2)
        took = time.monotonic() - t0
        assert server.svc.open_sockets == 0
        with contextlib.suppress(TimeoutError, websockets.ConnectionClosed):
            async with asyncio.timeout(5):
                while True:
                    await stalled.ws.recv()
        figures(f"a stalled viewer past send_timeout ({send_timeout:g} s): dropped (1013), and its "
                f"socket closed {took:.2f} s later though it never took the close frame",
                cut_after_1013_s=took)


async def test_a_viewer_dropped_by_the_heartbeat_with_bytes_unsent_is_cut(tmp_path: Path,
                                                                          figures: Figures) -> None:
    """A viewer that leaves a ping unanswered is closed; with bytes still in the service's
    buffer, the transport would wait for the peer to read them: for ever, if it never does.
    It gets ``send_timeout`` to take them (the close frame may be among them), then is cut."""
    heartbeat, send_timeout = 0.2, 1.0
    window = 1.5 * 3 * heartbeat
    srv = RunningServer(tmp_path, watcher_queue=10**6, send_timeout=send_timeout, heartbeat=heartbeat,
                        device_rate=1e6, device_burst=10**6)
    async with srv as server:
        await server.setup_game()
        t0 = time.monotonic()
        # below the transport's high-water mark (64 KiB): no backlog, so no 1013, only the ping
        stalled = await _stall(server, lambda s: s.transport.get_write_buffer_size() > 32 * 1024)
        unsent = stalled.transport.get_write_buffer_size()
        await eventually(lambda: _socket_closed(server, stalled), window + send_timeout + 2)
        took = time.monotonic() - t0
        assert server.svc.open_sockets == 0
        assert sample(server, "arena_viewer_disconnects_total") == 0  # not the 1013 path
        figures(f"a stalled viewer with {unsent:,} bytes unsent, dropped by the heartbeat (window "
                f"{window:g} s) and given send_timeout ({send_timeout:g} s) to take them: its socket "
                f"closed {took:.2f} s after it subscribed", cut_by_heartbeat_s=took)
