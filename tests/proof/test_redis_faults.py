"""Proof 7: on Redis, across two nodes, under a steady stream of events.

* **Redis outage.** redis-server is SIGKILLed mid-stream and comes back after a
  few seconds on its AOF (``appendfsync always``). While it is down the nodes
  answer "not stored, retry" and ack nothing; the devices' retries then land
  exactly once.
* **Node crash.** Node A is SIGKILLed mid-stream. Its devices move to node B
  and resend; its viewers resume on B from the last ``seq`` they saw.

Either way: every acked event is logged once, in each device's order, in one
gap-free ``seq``; every viewer, on either node, sees every ``seq`` once, in
order; and each node's live state hash equals a fresh replay of the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from pathlib import Path
from typing import Any

import msgspec
import websockets

from stream.tools.harness import Cluster, Device, ServiceProcess

from ..rules.script import AWAY, HOME
from .conftest import Figures, scale
from .determinism import live_equals_replay

_dec = msgspec.json.Decoder(dict[str, Any])


class ResumingViewer:
    """A scoreboard that reconnects to any node it is given and resumes from the
    last ``seq`` it saw. Counts gaps, repeats and reset snapshots."""

    def __init__(self, urls: list[str], game: str) -> None:
        self.urls, self.game = urls, game
        self.seq = 0
        self.epoch = ""
        self.gaps = self.repeats = self.resets = self.reconnects = 0
        self.task: asyncio.Task[None] | None = None
        self.moved = asyncio.Event()
        self.first_gap: tuple[int, int, int] | None = None   # (had, got, reconnects)

    async def reach(self, seq: int) -> None:
        while self.seq < seq:
            self.moved.clear()
            await self.moved.wait()

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        assert self.task is not None
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task

    async def _run(self) -> None:
        turn = 0
        while True:
            url = self.urls[turn % len(self.urls)]
            query = f"game={self.game}" + (f"&since={self.seq}&epoch={self.epoch}" if self.epoch else "")
            try:
                async with websockets.connect(f"{url}?{query}", open_timeout=5, ping_interval=None) as ws:
                    async for raw in ws:
                        self._frame(_dec.decode(raw))
            except (OSError, TimeoutError, websockets.WebSocketException):
                pass
            self.reconnects += 1
            turn += 1
            await asyncio.sleep(0.05)

    def _frame(self, m: dict[str, Any]) -> None:
        if m.get("game") != self.game:
            return
        self.moved.set()
        if m["type"] == "snapshot":
            self.epoch = m["epoch"]
            if m.get("reset"):
                self.resets += 1
            self.seq = m["seq"]  # the whole view as of seq (after a reset: starts over from it)
        elif m["type"] == "delta":
            if m["seq"] <= self.seq:
                self.repeats += 1
            elif m["seq"] > self.seq + 1:
                self.gaps += 1
                self.first_gap = self.first_gap or (self.seq, m["seq"], self.reconnects)
                self.seq = m["seq"]
            else:
                self.seq = m["seq"]


class Stream:
    """Officials on both nodes sending a steady stream (goals and whistles) with
    retries; records what was sent and what was acked, per device."""

    def __init__(self, cluster: Cluster, devices: int, rate: float) -> None:
        self.cluster, self.devices, self.rate = cluster, devices, rate
        self.sent: dict[str, list[str]] = {}
        self.acked: dict[str, list[str]] = {}
        self.times: dict[str, tuple[float, float]] = {}   # id -> (first sent, acked), monotonic
        self.stop = asyncio.Event()

    async def official(self, i: int, token: str) -> None:
        a, b = (n.device_url for n in self.cluster.nodes)
        d = Device([a, b] if i % 2 == 0 else [b, a], token, prefix=f"u{i}")
        name, rng, n = f"ump{i}", random.Random(i), 0
        self.sent[name], self.acked[name] = [], []
        while not self.stop.is_set():
            event = ({"type": "whistle", "game": "g1"} if rng.random() < 0.8 else
                     {"type": "goal", "game": "g1", "team": rng.choice(["home", "away"])})
            event["id"] = f"u{i}-{n}"
            n += 1
            self.sent[name].append(event["id"])
            first = time.monotonic()
            ack = await d.send(event, attempts=400)
            self.acked[name].append(ack["id"])
            self.times[ack["id"]] = (first, time.monotonic())
            await asyncio.sleep(rng.expovariate(self.rate / self.devices))
        await d.close()


async def _run_with_fault(tmp_path: Path, figures: Figures, fault: str) -> None:
    cluster = Cluster(tmp_path, args=["--device-rate", "1000", "--device-burst", "1000"])
    a, b = cluster.nodes
    viewers: list[ResumingViewer] = []
    try:
        await cluster.astart()
        a.post("/api/games", {"id": "s1", "game": "g1", "event": "cup", "class": "club", "handicap": 8,
                              "teams": {"home": {"team": "h", "players": HOME},
                                        "away": {"team": "a", "players": AWAY}}})
        devices = 4
        tokens = [a.post("/api/tokens", {"role": "umpire", "device": f"ump{i}", "game": "g1"})["token"]
                  for i in range(devices)]
        tk = a.post("/api/tokens", {"role": "timekeeper", "device": "tk", "game": "g1"})["token"]
        timer = Device(a.device_url, tk, prefix="tk")
        await timer.send({"type": "clock.start", "game": "g1"})
        await timer.close()
        per_node = scale(40, 250)
        viewers = [ResumingViewer([n.watch_url, m.watch_url], "g1")
                   for n, m in ((a, b), (b, a)) for _ in range(per_node)]
        for v in viewers:
            v.start()
        stream = Stream(cluster, devices, rate=scale(40, 50))
        senders = [asyncio.create_task(stream.official(i, tokens[i])) for i in range(devices)]
        await asyncio.sleep(scale(2, 10))
        t_fault = time.monotonic()
        await asyncio.to_thread(cluster.redis.kill9 if fault == "redis" else a.kill9)
        t_down = time.monotonic()
        await asyncio.sleep(scale(3, 10))
        t_up = time.monotonic()
        # the same directory: its AOF; or node A back, catching up from Redis
        await (cluster.redis if fault == "redis" else a).astart()
        down_s = time.monotonic() - t_fault
        # Acked while it was down, of events first sent after it went down: with Redis
        # down such an ack could only come from memory.
        during = sum(t_down < first and acked < t_up for first, acked in stream.times.values())
        await asyncio.sleep(scale(3, 10))
        stream.stop.set()
        async with asyncio.timeout(60):
            await asyncio.gather(*senders)
        last = sum(map(len, stream.acked.values()))
        # Every viewer, on either node, catches up to the last seq.
        final = a.get("/api/games/g1")["seq"]
        assert b.get("/api/games/g1")["seq"] == final
        final = int(final)
        t_catch = time.monotonic()
        async with asyncio.timeout(30):
            await asyncio.gather(*(v.reach(final) for v in viewers))
        caught_up_s = time.monotonic() - t_catch
        state_hash = live_equals_replay(a.http, b.http, token=a.admin)
        rows = _log_rows(a)
    finally:
        for v in viewers:
            await v.stop()
        await cluster.astop()

    by_device: dict[str, list[str]] = {}
    for r in rows:  # the game's log in seq order; a device's event id is "device/its own id"
        device, _, own = str(r["id"]).partition("/")
        if device.startswith("ump"):
            by_device.setdefault(device, []).append(own)
    lost = sum(len(set(stream.acked[d]) - set(by_device.get(d, []))) for d in stream.acked)
    doubled = sum(len(v) - len(set(v)) for v in by_device.values())
    unsent = sum(len(set(by_device.get(d, [])) - set(stream.sent[d])) for d in stream.sent)
    gaps = sum(v.gaps for v in viewers)
    repeats = sum(v.repeats for v in viewers)
    resets = sum(v.resets for v in viewers)
    reconnects = sum(v.reconnects for v in viewers)
    what = "redis-server SIGKILLed" if fault == "redis" else "node A SIGKILLed"
    figures(f"{what} for {down_s:.1f} s under {stream.rate:.0f} events/s from {devices} devices on 2 nodes, "
            f"{len(viewers)} viewers: {last:,} events acked ({during} of those sent while {fault} was down "
            f"acked before it came back), "
            f"lost {lost}, duplicates {doubled}, logged but never sent {unsent}; viewers: gaps {gaps}, "
            f"repeats {repeats}, reset snapshots {resets}, reconnects {reconnects}, all caught up "
            f"{caught_up_s:.2f} s after the last event; both nodes' hash = replay hash {state_hash[:16]}…",
            fault=fault, acked=last, acked_while_down=during, lost=lost, duplicates=doubled,
            unsent=unsent, gaps=gaps, repeats=repeats, resets=resets, viewers=len(viewers))
    assert len(rows) == final, "the log holds seq 1 to the last, nothing more"
    for d in stream.acked:
        assert by_device.get(d, []) == stream.acked[d] == stream.sent[d], d
    assert (lost, doubled, unsent, gaps, repeats) == (0, 0, 0, 0, 0), [
        v.first_gap for v in viewers if v.first_gap][:5]
    if fault == "redis":
        assert during == 0, "an event sent while Redis was down was acked: from memory"


def _log_rows(node: ServiceProcess) -> list[dict[str, Any]]:
    import urllib.request

    req = urllib.request.Request(f"{node.http}/api/games/g1/log")
    with urllib.request.urlopen(req, timeout=30) as r:
        return [msgspec.json.decode(line) for line in r.read().splitlines() if line]


async def test_redis_outage_under_load(tmp_path: Path, figures: Figures) -> None:
    await _run_with_fault(tmp_path, figures, "redis")


async def test_node_crash_under_load(tmp_path: Path, figures: Figures) -> None:
    await _run_with_fault(tmp_path, figures, "node")
