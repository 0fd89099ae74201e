"""One run of ``arena-stream bench public``: the service, the event and its games, the
devices, and the rounds A (spectators on the event's socket, a stretch without the page
load and one with it) and B (as many viewers each on one game's socket), interleaved.
(What it measures and why: ``stream/tools/bench_public.py``.)"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from ..device_client import Device
from ..fanout_bench.saturation import machine_busy
from ..harness import (
    Processes,
    ServiceProcess,
    cpu_seconds,
    lag_of,
    percentile,
    scrape,
    summed,
    vm_rss_kib,
    workers_for,
)
from . import report
from .measures import PublicOptions, Round, Sent, Stretch, frames
from .pages import PageLoad
from .spectators import SpectatorWorkers, key

EVENT = "bench-cup"
#: Each game's events, in turn: the clock, goals to either side, a whistle, and a card
#: every third lap (to players in turn, at most one each in a full run).
LAP = ("clock.start", "goal.home", "clock.start", "whistle",
       "clock.start", "goal.away", "clock.start", "whistle")
PLAYERS = (("home", "h1"), ("away", "a1"), ("home", "h2"), ("away", "a2"), ("home", "h3"), ("away", "a3"))


def game_event(n: int) -> dict[str, Any]:
    """A game's ``n``-th event of the bench (without its game and id)."""
    if n % (3 * len(LAP)) == 3 * len(LAP) - 1:
        _, player = PLAYERS[(n // (3 * len(LAP))) % len(PLAYERS)]
        return {"type": "card", "player": player, "color": "yellow"}
    kind = LAP[n % len(LAP)]
    if kind.startswith("goal."):
        side = kind.split(".")[1]
        return {"type": "goal", "team": side, "player": f"{side[0]}1"}
    return {"type": kind}


class Devices:
    """One device socket per game (an admin token scoped to it), each sending its game's
    events at ``rate`` a second, the games staggered evenly; open loop."""

    def __init__(self, url: str, tokens: list[str], games: list[str], rate: float) -> None:
        self.url, self.tokens, self.games, self.rate = url, tokens, games, rate
        self.n = [0] * len(games)
        self.last = [0] * len(games)
        self.devices: list[Device] = []

    async def connect(self, round_name: str) -> None:
        self.devices = [Device(self.url, t, prefix=f"{round_name}-g{i}") for i, t in enumerate(self.tokens)]
        await asyncio.gather(*(d.connect() for d in self.devices))

    async def close(self) -> None:
        await asyncio.gather(*(d.close() for d in self.devices), return_exceptions=True)

    async def _fire(self, g: int, out: Sent) -> None:
        d = self.devices[g]
        event = {**game_event(self.n[g]), "game": self.games[g], "id": d.new_id()}
        self.n[g] += 1
        t = time.time_ns()
        try:
            reply = await d.send_once(event, wait_s=30)
        except (TimeoutError, ConnectionError, OSError) as err:
            reply = {"type": "error", "code": "no_reply", "detail": f"{type(err).__name__}: {err}"}
        if reply.get("type") == "ack" and isinstance(reply.get("seq"), int):
            out.sends[key(g, reply["seq"])] = t
            out.ack_ms.append((time.time_ns() - t) / 1e6)
            self.last[g] = max(self.last[g], reply["seq"])
        else:
            out.refused.append(reply)

    async def run(self, seconds: float) -> Sent:
        out = Sent()
        loop = asyncio.get_running_loop()
        t0, step, tasks = loop.time(), 1 / (self.rate * len(self.games)), []
        for k in range(round(seconds * self.rate * len(self.games))):
            if (delay := t0 + k * step - loop.time()) > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(self._fire(k % len(self.games), out)))
        await asyncio.gather(*tasks)
        out.ack_ms.sort()
        return out


async def setup_event(svc: ServiceProcess, games: int) -> tuple[list[str], list[str]]:
    """The event, its teams named, ``games`` games on as many arenas starting now: (games, tokens)."""
    teams = [f"bench-team-{i}" for i in range(2 * games)]
    names = [f"g{i}" for i in range(games)]
    start = int(time.time() // 60 * 60 * 1000)
    tokens = []
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {svc.admin}"}) as s:
        async def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
            async with s.post(svc.http + path, json=body) as r:
                if r.status != 201:
                    raise RuntimeError(f"{path} refused: {r.status} {await r.text()}")
                doc: dict[str, Any] = await r.json()
                return doc

        await post("/api/events", {"id": "bench-event", "event": EVENT, "name": "Bench Cup", "class": "club",
                                   "handicap": 8, "teams": teams})
        admin = Device(svc.device_url, str((await post("/api/tokens", {
            "role": "admin", "device": "bench-admin", "official": "bench"}))["token"]), prefix="setup")
        await admin.connect()
        try:
            for i, t in enumerate(teams):
                reply = await admin.send_once({"type": "team.registered", "team": t,
                                               "name": f"Bench Polo {i}", "short": f"BP{i}",
                                               "colors": {"primary": "#0b3d91", "secondary": "#ffd21f"},
                                               "id": admin.new_id()}, wait_s=30)
                if reply.get("type") != "ack":
                    raise RuntimeError(f"team.registered refused: {reply}")
        finally:
            await admin.close()
        for i, g in enumerate(names):
            await post("/api/games", {
                "id": f"setup-{g}", "game": g, "event": EVENT, "handicap": 8, "arena": f"arena-{i + 1}",
                "starts_at": start, "teams": {
                    "home": {"team": teams[2 * i], "players": ["h1", "h2", "h3"], "subs": ["h4"]},
                    "away": {"team": teams[2 * i + 1], "players": ["a1", "a2", "a3"], "subs": ["a4"]}}})
            tokens.append(str((await post("/api/tokens", {"role": "admin", "device": f"bench-device-{i}",
                                                          "official": "bench", "game": g}))["token"]))
    return names, tokens


async def one_stretch(svc: ServiceProcess, devices: Devices, pages: PageLoad | None, seconds: float,
                      viewers: SpectatorWorkers) -> Stretch:
    page0 = await scrape(svc.http)  # empties the loop-stall window
    mine = [p.pid for p in [*viewers.procs, *(pages.procs if pages else [])]]
    cpu0, wcpu0 = cpu_seconds(svc.pid), sum(cpu_seconds(p.pid) for p in viewers.procs)
    own0 = time.process_time() + sum(cpu_seconds(pid) for pid in mine)
    busy0, total0 = machine_busy()
    if pages is not None:
        sent, page = await asyncio.gather(devices.run(seconds), pages.run(seconds))
    else:
        sent, page = await devices.run(seconds), None
    cpu = (cpu_seconds(svc.pid) - cpu0) / seconds
    wcpu = (sum(cpu_seconds(p.pid) for p in viewers.procs) - wcpu0) / seconds
    busy1, total1 = machine_busy()
    machine = (busy1 - busy0) / max(1, total1 - total0) * (os.cpu_count() or 1)
    own = (time.process_time() + sum(cpu_seconds(pid) for pid in mine) - own0) / seconds
    page1 = await scrape(svc.http)
    lag_p99, lag_max, _ = lag_of(page1)
    gc_ms = 1000 * (summed(page1, "arena_gc_pause_seconds_sum") - summed(page0, "arena_gc_pause_seconds_sum"))
    return Stretch(pages is not None, sent, page=page, cpu=cpu, viewer_cpu=wcpu,
                   others=max(0.0, machine - own - cpu), lag_p99_ms=lag_p99,
                   lag_max_ms=lag_max, gc_ms=gc_ms)


async def one_round(group: Processes, opts: PublicOptions, svc: ServiceProcess, devices: Devices,
                    pages: PageLoad, name: str, kind: str, order: list[bool]) -> Round:
    """A round on a fresh service: the viewers (``kind``: on the event's socket, or each on one
    game's), the service's RSS growth for them, then a stretch of events for each of ``order``
    (True: with the page load)."""
    await svc.arestart()
    if kind == "event":
        targets = [(f"{svc.watch_url}?event={EVENT}", opts.spectators)]
    else:
        n = len(devices.games)
        targets = [(svc.watch(g), opts.spectators // n + (i < opts.spectators % n))
                   for i, g in enumerate(devices.games)]
    workers = SpectatorWorkers(group, devices.games)
    try:
        rss0 = vm_rss_kib(svc.pid)
        opened, errors, first_error = await workers.start(name, targets, workers_for(opts.spectators))
        if errors or opened != opts.spectators:
            raise RuntimeError(f"{name}: only {opened} of {opts.spectators} viewers opened ({first_error})")
        await asyncio.sleep(opts.settle)
        mem = (vm_rss_kib(svc.pid) - rss0) / opened
        await devices.connect(name)
        try:
            stretches = []
            for p in order:
                stretches.append(await one_stretch(svc, devices, pages if p else None, opts.seconds,
                                                  workers))
                await workers.wait(devices.last, drain=60.0)  # no stretch inherits another's backlog
            reports = await workers.stop_at(devices.last, drain=15.0)
        finally:
            await devices.close()
    finally:
        await workers.close()
    viewers = [v for rep in reports for v in rep["viewers"]]
    joined = sorted(int(v["joined_bytes"]) for v in viewers)
    out = Round(name, kind, opened, mem, percentile(joined, 0.5) / 1024,
                sum(int(v["resets"]) for v in viewers), sum(bool(v["closed"]) for v in viewers), stretches,
                os.getloadavg()[0])
    for s in stretches:
        s.frames = frames(reports, s.sent.sends)
    return out


async def bench_public(opts: PublicOptions, nofile: int, note: str) -> dict[str, float]:
    """The whole benchmark in a temporary directory, bounded in time; every process it
    started ended on the way out. Its figures (``report.summary``)."""
    budget = 300 + opts.rounds * 2 * (3 * opts.seconds + 90 + opts.spectators / 20)
    with tempfile.TemporaryDirectory(prefix="arena-bench-public-") as d:
        async with Processes(Path(d)) as group, asyncio.timeout(budget):
            svc = group.service(group.workdir / "data", name="service")
            await svc.astart()
            games, tokens = await setup_event(svc, opts.games)
            devices = Devices(svc.device_url, tokens, games, opts.rate)
            pages = PageLoad(group, f"{svc.http}/events/{EVENT}", opts.page_rate)
            await pages.ready()
            report.start(opts, nofile, EVENT, note)
            rounds: list[Round] = []
            for k in range(1, opts.rounds + 1):
                order = [False, True] if k % 2 else [True, False]
                for kind, name, o in (("event", f"A{k}", order), ("game", f"B{k}", [False])):
                    rounds.append(await one_round(group, opts, svc, devices, pages, name, kind, o))
                    report.round_line(rounds[-1])
            await pages.close()
            await svc.astop(5.0)
            return report.summary(opts, rounds, EVENT)
