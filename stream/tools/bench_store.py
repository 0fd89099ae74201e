"""``arena-stream bench store``: acked events per second and ack p99 with many devices, on
one node on SQLite, and on two nodes on a three-member etcd cluster, in one run.

Started once for the whole run, each in its own directory:

* **sqlite**: one ``arena-stream serve`` on its SQLite file (``synchronous=FULL``);
* **etcd**: three ``etcd`` members (Debian's ``etcd-server``: ``EtcdCluster``, the flags
  docs/deployment.md gives) and two ``arena-stream serve`` nodes on them (``etcd://``).

Each round plays every case, in an order that alternates from round to round. A case is
``--devices`` officials' devices spread evenly over ``G`` fresh games (``--games``: a few
games, where a game's appends queue one after the other, and many), each device closed
loop: it sends a whistle, waits for its ack, and sends the next, for ``--seconds``. On
etcd, device ``i`` sends to node ``i mod 2``: both nodes write every game, and race for
its ``seq`` (``stream/live/hub/races.py``). Printed per round and case: acked events per
second, ack p99 and the answers that were not acks; then, per case, the median and the
worst over the rounds, and etcd's throughput over SQLite's.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .device_client import Device
from .harness import EtcdCluster, Processes, ServiceProcess, percentile, setup_game

ARGS = ["--device-rate", "1000", "--device-burst", "1000", "--no-demo"]
#: Every answer that was not an ack, by its code and detail, over the run.
WHY: dict[str, int] = {}


@dataclass(frozen=True)
class StoreOptions:
    rounds: int = 5
    seconds: float = 6.0
    devices: int = 50
    games: tuple[int, ...] = (4, 50)


@dataclass
class Case:
    store: str
    games: int
    acked_per_s: float
    p99_ms: float
    acked: int
    other: dict[str, int] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.store}, {self.games} games"


async def _device(url: str, token: str, game: str, prefix: str, until: float,
                  acks: list[float], other: dict[str, int]) -> None:
    d = Device(url, token, prefix=prefix)
    try:
        await d.connect()
        while time.monotonic() < until:
            t = time.perf_counter()
            try:
                reply = await d.send_once({"type": "whistle", "game": game, "id": d.new_id()}, wait_s=30)
            except (OSError, TimeoutError, ConnectionError) as err:
                other[type(err).__name__] = other.get(type(err).__name__, 0) + 1
                await d.connect()
                continue
            if reply["type"] == "ack":
                acks.append((time.perf_counter() - t) * 1000)
            else:
                other[str(reply.get("code"))] = other.get(str(reply.get("code")), 0) + 1
                why = f"{reply.get('code')}: {reply.get('detail')}"
                WHY[why] = WHY.get(why, 0) + 1
    finally:
        await d.close()


async def _case(store: str, nodes: list[ServiceProcess], games: int, tag: str, opts: StoreOptions) -> Case:
    a = nodes[0]
    per_game = max(1, opts.devices // games)
    plan: list[tuple[ServiceProcess, str, str]] = []
    for g in range(games):
        game = f"{tag}-g{g}"
        tokens = await setup_game(a.http, a.admin, game=game, devices=per_game, device_prefix=f"{game}-d")
        plan += [(nodes[(g * per_game + i) % len(nodes)], token, game) for i, token in enumerate(tokens)]
    for node in nodes[1:]:  # the other node has folded every game's set-up
        await _until_games(node, [f"{tag}-g{g}" for g in range(games)])
    acks: list[float] = []
    other: dict[str, int] = {}
    start = time.monotonic()
    until = start + opts.seconds
    await asyncio.gather(*(_device(node.device_url, token, game, f"{tag}-{i}-", until, acks, other)
                           for i, (node, token, game) in enumerate(plan)))
    took = time.monotonic() - start
    return Case(store, games, len(acks) / took, percentile(sorted(acks), 0.99), len(acks), other)


async def _until_games(node: ServiceProcess, games: list[str], within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    for game in games:
        while True:
            try:
                await asyncio.to_thread(node.get, f"/api/games/{game}")
                break
            except OSError:  # 404 (an HTTPError) until the follower has folded the set-up
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)


async def bench_store(opts: StoreOptions, say: Callable[[str], None] = print, *,
                      workdir: Path | None = None) -> list[list[Case]]:
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        work = workdir or Path(tmp)
        async with Processes(work) as group:
            single = group.add(ServiceProcess(work / "sqlite", name="sqlite-node", args=ARGS))
            etcd = EtcdCluster(work / "etcd", group=group)
            pair = [group.add(ServiceProcess(work / "shared", store=etcd.url("bench"), name=f"etcd-node-{x}",
                                             args=ARGS)) for x in "ab"]
            await single.astart()
            await etcd.astart()
            for node in pair:
                await node.astart()
            rounds: list[list[Case]] = []
            for k in range(opts.rounds):
                plan = [(store, g) for g in opts.games for store in ("sqlite", "etcd")]
                if k % 2:
                    plan.reverse()
                cases = [await _case(store, [single] if store == "sqlite" else pair, g,
                                     f"r{k}-{store}-{g}", opts) for store, g in plan]
                rounds.append(cases)
                say(f"round {k + 1}: " + "; ".join(
                    f"{c.name} {c.acked_per_s:,.0f} acked/s, p99 {c.p99_ms:.1f} ms"
                    + (f" ({c.other})" if c.other else "") for c in cases))
            _summary(rounds, opts, say)
            return rounds


def _summary(rounds: list[list[Case]], opts: StoreOptions, say: Callable[[str], None]) -> None:
    by: dict[tuple[str, int], list[Case]] = {}
    for cases in rounds:
        for c in cases:
            by.setdefault((c.store, c.games), []).append(c)
    say(f"{len(rounds)} interleaved rounds of {opts.seconds:g} s, {opts.devices} devices closed loop: "
        "median (worst)")
    for g in opts.games:
        for store in ("sqlite", "etcd"):
            cs = by[(store, g)]
            rates, p99s = [c.acked_per_s for c in cs], [c.p99_ms for c in cs]
            what = "one node on SQLite" if store == "sqlite" else "two nodes on 3 etcd members"
            say(f"  {g:>3} games, {what:<28}: {statistics.median(rates):8,.0f} acked/s ({min(rates):,.0f}), "
                f"ack p99 {statistics.median(p99s):7.1f} ms ({max(p99s):.1f})")
        pairs = zip(by[("sqlite", g)], by[("etcd", g)], strict=True)
        ratios = [e.acked_per_s / s.acked_per_s for s, e in pairs]
        say(f"  {g:>3} games, etcd / SQLite acked/s: {statistics.median(ratios):.2f} x ({min(ratios):.2f} x)")
    for why, n in sorted(WHY.items(), key=lambda kv: -kv[1]):
        say(f"  answered {n} times: {why}")


def add_arguments(p: argparse.ArgumentParser) -> None:
    d = StoreOptions()
    p.add_argument("--rounds", type=int, default=d.rounds, help="interleaved rounds (default %(default)s)")
    p.add_argument("--seconds", type=float, default=d.seconds,
                   help="seconds each case sends for (default %(default)s)")
    p.add_argument("--devices", type=int, default=d.devices, help="devices (default %(default)s)")
    p.add_argument("--games", default=",".join(map(str, d.games)),
                   help="the numbers of games the devices are spread over, one case each "
                        "(default %(default)s)")


def run(args: argparse.Namespace) -> int:
    try:
        games = tuple(int(g) for g in str(args.games).split(","))
    except ValueError:
        raise SystemExit("bench store: --games is a comma-separated list of numbers") from None
    opts = StoreOptions(rounds=args.rounds, seconds=args.seconds, devices=args.devices, games=games)
    if opts.rounds < 1 or opts.seconds <= 0 or opts.devices < 1 or min(games) < 1:
        raise SystemExit("bench store: --rounds, --seconds, --devices and --games must be positive")
    print(f"bench store: {opts.rounds} rounds; {opts.devices} devices closed loop over "
          f"{' or '.join(map(str, games))} games for {opts.seconds:g} s: one node on SQLite, or two nodes "
          "on a three-member etcd cluster", flush=True)
    asyncio.run(bench_store(opts, lambda line: print(line, flush=True)))
    return 0
