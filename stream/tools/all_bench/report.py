"""What ``arena-stream bench all`` reports: a row per figure beside its goal, the
notes, the machine it ran on; printed as a table and written as Markdown."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import math
import os
import platform
import shutil
import sqlite3
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..harness import Processes
from .options import AllOptions


@dataclass
class Row:
    figure: str
    measured: str
    goal: str
    verdict: str  # "met", "missed", "—" (for reference) or "not measured"


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failed: bool = False

    def add(self, figure: str, measured: str, goal: str, met: bool | None) -> None:
        verdict = "—" if met is None else ("met" if met else "missed")
        self.rows.append(Row(figure, measured, goal, verdict))

    def not_measured(self, figure: str, goal: str, why: str) -> None:
        self.rows.append(Row(figure, f"not measured: {why}", goal, "—"))


def ok(x: float, goal: Callable[[float], bool]) -> bool | None:
    return None if math.isnan(x) else goal(x)


def fmt(x: float, spec: str = ".2f") -> str:
    return "n/a" if math.isnan(x) else format(x, spec)


def reason(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}".rstrip(": ")


def run_version(argv: list[str]) -> str:
    exe = shutil.which(argv[0])
    if exe is None:
        return "not found"
    try:
        res = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"? ({type(err).__name__})"
    return (res.stdout or res.stderr).strip().splitlines()[0] if (res.stdout or res.stderr).strip() else "?"


def machine() -> dict[str, str]:
    """What the figures were measured on."""
    cpu = "?"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "?"
    with contextlib.suppress(OSError, ValueError, IndexError), open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                break
    etcd = run_version(["etcd", "--version"])
    if etcd.startswith("etcd Version:"):
        etcd = etcd.split(":", 1)[1].split()[0]
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 0
    return {
        "CPU": cpu,
        "cores": f"{os.cpu_count()}" + (f" ({usable} usable by this process)"
                                         if usable != os.cpu_count() else ""),
        "memory": mem,
        "kernel": f"{platform.system()} {platform.release()}",
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "SQLite": sqlite3.sqlite_version,
        "etcd": etcd,
        "Node": run_version(["node", "--version"]),
    }


def table(rows: list[Row]) -> str:
    heads = ("figure", "measured", "goal", "")
    widths = [max(len(h), *(len(getattr(r, a)) for r in rows)) if rows else len(h)
              for h, a in zip(heads, ("figure", "measured", "goal", "verdict"), strict=True)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        cells = (r.figure, r.measured, r.goal, r.verdict)
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
    return "\n".join(lines)


def markdown(report: Report, when: datetime.datetime, command: str, box: dict[str, str],
             elapsed: float, quick: bool) -> str:
    def cell(s: str) -> str:
        return s.replace("|", "\\|")

    out = ["# Performance", "",
           f"Measured {when:%Y-%m-%d %H:%M} UTC with `{command}` in {elapsed / 60:.1f} min "
           "(one run; each figure beside its reference, measured moments apart).", ""]
    if quick:
        out += ["**--quick**: tiny sizes, a smoke test; these figures mean nothing.", ""]
    out += METHOD
    out += ["| machine | |", "|---|---|"]
    out += [f"| {k} | {cell(v)} |" for k, v in box.items()]
    out += ["", "| figure | measured | goal | |", "|---|---|---|---|"]
    out += [f"| {cell(r.figure)} | {cell(r.measured)} | {cell(r.goal)} | {r.verdict} |" for r in report.rows]
    if report.notes:
        out += [""] + [f"- {note}" for note in report.notes]
    return "\n".join(out) + "\n"


#: How the figures are taken: the generated report's text (``bench all --write`` writes it).
METHOD = [
    "## Method", "",
    "The machine is shared and small (two cores, with the load generator on them), so the times "
    "are noisy; the method is built for that:", "",
    "- **Rounds: the median and the worst.** Every timed figure is taken in interleaved rounds (for the "
    "fan-out: bare websockets, Node `ws`, the service, the cluster, in turn, then again), each "
    "server a **fresh process** each round; the table gives the **median** round and the **worst** "
    "round. Each fan-out round prints its 1-minute load average (`bench all`'s output). Cold start: "
    "the median and the worst of the restarts; group commit: of each round's ratio (raw commits "
    "and the store in turn); the fold: of five rounds.",
    "- **Quiet and contended.** The fan-out runs twice per round: quiet, and contended: the server "
    "pinned to one core (`taskset -c`) and a CPU-bound neighbour (a busy loop that ends by itself) "
    "pinned to the other, as on a small arena box where something else wants the CPU. The viewers' "
    "worker processes and the device are not pinned.",
    "- **Instructions beside the times.** Instructions per delivered frame and per acked event, "
    "each server alone: `perf stat` where the machine counts instructions (many VMs don't: "
    "`perf stat -e instructions true` says not supported), else valgrind's callgrind: the server "
    "started under `valgrind --tool=callgrind`, a warm-up, then `callgrind_control --zero`, a "
    "short run (a few viewers, a few hundred events), every frame delivered, `callgrind_control "
    "--dump`: its total `Ir` over the frames delivered and over the events acked. Counts repeat "
    "on a shared machine where times don't, so a change is judged by them first "
    "(`arena-stream bench instructions` runs them alone).",
    "- **Loop stalls.** The service runs a stall probe (`stream/live/ops/stall.py`): a 10 ms timer "
    "measuring its own lateness, on `/metrics` as the histogram `arena_loop_lag_seconds` and as "
    "`arena_loop_lag_window_seconds` (p99 and largest since the previous scrape). The bench reads "
    "it around each fan-out round's events and while the idle viewers connect, and leave, at once. "
    "The bare websockets server (on the service's event loop) and the Node `ws` server run "
    "the same probe, answered on `GET /lag`, and are read around the same idle viewers: their "
    "stalls are printed beside the service's, since even a server that does nothing else stalls "
    "when thousands of connections open or close at once.",
    "- **What else held a round up.** Beside the stalls, the service's `/metrics` read around "
    "each fan-out round's events gives what held it up from outside its loop: each store "
    "transaction alone (`arena_store_commit_seconds`: SQLite's `COMMIT`, its fsync) and each "
    "append from its call to durable (`arena_store_durable_seconds`), its garbage collections "
    "(`arena_gc_pause_seconds`), and the machine's CPU time stolen by its host or idle waiting on "
    "a disk (`arena_machine_cpu_seconds_total`); `bench fanout` prints them with each round. It "
    "reads the page once a second during the events, and for every second whose frames' p99 is "
    "over 50 ms (a frame counts in the second its event was sent) prints the same figures over "
    "the time those frames were in flight, and names the first that is at least half that p99: "
    "the disk's fsync or the host's steal (its share of one core), outside the process; a "
    "collection or a stall of the loop (the loop's own work, or the process not run at all), "
    "inside it; else a busy core (the service at 90 % of a core or more over that time), or a "
    "machine with no core free (5 % idle or less: the load generator shares the cores), "
    "outside it; or none; the table's "
    "`tail` rows count them, beside the worst round's p99 over the median round's.",
    "- **Saturation point.** For each server (bare websockets, Node `ws`, the service), a ladder of "
    "load steps: a fixed number of viewers and the device at rising event rates, until the viewers' "
    "p99 is over 100 ms; rounds server by server (the order reversed every other round), each "
    "server a fresh process for each ladder. A round's point is linear on offered frames/s between "
    "the last step under 100 ms and the first over (\"> N\" if none was over, \"< N\" if the first "
    "was); a frame never received counts as late. The viewer workers share the two cores with the "
    "server, so each step prints the server's CPU, the viewer workers' and the machine's, and says "
    "whose limit a step over 100 ms met: a crossing at the harness's limit is a lower bound on the "
    "server's own point.",
    "- **Goals printed, never asserted.** A missed goal is a figure; tests assert only the "
    "report's structure.", "",
]


@dataclass
class Bench:
    """One run of ``bench all``: its sizes, its processes, what it has found so far."""

    opts: AllOptions
    group: Processes
    report: Report = field(default_factory=Report)
    raw_cps: float = math.nan  # raw single commits/s (group commit's median round), for end to end

    @property
    def work(self) -> Path:
        return self.group.workdir

    async def section(self, name: str, seconds: float, work: Callable[[], Awaitable[None]],
                      on_error: Callable[[str], None]) -> None:
        """Run one section, bounded in time; a failure becomes its rows' "not measured"."""
        print(f"\n== {name}", flush=True)
        try:
            async with asyncio.timeout(seconds):
                await work()
        except Exception as err:  # the other sections still run; the exit status says it
            why = "timed out" if isinstance(err, TimeoutError) else reason(err)
            print(f"  {name}: not measured: {why}", flush=True)
            self.report.failed = True
            on_error(why)
