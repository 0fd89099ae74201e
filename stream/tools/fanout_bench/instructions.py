"""Instructions per delivered frame and per acked event, for each server of
``arena-stream bench fanout``: counts repeat on a shared machine where times don't.

``perf stat -e instructions`` where the machine supports it; otherwise (a VM without
hardware counters, as where these benchmarks are usually run) valgrind's callgrind:

* the server (bare websockets, Node ``ws``, the service) is started under
  ``valgrind --tool=callgrind --callgrind-out-file=…`` (Python with ``PYTHONHASHSEED=0``
  so that its runs repeat), on a port of its own, and waited for (much slower there);
* a warm-up, not counted (a quarter of the events, three viewers);
* ``--viewers`` viewers connect (viewer worker processes, as in the load rounds) and
  the device's sockets open; then ``callgrind_control --zero`` empties the counts, the
  device sends ``--events`` events at ``--rate`` (open loop), every viewer receives
  every frame, and ``callgrind_control --dump`` writes the counts of just that stretch:
  start-up, connections and shutdown left out. Its total ``Ir`` (instructions
  executed, every thread of the process) divided by the frames the viewers got, and by
  the events acked. Under perf the same stretch is counted with ``perf stat -p PID``,
  started at the zero and ended (SIGINT) at the dump;
* the server's timers run meanwhile (the service's heartbeat and pings, and every
  server's loop-stall probe, about 100 wake-ups a second): counted, as they are part of
  what it costs, and kept small beside the events by a rate well above them.

Slow (tens of seconds per server, mostly the interpreter's start under valgrind), so
small sizes: a frame costs the same at 20 viewers as at 1,000, the per-viewer part of an
event is what grows. ``arena-stream bench instructions`` runs it alone."""

from __future__ import annotations

import asyncio
import math
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ...live.ops.config import Config
from ..harness import Process, Processes, ServiceProcess, raise_nofile, setup_game
from .peers import PeerServer, bare_server, node_ws_server
from .phases import load_phase, probe_delta_size, viewer_url
from .report import fmt

#: The servers, in the order of the tables.
LABELS = {"bare": "bare websockets", "node": "node ws", "svc": "arena-stream"}


@dataclass
class Counted:
    """One server's count: instructions over the events' stretch, frames and acks in it."""

    key: str
    instructions: float
    frames: int
    acked: int
    tool: str

    @property
    def per_frame(self) -> float:
        return self.instructions / self.frames if self.frames else math.nan

    @property
    def per_ack(self) -> float:
        return self.instructions / self.acked if self.acked else math.nan


