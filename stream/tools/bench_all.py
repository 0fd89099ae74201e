"""``arena-stream bench all``: every performance figure beside its goal, in one run.

One process tree, bounded in time, and it stops by itself. In order:

* **replay** (``bench replay``): the fold's rate and its time against a msgspec
  decode of the same synthetic season;
* **cold start**: a data directory whose SQLite log holds ``--cold-events``
  events (the synthetic season, folded once to keep what the rules accept, each
  written as the hub writes it: the pinned body, its game and seq, its dedup
  key), then ``python -m stream serve --no-demo`` on it, timed from process start
  until ``/readyz`` answers 200 and a viewer's ``/ws/watch`` has its snapshot.
  The first start folds the whole log (built in bulk, it has no snapshot) and
  writes a snapshot; the restarts decode it and fold the records after it
  (none). The goal is the restart's (the median of ``--cold-starts`` - 1
  restarts, the worst beside it), the full fold is shown beside it; the page
  cache is warm for all. If the restart misses the goal, the full fold's
  phases are timed one by one (as ``Hub._load`` runs them);
* **group commit**: raw single commits (the service's SQLite settings, one
  log-sized INSERT per transaction, sequential) against ``SqliteStore.append``
  from ``--devices`` concurrent tasks, each awaiting its own append as a device
  awaits its ack, and against SQLite alone (``--devices`` rows of the same shape
  a commit, one executemany, on the store's own schema and settings: the ceiling
  for any store on this disk); ``--rounds`` interleaved rounds, the median and
  the worst of each round's ratios;
* **end to end**: the service (``serve --no-demo``, its per-device rate limit
  lifted) with ``--devices`` device WebSockets, one game each, each sending its
  next event when the previous one is acked: acked events/s, against the same
  raw commits;
* **fan-out** (``bench fanout``, with the Node ``ws`` peer): viewer p99 against a
  bare websockets server and against Node ``ws``, quiet and contended (a busy
  neighbour on the other core), the median and the worst of ``--rounds``
  interleaved rounds on fresh processes; ack p99 against a raw commit; memory per
  idle viewer for each server; the service's loop stalls under the load, and
  every server's (the same probe) while the idle viewers connect and leave at
  once; each server's saturation point (the frames/s at which viewer p99 crosses
  100 ms, on a ladder of load steps, ``--sat-*``); instructions per delivered
  frame and per acked event for each server (callgrind, or perf; not in
  ``--quick``: ``bench instructions`` counts them alone); and with ``--nodes 2``
  the cross-node p99.

Never a best-of: every timed figure is the median of its rounds with the worst
beside it.

It prints one table and, when asked, writes it as Markdown with the date, the
machine and the command: ``--write`` to ``docs/performance.md`` (a full run only),
``--out FILE`` anywhere else (``all_bench/output.py``); without either it writes nothing.
Goals are printed, never asserted: a missed goal is a
figure; a section that could not run says so in its row and the exit status is 1.

The code: ``stream/tools/all_bench/`` (``sections``: the order; ``cold``, ``commits``:
those sections; ``report``: the rows, the table, the Markdown; ``options``: the
sizes), on ``stream/tools/harness/`` and ``stream/tools/fanout_bench/``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import shlex
import sys
import time
from pathlib import Path

from .all_bench.options import AllOptions, options_from
from .all_bench.output import ReportRefused, report_path
from .all_bench.report import machine, markdown, table
from .all_bench.sections import bench_all

__all__ = ["AllOptions", "bench_all", "run"]


def run(args: argparse.Namespace) -> int:
    opts = options_from(args)
    if min(opts.events, opts.viewers, opts.idle_viewers, opts.rounds, opts.devices, opts.cold_events) < 1 \
            or min(opts.rate, opts.seconds, opts.commit_seconds) <= 0:
        raise SystemExit("bench all: every size must be positive")
    try:  # decided before the run: a refusal costs nothing
        out = report_path(write=args.write, out=args.out, quick=opts.quick)
    except ReportRefused as err:
        raise SystemExit(f"arena-stream: {err}") from None
    command = shlex.join(["arena-stream", *sys.argv[1:]])
    when = datetime.datetime.now(datetime.UTC)
    box = machine()
    print(f"bench all{' --quick' if opts.quick else ''}: {when:%Y-%m-%d %H:%M} UTC on {box['CPU']}, "
          f"{box['cores']} cores, {box['memory']}; load average {os.getloadavg()[0]:.2f}", flush=True)
    print(f"  {opts.sizes()}", flush=True)
    t0 = time.perf_counter()
    report = asyncio.run(bench_all(opts))
    elapsed = time.perf_counter() - t0
    print(f"\nbench all: every figure and its goal ({elapsed:.0f} s)\n")
    print(table(report.rows))
    if out is None:
        print("\nnot written anywhere: --write makes it docs/performance.md (a full run), "
              "--out FILE writes it to FILE", flush=True)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(markdown(report, when, command, box, elapsed, opts.quick) + kept_apart(out))
        print(f"\nwritten to {out}", flush=True)
    return 1 if report.failed else 0


#: The heading of the figures other commands measure (``bench race``, the proofs): a new
#: ``bench all`` report keeps that section of the file it replaces as it was.
APART = "## Measured apart from `arena-stream bench all`"


def kept_apart(path: Path) -> str:
    """The section of ``path`` from ``APART`` on (with a blank line before it), or ''."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    at = text.find(APART)
    return "" if at < 0 else "\n" + text[at:]
