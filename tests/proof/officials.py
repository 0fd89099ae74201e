"""The game the durability proofs play: set up through the admin API of a
service subprocess, its clock started, and a token for each umpire's device."""

from __future__ import annotations

from stream.tools.harness import Device, ServiceProcess

from ..rules.script import AWAY, HOME


async def umpires_game(srv: ServiceProcess, devices: int, game: str = "g1") -> list[str]:
    """Set up ``game`` on ``srv``, start its clock, and return ``devices`` umpire tokens
    (devices ``ump0``, ``ump1``, …)."""
    srv.post("/api/games", {"id": f"setup-{game}", "game": game, "event": "cup", "class": "club",
                            "handicap": 8, "teams": {"home": {"team": "h", "players": HOME},
                                                     "away": {"team": "a", "players": AWAY}}})
    tokens = [str(srv.post("/api/tokens", {"role": "umpire", "device": f"ump{i}", "game": game})["token"])
              for i in range(devices)]
    tk = srv.post("/api/tokens", {"role": "timekeeper", "device": "tk", "game": game})["token"]
    timer = Device(srv.device_url, tk, prefix="tk")
    await timer.send({"type": "clock.start", "game": game}, attempts=200)
    await timer.close()
    return tokens
