"""The sizes of ``arena-stream bench all``."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass

from ..fanout_bench.report import FanoutOptions
from ..fanout_bench.saturation import check_saturation


@dataclass
class AllOptions(FanoutOptions):
    """The fan-out's sizes (``FanoutOptions``, with two nodes), and the other sections'."""

    nodes: int = 2
    events: int = 1_000_000           # bench replay's season
    devices: int = 50
    commit_seconds: float = 2.0
    cold_events: int = 1_000_000
    cold_starts: int = 6  # the first folds the whole log; the others restart from its snapshot
    seed: int = 14
    quick: bool = False

    def fanout(self, **over: object) -> FanoutOptions:
        """The fan-out section's options: these sizes, ``over`` changed."""
        mine = {f.name: getattr(self, f.name) for f in dataclasses.fields(FanoutOptions)}
        return FanoutOptions(**(mine | over))

    def sizes(self) -> str:
        return (f"sizes: replay {self.events:,} events; cold start on {self.cold_events:,} logged events; "
                f"{self.devices} devices for {self.commit_seconds:g} s (store) and "
                f"{2.5 * self.commit_seconds:g} s (end to end); fan-out {self.viewers:,} viewers, "
                f"{self.rate:g} events/s for {self.seconds:g} s, {self.rounds} round(s) per server"
                f"{' quiet and contended' if self.contended else ''}, "
                f"{self.idle_viewers:,} idle viewers, {self.nodes} node(s); saturation "
                + (f"{self.sat_viewers} viewers at {','.join(f'{r:g}' for r in self.sat_rates)} events/s, "
                   f"{self.sat_seconds:g} s a step, {self.sat_rounds} round(s) per server" if self.sat_rounds
                   else "not measured") + "; instructions "
                + (f"counted at {self.ir_viewers} viewers and {self.ir_events} events" if self.ir_events
                   else "not counted"))

    @classmethod
    def quick_sizes(cls, seed: int = 14) -> AllOptions:
        return cls(events=20_000, viewers=20, rate=20.0, seconds=2.0, idle_viewers=200, nodes=2,
                   rounds=1, devices=50, commit_seconds=0.5, cold_events=20_000, cold_starts=3, seed=seed,
                   settle=1.0, ir_events=0, sat_viewers=20, sat_rates=(20.0, 40.0), sat_seconds=1.0,
                   sat_rounds=1, quick=True)


def options_from(args: argparse.Namespace) -> AllOptions:
    if args.quick:
        return AllOptions.quick_sizes(seed=args.seed)
    opts = AllOptions(events=args.events, viewers=args.viewers, rate=args.rate, seconds=args.seconds,
                      idle_viewers=args.idle_viewers, nodes=args.nodes, rounds=args.rounds,
                      devices=args.devices, commit_seconds=args.commit_seconds,
                      cold_events=args.cold_events, seed=args.seed, sat_viewers=args.sat_viewers,
                      sat_rates=args.sat_rates, sat_seconds=args.sat_seconds, sat_rounds=args.sat_rounds)
    check_saturation(opts, "bench all")
    return opts

