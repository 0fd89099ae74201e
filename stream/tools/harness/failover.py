"""Faults across nodes, seen from outside: officials' devices that move to another node
and resend, scoreboards that resume on whichever node is up, and the checks made after
the faults (the log against what was acked; each node's live state against a replay).

Everything here speaks only the documented protocols (docs/protocol.md): the device
socket, the watch socket with ``since``/``epoch``, and the HTTP API.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import random
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import websockets

from ...errors import MalformedEvent
from ...rules import codec
from ...rules.engine import Engine
from ..device_client import Device, DeviceError

__all__ = ["LogTally", "Officials", "ResumingViewer", "game_log", "node_hashes", "replay_hash", "tally"]

_dec = msgspec.json.Decoder(dict[str, Any])


class ResumingViewer:
    """A scoreboard that reconnects to any node it is given and resumes from the
    last ``seq`` it saw. Counts gaps, repeats and reset snapshots, and heartbeats that
    vouch for a ``seq`` of its game it has not been sent on that connection although it
    follows the game there (docs/protocol-viewer.md: such a viewer would resume)."""

    def __init__(self, urls: list[str], game: str) -> None:
        self.urls, self.game = urls, game
        self.seq = 0
        self.epoch = ""
        self.gaps = self.repeats = self.resets = self.reconnects = 0
        self.heartbeats = self.ahead = 0
        self.following = False     # this connection has sent the game's snapshot or catch-up
        self.task: asyncio.Task[None] | None = None
        self.moved = asyncio.Event()
        self.first_gap: tuple[int, int, int] | None = None   # (had, got, reconnects)
        self.ws: Any = None        # the socket it follows the game on, while connected
        self.errors: list[str] = []  # the codes of the error frames it was sent (none expected)

    async def hop(self) -> None:
        """Leave the node it is on (close the socket): it resumes on the next one."""
        ws = self.ws
        if ws is not None:
            await ws.close()

    async def reach(self, seq: int) -> None:
        """Wait until it has been shown ``seq``; raises what ended it if it stopped first."""
        while self.seq < seq:
            if self.task is not None and self.task.done():
                raise RuntimeError(f"the viewer stopped at seq {self.seq}") from (
                    None if self.task.cancelled() else self.task.exception())
            self.moved.clear()
            await self.moved.wait()

    def where(self) -> str:
        """Where it stands, for a failure's message."""
        node = self.urls[self.reconnects % len(self.urls)] if self.urls else "-"
        return (f"seq {self.seq} on {node} (connected {self.ws is not None}, reconnects "
                f"{self.reconnects}, resets {self.resets}, gaps {self.gaps}, errors {self.errors})")

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
                    self.following, self.ws = False, ws
                    async for raw in ws:
                        self._frame(_dec.decode(raw))
            except (OSError, TimeoutError, websockets.WebSocketException):
                pass
            except BaseException:
                self.moved.set()  # ``reach`` sees the task ended, and raises what ended it
                raise
            finally:
                self.ws = None
            self.reconnects += 1
            turn += 1
            await asyncio.sleep(0.05)

    def _frame(self, m: dict[str, Any]) -> None:
        if m["type"] == "error":
            self.errors.append(m["code"])
            self.moved.set()
            return
        if m["type"] == "heartbeat":
            self.heartbeats += 1
            if self.following and m["seqs"].get(self.game, 0) > self.seq:
                self.ahead += 1
            return
        if m.get("game") != self.game:
            return
        if m["type"] in ("snapshot", "delta", "presence"):
            self.following = True  # (a resume's catch-up, or nothing missed: its presence frame)
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


