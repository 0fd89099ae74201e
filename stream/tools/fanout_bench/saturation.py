"""The saturation phase of ``arena-stream bench fanout``: for each server, a ladder
of load steps (``--sat-viewers`` viewers, the device at each of ``--sat-rates``
events/s in turn, ``--sat-seconds`` a step) and the frames/s at which the viewers'
p99 crosses 100 ms.

Each step is a load round (``phases.load_phase``: the same viewer workers, the same
device, its stream spread over as many device sockets as the service's per-socket
limit needs). ``--sat-rounds`` rounds; in each, server by server (bare websockets[,
Node ws], the service), the order reversed every other round, each server a fresh
process at the start of its ladder. A ladder stops at its first step over 100 ms:
the steps above it would only say the same, slower.

A step's p99 counts a frame that never arrived (lost, skipped by a resync, or still
queued when the drain time was up) as late: over 1 % of those and the step has no
finite p99. The saturation point of a round is **linear on offered frames/s**
(viewers × events/s) between the last step under 100 ms and the first step over;
"> the top step" if none is over, "< the first step" if the first is. The median
round and the worst (lowest) are reported, and the service's over Node ws's and
over bare websockets'.

The viewer workers and the device share the machine's cores with the server, so
at high rates the harness may be what runs out: each step prints the server's
CPU, the viewer workers', the device's (this process) and the whole machine's
(``/proc/stat``, every process on it), and the step over 100 ms says whose limit
it was (``limit_of``): the server's, the harness's, or the machine's (full, mostly
with other processes: it is shared).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...live.ops.config import Config
from ..harness import Process, Processes, percentile, workers_for
from ..harness.workers import LoadResult
from .phases import load_phase
from .report import FanoutOptions, fmt

#: The viewers' p99 the saturation point is taken at (ms).
LIMIT_MS = 100.0
#: How long a step waits, after the last event, for every viewer to have every frame (s):
#: a frame later than that is far over ``LIMIT_MS`` whatever it is, and counted late.
SAT_DRAIN = 5.0
#: A share of a core (or of the machine) from which a process (the machine) is at its limit.
FULL = 0.9


def device_sockets(rate: float) -> int:
    """Device sockets for a stream of ``rate`` events/s: each under 80 % of the service's
    per-socket limit (``Config.device_rate``)."""
    return max(1, math.ceil(rate / (0.8 * Config().device_rate)))


@dataclass(frozen=True)
class Point:
    """A saturation point (frames/s), or a ratio of two: ``bound`` 0 if exact, +1 if only
    a lower bound ("> fps": never crossed), -1 if only an upper bound ("< fps"); NaN
    ``fps`` if unknown."""

    fps: float
    bound: int = 0

    def text(self, spec: str = ",.0f") -> str:
        if math.isnan(self.fps):
            return "n/a"
        return {0: "", 1: "> ", -1: "< "}[self.bound] + format(self.fps, spec)

    def key(self) -> tuple[float, int]:
        return (self.fps, self.bound)


def crossing(steps: Sequence[tuple[float, float]], limit: float = LIMIT_MS) -> Point:
    """Where p99 crosses ``limit``: ``steps`` are (offered frames/s, p99 ms) in rising
    frames/s; a NaN or infinite p99 counts as over. Linear on frames/s between the last
    step under ``limit`` and the first step over it (the first step over found in order);
    ``Point(top, +1)`` if none is over, ``Point(first, -1)`` if the first one is."""
    if not steps:
        raise ValueError("no steps")
    for i, (fps, p99_ms) in enumerate(steps):
        if p99_ms < limit:  # NaN compares False: over
            continue
        if i == 0:
            return Point(fps, -1)
        lo_fps, lo_ms = steps[i - 1]
        if not math.isfinite(p99_ms):
            return Point(lo_fps)  # no finite p99 to draw a line to: the last step under
        return Point(lo_fps + (limit - lo_ms) * (fps - lo_fps) / (p99_ms - lo_ms))
    return Point(steps[-1][0], 1)


def ratio(a: Point, b: Point) -> Point:
    """``a`` / ``b``, bounded as they are: exact if both are; unknown (NaN) if both are
    bounds the same way."""
    if (a.bound and a.bound == b.bound) or math.isnan(a.fps) or math.isnan(b.fps) or b.fps <= 0:
        return Point(math.nan)
    return Point(a.fps / b.fps, (a.bound > b.bound) - (a.bound < b.bound))


def median_point(points: Sequence[Point]) -> Point:
    """The median round's point (the lower middle one for an even count)."""
    return sorted(points, key=Point.key)[(len(points) - 1) // 2] if points else Point(math.nan)


def worst_point(points: Sequence[Point]) -> Point:
    """The worst round's: the lowest saturation point."""
    return min(points, key=Point.key) if points else Point(math.nan)


def step_p99(r: LoadResult) -> float:
    """The viewers' p99 over every frame the step sent them, one never received counting as
    late: infinite if those are over 1 %."""
    return percentile([*r.lat_ms, *[math.inf] * r.lost], 0.99)


def limit_of(server: float, viewers: float, workers: int, machine: float, cores: int,
             device: float = 0.0) -> str:
    """Whose limit a step over 100 ms met, from the CPU it saw (each in cores: the server's,
    the viewer workers', the machine's busy share of its ``cores``, the device's): the
    server's if it had a core to itself; the harness's if the viewer workers had theirs, or
    if the machine was full with the bench's own processes (server, viewers, device); the
    machine's if it was full with other processes; else no CPU limit's."""
    if server >= FULL:
        return "the server's"
    if viewers >= FULL * workers:
        return "the harness's"
    if machine >= FULL * cores:
        return "the harness's" if server + viewers + device >= FULL * cores else "the machine's"
    return "no CPU limit's"


def machine_busy() -> tuple[int, int]:
    """(busy, total) jiffies of the machine so far, every core, from ``/proc/stat``."""
    with open("/proc/stat") as f:
        cells = [int(x) for x in f.readline().split()[1:]]
    idle = cells[3] + (cells[4] if len(cells) > 4 else 0)  # idle, iowait
    total = sum(cells[:8])  # guest time is already in user
    return total - idle, total


@dataclass
class Step:
    rate: float
    fps: float       # offered: viewers × events/s
    res: LoadResult
    p99_ms: float
    server: float    # cores (CPU s / s of sending)
    viewers: float
    machine: float   # cores busy, every process
    device: float    # this process: the device (and the bench's own work)
    limit: str = ""


@dataclass
class Ladder:
    steps: list[Step] = field(default_factory=list)

    @property
    def point(self) -> Point:
        return crossing([(s.fps, s.p99_ms) for s in self.steps])

    @property
    def limit(self) -> str:
        """Whose limit the step over 100 ms met ("" if none was over)."""
        return next((s.limit for s in self.steps if s.limit), "")


@dataclass
class SatServer:
    """A server of the saturation phase: its key and label (``report.SERVERS``), its
    process (started again for each of its ladders) and its URLs."""

    key: str
    label: str
    proc: Process
    viewer_url: str
    device_url: str


def sat_budget(opts: FanoutOptions, servers: int) -> float:
    """An upper bound on the phase's time (s)."""
    return opts.sat_rounds * servers * (30 + len(opts.sat_rates) * (opts.sat_seconds + SAT_DRAIN + 40))


def sat_tokens(opts: FanoutOptions) -> int:
    """Device tokens the phase needs: enough sockets for its top rate."""
    return device_sockets(max(opts.sat_rates)) if opts.sat_rounds > 0 and opts.sat_rates else 0


def check_saturation(opts: FanoutOptions, command: str) -> None:
    if opts.sat_rounds < 0 or (opts.sat_rounds and (
            opts.sat_viewers < 1 or opts.sat_seconds <= 0 or not opts.sat_rates
            or any(r <= 0 for r in opts.sat_rates)
            or any(b <= a for a, b in zip(opts.sat_rates, opts.sat_rates[1:], strict=False)))):
        raise SystemExit(f"{command}: --sat-viewers and --sat-seconds must be positive, --sat-rates "
                         "positive and rising, --sat-rounds 0 or more")


async def ladder(group: Processes, opts: FanoutOptions, srv: SatServer, k: int, tokens: list[str]) -> Ladder:
    """One round's ladder against ``srv``, a fresh process: each rate in turn until p99 is over
    100 ms."""
    out = Ladder()
    cores = os.cpu_count() or 1
    workers = workers_for(opts.sat_viewers)
    srv.proc.wrap = []  # quiet: not pinned
    await srv.proc.arestart()
    for i, rate in enumerate(opts.sat_rates, 1):
        ticks: list[tuple[int, int, float]] = []

        async def tick() -> None:
            ticks.append((*machine_busy(), time.process_time()))  # noqa: B023 - called within this step

        name = f"sat{k}-{srv.key}{i}"
        res = await load_phase(group, name, [srv.proc], [srv.viewer_url], srv.device_url,
                               tokens[:device_sockets(rate)], viewers=opts.sat_viewers, workers=workers,
                               rate=rate, seconds=opts.sat_seconds, prefix=f"{name}-", on_start=tick,
                               on_sent=tick, drain=SAT_DRAIN)
        secs = max(res.send_seconds, 1e-3)
        busy = dev = math.nan
        if len(ticks) == 2:
            (b0, t0, p0), (b1, t1, p1) = ticks
            busy, dev = (b1 - b0) / max(1, t1 - t0) * cores, (p1 - p0) / secs
        step = Step(rate, opts.sat_viewers * rate, res, step_p99(res), res.server_cpu / secs,
                    res.viewer_cpu / secs, busy, dev)
        over = not step.p99_ms < LIMIT_MS
        if over:
            step.limit = limit_of(step.server, step.viewers, workers, step.machine, cores,
                                  0.0 if math.isnan(dev) else dev)
        out.steps.append(step)
        report_step(srv.label, step, workers, cores)
        if over:
            break
    pt = out.point
    lo = [s.fps for s in out.steps if s.p99_ms < LIMIT_MS]
    how = ("never over 100 ms" if pt.bound > 0 else "over 100 ms at the first step" if pt.bound < 0
           else f"p99 crosses 100 ms between {lo[-1]:,.0f} and {out.steps[-1].fps:,.0f} frames/s")
    at = f"; at the step over: {out.limit} limit" if out.limit else ""
    print(f"  sat{k}, {srv.label}: saturation point {pt.text()} frames/s ({how}{at})", flush=True)
    return out


def report_step(label: str, s: Step, workers: int, cores: int) -> None:
    r = s.res
    late = "" if math.isfinite(s.p99_ms) or math.isnan(s.p99_ms) else " (over 1 % never arrived)"
    over = f"; over 100 ms: {s.limit} limit" if s.limit else ""
    sent_rate = r.sent / max(r.send_seconds, 1e-3)
    if sent_rate < 0.95 * s.rate:
        over += f"; the device fell behind its schedule ({sent_rate:.1f} events/s)"
    print(f"  {r.name}, {label}: {r.viewers} viewers x {s.rate:g} events/s = {s.fps:,.0f} frames/s offered "
          f"(load average {r.load_avg:.2f}): {r.sent} events sent in {r.send_seconds:.1f} s "
          f"({sent_rate:.1f}/s), {len(r.lat_ms):,} frames timed; viewer p50 "
          f"{fmt(r.p(0.5))} ms p99 {fmt(s.p99_ms)} ms{late}; lost {r.lost}, resyncs {r.resets}, viewers "
          f"dropped {r.dropped}, refused {r.refused}; server CPU {100 * s.server:.0f} % of a core, viewer "
          f"workers' CPU {100 * s.viewers:.0f} % of a core ({workers} worker(s)), the device's "
          f"{fmt(100 * s.device, '.0f')} %, machine "
          f"{fmt(100 * s.machine, '.0f')} % busy ({cores} cores: {100 * cores} %){over}", flush=True)


async def saturation_phase(group: Processes, opts: FanoutOptions, servers: list[SatServer],
                           tokens: list[str]) -> dict[str, list[Ladder]]:
    """``opts.sat_rounds`` rounds of ladders, server by server, the order reversed every other
    round; each ladder's lines printed as it runs. The ladders by server key."""
    rates = ", ".join(f"{r:g}" for r in opts.sat_rates)
    print(f"  saturation: {opts.sat_viewers} viewers, the device at {rates} events/s, {opts.sat_seconds:g} s "
          f"a step; {opts.sat_rounds} round(s), server by server (the order reversed every other round), "
          "each a fresh process; a ladder stops at its first step over 100 ms", flush=True)
    ladders: dict[str, list[Ladder]] = {s.key: [] for s in servers}
    for k in range(1, opts.sat_rounds + 1):
        for srv in servers if k % 2 else servers[::-1]:
            ladders[srv.key].append(await ladder(group, opts, srv, k, tokens))
    return ladders


def put(figures: dict[str, float], name: str, pt: Point) -> None:
    figures[name], figures[f"{name}_bound"] = pt.fps, float(pt.bound)


def point_of(figures: dict[str, float], name: str) -> Point:
    """A point ``put`` in ``figures`` (NaN if it is not there)."""
    return Point(figures.get(name, math.nan), int(figures.get(f"{name}_bound", 0.0)))


def limits(ladders: Sequence[Ladder]) -> str:
    """Whose limit each round's step over 100 ms met: "the server's 2, the harness's 1"."""
    counts: dict[str, int] = {}
    for lad in ladders:
        counts[lad.limit or "none over"] = counts.get(lad.limit or "none over", 0) + 1
    return ", ".join(f"{what} {n}" for what, n in counts.items())


def saturation_summary(opts: FanoutOptions, ladders: dict[str, list[Ladder]],
                       servers: Sequence[tuple[str, str]]) -> dict[str, float]:
    """The saturation table (``servers``: each server's key and label, in order): the median
    and the worst round's point of each server, whose limit each crossing was, and the
    service's over Node ws's (goal >= 1) and over bare websockets'. Its figures: ``sat_KEY``
    and ``sat_KEY_worst`` (frames/s, with a ``_bound``), ``sat_REF_ratio[_worst]``,
    ``sat_KEY_harness`` (rounds whose crossing was the harness's or the machine's limit)."""
    figures: dict[str, float] = {"sat_viewers": float(opts.sat_viewers), "sat_rounds": float(opts.sat_rounds)}
    lo, hi = opts.sat_viewers * opts.sat_rates[0], opts.sat_viewers * opts.sat_rates[-1]
    print()
    print(f"saturation: {opts.sat_viewers} viewers, the device at "
          f"{', '.join(f'{r:g}' for r in opts.sat_rates)} events/s ({lo:,.0f} to {hi:,.0f} frames/s "
          f"offered), {opts.sat_seconds:g} s a step; the frames/s at which viewer p99 crosses 100 ms, "
          "linear on offered frames/s between the last step under and the first step over; median and "
          f"worst of {opts.sat_rounds} round(s) per server, server by server (the order reversed every "
          "other round), fresh processes each round; a frame never "
          "received counts as late")
    print(f"{'':18}{'median frames/s':>17}{'worst frames/s':>17}   the step over 100 ms met")
    for key, label in servers:
        if not ladders.get(key):
            continue
        points = [lad.point for lad in ladders[key]]
        med, worst = median_point(points), worst_point(points)
        put(figures, f"sat_{key}", med)
        put(figures, f"sat_{key}_worst", worst)
        figures[f"sat_{key}_harness"] = float(sum(lad.limit in ("the harness's", "the machine's")
                                                  for lad in ladders[key]))
        print(f"{label:18}{med.text():>17}{worst.text():>17}   {limits(ladders[key])}")
    print("  (the server's limit: the server at over 90 % of a core; the harness's: the viewer workers "
          "at over 90 % of theirs, or the machine over 90 % busy with the server, the viewer workers and "
          "the device; the machine's: over 90 % busy, most of it other processes. A crossing that is "
          "the harness's or the machine's is a lower bound on the server's own point)")
    for ref, label, goal in (("node", "node ws", "goal >= 1.0"),
                             ("bare", "bare websockets", "for reference")):
        if f"sat_{ref}" not in figures or "sat_svc" not in figures:
            continue
        r = ratio(point_of(figures, "sat_svc"), point_of(figures, f"sat_{ref}"))
        w = ratio(point_of(figures, "sat_svc_worst"), point_of(figures, f"sat_{ref}_worst"))
        put(figures, f"sat_{ref}_ratio", r)
        put(figures, f"sat_{ref}_ratio_worst", w)
        print(f"{'saturation ratio vs ' + label:40}{r.text('.2f'):>7}   worst {w.text('.2f'):>7}   "
              f"(arena-stream / {label}, median rounds; {goal})", flush=True)
    return figures


def saturation_row(fig: dict[str, float], node_missing: str = "") -> str:
    """``bench all``'s measured cell for the saturation point, from ``saturation_summary``'s
    figures (``node_missing``: why Node ws was not measured, if it was not)."""
    def both(key: str, unit: str = "") -> str:
        if f"sat_{key}" not in fig:
            return "n/a"
        worst = point_of(fig, f"sat_{key}_worst").text()
        return f"{point_of(fig, f'sat_{key}').text()}{unit} (worst {worst})"

    def times(name: str) -> str:
        r = point_of(fig, name)
        return "ratio unknown" if math.isnan(r.fps) else f"{r.text('.2f')}×"

    parts = [f"arena-stream {both('svc', ' frames/s median')}",
             f"Node ws {both('node')}" if "sat_node" in fig else f"Node ws not measured: {node_missing}",
             f"bare websockets {both('bare')}"]
    ratios = [f"{times(f'sat_{ref}_ratio')} {label} (worst {times(f'sat_{ref}_ratio_worst')})"
              for ref, label in (("node", "Node ws"), ("bare", "bare websockets"))
              if f"sat_{ref}_ratio" in fig]
    rounds = int(fig.get("sat_rounds", 0))
    harness = [f"{label} {int(fig[f'sat_{key}_harness'])} of {rounds}"
               for key, label in (("svc", "arena-stream"), ("node", "Node ws"), ("bare", "bare websockets"))
               if fig.get(f"sat_{key}_harness")]
    return ("; ".join(parts) + (f"; {', '.join(ratios)}" if ratios else "")
            + (f"; crossings at the harness's or the machine's limit: {', '.join(harness)}"
               if harness else ""))


def saturation_verdict(fig: dict[str, float]) -> bool | None:
    """Met if the service's median point is at least Node ws's, missed if below; None if
    the bounds leave it open or Node ws was not measured."""
    r = point_of(fig, "sat_node_ratio")
    if math.isnan(r.fps):
        return None
    if r.bound == 0:
        return r.fps >= 1
    if r.bound > 0:  # above r.fps
        return True if r.fps >= 1 else None
    return False if r.fps <= 1 else None  # below r.fps
