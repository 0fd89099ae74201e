"""``arena-stream bench public``: what the public pages cost the service, each figure
beside its goal, in one run, bounded in time, and it stops by itself (docs/public.md,
docs/performance.md "The tournament in public").

* **the service**, ``python -m stream serve --no-demo`` on a free port, on its SQLite
  store, with one event of ``--games`` games (8), each on an arena of its own, its teams
  named; started again before each round (no round inherits another's garbage);
* **the devices** (this process): one socket per game, each sending its game's events
  (the clock, goals to either side, now and then a card) at ``--rate`` a second (1: a
  few hundred an hour is a real game's load), the games staggered evenly, open loop;
* **the spectators** (``public_bench/spectators.py``, worker processes, one per core):
  in the **A** rounds ``--spectators`` (5,000) viewers each on ``/ws/watch?event=E``,
  every game of the event on one socket; in the **B** rounds as many viewers each on
  one game's ``/ws/watch?game=G``, spread over the games. Each delta is stamped the
  moment its bytes arrive (a WebSocket client of a few microseconds a frame: a general
  one would be the harness's limit at 40,000 frames/s) and matched, by its game and
  ``seq``, to the time its device sent the event: the p99 from an umpire's send to the
  frame;
* **the page load** (``public_bench/pages.py``, a process of its own, aiohttp):
  ``GET /events/E`` at ``--page-rate`` (200) a second, on schedule (open loop), each
  request timed from its send to its last byte.

Rounds interleave, A1, B1, A2, B2, ... (``--rounds`` of each, 3). An A round opens the
spectators on the fresh service and reads its ``VmRSS`` before and after (its growth
over the spectators: memory per idle spectator), then runs two stretches of
``--seconds`` (15) of events, one without the page load and one with it, the order
alternating from round to round; a B round opens its viewers, then one stretch
without. After each stretch every viewer has every frame before the next begins, so no
stretch inherits another's backlog. Each stretch also reads the service's CPU time, its
loop-stall probe and its garbage collections (``/metrics``), the viewer workers' CPU and
the other processes' share of the machine, which say, for a goal missed, where the time
went.

The figures, the median round and the worst (never the best): memory per idle
spectator (goal <= 8 KiB); the spectators' p99 and the single-game viewers' p99, and
their ratio, round by round (A's stretch without the page load over B's; goal <= 1.0:
no worse); the page's p99 at 200/s (goal <= 50 ms); the devices' ack p99 with the page
load and without it, and their ratio (goal <= 1.0). ``--quick``: 500 spectators, 5 s
stretches, one round of each, for a smoke test; the figures mean little.

The code: ``stream/tools/public_bench/`` (``run``: the service, the devices, the
rounds; ``spectators``; ``pages``; ``report``), on ``stream/tools/harness/``.
"""

from __future__ import annotations

import argparse
import asyncio

from .harness import raise_nofile
from .public_bench.measures import PublicOptions
from .public_bench.run import bench_public

#: ``--quick``'s sizes, where not given.
QUICK = {"spectators": 500, "seconds": 5.0, "rounds": 1}
#: Descriptors the service needs beside its spectators' (devices, pages, store, files).
SPARE_FILES = 1000


def add_arguments(p: argparse.ArgumentParser) -> None:
    d = PublicOptions()
    p.add_argument("--spectators", type=int, default=None,
                   help=f"viewers on the event's socket in A, on games' in B (default {d.spectators}; "
                        f"--quick {QUICK['spectators']})")
    p.add_argument("--games", type=int, default=d.games, help="games live in the event (default %(default)s)")
    p.add_argument("--rate", type=float, default=d.rate,
                   help="events per game per second (default %(default)s)")
    p.add_argument("--seconds", type=float, default=None,
                   help=f"each stretch of events (default {d.seconds:g}; --quick {QUICK['seconds']:g})")
    p.add_argument("--page-rate", type=float, default=d.page_rate,
                   help="GET /events/E per second during the A rounds' stretch with the page load "
                        "(default %(default)s)")
    p.add_argument("--rounds", type=int, default=None,
                   help=f"rounds of A and of B, interleaved (default {d.rounds}; --quick {QUICK['rounds']})")
    p.add_argument("--quick", action="store_true",
                   help="small sizes for a smoke test (the figures mean little)")


def options(args: argparse.Namespace, nofile: int) -> tuple[PublicOptions, str]:
    """The run's sizes, and a note on the sizes it took (``--quick``, the open-file limit)."""
    d = PublicOptions(quick=args.quick)
    picked = {name: getattr(args, name) for name in QUICK}
    for name, value in picked.items():
        if value is None:
            picked[name] = QUICK[name] if args.quick else getattr(d, name)
    opts = PublicOptions(spectators=int(picked["spectators"]), games=args.games, rate=args.rate,
                         seconds=float(picked["seconds"]), page_rate=args.page_rate,
                         rounds=int(picked["rounds"]), quick=args.quick)
    if min(opts.spectators, opts.games, opts.rounds) < 1 or min(opts.rate, opts.seconds, opts.page_rate) <= 0:
        raise SystemExit("bench public: --spectators, --games, --rate, --seconds, --page-rate and --rounds "
                         "must be positive")
    notes = ["--quick: small sizes, the figures mean little"] if args.quick else []
    if opts.spectators + SPARE_FILES > nofile:
        fits = max(1, nofile - SPARE_FILES)
        notes.append(f"{opts.spectators} spectators need more descriptors than the open-file limit "
                     f"({nofile}) gives: {fits} instead")
        opts.spectators = fits
    return opts, "; ".join(notes)


def run(args: argparse.Namespace) -> int:
    nofile = raise_nofile()
    opts, note = options(args, nofile)
    fig = asyncio.run(bench_public(opts, nofile, note))
    # Figures are printed whatever they are; a lost or repeated frame is a failure, not a figure.
    return 1 if fig["lost"] or fig["repeated"] else 0