class Officials:
    """Officials' devices sending a steady stream (80 % whistles, 20 % goals) to one game,
    about ``rate`` events a second in all, until ``stop`` is set. Device ``i`` lists the
    nodes' device URLs starting from node ``i`` (so the nodes race for ``seq``), moves to
    the next when its node can't be reached, and resends each event until it is acked
    (the same id: never stored twice). With ``home`` it goes back to its first node now
    and then, so that the race resumes after a restart. Per device name (the token's):
    the ids ``sent`` and ``acked``, in order; ``times``: id -> (first sent, acked),
    ``time.monotonic()``; ``acked_on``: device URL -> events acked through it."""

    def __init__(self, urls: Sequence[str], tokens: dict[str, str], rate: float, game: str, *,
                 seed: int = 0, home: bool = False, attempts: int = 400, corrections: bool = False) -> None:
        self.urls, self.tokens, self.rate, self.game = list(urls), tokens, rate, game
        self.seed, self.home, self.attempts = seed, home, attempts
        # With ``corrections``, as on a tournament day: now and then a void of one of the
        # device's own earlier whistles, a card to a team official, the conduct of that card
        # named later (``card.amended``). Counted by type in ``kinds``.
        self.corrections = corrections
        self.kinds: dict[str, int] = {}
        self.sent: dict[str, list[str]] = {}
        self.acked: dict[str, list[str]] = {}
        self.times: dict[str, tuple[float, float]] = {}
        self.acked_on: dict[str, int] = dict.fromkeys(self.urls, 0)
        self.stop = asyncio.Event()
        self.tasks: list[asyncio.Task[None]] = []
        self.started = 0.0

    def start(self) -> None:
        self.started = time.monotonic()
        self.tasks = [asyncio.create_task(self.official(i, name, token), name=f"official-{name}")
                      for i, (name, token) in enumerate(self.tokens.items())]

    async def finish(self, within: float = 60.0) -> None:
        """Stop sending, and wait for every event in flight to be acked (TimeoutError after
        ``within`` seconds, naming the devices still waiting)."""
        self.stop.set()
        done, waiting = await asyncio.wait(self.tasks, timeout=within)
        for task in done:
            task.result()  # a device that gave up
        if waiting:
            names = sorted(task.get_name().removeprefix("official-") for task in waiting)
            raise TimeoutError(f"devices {names} still waiting for an ack {within:g} s after the stream "
                               "stopped")

    async def official(self, i: int, name: str, token: str) -> None:
        k = i % len(self.urls)
        d = Device(self.urls[k:] + self.urls[:k], token, prefix=f"u{i}")
        rng, n = random.Random(self.seed * 1009 + i), 0
        self.sent[name], self.acked[name] = [], []
        whistles: list[str] = []      # log ids of this device's whistles not yet voided
        cards: list[str] = []         # ... and of its cards whose conduct is not yet named
        try:
            while not self.stop.is_set():
                event = self._next(rng, whistles, cards, n)
                event["id"] = f"u{i}-{n}"
                n += 1
                self.sent[name].append(event["id"])
                first = time.monotonic()
                try:
                    ack = await d.send(event, attempts=self.attempts)
                except DeviceError as err:  # a final answer: say which device, event and node
                    where = (f"device {name}, event {event['id']} ({event['type']}), through {d.url}, "
                             f"{first - self.started:.1f} s in")
                    said = f"{err.reply.get('detail')} ({where})"
                    raise DeviceError({**err.reply, "detail": said}) from err
                self.kinds[event["type"]] = self.kinds.get(event["type"], 0) + 1
                if event["type"] == "whistle":
                    whistles.append(ack["log_id"])
                elif event["type"] == "card":
                    cards.append(ack["log_id"])
                self.acked[name].append(ack["id"])
                self.times[ack["id"]] = (first, time.monotonic())
                self.acked_on[d.url] += 1
                if self.home and d.url != d.urls[0] and rng.random() < 0.1:
                    await d.move_to(d.urls[0])
                await asyncio.sleep(rng.expovariate(self.rate / len(self.tokens)))
        finally:
            await d.close()


    def _next(self, rng: random.Random, whistles: list[str], cards: list[str], n: int) -> dict[str, Any]:
        """The device's ``n``-th event. With ``corrections``, its 4th is a card to a team official
        and its 7th names that card's conduct, whatever the draws (so every run has both);
        after that, as drawn."""
        draw = rng.random() if self.corrections else 1.0
        if self.corrections and n in (3, 6):
            draw = 0.08 if n == 3 else 0.10
        if draw < 0.06 and whistles:
            return {"type": "void", "target": whistles.pop(rng.randrange(len(whistles)))}
        if draw < 0.09:
            return {"type": "card", "game": self.game, "color": "yellow",
                    "official": {"team": rng.choice(["home", "away"]), "role": "coach"}}
        if draw < 0.12 and cards:
            return {"type": "card.amended", "game": self.game, "target": cards.pop(0), "conduct": "arguing"}
        return ({"type": "whistle", "game": self.game} if rng.random() < 0.8 else
                {"type": "goal", "game": self.game, "team": rng.choice(["home", "away"])})


def game_log(http: str, game: str) -> list[dict[str, Any]]:
    """``GET /api/games/GAME/log``: the game's records in ``seq`` order."""
    with urllib.request.urlopen(f"{http}/api/games/{game}/log", timeout=30) as r:
        return [_dec.decode(line) for line in r.read().splitlines() if line]


@dataclass
class LogTally:
    """A log against what the officials sent and were acked."""

    logged: int         # the officials' records in the log
    lost: int           # acked, and not in the log
    doubled: int        # in the log more than once
    unsent: int         # in the log, and never sent
    order_kept: bool    # each device's records in the log are its acked ids, in order

    @property
    def ok(self) -> bool:
        return (self.lost, self.doubled, self.unsent) == (0, 0, 0) and self.order_kept


def tally(rows: list[dict[str, Any]], sent: dict[str, list[str]], acked: dict[str, list[str]]) -> LogTally:
    """Compare ``rows`` (a game's log; a device's record id is "device/its own id") with
    what each device sent and had acked (``Officials.sent``, ``acked``)."""
    by_device: dict[str, list[str]] = {}
    for r in rows:
        device, _, own = str(r["id"]).partition("/")
        if device in sent:
            by_device.setdefault(device, []).append(own)
    return LogTally(
        logged=sum(map(len, by_device.values())),
        lost=sum(len(set(acked[d]) - set(by_device.get(d, []))) for d in acked),
        doubled=sum(len(v) - len(set(v)) for v in by_device.values()),
        unsent=sum(len(set(by_device.get(d, [])) - set(sent[d])) for d in sent),
        order_kept=all(by_device.get(d, []) == acked[d] for d in acked))


def replay_hash(log: bytes) -> str:
    """The state hash of a fresh fold of ``log`` (JSON Lines), as ``arena-stream replay --hash``."""
    engine = Engine()
    for lineno, item in codec.read_log(io.BytesIO(log)):
        if isinstance(item, MalformedEvent):
            raise ValueError(f"line {lineno} of the log is not an event: {item}")
        engine.feed(item)
    return engine.state_hash()


def _get(url: str, token: str) -> bytes:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        body: bytes = r.read()
        return body


def node_hashes(*http_bases: str, token: str) -> list[tuple[str, str]]:
    """Each node's (live state hash, hash of a fresh replay of the log it exports):
    ``GET /api/state`` against ``GET /api/log``."""
    return [(str(json.loads(_get(f"{base}/api/state", token))["sha256"]),
             replay_hash(_get(f"{base}/api/log", token))) for base in http_bases]
