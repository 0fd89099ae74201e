"""Rosters end to end, on a real service on loopback with real clients: the ``roster``
frame on /ws/watch (join, arena, resume, another node's registration), the teams and
players routes, logos, and the CSV import."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
from multidict import CIMultiDict

from ..conftest import RunningServer, Server, Viewer

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(200))
GIF = b"GIF89a" + bytes(64)

AGUADA = {"team": "g1-home", "name": "La Aguada", "short": "AGU",
          "colors": {"primary": "#1f4e9c", "secondary": "#ffffff"}}


async def raw(server: Server, method: str, path: str, *, data: bytes | str = b"",
              headers: dict[str, str] | None = None, token: str | None = "admin",
              ) -> tuple[int, CIMultiDict[str], bytes]:
    h = dict(headers or {})
    if token is not None:
        h["Authorization"] = f"Bearer {server.admin if token == 'admin' else token}"
    async with aiohttp.ClientSession() as s, s.request(method, server.http + path, data=data,
                                                       headers=h) as r:
        return r.status, CIMultiDict(r.headers), await r.read()


async def frames_until(viewer: Viewer, kind: str, timeout: float = 5.0) -> list[dict[str, Any]]:
    """Every frame up to and including the next one of ``kind`` (heartbeats aside)."""
    out: list[dict[str, Any]] = []
    async with asyncio.timeout(timeout):
        while True:
            f = await _next_any(viewer)
            if f["type"] != "heartbeat":
                out.append(f)
            if f["type"] == kind:
                return out


async def _next_any(viewer: Viewer) -> dict[str, Any]:
    msg: dict[str, Any] = msgspec.json.decode(await viewer.ws.recv())
    viewer.frames.append(msg)
    return msg


async def quiet_for(viewer: Viewer, seconds: float) -> list[dict[str, Any]]:
    """What the viewer gets in ``seconds`` (heartbeats aside)."""
    out: list[dict[str, Any]] = []
    try:
        async with asyncio.timeout(seconds):
            while True:
                f = await _next_any(viewer)
                if f["type"] != "heartbeat":
                    out.append(f)
    except TimeoutError:
        pass
    return out


# ------------------------------------------------------------------ the roster frame


async def test_a_registration_reaches_a_watcher_as_a_roster_frame(server: Server) -> None:
    await server.setup_game()
    viewer = await Viewer.open(server.watch_url, game="g1")
    first = await frames_until(viewer, "presence")
    assert [f["type"] for f in first] == ["snapshot", "roster", "presence"]
    assert first[1] == {"type": "roster", "game": "g1", "home": None, "away": None, "players": {},
                        "event_name": None, "kits": {}, "schedule": None}

    status, ack = await server.api("POST", "/api/teams", {**AGUADA, "id": "reg-aguada"})
    assert status == 201 and ack["log_id"] == "admin/reg-aguada" and ack["game"] is None
    roster = await viewer.next("roster")
    assert roster["home"]["name"] == "La Aguada" and roster["home"]["revision"] == 1
    assert roster["home"]["cause"] == "admin/reg-aguada" and roster["away"] is None

    # A player of another game changes nothing here: no frame; one of this game's does.
    status, _ = await server.api("POST", "/api/players", {"player": "zz", "name": "Nadie"})
    assert status == 201
    assert await quiet_for(viewer, 0.3) == []
    status, _ = await server.api("POST", "/api/players", {"player": "h2", "name": "Martín Ortega",
                                                           "number": 2, "handicap": 5, "team": "g1-home"})
    assert status == 201
    roster = await viewer.next("roster")
    assert set(roster["players"]) == {"h2"}
    assert (roster["players"]["h2"]["name"], roster["players"]["h2"]["number"]) == ("Martín Ortega", 2)
    assert roster["home"]["name"] == "La Aguada"  # the whole document, every time

    # The HTTP documents hold the same roster.
    _, doc = await server.api("GET", "/api/games/g1")
    assert doc["roster"] == {k: v for k, v in roster.items() if k != "type"}
    _, games = await server.api("GET", "/api/games")
    assert games[0]["roster"]["players"]["h2"]["name"] == "Martín Ortega"
    await viewer.close()


async def test_an_event_s_name_reaches_its_games_displays_and_its_listing(server: Server) -> None:
    # A Club game of an event not set up yet: its displays show the event's id until the
    # committee sets the event up with a name, and then its roster names it at once.
    await server.setup_game()
    viewer = await Viewer.open(server.watch_url, game="g1")
    first = await frames_until(viewer, "roster")
    assert first[-1]["event_name"] is None
    status, ack = await server.api("POST", "/api/events", {
        "id": "setup-cup", "event": "cup", "name": "Copa de Otoño", "class": "club", "handicap": 8,
        "teams": ["g1-home", "g1-away"]})
    assert status == 201, ack
    roster = await viewer.next("roster")
    assert roster["event_name"] == "Copa de Otoño" and roster["game"] == "g1"
    _, events = await server.api("GET", "/api/events")
    assert [(e["id"], e["name"]) for e in events] == [("cup", "Copa de Otoño")]
    # A game set up later in the named event: its first roster names it; another event's
    # game does not.
    await server.setup_game("g2")
    await server.setup_game("g3", event="other")
    _, doc = await server.api("GET", "/api/games/g2")
    assert doc["roster"]["event_name"] == "Copa de Otoño"
    _, doc = await server.api("GET", "/api/games/g3")
    assert doc["roster"]["event_name"] is None
    # The game report names the event by its name, its id beside it.
    status, _, html = await raw(server, "GET", "/games/g1/report")
    assert status == 200 and "Copa de Otoño (cup)" in html.decode()
    # A name is display text: an empty one is refused, by field, with nothing set up.
    status, err = await server.api("POST", "/api/events", {
        "event": "blank", "name": " ", "class": "club", "handicap": 8, "teams": []})
    assert status == 400 and err["code"] == "invalid_field" and "$.name" in err["detail"], err
    assert not server.svc.hub.engine.has_event("blank")
    await viewer.close()


async def test_a_kit_chosen_at_the_set_up_reaches_every_display_of_that_game_only(server: Server) -> None:
    # Two teams registered in the same red: the game's set-up gives the away team a kit.
    for team in ("g1-home", "g1-away"):
        await server.api("POST", "/api/teams", {**AGUADA, "team": team, "short": team[-4:].replace("-", ""),
                                                "colors": {"primary": "#c8102e", "secondary": "#ffffff"}})
    kit = {"primary": "#ffffff", "secondary": "#c8102e"}
    # A kit is colours like a registration's: a bad one is refused by its field, nothing set up.
    bad = {"home": {"team": "g1-home", "players": ["h1", "h2", "h3"]},
           "away": {"team": "g1-away", "players": ["a1", "a2", "a3"], "colors": {"primary": "white",
                                                                                "secondary": "#000000"}}}
    status, _ = await server.api("POST", "/api/games", {"game": "g1", "event": "cup", "class": "club",
                                                        "handicap": 8, "teams": bad})
    assert status == 400 and not server.svc.hub.engine.has_game("g1")
    await server.setup_game(teams={"home": {"team": "g1-home", "players": ["h1", "h2", "h3"]},
                                   "away": {"team": "g1-away", "players": ["a1", "a2", "a3"], "colors": kit}})
    await server.setup_game("g2", teams={"home": {"team": "g1-home", "players": ["h1", "h2", "h3"]},
                                         "away": {"team": "g1-away", "players": ["a1", "a2", "a3"]}})
    viewer = await Viewer.open(server.watch_url, game="g1")
    roster = (await frames_until(viewer, "roster"))[-1]
    assert roster["kits"] == {"away": kit}
    assert roster["away"]["colors"]["primary"] == "#c8102e"   # the registration itself is unchanged
    _, doc = await server.api("GET", "/api/games/g2")
    assert doc["roster"]["kits"] == {}                        # another game of the same teams: their own
    # A later registration of the team keeps the game's kit.
    await server.api("POST", "/api/teams", {**AGUADA, "team": "g1-away", "short": "AWAY",
                                            "colors": {"primary": "#c8102e", "secondary": "#000000"}})
    roster = await viewer.next("roster")
    assert roster["kits"] == {"away": kit} and roster["away"]["colors"]["secondary"] == "#000000"
    await viewer.close()


async def test_arena_viewers_get_each_game_s_roster_after_its_snapshot(server: Server) -> None:
    await server.api("POST", "/api/teams", {**AGUADA, "team": "g2-home"})
    viewer = await Viewer.open(server.watch_url, arena="a1")
    await server.setup_game("g2")
    got = await frames_until(viewer, "roster")
    assert [f["type"] for f in got] == ["snapshot", "roster"]
    assert got[1]["game"] == "g2" and got[1]["home"]["name"] == "La Aguada"
    await viewer.close()


async def test_a_resume_gets_the_roster_after_its_catch_up(server: Server) -> None:
    await server.setup_game()
    await server.api("POST", "/api/players", {"player": "a1", "name": "José Ñúñez", "number": 9})
    viewer = await Viewer.open(server.watch_url, game="g1")
    snap = await viewer.next("snapshot")
    await viewer.close()
    tk = await server.device("timekeeper")
    for _ in range(3):
        await tk.send({"type": "clock.start", "game": "g1"})
        await tk.send({"type": "clock.stop", "game": "g1"})
    await server.api("POST", "/api/players", {"player": "a1", "name": "José Ñúñez", "number": 10})
    again = await Viewer.open(server.watch_url, game="g1", since=snap["seq"], epoch=snap["epoch"])
    got = await frames_until(again, "presence")
    assert [f["type"] for f in got] == ["delta"] * 6 + ["roster", "presence"]
    assert [f["seq"] for f in got[:6]] == list(range(snap["seq"] + 1, snap["seq"] + 7))
    assert got[6]["players"]["a1"]["name"] == "José Ñúñez" and got[6]["players"]["a1"]["number"] == 10
    await tk.close()
    await again.close()


async def test_a_registration_on_one_node_reaches_the_other_node_s_watchers(
        tmp_path: Path, etcd_url: str) -> None:
    async with RunningServer(tmp_path, store=etcd_url) as a, RunningServer(tmp_path, store=etcd_url) as b:
        await a.setup_game()
        async with asyncio.timeout(10):
            while "g1" not in b.svc.hub.feeds:  # noqa: ASYNC110 (the follower folds it)
                await asyncio.sleep(0.02)
        viewer = await Viewer.open(b.watch_url, game="g1")
        first = await viewer.next("roster")
        assert first["home"] is None
        status, _ = await a.api("POST", "/api/teams", {**AGUADA, "name": "Ellerstina Ñ"})
        assert status == 201
        roster = await viewer.next("roster", timeout=10)
        assert roster["home"]["name"] == "Ellerstina Ñ"
        status, _ = await a.api("POST", "/api/players", {"player": "h1", "name": "Gonzalo Pieres"})
        roster = await viewer.next("roster", timeout=10)
        assert roster["players"]["h1"]["name"] == "Gonzalo Pieres"
        assert roster["home"]["name"] == "Ellerstina Ñ"
        _, doc = await b.api("GET", "/api/games/g1")
        assert doc["roster"]["players"]["h1"]["name"] == "Gonzalo Pieres"
        await viewer.close()


# ------------------------------------------------------------------ teams and players


async def test_a_stale_revision_is_refused_with_what_changed(server: Server) -> None:
    status, _ = await server.api("POST", "/api/teams", {**AGUADA, "revision": 0})
    assert status == 201
    status, err = await server.api("POST", "/api/teams", {**AGUADA, "name": "Other", "revision": 0})
    assert status == 409 and err["code"] == "stale_registration"
    assert "La Aguada" in err["detail"]
    # Two members edit revision 1 at once: the first save wins, the second is told what changed.
    status, _ = await server.api("POST", "/api/teams", {**AGUADA, "name": "La Aguada Polo", "revision": 1})
    assert status == 201
    status, err = await server.api("POST", "/api/teams", {**AGUADA, "short": "LAP", "revision": 1})
    assert status == 409 and err["code"] == "stale_registration"
    assert "'La Aguada' → 'La Aguada Polo'" in err["detail"] and "revision 2" in err["detail"]
    status, doc = await server.api("GET", "/api/teams/g1-home")
    assert status == 200 and doc["current"]["name"] == "La Aguada Polo"
    assert [e["revision"] for e in doc["history"]] == [1, 2]
    assert [e["name"] for e in doc["history"]] == ["La Aguada", "La Aguada Polo"]
    status, err = await server.api("GET", "/api/teams/nobody")
    assert status == 404 and err["code"] == "unknown_team"
    status, err = await server.api("GET", "/api/players/nobody")
    assert status == 404 and err["code"] == "unknown_player"
    status, err = await server.api("POST", "/api/teams", {**AGUADA, "short": "TOOLONG"})
    assert status == 400 and err["code"] == "invalid_field" and "short" in err["detail"]


async def test_the_routes_need_an_admin_or_committee_token(server: Server) -> None:
    assert (await raw(server, "GET", "/api/teams", token=None))[0] == 401
    umpire = server.token("umpire", "ump-1", game="g1")
    assert (await raw(server, "GET", "/api/players", token=umpire))[0] == 403
    committee, _ = server.svc.issue(sub="hct", role="committee", event="cup", exp=int(time.time()) + 600)
    status, _, body = await raw(server, "POST", "/api/players", token=committee,
                                data=b'{"player": "p1", "name": "Ana Ib\xc3\xa1\xc3\xb1ez"}',
                                headers={"Content-Type": "application/json"})
    assert status == 201, body
    status, _, body = await raw(server, "GET", "/api/players", token=committee)
    assert status == 200 and "Ana Ibáñez" in body.decode()


# ------------------------------------------------------------------ logos


async def test_a_logo_is_stored_served_for_good_and_shown_in_the_roster(server: Server) -> None:
    status, _, body = await raw(server, "POST", "/api/teams/g1-home/logo", data=PNG,
                                headers={"Content-Type": "image/png"})
    assert status == 201, body
    sha = hashlib.sha256(PNG).hexdigest()
    assert json.loads(body) == {"logo": sha, "url": f"/logos/{sha}"}
    status, headers, served = await raw(server, "GET", f"/logos/{sha}", token=None)
    assert status == 200 and served == PNG and headers["Content-Type"] == "image/png"
    assert headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert headers["ETag"] == f'"{sha}"'
    status, _, again = await raw(server, "GET", f"/logos/{sha}", token=None,
                                 headers={"If-None-Match": f'"{sha}"'})
    assert status == 304 and again == b""
    assert (await raw(server, "GET", f"/logos/{'0' * 64}", token=None))[0] == 404

    await server.setup_game()
    viewer = await Viewer.open(server.watch_url, game="g1")
    await viewer.next("roster")
    status, _ = await server.api("POST", "/api/teams", {**AGUADA, "logo": sha})
    assert status == 201
    assert (await viewer.next("roster"))["home"]["logo"] == sha
    await viewer.close()


async def test_a_logo_too_big_or_not_an_image_is_refused(server: Server) -> None:
    big = PNG + bytes(64 * 1024)
    status, _, body = await raw(server, "POST", "/api/teams/t/logo", data=big,
                                headers={"Content-Type": "image/png"})
    assert status == 413 and b'"too_large"' in body
    status, _, body = await raw(server, "POST", "/api/teams/t/logo", data=b"<svg/>",
                                headers={"Content-Type": "image/svg+xml"})
    assert status == 415 and b'"unsupported_media"' in body
    # The type claimed must be the bytes' own.
    status, _, body = await raw(server, "POST", "/api/teams/t/logo", data=GIF,
                                headers={"Content-Type": "image/png"})
    assert status == 415 and b'"unsupported_media"' in body
    status, _, _ = await raw(server, "POST", "/api/teams/t/logo", data=GIF,
                             headers={"Content-Type": "image/gif"})
    assert status == 201
    assert await server.svc.hub.store.get_blob(hashlib.sha256(big).hexdigest()) is None


# ------------------------------------------------------------------ CSV


GOOD_CSV = (
    "team,team_name,short,primary,secondary,player,player_name,number,handicap\n"
    "g1-home,La Dolfina,DOL,#0a2a66,#ffffff,h1,Adolfo Cambiaso,1,10\n"
    "g1-home,La Dolfina,DOL,#0a2a66,#ffffff,h2,Juan Martín Nero,2,9\n"
    "g1-away,El Ñandú,ÑAN,#c62828,#f5d90a,a1,José Ignacio Muñoz,3,-1\n"
    "g1-away,El Ñandú,ÑAN,#c62828,#f5d90a,a2,Inés Peña,,\n"
    "g1-spare,Sin Jugadores,SJ,#000000,#ffffff,,,,\n"
)


async def _import(server: Server, body: bytes, query: str = "") -> tuple[int, Any]:
    status, _, out = await raw(server, "POST", f"/api/rosters/import{query}", data=body,
                               headers={"Content-Type": "text/csv"})
    return status, json.loads(out)


async def test_a_csv_is_imported_and_sent_again_is_acked_as_duplicates(server: Server) -> None:
    await server.api("POST", "/api/events", {"id": "cup", "event": "cup", "class": "club", "handicap": 8,
                                             "teams": []})
    await server.setup_game()
    viewer = await Viewer.open(server.watch_url, game="g1")
    await viewer.next("roster")
    data = "\ufeff".encode() + GOOD_CSV.encode()  # a spreadsheet's BOM
    status, done = await _import(server, data, "?event=cup")
    assert status == 200, done
    assert (done["teams"], done["players"], done["unchanged"]) == (3, 4, 0)
    assert all(not a["duplicate"] for a in done["acks"]) and len(done["acks"]) == 7
    # Accents round-trip, through the log, the API and the roster frame.
    _, players = await server.api("GET", "/api/players")
    assert {p["player"]: p["name"] for p in players} == {
        "h1": "Adolfo Cambiaso", "h2": "Juan Martín Nero", "a1": "José Ignacio Muñoz", "a2": "Inés Peña"}
    assert [p["handicap"] for p in players if p["player"] in ("a1", "a2")] == [-1, None]
    _, team = await server.api("GET", "/api/teams/g1-away")
    assert (team["current"]["name"], team["current"]["short"]) == ("El Ñandú", "ÑAN")
    _, events = await server.api("GET", "/api/events")
    cup = next(e for e in events if e["id"] == "cup")
    assert set(cup["teams"]) >= {"g1-home", "g1-away", "g1-spare"}
    async with asyncio.timeout(5):
        while True:
            roster = await viewer.next("roster")
            if len(roster["players"]) == 4 and roster["away"] is not None:
                break
    assert roster["away"]["name"] == "El Ñandú" and roster["players"]["a2"]["name"] == "Inés Peña"

    # The same file again: every registration acked as a duplicate, nothing new in the log.
    rows = len(server.log_rows())
    status, again = await _import(server, data, "?event=cup")
    assert status == 200 and (again["teams"], again["players"]) == (0, 0)
    assert [a["duplicate"] for a in again["acks"]] == [True] * 7
    assert [a["log_id"] for a in again["acks"]] == [a["log_id"] for a in done["acks"]]
    assert len(server.log_rows()) == rows
    # Another file with one row changed: that row alone is registered; the rest are unchanged.
    changed = GOOD_CSV.replace("Inés Peña,,", "Inés Peña,7,2").encode()
    status, third = await _import(server, changed, "?event=cup")
    assert status == 200 and (third["teams"], third["players"], third["unchanged"]) == (0, 1, 6)
    _, doc = await server.api("GET", "/api/players/a2")
    assert (doc["current"]["number"], doc["current"]["revision"]) == (7, 2)
    await viewer.close()


async def test_a_bad_csv_names_each_bad_row_and_imports_nothing(server: Server) -> None:
    bad = (
        "team,team_name,short,primary,secondary,player,player_name,number,handicap\n"
        "t1,Uno,UNO,#000000,#ffffff,p1,Pedro Uno,1,2\n"          # good
        "t1,Uno,UNO,#000000,#ffffff,p2,Pablo Dos,100,2\n"        # line 3: number out of range
        "t2,Dos,TOOLONG,#000000,#ffffff,,,,\n"                   # line 4: short
        "t3,Tres,TRE,red,#ffffff,p3,Tomás,3,\n"                  # line 5: primary
        "t1,Uno,UNO,#000000,#ffffff,p4,Ana,x,\n"                 # line 6: number not a number
        "t1,Otro nombre,UNO,#000000,#ffffff,p5,Eva,,\n"          # line 7: the team differs from line 2
        "t4,Cuatro,CUA,#000000,#ffffff,p1,Pedro Otra Vez,,\n"    # line 8: p1 again
        "t5,Cinco,CIN,#000000,#ffffff,p6,Luis,,11\n"             # line 9: handicap out of range
    )
    status, err = await _import(server, bad.encode())
    assert status == 400 and err["code"] == "invalid_csv" and "nothing was imported" in err["detail"]
    assert [(r["line"], r["field"]) for r in err["rows"]] == [
        (3, "number"), (4, "short"), (5, "primary"), (6, "number"), (7, "team_name"), (8, "player"),
        (9, "handicap")]
    assert all(r["reason"] for r in err["rows"])
    assert (await server.api("GET", "/api/teams"))[1] == []
    assert (await server.api("GET", "/api/players"))[1] == []
    assert server.log_rows() == []
    # A team entered in an event that is not set up: the engine's refusal, by line, nothing imported.
    status, err = await _import(server, GOOD_CSV.encode(), "?event=nowhere")
    assert status == 400 and {r["field"] for r in err["rows"]} == {"event"}
    assert [r["line"] for r in err["rows"]] == [2, 4, 6]
    # Not UTF-8, and a header without the columns.
    status, err = await _import(server, "team,team_name\nt1,Caf\xe9\n".encode("latin-1"))
    assert status == 400 and err["rows"][0]["line"] == 2
    status, err = await _import(server, b"team,name\nt1,x\n")
    assert status == 400 and {r["field"] for r in err["rows"]} >= {"team_name", "short"}
    assert server.log_rows() == []


async def test_the_template_downloads_without_a_token_and_imports(server: Server) -> None:
    status, headers, body = await raw(server, "GET", "/api/rosters/template.csv", token=None)
    assert status == 200 and headers["Content-Type"].startswith("text/csv")
    assert body.startswith("\ufeff".encode())
    text = body.decode("utf-8-sig")
    assert text.splitlines()[0] == "team,team_name,short,primary,secondary,player,player_name,number,handicap"
    status, done = await _import(server, body)
    assert status == 200 and done["teams"] >= 1 and done["players"] >= 1
    _, teams = await server.api("GET", "/api/teams")
    assert "El Ñandú" in {t["name"] for t in teams}
