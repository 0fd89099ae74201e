"""The committee's view of the ledger over HTTP, the carried obligations on the
watch protocol, and the ledger surviving a restart exactly as a replay of the log."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
from aiohttp import web

from stream.app import build_app
from stream.cli import replay
from stream.config import Config
from stream.rules.game import Settings

from .conftest import Server, Viewer, free_port


async def _red_in_game_one(server: Server) -> str:
    status, _ = await server.api("POST", "/api/events", {
        "id": "ev", "event": "cup", "class": "uspa", "handicap": 8, "teams": ["g1-home", "g1-away"]})
    assert status == 201
    await server.setup_game("g1")
    tk = await server.device("timekeeper", "g1")
    ump = await server.device("umpire", "g1")
    await tk.send({"type": "clock.start", "game": "g1"})
    await ump.send({"type": "card", "game": "g1", "player": "a2", "color": "red", "conduct": "striking"})
    await ump.send({"type": "game.end", "game": "g1"})
    await tk.close()
    await ump.close()
    return "a2"


async def test_the_committee_sees_what_a_player_owes_and_where_it_applies(server: Server) -> None:
    player = await _red_in_game_one(server)
    status, doc = await server.api("GET", f"/api/players/{player}/obligations")
    assert status == 200
    (ob,) = doc["obligations"]
    assert (ob["kind"], ob["clause"], ob["status"]) == ("suspension", "R6", "pending")
    assert ob["origin_game"] == "g1"
    assert ob["origin_class"] == "uspa" and ob["handicap"] == 8

    # Before set-up: the lineup with a2 starting is refused, citing the clause.
    away = {"team": "other", "players": ["x1", "x2", "x3"]}
    g2: dict[str, Any] = {"game": "g2", "event": "cup", "handicap": 8, "teams": {
        "home": {"team": "g1-away", "players": ["a1", "a2", "a3"], "subs": ["a4"]}, "away": away}}
    status, doc = await server.api("POST", "/api/games/preview", g2)
    assert status == 409 and doc["code"] == "suspended_player" and doc["clause"] == "R6"
    g2["teams"] = {"home": {"team": "g1-away", "players": ["a1", "a4", "a3"], "subs": ["a2"]},
                   "away": away}
    status, doc = await server.api("POST", "/api/games/preview", g2)
    assert status == 200 and [o["player"] for o in doc["applies"]] == ["a2"]
    status, serving = await server.api("GET", "/api/obligations?status=serving")
    assert serving == []  # a preview changes nothing

    viewer = await Viewer.open(server.watch_url, arena="main")
    status, ack = await server.api("POST", "/api/games", {**g2, "id": "g2-setup", "arena": "main"})
    assert status == 201
    assert "obligation.applied" in [n["type"] for n in ack["notices"]]
    snap = await viewer.next("snapshot")
    assert snap["game"] == "g2"
    assert [c["player"] for c in snap["view"]["carried"]] == ["a2"]
    a2 = next(p for p in snap["view"]["players"] if p["id"] == "a2")
    assert a2["suspended"] is True
    await viewer.close()

    status, doc = await server.api("GET", "/api/obligations?status=serving")
    assert [o["applied_in"] for o in doc] == ["g2"]
    tk = await server.device("timekeeper", "g2")
    end = await tk.send({"type": "game.end", "game": "g2"})
    assert [n["type"] for n in end["notices"]][-1] == "obligation.served"
    status, doc = await server.api("GET", "/api/obligations?status=served")
    assert [(o["player"], o["applied_in"]) for o in doc] == [("a2", "g2")]
    await tk.close()


async def test_committee_increase_is_logged_with_who_and_why(server: Server) -> None:
    await _red_in_game_one(server)
    status, ack = await server.api("POST", "/api/committee/increase", {
        "player": "a2", "origin_game": "g1", "games": 1, "by": "Host Tournament Committee",
        "reason": "struck an umpire's mount"})
    assert status == 201, ack
    status, doc = await server.api("GET", "/api/players/a2/obligations")
    added = [o for o in doc["obligations"] if o["by"]]
    assert [(o["by"], o["reason"], o["kind"]) for o in added] == [
        ("Host Tournament Committee", "struck an umpire's mount", "suspension")]
    rows = server.log_rows()
    assert json.loads(rows[-1][4])["type"] == "committee.increase"  # in the audit trail: the log
    umpire = server.token("umpire", "u", game="g1")
    status, _ = await server.api("POST", "/api/committee/increase", {
        "player": "a2", "origin_game": "g1", "by": "x", "reason": "y"}, token=umpire)
    assert status == 403


async def test_after_a_restart_the_ledger_equals_a_replay_of_the_log(tmp_path: Path) -> None:
    port = free_port()
    config = Config(data_dir=tmp_path, port=port, demo=False)

    async def run() -> tuple[web.AppRunner, Server]:
        app = build_app(config)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        return runner, Server(app, port, tmp_path)

    runner, server = await run()
    await _red_in_game_one(server)
    before = server.svc.hub.engine.state()
    await runner.cleanup()

    runner, server = await run()
    try:
        after = server.svc.hub.engine.state()
        assert after.ledger == before.ledger and after.ledger
        async with aiohttp.ClientSession() as s, s.get(
                f"{server.http}/api/log", headers={"Authorization": f"Bearer {server.admin}"}) as r:
            log = await r.read()
        out = io.BytesIO()
        assert replay(io.BytesIO(log), out, state=True, settings=Settings()) == 0
        replayed = json.loads(out.getvalue())
        assert replayed["ledger"] == json.loads(msgspec.json.encode(after.ledger))
    finally:
        await runner.cleanup()
