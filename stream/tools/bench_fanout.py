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

The code: ``stream/tools/fanout_bench/`` (``run``: the order of it all; ``phases``:
a load round, idle viewers, the delta probe, raw commits; ``peers``: the bare and
Node servers; ``report``: the tables), on ``stream/tools/harness/`` (the processes,
the viewers and the device).
"""

from __future__ import annotations

import argparse
import asyncio

from .fanout_bench.peers import ensure_node_ws
from .fanout_bench.phases import sqlite_commit_ms
from .fanout_bench.report import FanoutOptions, frames_failed
from .fanout_bench.run import bench_fanout

__all__ = ["FanoutOptions", "bench_fanout", "ensure_node_ws", "run", "sqlite_commit_ms"]


def run(args: argparse.Namespace) -> int:
    opts = FanoutOptions(viewers=args.viewers, rate=args.rate, seconds=args.seconds,
                         idle_viewers=args.idle_viewers, nodes=args.nodes, rounds=args.rounds)
    if min(opts.viewers, opts.idle_viewers, opts.rounds) < 1 or opts.rate <= 0 or opts.seconds <= 0:
        raise SystemExit("bench fanout: --viewers, --rate, --seconds, --idle-viewers and --rounds "
                         "must be positive")
    if args.node_ws:
        opts.node_ws, note = ensure_node_ws()
        print(f"bench fanout: Node ws peer: {note}", flush=True)
    # Figures are printed whatever they are; a lost or repeated frame is a failure, not a figure.
    return 1 if frames_failed(asyncio.run(bench_fanout(opts))) else 0
