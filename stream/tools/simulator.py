"""Plays the scripted demo game through a running service, as real devices would:
an admin device registers its teams and players (names, numbers, colours) and
sets it up, two umpires and a referee send cards, goals,
whistles and a void, a timekeeper runs the clock. Used by ``serve`` (its
built-in demo) and by ``arena-stream simulate``.

The game is joined under way (``demo.LIVE_FROM``, 6:14 on the game clock in period 1):
the events before that are sent at once, each with the time it happened (the device
clock is synced first, as a handheld's is), and the rest in real time, ``speed`` times
faster if asked (Rule 14 still counts real play time then, so a box may be released
later than the script has it).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import Any

from . import demo
from .device_client import Device, DeviceError

ROLES = ("admin", "umpire", "referee", "timekeeper")


class Simulator:
    def __init__(self, url: str, tokens: dict[str, str], *, game: str, event: str = demo.EVENT,
                 speed: float = 1.0, arena: str = "main",
                 progress: Callable[[int, int, str], None] | None = None) -> None:
        self.url = url
        self.tokens = tokens
        self.game = game
        self.event = event
        self.speed = speed
        self.arena = arena
        self.progress = progress or (lambda done, total, what: None)
        self.devices: dict[str, Device] = {}

    async def run(self) -> None:
        for role in ROLES:
            d = Device(self.url, self.tokens[role], prefix=f"{self.game}-{role}")
            await d.connect()
            self.devices[role] = d
        try:
            await self._play()
        finally:
            for d in self.devices.values():
                await d.close()

    async def _play(self) -> None:
        # The script's zero, in the past: the game is under way (demo.LIVE_FROM into it) when
        # the simulator starts, and what happened before is sent at once with its own times.
        live = time.time() * 1000
        t0 = int(live - demo.LIVE_FROM / self.speed)
        admin = self.devices["admin"]
        for body in demo.setup_events(t0, self.game, self.event):
            if body["type"] == "game.setup":
                body = {**body, "arena": self.arena}  # its own time: before the game's first events
            else:  # the tournament event and the rosters, the same in every demo game
                body = {k: v for k, v in body.items() if k != "at"}
            try:
                await admin.send(body)
            except Exception as err:  # the tournament event from an earlier demo game stands
                if "duplicate_event" not in str(err) and "already" not in str(err):
                    raise
        script = demo.script_events(0, self.game)
        start = time.monotonic() - demo.LIVE_FROM / 1000 / self.speed
        last_log_id = ""
        for n, (role, e) in enumerate(script, 1):
            wait = start + e["at"] / 1000 / self.speed - time.monotonic()
            body = {k: v for k, v in e.items() if k not in ("at", "id")}
            if e["at"] < demo.LIVE_FROM:  # before the watcher came: recorded then, sent now
                body["at"] = int(t0 + e["at"] / self.speed)
            elif wait > 0:
                await asyncio.sleep(wait)
            if body.get("type") == "void":
                body["target"] = last_log_id
            device = self.devices["timekeeper" if role == "timekeeper" else
                                  "referee" if role == "referee" else "umpire"]
            try:
                ack = await device.send(body)
                last_log_id = ack["log_id"]
                what = str(body["type"])
            except DeviceError as err:
                # Refused by the rules (at a faster speed the script's timing no longer
                # fits the play time Rule 14 counts): say so and play on.
                what = f"{body['type']} refused: {err.reply.get('code')}"
            self.progress(n, len(script), what)

def bar(done: int, total: int, what: str) -> None:
    width = 30
    filled = width * done // total
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {what:<16}")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def demo_tokens(issue: Callable[..., tuple[str, Any]], game: str, exp: int) -> dict[str, str]:
    return {
        "admin": issue(sub="demo-admin", role="admin", official="Demo committee", exp=exp)[0],
        "umpire": issue(sub=f"{game}-ump1", role="umpire", official="Demo umpire", game=game, exp=exp)[0],
        "referee": issue(sub=f"{game}-ref", role="referee", official="Demo referee", game=game, exp=exp)[0],
        "timekeeper": issue(sub=f"{game}-timer", role="timekeeper", official="Demo timer", game=game,
                            exp=exp)[0],
    }
