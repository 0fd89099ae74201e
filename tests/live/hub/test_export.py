"""A game's exported log replays to the same state the service shows."""

from __future__ import annotations

import io
import json

import aiohttp

from stream.cli import replay

from ..conftest import Server


async def test_export_replays_to_the_served_state(server: Server) -> None:
    await server.setup_game()
    tk = await server.device("timekeeper")
    ump = await server.device("umpire")
    await tk.send({"type": "clock.start", "game": "g1"})
    await ump.send({"type": "whistle", "game": "g1"})
    card = await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow", "count": 2,
                           "conduct": "rough_play", "penalty": "Penalty 2"})
    await ump.send({"type": "goal", "game": "g1", "team": "away", "points": 2})
    await ump.send({"type": "void", "game": "g1", "target": card["log_id"]})
    await ump.send({"type": "card", "game": "g1", "player": "a3", "color": "red", "conduct": "striking"})
    await tk.send({"type": "clock.start", "game": "g1"})

    async with aiohttp.ClientSession() as s, s.get(f"{server.http}/api/games/g1/log") as r:
        assert r.status == 200
        exported = await r.read()
    lines = [json.loads(x) for x in exported.splitlines()]
    assert lines[0]["type"] == "game.setup" and len(lines) == 8
    assert all(x["id"].startswith(("admin/", "timekeeper-", "umpire-")) for x in lines)

    out = io.BytesIO()
    assert replay(io.BytesIO(exported), out, state=True) == 0
    replayed = json.loads(out.getvalue())["games"]["g1"]
    _, served = await server.api("GET", "/api/games/g1")
    assert replayed == served["view"]
    assert replayed["score"] == {"home": 0, "away": 2}
    a3 = next(p for p in replayed["players"] if p["id"] == "a3")
    assert a3["sent_off"] is True
    await tk.close()
    await ump.close()
