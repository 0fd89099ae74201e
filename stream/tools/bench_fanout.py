"""``arena-stream bench fanout``: viewer latency, ack latency and memory per viewer,
each printed beside a reference measured in the same run.

One process tree, one run, bounded in time, and it stops by itself:

* **the service**, ``python -m stream serve --no-demo`` on a free port, one node
  on its SQLite store;
* with ``--nodes 2``, also **a two-node cluster**: three etcd members on free ports
  and two service nodes on them, sharing one data directory (one ``secret.key``). The
  device talks to node A; viewers are spread round-robin over A and B, so the viewers
  on B see every event cross-node, through etcd and B's follower;
* **a bare websockets server** (``python -m stream.tools.fanout_bench.peers``): for each
  device message, ``websockets.broadcast`` to every viewer and an ack: the
  transport's own limit, with frames padded to the service's mean delta size;
* **viewer workers** (``python -m stream.tools.harness.viewer_worker``, one or two
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
Each server gets ``--rounds`` load rounds (5 by default), interleaved (bare[, node],
service[, cluster], bare ...), each on a **fresh process** (started again before its
round: no round inherits another's garbage), in two conditions: **quiet**, and
**contended**, the server pinned to one core (``taskset -c``) and a busy loop (a
Python process that ends by itself) pinned to the other, as on a small arena box
where something else wants the CPU (the viewers and the device are not pinned). The
**median** round and the **worst** round are reported for each server and condition,
never the best: the machine is shared and noisy, and a best-of hides exactly the
stalls that matter. Each round prints the 1-minute load average at its end. Lost,
repeated and out-of-order frames are counted over every round. (The cluster: quiet
rounds only.)

Every server runs the same **loop-stall probe** (``stream/live/ops/stall.py``: a 10 ms
timer measuring its own lateness; the service's read from ``/metrics``, the bare
websockets and Node ws peers' from ``GET /lag``): the service's loop's p99 and
largest lateness during each round's events, and every server's while the idle
viewers connect and while they leave, at once.

Memory is measured first, on servers that have held no viewers yet (freed memory
would otherwise hide new growth): the ``VmRSS`` of each server process before and
after ``--idle-viewers`` idle, subscribed viewers: the service, bare websockets and
Node ws. (Not for the cluster.) After the viewers leave, each server gets 20
events, so that a collection of what they left can fall in the leave's window.

Then the **saturation point** of each server (``fanout_bench/saturation.py``): a
ladder of load steps, ``--sat-viewers`` viewers and the device at each of
``--sat-rates`` events/s in turn (``--sat-seconds`` a step, each step a load round
as above, its stream over as many device sockets as the top rate needs), until the
viewers' p99 is over 100 ms; ``--sat-rounds`` rounds (0: not measured), server by
server (bare[, node], service, then the other way round), each server a fresh process
for each of its ladders, quiet only. A round's point is the offered frames/s
(viewers × events/s) at which p99 crosses 100 ms, **linear on frames/s** between the
last step under and the first over ("> the top step" if none is over, "< the first
step" if the first is); a frame never received counts as late. The median and the
worst (lowest) round are reported, and the service's over Node ws's (goal ≥ 1) and
over bare websockets'. The viewer workers share the two cores with the server: each
step prints the server's CPU, the viewer workers' and the whole machine's, and the
step over 100 ms says whose limit it met (the server's: over 90 % of a core; the
harness's: the viewer workers at theirs, or the machine full), so that a crossing
that is the harness's reads as a lower bound.

Last, **instructions** per delivered frame and per acked event for each server
(``fanout_bench/instructions.py``: ``perf stat`` where the machine counts, else
valgrind's callgrind over a short run of ``--ir-viewers`` viewers and
``--ir-events`` events; ``arena-stream bench instructions`` runs it alone). Counts
repeat on a shared machine where times don't.

The code: ``stream/tools/fanout_bench/`` (``run``: the order of it all; ``phases``:
a load round, idle viewers, the delta probe, the busy neighbour, raw commits;
``saturation``: the ladders and their table; ``peers``: the bare and Node servers;
``instructions``: the counts; ``report``: the tables), on ``stream/tools/harness/`` (the processes,
the viewers and the device).
"""

