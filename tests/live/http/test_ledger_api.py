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

from stream.cli import replay
from stream.live.app import build_app
from stream.live.ops.config import Config
from stream.live.wire import api_types
from stream.rules.ledger import Obligation

from ..conftest import Server, Viewer, free_port, view_after


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

    # Before set-up: a preview shows what the game would take. The team sheet is never
    # refused: a2 listed to start, or on the bench, serves his suspension all the same.
    away = {"team": "other", "players": ["x1", "x2", "x3"]}
    g2: dict[str, Any] = {"game": "g2", "event": "cup", "handicap": 8, "teams": {
        "home": {"team": "g1-away", "players": ["a1", "a4", "a3"], "subs": ["a2"]}, "away": away}}
    status, doc = await server.api("POST", "/api/games/preview", g2)
    assert status == 200 and [o["player"] for o in doc["applies"]] == ["a2"]
    g2["teams"] = {"home": {"team": "g1-away", "players": ["a1", "a2", "a3"], "subs": ["a4"]},
                   "away": away}
    status, doc = await server.api("POST", "/api/games/preview", g2)
    assert status == 200 and [o["player"] for o in doc["applies"]] == ["a2"]
    status, serving = await server.api("GET", "/api/obligations?status=serving")
    assert serving == []  # a preview changes nothing

    # Set up with a2 listed to start: taken, with an alert that he may not play (R6).
    viewer = await Viewer.open(server.watch_url, arena="main")
    status, ack = await server.api("POST", "/api/games", {**g2, "id": "g2-setup", "arena": "main"})
    assert status == 201
    alerts = [n for n in ack["notices"] if n["type"] == "alert"]
    assert [(a["code"], a["player"], a["origin_game"], a["clause"]) for a in alerts] == [
        ("suspended_in_lineup", "a2", "g1", "R6")]
    assert alerts[0]["text"]["en"].endswith("(Rule 14 · Red card)")
    snap = await viewer.next("snapshot")
    assert snap["game"] == "g2"
    assert snap["view"]["carried"] == []  # the game takes its obligations when it begins

    # The game begins: it takes the suspension; a2's team plays short until a substitute comes on.
    tk = await server.device("timekeeper", "g2")
    start = await tk.send({"type": "clock.start", "game": "g2"})
    assert [n["type"] for n in start["notices"]][:2] == ["obligation.applied", "alert"]
    frames = await viewer.until_seq("g2", 2)
    view = view_after([snap, *frames])
    assert [c["player"] for c in view["carried"]] == ["a2"]
    a2 = next(p for p in view["players"] if p["id"] == "a2")
    assert a2["suspended"] is True and a2["on_field"] is False
    assert view["teams"]["home"]["short"] == [{"player": "a2", "reason": "suspended"}]
    await viewer.close()

    status, doc = await server.api("GET", "/api/obligations?status=serving")
    assert [o["applied_in"] for o in doc] == ["g2"]
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
        assert replay(io.BytesIO(log), out, state=True) == 0
        replayed = json.loads(out.getvalue())
        assert replayed["ledger"] == json.loads(msgspec.json.encode(after.ledger))
    finally:
        await runner.cleanup()


