"""One tournament event's committee against another's, as an outsider would try it from the
docs (docs/security.md, "A committee's event" and "Who may do what"): two events, ``cup``
(teams blue and red) and ``open`` (teal and rose), each with its registered players, a game
and its committee token. The committee of ``cup`` may not rename or move ``open``'s teams
and players, nor read ``open``'s log, reports or previews: 403 ``out_of_scope``, nothing
written, and ``open``'s scoreboard shows what it showed. Its own event it runs as before;
the admin does everything."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import aiohttp

from ..conftest import Server, Viewer
from .test_committee_api import _event, _game
from .test_rosters import frames_until, quiet_for

COLORS = {"primary": "#1f4e9c", "secondary": "#ffffff"}
#: Each team's registered players: blue's and teal's play their teams' games, the rest are names.
PLAYERS = {"blue": ["b1", "b2", "b3"], "red": ["r1"], "teal": ["t1", "t2", "t3"], "rose": ["s1"]}


def _team(team: str, name: str, **more: Any) -> dict[str, Any]:
    return {"team": team, "name": name, "short": team[:3].upper(), "colors": COLORS, **more}


async def _two_events(server: Server) -> tuple[str, str]:
    """``cup`` (game g1: blue v red) and ``open`` (game o1: teal v rose), set up and registered
    by the admin; the committee tokens of ``cup`` and of ``open``."""
    for event, teams in (("cup", ["blue", "red"]), ("open", ["teal", "rose"])):
        status, ack = await server.api("POST", "/api/events", _event(event, teams))
        assert status == 201, ack
        for team in teams:
            status, ack = await server.api("POST", "/api/teams", _team(team, team.title()))
            assert status == 201, ack
            for player in PLAYERS[team]:
                status, ack = await server.api("POST", "/api/players", {"player": player, "team": team,
                                                                        "name": f"Player {player}"})
                assert status == 201, ack
    for body in (_game("g1", "cup", "blue", "red", home_players=PLAYERS["blue"]),
                 _game("o1", "open", "teal", "rose", home_players=PLAYERS["teal"], arena="side")):
        status, ack = await server.api("POST", "/api/games", body)
        assert status == 201, ack
    return await server.committee_token("cup"), await server.committee_token("open")


async def _refused(server: Server, token: str, method: str, path: str, body: Any = None) -> dict[str, Any]:
    """A 403 ``out_of_scope`` (a ``Problem`` or an ``error``) that wrote nothing to the log."""
    before = server.log_rows()
    status, doc = await server.api(method, path, body, token=token)
    assert (status, doc["code"]) == (403, "out_of_scope"), (path, body, status, doc)
    assert "cup" in doc["detail"], doc     # it names the token's event
    assert server.log_rows() == before
    return dict(doc)


async def test_a_committee_can_t_rename_another_event_s_team(server: Server) -> None:
    cup, _ = await _two_events(server)
    viewer = await Viewer.open(server.watch_url, game="o1")     # open's scoreboard
    shown = await frames_until(viewer, "presence")   # snapshot, roster, presence
    assert next(f for f in shown if f["type"] == "roster")["home"]["name"] == "Teal"

    err = await _refused(server, cup, "POST", "/api/teams", _team("teal", "HIJACKED BY A"))
    assert "teal" in err["detail"] and "open" in err["detail"]
    await _refused(server, cup, "POST", "/api/teams", _team("teal", "HIJACKED BY A", event="cup"))
    await _refused(server, cup, "POST", "/api/teams", _team("teal", "HIJACKED BY A", revision=1))

    # open's team is as it was: on its page, in its game's roster and on its scoreboard.
    status, doc = await server.api("GET", "/api/teams/teal", token=cup)   # (reading it is allowed)
    assert status == 200
    assert (doc["current"]["name"], [h["name"] for h in doc["history"]]) == ("Teal", ["Teal"])
    _, game = await server.api("GET", "/api/games/o1")
    assert game["roster"]["home"]["name"] == "Teal"
    assert await quiet_for(viewer, 0.3) == []                  # no roster frame: nothing changed
    _, events = await server.api("GET", "/api/events")
    assert [e["teams"] for e in events] == [["blue", "red"], ["teal", "rose"]]   # teal entered nowhere new
    await viewer.close()


async def test_a_committee_can_t_rename_or_move_another_event_s_player(server: Server) -> None:
    cup, _ = await _two_events(server)
    await _refused(server, cup, "POST", "/api/players", {"player": "t1", "name": "HIJACKED", "team": "teal"})
    await _refused(server, cup, "POST", "/api/players", {"player": "t2", "name": "Player t2", "team": "blue"})
    await _refused(server, cup, "POST", "/api/players", {"player": "s1", "name": "Player s1"})
    # cup's own player may not be moved onto another event's team either.
    err = await _refused(server, cup, "POST", "/api/players", {"player": "b1", "name": "Player b1",
                                                               "team": "rose"})
    assert "rose" in err["detail"]
    for player, team in (("t1", "teal"), ("t2", "teal"), ("s1", "rose"), ("b1", "blue")):
        _, doc = await server.api("GET", f"/api/players/{player}")
        assert (doc["current"]["name"], doc["current"]["team"], len(doc["history"])) == (
            f"Player {player}", team, 1)


async def test_a_committee_can_t_read_another_event_s_log_reports_or_previews(server: Server) -> None:
    cup, _ = await _two_events(server)
    await _refused(server, cup, "GET", "/api/events/open/log")
    await _refused(server, cup, "GET", "/api/events/open/reports.csv")
    await _refused(server, cup, "GET", "/api/games/o1/preview")
    preview = _game("o2", "open", "teal", "rose", home_players=PLAYERS["teal"])
    await _refused(server, cup, "POST", "/api/games/preview", preview)
    # A set-up of its own event naming another event's team, or another event's game's id.
    await _refused(server, cup, "POST", "/api/games/preview", _game("g9", "cup", "blue", "teal"))
    await _refused(server, cup, "POST", "/api/games/preview", _game("o1", "cup", "blue", "red"))
    # Its whole log is its own event's: none of open's records, not even open's registrations.
    status, text = await server.api("GET", "/api/log", token=cup)
    assert status == 200
    records = [json.loads(line) for line in text.splitlines()]
    theirs = [r for r in records if r.get("event") == "open" or r.get("game") == "o1"
              or r.get("team") in ("teal", "rose") or r.get("player") in ("t1", "t2", "t3", "s1")]
    assert records and not theirs, theirs
    # What is public stays public (docs/security.md, "What is public"): a game and its report,
    # the ledger.
    for path in ("/api/games/o1", "/games/o1/report.json", "/api/obligations", "/api/players/t1/obligations"):
        status, _ = await server.api("GET", path, token=cup)
        assert status == 200, path


async def test_a_roster_file_with_a_line_of_another_event_imports_nothing(server: Server) -> None:
    cup, _ = await _two_events(server)
    before = server.log_rows()
    text = ("team,team_name,short,primary,secondary,player,player_name,number,handicap\n"
            "blue,Blue Renamed,BLU,#1f4e9c,#ffffff,b1,Player b1,1,2\n"
            "teal,HIJACKED BY A,TEA,#1f4e9c,#ffffff,,,,\n"
            "blue,Blue Renamed,BLU,#1f4e9c,#ffffff,t2,Moved,3,2\n")
    status, doc = await _import(server, cup, text)
    assert (status, doc["code"]) == (403, "out_of_scope"), doc
    assert "nothing was imported" in doc["detail"]
    assert [(r["line"], r["field"]) for r in doc["rows"]] == [(3, "team"), (4, "player")]
    assert server.log_rows() == before
    _, blue = await server.api("GET", "/api/teams/blue")
    assert blue["current"]["name"] == "Blue"
    # Into another event, by the query: refused before any line is read.
    status, doc = await _import(server, cup, text.splitlines()[0] + "\nblue,Blue,BLU,#1f4e9c,#ffffff,,,,\n",
                                "?event=open")
    assert (status, doc["code"]) == (403, "out_of_scope")
    assert server.log_rows() == before


async def _import(server: Server, token: str, text: str, query: str = "") -> tuple[int, Any]:
    """``POST /api/rosters/import`` of a CSV body."""
    async with aiohttp.ClientSession() as s, s.post(
            f"{server.http}/api/rosters/import{query}", data=text.encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "text/csv"}) as r:
        return r.status, await r.json()


async def test_a_committee_still_runs_its_own_event(server: Server) -> None:
    cup, _ = await _two_events(server)
    for body in (_team("blue", "Blue Polo"), _team("gold", "Gold", event="cup"), _team("free", "Free")):
        status, ack = await server.api("POST", "/api/teams", body, token=cup)
        assert (status, ack["type"]) == (201, "ack"), ack
    for body in ({"player": "b1", "name": "Renamed b1", "team": "blue"},
                 {"player": "b2", "name": "Player b2", "team": "red"},      # moved within the event
                 {"player": "g1p", "name": "New on gold", "team": "gold"},
                 {"player": "loose", "name": "On no team"}):
        status, ack = await server.api("POST", "/api/players", body, token=cup)
        assert (status, ack["type"]) == (201, "ack"), ack
    status, ack = await server.api("POST", "/api/games", _game("g2", "cup", "gold", "free",
                                                              home_players=["g1p", "x2", "x3"]), token=cup)
    assert status == 201, ack
    status, doc = await _import(server, cup, "team,team_name,short,primary,secondary,player,player_name,"
                                "number,handicap\ngold,Gold CSV,GLD,#1f4e9c,#ffffff,g2p,From CSV,7,1\n",
                                "?event=cup")
    assert (status, doc["teams"], doc["players"]) == (200, 1, 1), doc
    for path in ("/api/events/cup/log", "/api/events/cup/reports.csv", "/api/games/g1/preview",
                 "/api/teams/blue", "/api/players/b1"):
        status, _ = await server.api("GET", path, token=cup)
        assert status == 200, path
    status, doc = await server.api("POST", "/api/games/preview", _game("g3", "cup", "blue", "red"), token=cup)
    assert status == 200, doc
    _, game = await server.api("GET", "/api/games/g1")
    assert game["roster"]["home"]["name"] == "Blue Polo"
    # Its event's log holds its registrations, and none of open's.
    _, text = await server.api("GET", "/api/events/cup/log", token=cup)
    registered = {(r.get("team"), r.get("player")) for r in map(json.loads, text.splitlines())
                  if r["type"] in ("team.registered", "player.registered")}
    assert ("gold", "g1p") in registered and ("blue", None) in registered
    assert not {t for t, p in registered if t in ("teal", "rose")}
    # The reports are its games'.
    _, table = await server.api("GET", "/api/events/cup/reports.csv", token=cup)
    assert {row[0] for row in list(csv.reader(io.StringIO(table)))[1:]} <= {"g1", "g2"}


async def test_the_admin_does_all_of_it(server: Server) -> None:
    await _two_events(server)
    for method, path, body in (
            ("POST", "/api/teams", _team("teal", "Teal Renamed")),
            ("POST", "/api/players", {"player": "t1", "name": "Moved", "team": "blue"}),
            ("POST", "/api/teams", _team("rose", "Rose", event="cup")),     # now of both events
            ("GET", "/api/events/open/log", None), ("GET", "/api/events/open/reports.csv", None),
            ("GET", "/api/games/o1/preview", None),
            ("POST", "/api/games/preview", _game("o2", "open", "teal", "rose"))):
        status, doc = await server.api(method, path, body)
        assert status in (200, 201), (path, doc)
    # A team of two events is the admin's alone to change: neither committee may rename it.
    for event in ("cup", "open"):
        token = await server.committee_token(event, device=f"htc2-{event}")
        status, doc = await server.api("POST", "/api/teams", _team("rose", "Mine"), token=token)
        assert (status, doc["code"]) == (403, "out_of_scope"), doc