from __future__ import annotations

import argparse
import asyncio

from .fanout_bench.instructions import bench_instructions
from .fanout_bench.peers import ensure_node_ws
from .fanout_bench.phases import sqlite_commit_ms
from .fanout_bench.report import FanoutOptions, frames_failed
from .fanout_bench.run import bench_fanout
from .fanout_bench.saturation import check_saturation

__all__ = ["FanoutOptions", "add_saturation_arguments", "bench_fanout", "bench_instructions",
           "ensure_node_ws", "rates", "run", "run_instructions", "sqlite_commit_ms"]


def rates(text: str) -> tuple[float, ...]:
    """``--sat-rates``: events/s, comma-separated ("50,100,200")."""
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of events/s: {text!r}") from None


def add_saturation_arguments(p: argparse.ArgumentParser) -> None:
    """The saturation phase's sizes (``bench fanout``, ``bench all``)."""
    d = FanoutOptions()
    p.add_argument("--sat-viewers", type=int, default=d.sat_viewers,
                   help="saturation: viewers at every step (default %(default)s)")
    p.add_argument("--sat-rates", type=rates, default=d.sat_rates, metavar="R1,R2,...",
                   help="saturation: the device's events/s at each step, rising (default "
                        + ",".join(f"{r:g}" for r in d.sat_rates) + ")")
    p.add_argument("--sat-seconds", type=float, default=d.sat_seconds,
                   help="saturation: how long the device sends at each step (default %(default)s)")
    p.add_argument("--sat-rounds", type=int, default=d.sat_rounds,
                   help="saturation: rounds per server, fresh processes each; 0: not measured "
                        "(default %(default)s)")


def run(args: argparse.Namespace) -> int:
    opts = FanoutOptions(viewers=args.viewers, rate=args.rate, seconds=args.seconds,
                         idle_viewers=args.idle_viewers, nodes=args.nodes, rounds=args.rounds,
                         contended=args.contended, ir_viewers=args.ir_viewers, ir_events=args.ir_events,
                         sat_viewers=args.sat_viewers, sat_rates=args.sat_rates, sat_seconds=args.sat_seconds,
                         sat_rounds=args.sat_rounds)
    check_saturation(opts, "bench fanout")
    if min(opts.viewers, opts.idle_viewers, opts.rounds, opts.ir_viewers) < 1 or opts.rate <= 0 \
            or opts.seconds <= 0 or opts.ir_events < 0:
        raise SystemExit("bench fanout: --viewers, --rate, --seconds, --idle-viewers, --rounds and "
                         "--ir-viewers must be positive")
    if args.node_ws:
        opts.node_ws, note = ensure_node_ws()
        print(f"bench fanout: Node ws peer: {note}", flush=True)
    # Figures are printed whatever they are; a lost or repeated frame is a failure, not a figure.
    return 1 if frames_failed(asyncio.run(bench_fanout(opts))) else 0


def run_instructions(args: argparse.Namespace) -> int:
    """``arena-stream bench instructions``: 1 if a server could not be counted."""
    if min(args.viewers, args.events) < 1 or args.rate <= 0:
        raise SystemExit("bench instructions: --viewers, --events and --rate must be positive")
    ws_module = None
    if args.node_ws:
        ws_module, note = ensure_node_ws()
        print(f"bench instructions: Node ws peer: {note}", flush=True)
    figures = asyncio.run(bench_instructions(args.viewers, args.events, args.rate, ws_module))
    counted = [v for k, v in figures.items() if k.startswith(("ir_frame_", "ir_ack_"))]
    return 0 if counted and all(v > 0 for v in counted) else 1