async def test_committee_rescind_withdraws_a_pending_obligation(server: Server) -> None:
    await _red_in_game_one(server)
    status, doc = await server.api("GET", "/api/players/a2/obligations")
    (ob,) = doc["obligations"]
    body = {"id": "rescind-1", "obligation": ob["id"], "by": "Host Tournament Committee",
            "reason": "the red was shown to the wrong player"}
    status, ack = await server.api("POST", "/api/committee/rescind", body)
    assert status == 201, ack
    assert (ack["type"], ack["log_id"], ack["game"], ack["seq"], ack["duplicate"]) == (
        "ack", "admin/rescind-1", None, None, False)
    (withdrawn,) = ack["notices"]
    assert withdrawn["type"] == "obligation.withdrawn"
    assert (withdrawn["obligation"], withdrawn["player"], withdrawn["kind"], withdrawn["origin_game"]) == (
        ob["id"], "a2", "suspension", "g1")
    assert withdrawn["cause"] == "admin/rescind-1"
    assert withdrawn["text"]["en"].startswith("a2: the suspension")
    status, doc = await server.api("GET", "/api/players/a2/obligations")
    assert [(o["id"], o["status"]) for o in doc["obligations"]] == [(ob["id"], "rescinded")]
    logged = json.loads(server.log_rows()[-1][4])  # in the audit trail: the log, with who and why
    assert (logged["type"], logged["obligation"], logged["by"], logged["reason"]) == (
        "committee.rescind", ob["id"], body["by"], body["reason"])

    # a retry is the same event; rescinding what is no longer owed is refused, citing the clause
    status, again = await server.api("POST", "/api/committee/rescind", body)
    assert status == 200 and again["duplicate"] is True and again["notices"] == []
    status, refused = await server.api("POST", "/api/committee/rescind", {**body, "id": "rescind-2"})
    assert status == 409 and (refused["code"], refused["clause"]) == ("unknown_obligation", "R16")
    umpire = server.token("umpire", "u", game="g1")
    status, _ = await server.api("POST", "/api/committee/rescind", {**body, "id": "rescind-3"}, token=umpire)
    assert status == 403
    assert json.loads(server.log_rows()[-1][4])["id"] == "admin/rescind-1"   # nothing more logged


async def test_committee_decrease_lowers_the_play_time_owed(server: Server) -> None:
    player = await _red_in_game_one(server)
    ump = await server.device("umpire", "g1")
    await ump.send({"type": "postgame.card", "game": "g1", "player": "h1", "level": "2y"})
    await ump.close()
    status, doc = await server.api("GET", "/api/players/h1/obligations")
    (sit_out,) = doc["obligations"]
    assert (sit_out["kind"], sit_out["owed_ms"]) == ("sit_out", 120_000)
    body = {"obligation": sit_out["id"], "owed_ms": 60_000, "by": "Host Tournament Committee",
            "reason": "mitigating circumstances"}
    status, ack = await server.api("POST", "/api/committee/decrease", body)
    assert status == 201, ack
    assert [(n["type"], n["obligation"], n["owed_ms"]) for n in ack["notices"]] == [
        ("obligation.updated", sit_out["id"], 60_000)]
    status, doc = await server.api("GET", "/api/players/h1/obligations")
    assert doc["obligations"][0]["owed_ms"] == 60_000
    status, refused = await server.api("POST", "/api/committee/decrease", body)   # not less than owed
    assert status == 409 and refused["code"] == "not_a_decrease"
    status, doc = await server.api("GET", f"/api/players/{player}/obligations")   # a whole game out
    status, refused = await server.api("POST", "/api/committee/decrease",
                                       {**body, "obligation": doc["obligations"][0]["id"]})
    assert status == 409 and refused["code"] == "not_decreasable"


async def test_eliminating_a_team_is_admin_only_and_frees_what_its_players_owe(server: Server) -> None:
    await _red_in_game_one(server)   # event "cup": g1-home and g1-away; a2 (g1-away) owes a suspension
    status, doc = await server.api("GET", "/api/players/a2/obligations")
    assert doc["obligations"][0]["any_team"] is False
    path = "/api/events/cup/eliminate"

    # not the admin: refused, and nothing logged
    rows = len(server.log_rows())
    for token in (server.token("umpire", "u", game="g1"), server.token("admin", "adm-g1", game="g1")):
        status, reply = await server.api("POST", path, {"team": "g1-away"}, token=token)
        assert status == 403, reply
    async with aiohttp.ClientSession() as s, s.post(server.http + path, json={"team": "g1-away"}) as r:
        assert r.status == 401
    assert len(server.log_rows()) == rows

    status, ack = await server.api("POST", path, {"team": "g1-away"})
    assert status == 201, ack
    assert ack["log_id"] == "admin/eliminate-cup-g1-away" and ack["game"] is None
    # R15: the team is in no uncompleted event any more: a2 serves it with any team
    (updated,) = ack["notices"]
    assert (updated["type"], updated["clause"], updated["player"], updated["any_team"]) == (
        "obligation.updated", "R15", "a2", True)
    status, doc = await server.api("GET", "/api/players/a2/obligations")
    assert doc["obligations"][0]["any_team"] is True
    logged = json.loads(server.log_rows()[-1][4])
    assert (logged["type"], logged["event"], logged["team"]) == ("team.eliminated", "cup", "g1-away")

    # the same call again is the same event; the team can't go out twice; nor a team not entered
    status, again = await server.api("POST", path, {"team": "g1-away"})
    assert status == 200 and again["duplicate"] is True
    status, refused = await server.api("POST", path, {"id": "out-again", "team": "g1-away"})
    assert status == 409 and (refused["code"], refused["clause"]) == ("already_eliminated", "R15")
    status, refused = await server.api("POST", path, {"team": "nobody"})
    assert status == 409 and refused["code"] == "unknown_team"
    status, refused = await server.api("POST", "/api/events/nope/eliminate", {"team": "g1-away"})
    assert status == 409 and refused["code"] == "unknown_event"
    status, refused = await server.api("POST", path, {})
    assert status == 400 and refused["code"] == "invalid_field"