def perf_works() -> bool:
    """Whether ``perf stat -e instructions`` counts on this machine (not in most VMs)."""
    perf = shutil.which("perf")
    if perf is None:
        return False
    try:
        res = subprocess.run([perf, "stat", "-x,", "-e", "instructions", "true"], capture_output=True,
                             text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    line = next((x for x in res.stderr.splitlines() if "instructions" in x), "")
    return res.returncode == 0 and line.split(",", 1)[0].strip().isdigit()


def which_tool() -> str:
    """"perf", "callgrind", or why neither (starting "not measured")."""
    if perf_works():
        return "perf"
    if shutil.which("valgrind") and shutil.which("callgrind_control"):
        return "callgrind"
    return "not measured: perf stat cannot count instructions here and valgrind is not installed"


def callgrind_total(path: Path) -> float:
    """The total ``Ir`` of a callgrind output file (its ``summary:`` or ``totals:`` line)."""
    text = path.read_text(errors="replace")
    m = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    if m is None:
        raise RuntimeError(f"no summary or totals line in {path}")
    return float(m.group(1))


class Counter:
    """Counts a running process's instructions from ``start`` to ``stop``."""

    def __init__(self, tool: str, proc: Process, out: Path) -> None:
        self.tool, self.proc, self.out = tool, proc, out
        self.perf: subprocess.Popen[bytes] | None = None
        self.total = math.nan

    def wrap(self) -> list[str]:
        """The command to start the server under (callgrind), or none (perf attaches)."""
        if self.tool != "callgrind":
            return []
        valgrind = shutil.which("valgrind") or "valgrind"
        # --smc-check: Node's JIT writes and rewrites code on the heap.
        return [valgrind, "--tool=callgrind", f"--callgrind-out-file={self.out}", "--smc-check=all-non-file"]

    def _control(self, *args: str) -> None:
        ctl = shutil.which("callgrind_control") or "callgrind_control"
        res = subprocess.run([ctl, *args, str(self.proc.pid)], capture_output=True, text=True, timeout=120,
                             check=False)
        if res.returncode != 0:
            raise RuntimeError(f"callgrind_control {' '.join(args)}: {res.stdout}{res.stderr}".strip())

    def begin(self) -> None:
        """Count from now: callgrind's counts zeroed, or perf attached."""
        if self.tool == "callgrind":
            self._control("--zero")
        else:
            perf = shutil.which("perf") or "perf"
            self.perf = subprocess.Popen([perf, "stat", "-x,", "-e", "instructions", "-o", str(self.out),
                                          "-p", str(self.proc.pid)], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
            time.sleep(0.2)  # attached

    def end(self) -> None:
        """Until now: callgrind's counts dumped and read, or perf ended and read."""
        if self.tool == "callgrind":
            self._control("--dump")
            dumped = Path(f"{self.out}.1")
            for _ in range(100):  # bounded: the dump is written by the time control returns
                if dumped.exists() and dumped.stat().st_size:
                    break
                time.sleep(0.1)
            self.total = callgrind_total(dumped)
        else:
            assert self.perf is not None
            self.perf.send_signal(signal.SIGINT)
            self.perf.wait(30)
            line = next(x for x in self.out.read_text().splitlines() if "instructions" in x)
            self.total = float(line.split(",", 1)[0])

    async def start(self) -> None:
        await asyncio.to_thread(self.begin)

    async def stop(self) -> None:
        await asyncio.to_thread(self.end)


async def count_one(group: Processes, key: str, server: PeerServer | ServiceProcess, tool: str,
                    tokens: list[str], *, viewers: int, events: int, rate: float) -> Counted:
    """Start ``server`` (not started yet) to be counted, run the events' stretch, stop it."""
    out = group.workdir / f"instructions-{key}.out"
    counter = Counter(tool, server, out)
    server.wrap = counter.wrap()
    server.env["PYTHONHASHSEED"] = "0"
    server.ready_timeout = max(server.ready_timeout, 600.0)  # the interpreter's start under valgrind
    await server.astart()
    try:
        # A warm-up, not counted: the first events take paths (imports, caches, a JIT's
        # compilation) that the thousandth does not.
        await load_phase(group, f"warm-{key}", [server], [viewer_url(server)], server.device_url, tokens,
                         viewers=min(viewers, 3), workers=1, rate=rate, seconds=max(10, events // 4) / rate,
                         prefix=f"irw-{key}-")
        res = await load_phase(group, f"instructions-{key}", [server], [viewer_url(server)],
                               server.device_url, tokens, viewers=viewers,
                               workers=1, rate=rate, seconds=events / rate, prefix=f"ir-{key}-",
                               on_start=counter.start, on_done=counter.stop)
    finally:
        await server.astop(30.0)
    if res.lost or res.dup:
        raise RuntimeError(f"{LABELS[key]} under {tool}: {res.lost} frame(s) lost, {res.dup} repeated")
    return Counted(key, counter.total, len(res.lat_ms), res.acked, tool)


def report(counts: list[Counted], viewers: int) -> None:
    tool = counts[0].tool if counts else "?"
    print()
    print(f"instructions ({'perf stat' if tool == 'perf' else 'valgrind callgrind, total Ir'}), "
          f"{viewers} viewers, counted from the first event to the last frame delivered")
    print(f"{'':22}{'per frame':>12}  {'per ack':>12}  {'frames':>7}  {'acked':>6}")
    for c in counts:
        print(f"{LABELS[c.key]:22}{fmt(c.per_frame, ',.0f'):>12}  {fmt(c.per_ack, ',.0f'):>12}  "
              f"{c.frames:>7}  {c.acked:>6}", flush=True)


def figures(counts: list[Counted]) -> dict[str, float]:
    """``ir_frame_<server>``, ``ir_ack_<server>``; ``ir_perf``: 1 if perf counted, 0 if callgrind."""
    out: dict[str, float] = {"ir_perf": float(bool(counts) and counts[0].tool == "perf")}
    for c in counts:
        out[f"ir_frame_{c.key}"] = c.per_frame
        out[f"ir_ack_{c.key}"] = c.per_ack
    return out



async def count_all(group: Processes, data: Path, tokens: list[str], frame_bytes: int,
                    ws_module: Path | None, *, viewers: int, events: int, rate: float) -> dict[str, float]:
    """Each server counted in turn (bare, Node ws if ``ws_module``, the service on ``data``, a
    data directory with the bench game set up and no service running on it), the table
    printed; the figures (``ir_frame_<server>``, ``ir_ack_<server>``), none if no tool."""
    tool = which_tool()
    how = {"callgrind": "valgrind --tool=callgrind", "perf": "perf stat"}.get(tool, tool)
    print(f"\ninstructions: {viewers} viewers, {events} events at {rate:g}/s, each server under {how}",
          flush=True)
    if tool.startswith("not measured"):
        return {}
    counts = []
    servers: list[tuple[str, PeerServer | ServiceProcess]] = [
        ("bare", bare_server(group, frame_bytes, name="bare-counted"))]
    if ws_module is not None:
        servers.append(("node", node_ws_server(group, frame_bytes, ws_module, name="node-ws-counted")))
    servers.append(("svc", group.service(data, name="service-counted")))
    for key, server in servers:
        c = await count_one(group, key, server, tool, tokens, viewers=viewers, events=events, rate=rate)
        print(f"  {LABELS[key]}: {c.instructions:,.0f} instructions for {c.frames} frames and "
              f"{c.acked} acks", flush=True)
        counts.append(c)
    report(counts, viewers)
    return figures(counts)


async def bench_instructions(viewers: int, events: int, rate: float,
                             ws_module: Path | None) -> dict[str, float]:
    """``arena-stream bench instructions``: the bench game set up on a service (not counted),
    its delta size probed, then each server counted in turn; bounded in time. Its figures."""
    budget = 900 + 3 * events / rate * 20  # whatever happens: start-ups and events under valgrind
    with tempfile.TemporaryDirectory(prefix="arena-bench-instructions-") as d:
        async with Processes(Path(d)) as group, asyncio.timeout(budget):
            raise_nofile()
            data = group.workdir / "data"
            svc = group.service(data, name="service-setup")
            await svc.astart()
            device_sockets = max(1, math.ceil(rate / (0.8 * Config().device_rate)))
            tokens = await setup_game(svc.http, svc.admin, devices=device_sockets)
            delta_bytes = await probe_delta_size(svc, tokens, 20)
            await svc.astop()
            print(f"bench instructions: service delta {delta_bytes:.0f} bytes on average; bare and Node "
                  f"frames padded to {round(delta_bytes)}", flush=True)
            return await count_all(group, data, tokens, round(delta_bytes), ws_module, viewers=viewers,
                                   events=events, rate=rate)
