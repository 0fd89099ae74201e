"""``arena-stream bench nodes``: two nodes on one etcd cluster, restarted under a steady stream,
driven from outside through the documented protocols (docs/protocol.md); does any
viewer ever see a gap?

Each of ``--runs`` runs starts afresh, in its own directory:

* three etcd members (fsync on every write, as etcd always does), and two
  ``arena-stream serve`` nodes on them (``stream/tools/harness``: ``Cluster``);
* a game set up through the HTTP API, its clock started by a timekeeper's device;
* ``--devices`` officials' devices (``harness.Officials``: the handheld's protocol,
  every event resent with the same id until acked, moving to the other node when
  theirs is down and back again later), device ``i`` starting on node ``i mod 2``, so
  both nodes take events for the one game at once and race for its ``seq``;
* ``--viewers`` scoreboards on each node (``harness.ResumingViewer``), each resuming
  with ``since`` and ``epoch`` on whichever node is up;
* for ``--seconds``, restarts at random moments: node A, node B and etcd (the member
  that leads at that moment: the cluster elects another) each at least once, more when
  the run is long, each one a SIGKILL or a clean stop (SIGTERM), down for a random
  while, then started again on its own directory. At most one is down at a time. Run
  ``k`` is seeded with ``--seed + k``: ``--seed`` that number with ``--runs 1`` plays
  the same faults again.

Then the devices stop, both nodes catch up, every viewer catches up, and the run is
checked: every acked event is in the log once, in its device's order, nothing is there
that wasn't sent; no viewer saw a gap or a repeat; and each node's live state hash
equals a fresh replay of the log it exports. A run passes when all of that holds.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .harness import (
    Cluster,
    Device,
    LogTally,
    Officials,
    Process,
    Processes,
    ResumingViewer,
    ServiceProcess,
    game_log,
    node_hashes,
    setup_game,
    tally,
    wait_for_game,
)

GAME = "nodes"
TARGETS = ("node-a", "node-b", "etcd")

__all__ = ["Fault", "NodesOptions", "RunResult", "add_arguments", "bench_nodes", "main", "one_run", "plan",
           "run", "summary"]


@dataclass
class NodesOptions:
    runs: int = 20
    seconds: float = 20.0       # of events and faults, per run
    seed: int = 14
    devices: int = 3
    viewers: int = 4            # per node
    rate: float = 30.0          # events per second, all devices together


@dataclass
class Fault:
    """``target`` goes down ``at`` seconds into the run (``how``: ``kill``, SIGKILL, or
    ``stop``, SIGTERM and a clean exit) and is started again ``down`` seconds later; or
    as soon as the one before it is over. As it happened: ``began`` (seconds into the run),
    ``out`` (seconds from then until it was ready again) and, for ``etcd``, ``member``: the
    member that led then, the one taken down."""

    at: float
    target: str
    how: str
    down: float
    began: float = -1.0
    out: float = -1.0
    member: str = ""

    def __str__(self) -> str:
        target = f"{self.target} ({self.member}, the leader)" if self.member else self.target
        if self.began < 0:
            return f"{target} {self.how} at {self.at:.1f} s (not reached)"
        return f"{target} {self.how} at {self.began:.1f} s, ready again {self.out:.1f} s later"


def plan(seed: int, seconds: float) -> list[Fault]:
    """The run's faults, one for every 4 s of run and at least three: each target once, in
    a random order, then targets at random; at random moments between 1 s in and 2 s
    before the end, one after another."""
    rng = random.Random(seed)
    targets = rng.sample(TARGETS, len(TARGETS))
    targets += [rng.choice(TARGETS) for _ in range(max(0, round(seconds / 4) - len(TARGETS)))]
    moments = sorted(rng.uniform(1.0, max(1.0, seconds - 2.0)) for _ in targets)
    return [Fault(at, target, rng.choice(("kill", "stop")), rng.uniform(0.3, 2.0))
            for at, target in zip(moments, targets, strict=True)]


@dataclass
class RunResult:
    """What one run did and found."""

    index: int
    seed: int
    faults: list[Fault]
    acked: int = 0
    acked_on: tuple[int, int] = (0, 0)   # through node A, node B
    log_records: int = 0                 # the game's records, setup and clock start included
    final_seq: int = 0
    log: LogTally | None = None
    viewers: int = 0
    gaps: int = 0
    repeats: int = 0
    resets: int = 0
    reconnects: int = 0
    first_gaps: list[tuple[int, int, int]] = field(default_factory=list)
    caught_up: bool = False
    live_equals_replay: list[bool] = field(default_factory=list)   # node A, node B
    seconds: float = 0.0
    error: str = ""
    workdir: str = ""

    @property
    def no_gap(self) -> bool:
        """What the summary counts: no gap, no repeat, nothing acked missing."""
        return (not self.error and self.log is not None and self.log.lost == 0
                and self.gaps == 0 and self.repeats == 0)

    @property
    def ok(self) -> bool:
        return (self.no_gap and self.log is not None and self.log.ok and self.caught_up
                and self.log_records == self.final_seq and self.live_equals_replay == [True, True])

    def lines(self) -> list[str]:
        head = f"run {self.index} (seed {self.seed}): {'ok' if self.ok else 'FAILED'}, {self.seconds:.1f} s"
        faults = "  faults: " + "; ".join(map(str, self.faults))
        if self.log is None:
            return [head, faults, f"  error: {self.error}", f"  logs kept in {self.workdir}"]
        log = self.log
        out = [head, faults,
               f"  events acked {self.acked:,} (through node A {self.acked_on[0]:,}, node B "
               f"{self.acked_on[1]:,}), in the log {log.logged:,} (log seq 1..{self.final_seq}, "
               f"{self.log_records} records), acked-but-missing {log.lost}, duplicates in the log "
               f"{log.doubled}, logged-but-never-sent {log.unsent}, each device's order kept "
               f"{_yes(log.order_kept)}",
               f"  viewers {self.viewers}: gaps {self.gaps}, repeats {self.repeats}, reset snapshots "
               f"{self.resets}, reconnects {self.reconnects}, all caught up {_yes(self.caught_up)}; "
               f"live state = replay of the log: node A {_yes(self.live_equals_replay[:1] == [True])}, "
               f"node B {_yes(self.live_equals_replay[1:] == [True])}"]
        if self.first_gaps:
            out.append(f"  first gaps (had seq, got seq, reconnects): {self.first_gaps[:5]}")
        if self.error:
            out.append(f"  error: {self.error}")
        if not self.ok:
            out.append(f"  logs kept in {self.workdir}")
        return out


def _yes(b: bool) -> str:
    return "yes" if b else "NO"


def _readiness(node: ServiceProcess) -> str:
    """What a node's ``/readyz`` answers (the body says why it isn't ready)."""
    try:
        with urllib.request.urlopen(f"{node.http}/readyz", timeout=5) as r:
            return f"{r.status} {r.read().decode(errors='replace')[:300]}"
    except urllib.error.HTTPError as err:
        return f"{err.code} {err.read().decode(errors='replace')[:300]}"
    except OSError as err:
        return f"unreachable ({err})"


async def _fault(cluster: Cluster, fault: Fault, start: float) -> None:
    fault.began = time.monotonic() - start
    member = None
    if fault.target == "etcd":
        member = await asyncio.to_thread(cluster.etcd.leader)
        fault.member = member.name
        process: Process = member.process
    else:
        process = cluster.nodes[TARGETS.index(fault.target)]
    if fault.how == "kill":
        await asyncio.to_thread(process.kill9)
    else:
        await process.astop()
    await asyncio.sleep(fault.down)
    # The same directory: the member catches up from the leader, the node from the log.
    await (process.astart() if member is None else cluster.etcd.arestart(member))
    fault.out = time.monotonic() - start - fault.began


async def one_run(workdir: Path, index: int, seed: int, opts: NodesOptions) -> RunResult:
    """One run in ``workdir`` (its processes' logs stay there)."""
    result = RunResult(index, seed, plan(seed, opts.seconds), workdir=str(workdir))
    t0 = time.monotonic()
    viewers: list[ResumingViewer] = []
    officials: Officials | None = None
    async with Processes(workdir) as group:
        cluster = Cluster(workdir, args=["--device-rate", "1000", "--device-burst", "1000"], group=group)
        a, b = cluster.nodes
        try:
            await cluster.astart()
            tokens = await setup_game(a.http, a.admin, game=GAME, devices=opts.devices, device_prefix="ump")
            tk = await asyncio.to_thread(a.post, "/api/tokens", {"role": "timekeeper", "device": "tk",
                                                                 "game": GAME})
            timer = Device(a.device_url, str(tk["token"]), prefix="tk")
            await timer.send({"type": "clock.start", "game": GAME})
            await timer.close()
            viewers = [ResumingViewer([n.watch_url, m.watch_url], GAME)
                       for n, m in ((a, b), (b, a)) for _ in range(opts.viewers)]
            for v in viewers:
                v.start()
            officials = Officials([a.device_url, b.device_url],
                                  {f"ump-{i}": t for i, t in enumerate(tokens)}, opts.rate, GAME,
                                  seed=seed, home=True, attempts=1000)
            officials.start()
            start = time.monotonic()
            for fault in result.faults:
                await asyncio.sleep(max(0.0, start + fault.at - time.monotonic()))
                await _fault(cluster, fault, start)
            await asyncio.sleep(max(1.0, start + opts.seconds - time.monotonic()))
            await officials.finish(within=120)
            rows = await asyncio.to_thread(game_log, a.http, GAME)  # the log, as the store holds it
            result.log_records = len(rows)
            result.log = tally(rows, officials.sent, officials.acked)
            await asyncio.gather(*(wait_for_game(n.http, len(rows), game=GAME) for n in (a, b)))
            seqs = [int((await asyncio.to_thread(n.get, f"/api/games/{GAME}"))["seq"]) for n in (a, b)]
            result.final_seq = max(seqs)
            if seqs[0] != seqs[1]:
                result.error = f"the nodes are at different seqs: {seqs}"
            try:
                async with asyncio.timeout(30):
                    await asyncio.gather(*(v.reach(result.final_seq) for v in viewers))
                result.caught_up = True
            except TimeoutError:
                result.error = "some viewers had not caught up 30 s after the last event"
            hashes = await asyncio.to_thread(node_hashes, a.http, b.http, token=a.admin)
            result.live_equals_replay = [live == replayed for live, replayed in hashes]
            if len({live for live, _ in hashes}) != 1:
                result.error = result.error or f"the nodes' live states differ: {hashes}"
        except Exception as err:  # a run that breaks is reported, and the next one runs
            ready = await asyncio.gather(*(asyncio.to_thread(_readiness, n) for n in (a, b)))
            result.error = f"{type(err).__name__}: {err}; /readyz: node A {ready[0]}, node B {ready[1]}"
        finally:
            for v in viewers:
                await v.stop()
            if officials is not None:  # (after an error: whatever it was sending is dropped)
                officials.stop.set()
                for task in officials.tasks:
                    task.cancel()
                await asyncio.gather(*officials.tasks, return_exceptions=True)
    if officials is not None:
        result.acked = sum(map(len, officials.acked.values()))
        result.acked_on = (officials.acked_on[a.device_url], officials.acked_on[b.device_url])
    result.viewers = len(viewers)
    result.gaps, result.repeats = sum(v.gaps for v in viewers), sum(v.repeats for v in viewers)
    result.resets, result.reconnects = sum(v.resets for v in viewers), sum(v.reconnects for v in viewers)
    result.first_gaps = [v.first_gap for v in viewers if v.first_gap]
    result.seconds = time.monotonic() - t0
    return result


async def bench_nodes(opts: NodesOptions, *, workdir: Path | None = None,
                      out: Callable[[str], None] = print) -> list[RunResult]:
    """Every run, one after another, each in a directory of its own under ``workdir`` (a
    temporary one by default, removed at the end but for the runs that failed)."""
    root = Path(tempfile.mkdtemp(prefix="bench-nodes-")) if workdir is None else workdir
    results = []
    for k in range(opts.runs):
        run_dir = root / f"run-{k + 1}"
        run_dir.mkdir(parents=True, exist_ok=True)
        result = await one_run(run_dir, k + 1, opts.seed + k, opts)
        for line in result.lines():
            out(line)
        if result.ok and workdir is None:
            shutil.rmtree(run_dir, ignore_errors=True)
        results.append(result)
    if workdir is None and all(r.ok for r in results):
        shutil.rmtree(root, ignore_errors=True)
    return results


def summary(results: list[RunResult]) -> list[str]:
    n = len(results)
    failed = [r for r in results if not r.ok]
    per_target = ", ".join(f"{t} {sum(f.target == t for r in results for f in r.faults)}" for t in TARGETS)
    lines = [f"bench nodes: {n} runs, {sum(len(r.faults) for r in results)} restarts ({per_target}; "
             f"SIGKILL {sum(f.how == 'kill' for r in results for f in r.faults)}), "
             f"{sum(r.acked for r in results):,} events acked, "
             f"acked-but-missing {sum(r.log.lost for r in results if r.log)}, "
             f"duplicates {sum(r.log.doubled for r in results if r.log)}, "
             f"gaps {sum(r.gaps for r in results)}, repeats {sum(r.repeats for r in results)}, "
             f"reset snapshots {sum(r.resets for r in results)}, "
             f"live state = replay in {sum(r.live_equals_replay == [True, True] for r in results)} of {n}"]
    if failed:
        lines.append("failed: " + ", ".join(f"run {r.index} (seed {r.seed})" for r in failed))
    lines.append(f"no gap in {sum(r.no_gap for r in results)} of {n} runs")
    return lines


def add_arguments(p: argparse.ArgumentParser) -> None:
    d = NodesOptions()
    p.add_argument("--runs", type=int, default=d.runs,
                   help="runs, each on fresh processes (default %(default)s)")
    p.add_argument("--seconds", type=float, default=d.seconds,
                   help="seconds of events and restarts per run (default %(default)s)")
    p.add_argument("--seed", type=int, default=d.seed, help="run k is seeded with SEED + k - 1 "
                   "(default %(default)s): --seed N --runs 1 plays run N's faults again")
    p.add_argument("--devices", type=int, default=d.devices, help="officials' devices (default %(default)s)")
    p.add_argument("--viewers", type=int, default=d.viewers, help="viewers per node (default %(default)s)")
    p.add_argument("--rate", type=float, default=d.rate,
                   help="events per second, all devices together (default %(default)s)")


def run(args: argparse.Namespace) -> int:
    opts = NodesOptions(runs=args.runs, seconds=args.seconds, seed=args.seed, devices=args.devices,
                        viewers=args.viewers, rate=args.rate)
    if min(opts.runs, opts.devices, opts.viewers) < 1 or opts.seconds < 4 or opts.rate <= 0:
        raise SystemExit("bench nodes: --runs, --devices and --viewers must be positive, --rate too, "
                         "and --seconds at least 4")
    print(f"bench nodes: {opts.runs} runs of {opts.seconds:g} s, seed {opts.seed}: three etcd members "
          f"and two nodes; {opts.devices} devices at {opts.rate:g} events/s on both nodes, "
          f"{opts.viewers} viewers per node; node A, node B and the etcd leader restarted at random",
          flush=True)
    results = asyncio.run(bench_nodes(opts, out=lambda line: print(line, flush=True)))
    for line in summary(results):
        print(line, flush=True)
    return 0 if all(r.ok for r in results) else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m stream.tools.bench_nodes", description=__doc__.split("\n")[0])
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
