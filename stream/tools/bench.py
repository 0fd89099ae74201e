"""``arena-stream bench …``: benchmarks that print ratios measured in one run.

Speed goals live here, never in timed unit tests: the machines are noisy, so
each figure is printed beside its reference, measured moments apart, in
interleaved rounds (the median and the worst, never the best).
"""

from __future__ import annotations

import argparse

from . import bench_all, bench_fanout, bench_nodes, bench_public, bench_race, bench_store
from .bench_replay import bench_replay


def run_bench(args: argparse.Namespace) -> int:
    if args.bench == "replay":
        bench_replay(args.events, args.seed)
        return 0
    if args.bench == "fanout":
        return bench_fanout.run(args)
    if args.bench == "instructions":
        return bench_fanout.run_instructions(args)
    if args.bench == "all":
        return bench_all.run(args)
    if args.bench == "nodes":
        return bench_nodes.run(args)
    if args.bench == "race":
        return bench_race.run(args)
    if args.bench == "public":
        return bench_public.run(args)
    if args.bench == "store":
        return bench_store.run(args)
    if args.bench == "etcd-size":
        from . import bench_etcd_size

        return bench_etcd_size.run(args)
    raise SystemExit(f"unknown benchmark {args.bench!r}")  # pragma: no cover