async def test_every_json_answer_is_its_declared_shape_byte_for_byte(server: Server) -> None:
    """Each route's JSON body decodes as its shape in ``api_types`` (or a list of them), and that
    shape encodes back to the very same bytes: no field more, none less, none reordered."""
    await _red_in_game_one(server)
    g2 = {"game": "g2", "event": "cup", "handicap": 8, "teams": {
        "home": {"team": "g1-away", "players": ["a1", "a2", "a3"]},
        "away": {"team": "other", "players": ["x1", "x2", "x3"]}}}
    arena_admin = server.token("admin", "arena-admin", arena="elsewhere")
    cases: list[tuple[str, str, Any, Any, int, str | None]] = [
        ("GET", "/healthz", None, api_types.Health, 200, None),
        ("GET", "/readyz", None, api_types.Ready, 200, None),
        ("GET", "/api/games", None, list[api_types.GameSummary], 200, None),
        ("GET", "/api/games/g1", None, api_types.GameDocument, 200, None),
        ("GET", "/api/games/nope", None, api_types.Problem, 404, None),
        ("GET", "/api/state", None, api_types.StateDigest, 200, None),
        ("GET", "/api/players/a2/obligations", None, api_types.PlayerObligations, 200, None),
        ("GET", "/api/obligations?status=pending", None, list[Obligation], 200, None),
        ("GET", "/api/events/cup/decisions", None, list[api_types.CommitteeDecision], 200, None),
        ("POST", "/api/games/preview", g2, api_types.GamePreview, 200, None),
        ("POST", "/api/games/preview", {**g2, "game": "g1"}, api_types.Problem, 409, None),
        ("POST", "/api/games/preview", {"game": 5}, api_types.Problem, 400, None),
        ("POST", "/api/tokens", {"role": "umpire", "device": "d1", "game": "g1"}, api_types.TokenIssued,
         201, None),
        ("POST", "/api/tokens", {"role": "umpire", "device": "d1", "game": "g1"}, api_types.Problem, 403,
         arena_admin),
        ("POST", "/api/tokens/revoke", {"jti": "nobody"}, api_types.Revoked, 200, None),
    ]
    async with aiohttp.ClientSession() as s:
        for method, path, body, shape, status, token in cases:
            headers = {"Authorization": f"Bearer {token or server.admin}"}
            async with s.request(method, server.http + path, json=body, headers=headers) as r:
                raw = await r.read()
                assert (r.status, r.content_type) == (status, "application/json"), (path, raw)
            assert msgspec.json.encode(msgspec.json.decode(raw, type=shape)) == raw, (path, raw)
    # a preview's body that is no game set-up: `clause` is null; any other refusal has none
    status, doc = await server.api("POST", "/api/games/preview", {"game": 5})
    assert status == 400 and doc["clause"] is None
    status, doc = await server.api("GET", "/api/games/nope")
    assert status == 404 and "clause" not in doc
    status, doc = await server.api("POST", "/api/tokens/revoke", {"jti": "nobody"})
    assert doc == {"revoked": "nobody", "sockets_closed": 0}
