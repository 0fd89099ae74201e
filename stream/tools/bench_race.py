"""``arena-stream bench race``: two officials' devices of one game on two nodes.

Three etcd members and two ``arena-stream serve`` nodes on them
(``stream/tools/harness``: ``Cluster``). Each round plays two
cases, moments apart, in an order that alternates from round to round:

* **one node**: both devices send to node A;
* **two nodes**: one device sends to node A, the other to node B, so the two
  nodes race for the game's ``seq`` all the time (``stream/live/hub/races.py``).

Each device sends ``--rate`` events per second, open loop (an event does not
wait for the one before), for ``--seconds``, on a fresh game per case. Printed
per round: each case's ack p99, refusals and ``not_stored`` answers, and the
ratio of the two p99s; then the median and the worst ratio over the rounds,
with the seq races the nodes lost (caught up, or reloaded) from their metrics.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .harness import Cluster, EventStream, Processes, ServiceProcess, percentile, scrape, setup_game
from .harness.measure import metric


@dataclass(frozen=True)
class RaceOptions:
    rounds: int = 5
    seconds: float = 10.0
    rate: float = 20.0        # events per second per device


@dataclass
class Case:
    name: str
    p99_ms: float
    acked: int
    refused: int
    not_stored: int


async def _case(name: str, game: str, nodes: list[ServiceProcess], opts: RaceOptions) -> Case:
    a = nodes[0]
    tokens = await setup_game(a.http, a.admin, game=game, devices=2, device_prefix=f"{game}-ump")
    streams = [EventStream(node.device_url, [token], opts.rate, f"{game}-{i}-", game)
               for i, (node, token) in enumerate(zip(nodes, tokens, strict=True))]
    for s in streams:
        await s.open()
    try:
        bursts = await asyncio.gather(*(s.run(seconds=opts.seconds) for s in streams))
    finally:
        for s in streams:
            await s.close()
    acks = sorted(ms for b in bursts for ms in b.ack_ms)
    refused = [r for b in bursts for r in b.refused]
    return Case(name, percentile(acks, 0.99), len(acks), len(refused),
                sum(1 for r in refused if r.get("code") in ("not_stored", "unknown", "no_reply")))


async def _races(nodes: list[ServiceProcess]) -> tuple[int, int]:
    """Seq races lost, over the nodes: (caught up, folded the log again)."""
    caught = reloaded = 0
    for node in nodes:
        text = await scrape(node.http)
        caught += int(metric(text, 'arena_seq_races_lost{outcome="caught_up"}'))
        reloaded += int(metric(text, 'arena_seq_races_lost{outcome="reloaded"}'))
    return caught, reloaded


async def bench_race(opts: RaceOptions, say: Callable[[str], None] = print, *,
                     workdir: Path | None = None) -> list[tuple[Case, Case]]:
    with tempfile.TemporaryDirectory(prefix="bench-race-") as tmp:
        work = workdir or Path(tmp)
        async with Processes(work) as group:
            return await _rounds(Cluster(work, args=["--device-rate", "1000", "--device-burst", "1000"],
                                         group=group), opts, say)


async def _rounds(cluster: Cluster, opts: RaceOptions, say: Callable[[str], None]
                  ) -> list[tuple[Case, Case]]:
    await cluster.astart()
    a, b = cluster.nodes
    rounds: list[tuple[Case, Case]] = []
    for k in range(opts.rounds):
        order = [("one node", [a, a]), ("two nodes", [a, b])]
        if k % 2:
            order.reverse()
        cases = {name: await _case(name, f"race-{k}-{i}", nodes, opts)
                 for i, (name, nodes) in enumerate(order)}
        one, two = cases["one node"], cases["two nodes"]
        rounds.append((one, two))
        say(f"round {k + 1}: one node p99 {one.p99_ms:.2f} ms ({one.acked} acked, {one.refused} "
            f"refused, {one.not_stored} not stored); two nodes p99 {two.p99_ms:.2f} ms "
            f"({two.acked} acked, {two.refused} refused, {two.not_stored} not stored); "
            f"ratio {two.p99_ms / one.p99_ms:.2f}x")
    caught, reloaded = await _races([a, b])
    ratios = [two.p99_ms / one.p99_ms for one, two in rounds]
    say(f"seq races lost: {caught} caught up (one game's tail), {reloaded} folded the whole log")
    say(f"two devices of one game on two nodes, ack p99 vs one node: "
        f"median {statistics.median(ratios):.2f}x, worst {max(ratios):.2f}x (goal <= 2x); not stored: "
        f"{sum(two.not_stored for _, two in rounds)} of {sum(two.acked + two.refused for _, two in rounds)} "
        f"(goal 0); refused: {sum(two.refused for _, two in rounds)}")
    await cluster.astop()
    return rounds


def add_arguments(p: argparse.ArgumentParser) -> None:
    d = RaceOptions()
    p.add_argument("--rounds", type=int, default=d.rounds, help="interleaved rounds (default %(default)s)")
    p.add_argument("--seconds", type=float, default=d.seconds,
                   help="seconds each case sends for (default %(default)s)")
    p.add_argument("--rate", type=float, default=d.rate,
                   help="events per second per device (default %(default)s)")


def run(args: argparse.Namespace) -> int:
    opts = RaceOptions(rounds=args.rounds, seconds=args.seconds, rate=args.rate)
    if opts.rounds < 1 or opts.seconds <= 0 or opts.rate <= 0:
        raise SystemExit("bench race: --rounds, --seconds and --rate must be positive")
    print(f"bench race: {opts.rounds} rounds; one game, two devices at {opts.rate:g} events/s each for "
          f"{opts.seconds:g} s: both on node A, or one on each of two nodes (on three etcd members)",
          flush=True)
    rounds = asyncio.run(bench_race(opts, lambda line: print(line, flush=True)))
    return 0 if all(two.not_stored == 0 for _, two in rounds) else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m stream.tools.bench_race", description=__doc__.split("\n")[0])
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
