"""The game report (stream/live/reports/report.py) from a real server: the HTML lists every card
with its clause and draws a timeline; the JSON and the CSV list the same cards;
box trips, releases, the voided card and the ledger obligations are there."""

from __future__ import annotations

import asyncio
import csv
import html
import io
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from ..conftest import RunningServer, Server, admin_device


@pytest.fixture
async def srv(tmp_path: Path) -> AsyncIterator[Server]:
    async with RunningServer(tmp_path) as s:
        yield s


async def get(server: Server, path: str) -> tuple[int, str, str]:
    async with aiohttp.ClientSession() as s, s.get(server.http + path) as r:
        return r.status, r.headers.get("Content-Type", ""), await r.text()


async def play(server: Server) -> dict[str, Any]:
    """A game with a yellow, a second yellow (box, released at a goal), a red, a
    voided card, and a player still in the box at the end (carried: R10)."""
    await server.setup_game()
    ump = await server.device("umpire")
    tk = await server.device("timekeeper")
    await asyncio.sleep(0.3)  # clock sync, so that the devices' own `at` is used
    t0 = int(time.time() * 1000) - 300_000
    acks: dict[str, Any] = {}
    await tk.send({"type": "clock.start", "game": "g1", "at": t0})
    acks["y1"] = await ump.send({"type": "card", "game": "g1", "player": "h1", "color": "yellow",
                                 "conduct": "arguing", "at": t0 + 20_000})
    acks["y2"] = await ump.send({"type": "card", "game": "g1", "player": "a1", "color": "yellow",
                                 "count": 2, "conduct": "rough_play", "at": t0 + 30_000})
    acks["goal"] = await ump.send({"type": "goal", "game": "g1", "team": "home", "player": "h1",
                                   "at": t0 + 160_000})   # after 2:00 of play: a1 is released
    await tk.send({"type": "clock.start", "game": "g1", "at": t0 + 170_000})
    acks["red"] = await ump.send({"type": "card", "game": "g1", "player": "a2", "color": "red",
                                  "conduct": "striking", "at": t0 + 180_000})
    acks["oops"] = await ump.send({"type": "card", "game": "g1", "player": "h3", "color": "yellow",
                                   "conduct": "other", "at": t0 + 190_000})
    await ump.send({"type": "void", "game": "g1", "target": acks["oops"]["log_id"], "at": t0 + 195_000})
    acks["late"] = await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow",
                                   "count": 2, "conduct": "disrespect", "at": t0 + 200_000})
    await ump.send({"type": "whistle", "game": "g1", "at": t0 + 210_000})
    ref = await server.device("referee")
    await asyncio.sleep(0.3)
    await ref.send({"type": "game.end", "game": "g1", "at": t0 + 215_000})
    for d in (ump, tk, ref):
        await d.close()
    return acks


async def test_report_html_json_csv_list_the_same_cards_with_their_clauses(srv: Server) -> None:
    server = srv
    acks = await play(server)
    status, ctype, page = await get(server, "/games/g1/report")
    assert status == 200 and ctype.startswith("text/html")
    status, _, body = await get(server, "/games/g1/report.json")
    assert status == 200
    report = json.loads(body)
    status, ctype, text = await get(server, "/games/g1/report.csv")
    assert status == 200 and ctype.startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(text)))

    cards = report["cards"]
    by_cause = {c["cause"]: c for c in cards}
    assert set(by_cause) == {acks[k]["log_id"] for k in ("y1", "y2", "red", "oops", "late")}
    assert by_cause[acks["y1"]["log_id"]]["clause"] == "R2"
    assert by_cause[acks["y2"]["log_id"]]["clause"] in ("R3", "R7")
    assert by_cause[acks["red"]["log_id"]]["clause"] in ("R6", "R7")
    assert by_cause[acks["oops"]["log_id"]]["voided"] is True
    # who voided it, as every other row names who entered it (the umpire's device here)
    oops = by_cause[acks["oops"]["log_id"]]
    assert oops["voided_by"] == oops["official"] and oops["voided_by"].startswith("umpire-")
    assert oops["voided_at"] is not None and oops["voided_at"] >= oops["moment"]["at"]
    assert "tarjeta amarilla" in oops["text"]["es"]
    assert all(not c["voided"] for k, c in by_cause.items() if k != acks["oops"]["log_id"])

    # The HTML: a row per card, with its clause, and the SVG timeline.
    assert "<svg" in page and 'class="timeline"' in page
    for c in cards:
        row = page.split(f'data-cause="{c["cause"]}"', 1)[1].split("</tr>", 1)[0]
        assert f"<b>{c['clause']}</b>" in row, (c, row)
        assert c["player"] in row
    assert "@media print" in page

    # The CSV: the same cards, with the same clauses.
    csv_cards = {(r["cause"], r["player"], r["clause"], r["voided"] == "yes")
                 for r in rows if r["kind"] == "card.recorded"}
    assert csv_cards == {(c["cause"], c["player"], c["clause"], c["voided"]) for c in cards}

    # Box trips, releases and penalties, each with its clause.
    trips = {t["player"]: t for t in report["box_trips"]}
    a1 = trips["a1"]
    assert a1["owed_ms"] == 120_000 and a1["release"] is not None and a1["eligible"] is not None
    assert a1["eligible"]["play_ms"] == a1["enter"]["play_ms"] + 120_000
    # (the two devices' clock offsets may differ by a millisecond or two)
    assert abs(a1["release"]["play_ms"] - 160_000) < 10
    assert a1["stoppage"] == f"goal:{acks['goal']['log_id']}"
    assert trips["h2"]["release"] is None  # still in the box when the game ended
    assert {r["player"] for r in report["releases"] if r["kind"] == "box.release"} == {"a1"}
    assert all(p["clause"] for p in report["penalties"]) and len(report["penalties"]) >= 4
    assert [s["player"] for s in report["sent_off"]] == ["a2"]
    assert [g["detail"] for g in report["goals"]] == ["1 point · 1–0"]
    assert {r["kind"] for r in rows} >= {"card.recorded", "penalty.awarded", "box.enter", "box.release",
                                         "sent_off"}

    # The ledger: what this game carries to the players' next games.
    obligations = report["obligations"]
    assert obligations and all(o["origin_game"] == "g1" for o in obligations)
    h2 = [o for o in obligations if o["player"] == "h2"]
    assert h2 and h2[0]["kind"] == "sit_out" and h2[0]["clause"] == "R10"
    assert any(r["kind"] == "obligation" and r["player"] == "h2" for r in rows)
    assert "Obligations created by this game" in page and h2[0]["id"] in page


async def test_report_of_an_unknown_game_is_404_and_the_front_door_links_its_public_one(srv: Server) -> None:
    server = srv
    status, _, _ = await get(server, "/games/nope/report")
    assert status == 404
    status, _, _ = await get(server, "/games/nope/report.csv")
    assert status == 404
    await server.setup_game()
    status, _, index = await get(server, "/")
    assert status == 200 and 'href="/games/g1/public"' in index
    status, _, page = await get(server, "/games/g1/public")
    assert status == 200 and "No cards." in page and "<svg" in page
    status, _, page = await get(server, "/games/g1/report")
    assert status == 200 and "No cards." in page and "<svg" in page


async def test_report_lists_team_officials_cards_and_alerts(srv: Server) -> None:
    """A card to a team official (R1) is a card of the report, by role; an alert (a second
    clock start, a goal credited to a player in the box) is listed with what the officials
    were told, in both languages."""
    server = srv
    await server.setup_game()
    ump = await server.device("umpire")
    tk = await server.device("timekeeper")
    await tk.send({"type": "clock.start", "game": "g1"})
    again = await tk.send({"type": "clock.start", "game": "g1"})
    coach = await ump.send({"type": "card", "game": "g1", "official": {"team": "away", "role": "coach"},
                            "color": "yellow", "conduct": "arguing"})
    for _ in range(2):
        await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow",
                        "conduct": "arguing"})
    goal = await ump.send({"type": "goal", "game": "g1", "team": "home", "player": "h2"})
    for d in (ump, tk):
        await d.close()

    status, _, body = await get(server, "/games/g1/report.json")
    assert status == 200
    report = json.loads(body)
    (official,) = [c for c in report["cards"] if c["kind"] == "official.carded"]
    assert (official["cause"], official["role"], official["side"], official["player"],
            official["clause"]) == (coach["log_id"], "coach", "away", None, "R1")
    assert official["detail"] == "yellow · coach (team official) · arguing"
    assert [(a["code"], a["cause"]) for a in report["alerts"]] == [
        ("clock_already_running", again["log_id"]), ("scorer_not_on_field", goal["log_id"])]
    assert report["alerts"][1]["text"]["es"].startswith("Gol atribuido a h2")

    status, _, page = await get(server, "/games/g1/report")
    row = page.split(f'data-cause="{coach["log_id"]}"', 1)[1].split("</tr>", 1)[0]
    assert "coach" in row and "<b>R1</b>" in row
    assert "Alerts <small>(2)</small>" in page and 'data-code="scorer_not_on_field"' in page
    status, _, text = await get(server, "/games/g1/report.csv")
    kinds = [r["kind"] for r in csv.DictReader(io.StringIO(text))]
    assert kinds.count("alert") == 2 and kinds.count("official.carded") == 1


async def register(server: Server) -> None:
    """g1's home team and two of its players, one with an accent; a2 of the away side too
    (his team not registered): the report names who is registered and keeps every id."""
    admin = await admin_device(server)
    await admin.send({"type": "team.registered", "team": "g1-home", "name": "Aiken Arena", "short": "aik",
                      "colors": {"primary": "#0b3d2e", "secondary": "#f2c230"}})
    await admin.send({"type": "player.registered", "player": "h1", "name": "Ortega", "number": 2,
                      "team": "g1-home"})
    await admin.send({"type": "player.registered", "player": "h2", "name": "Núñez", "number": 7})
    await admin.send({"type": "player.registered", "player": "a2", "name": "Salas"})
    await admin.close()


async def test_report_names_registered_players_and_teams_beside_their_ids(srv: Server) -> None:
    server = srv
    await register(server)   # before the game is set up: its roster takes them when it is
    acks = await play(server)

    status, _, body = await get(server, "/games/g1/report.json")
    assert status == 200
    report = json.loads(body)
    cards = {c["cause"]: c for c in report["cards"]}
    y1 = cards[acks["y1"]["log_id"]]
    assert (y1["player"], y1["player_name"], y1["number"]) == ("h1", "Ortega", 2)
    assert (y1["team"], y1["team_name"]) == ("g1-home", "Aiken Arena")
    red = cards[acks["red"]["log_id"]]
    assert (red["player"], red["player_name"], red["number"]) == ("a2", "Salas", None)
    assert (red["team"], red["team_name"]) == ("g1-away", None)   # the away team is not registered
    y2 = cards[acks["y2"]["log_id"]]
    assert (y2["player"], y2["player_name"], y2["number"]) == ("a1", None, None)
    assert report["home"]["name"] == "Aiken Arena" and report["home"]["short"] == "AIK"
    assert report["home"]["colors"] == {"primary": "#0b3d2e", "secondary": "#f2c230"}
    assert report["away"]["name"] is None and report["away"]["team"] == "g1-away"
    assert report["roster"]["players"]["h2"]["name"] == "Núñez"
    trips = {t["player"]: t for t in report["box_trips"]}
    assert (trips["h2"]["player_name"], trips["h2"]["number"]) == ("Núñez", 7)
    (h2_owes,) = [o for o in report["obligations"] if o["player"] == "h2"]

    status, _, page = await get(server, "/games/g1/report")
    assert status == 200
    row = page.split(f'data-cause="{acks["y1"]["log_id"]}"', 1)[1].split("</tr>", 1)[0]
    assert '<b>#2 Ortega</b> <small class="id">h1</small>' in row and "Aiken Arena" in row
    row = page.split(f'data-cause="{acks["y2"]["log_id"]}"', 1)[1].split("</tr>", 1)[0]
    assert "<b>a1</b>" in row and "g1-away" in row                     # nothing registered: the ids
    header = page.split("<header>", 1)[1].split("</header>", 1)[0]
    assert "Aiken Arena" in header and "background: #0b3d2e" in header and "g1-away" in header
    assert "#7 Núñez" in page and h2_owes["id"] in page
    assert ">#2 Ortega<" in page.split('class="timeline"', 1)[1].split("</svg>", 1)[0]

    status, _, text = await get(server, "/games/g1/report.csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    (y1_row,) = [r for r in rows if r["cause"] == acks["y1"]["log_id"] and r["kind"] == "card.recorded"]
    assert (y1_row["player"], y1_row["player_name"], y1_row["number"], y1_row["team_name"]) == (
        "h1", "Ortega", "2", "Aiken Arena")
    (ob,) = [r for r in rows if r["kind"] == "obligation" and r["player"] == "h2"]
    assert (ob["player_name"], ob["number"], ob["team_name"]) == ("Núñez", "7", "Aiken Arena")


async def test_a_card_recorded_without_its_conduct_shows_it_once_named(srv: Server) -> None:
    """R1: the umpire records a card in three taps and names its conduct afterwards
    (``card.amended``): the report shows the conduct as named; before, that none is."""
    await srv.setup_game()
    ump = await srv.device("umpire")
    tk = await srv.device("timekeeper")
    await tk.send({"type": "clock.start", "game": "g1"})
    card = await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow"})
    assert card["type"] == "ack" and card["notices"][0]["conduct"] is None
    status, _, body = await get(srv, "/games/g1/report.json")
    (line,) = [e for e in json.loads(body)["entries"] if e["kind"] == "card.recorded"]
    assert status == 200 and "conduct not named" in line["detail"]
    named = await ump.send({"type": "card.amended", "game": "g1", "target": card["log_id"],
                            "conduct": "dangerous_riding"})
    assert [n["type"] for n in named["notices"]] == ["conduct.named"]
    _, _, body = await get(srv, "/games/g1/report.json")
    (line,) = [e for e in json.loads(body)["entries"] if e["kind"] == "card.recorded"]
    assert "dangerous_riding" in line["detail"] and "not named" not in line["detail"]


async def test_the_printable_report_reads_in_spanish(srv: Server) -> None:
    """`?lang=es`: the page's own words and what the officials were told, in Spanish; the
    English page links to it and it back; nothing of the English headings is left."""
    server = srv
    acks = await play(server)
    status, _, en = await get(server, "/games/g1/report")
    status_es, ctype_es, es = await get(server, "/games/g1/report?lang=es")
    assert (status, status_es) == (200, 200) and ctype_es.startswith("text/html")
    assert '<html lang="es">' in es and '<html lang="en">' in en
    for heading in ("Informe del partido · Regla 14", "Tarjetas", "Área de castigo", "Expulsados",
                    "Sanciones que deja este partido", "Las decisiones del Comité", "Cronología"):
        assert heading in es, heading
    for heading in ("Game report · Rule 14", "Box trips", "Sent off", "Obligations created by this game"):
        assert heading in en and heading not in es, heading
    # The cards say what the officials were told, in Spanish, with the clause's Spanish title.
    red = next(n for n in acks["red"]["notices"] if n["type"] == "card.recorded")
    assert html.escape(red["text"]["es"], quote=True) in es
    assert html.escape(red["text"]["es"], quote=True) not in en
    assert "Tarjeta roja" in es and "Final" in es
    assert 'href="/games/g1/report?lang=es">Español</a>' in en
    assert 'href="/games/g1/report">English</a>' in es


async def watch_view(server: Server, game: str = "g1") -> dict[str, Any]:
    """The view a scoreboard holds: a fresh subscription's snapshot."""
    async with aiohttp.ClientSession() as s, s.ws_connect(server.watch_url) as ws:
        await ws.send_json({"type": "subscribe", "game": game})
        while True:
            msg = json.loads((await ws.receive(timeout=5)).data)
            if msg["type"] == "snapshot":
                return dict(msg["view"])


async def test_a_disallowed_goal_and_goals_on_handicap_are_one_score_everywhere(srv: Server) -> None:
    """The record is the scoreboard's score: a goal the umpire voids (disallowed, A28) comes
    off in the report, its CSV, its printable header and the draw, and is listed as disallowed
    with who voided it; a handicap event's goals on handicap (A5) are in every one of them."""
    server = srv
    matrix = [{"periods": 2, "goals_per_goal": 0.5}, {"periods": 3, "goals_per_goal": 0.5},
              {"periods": 4, "goals_per_goal": 1}]
    status, reply = await server.api("POST", "/api/events", {
        "event": "cup", "class": "club", "handicap": 12, "teams": ["g1-home", "g1-away"],
        "handicap_matrix": matrix})
    assert status == 201, reply
    admin = await admin_device(server)
    for pid, h in {"h1": 1, "h2": 1, "h3": 1, "a1": 2, "a2": 2, "a3": 2}.items():  # 3 v 6: 3 × ½
        await admin.send({"type": "player.registered", "player": pid, "name": pid.upper(), "handicap": h})
    await admin.close()
    status, reply = await server.api("POST", "/api/events/cup/draw", {
        "format": "knockout", "teams": ["g1-home", "g1-away"]})
    assert status in (200, 201), reply
    await server.setup_game("cup-final", sides=("g1-home", "g1-away"), periods=3, arena="a1")
    ump = await server.device("umpire", game="cup-final")
    ump2 = await server.device("umpire", game="cup-final", name="ump-two")
    tk = await server.device("timekeeper", game="cup-final")
    await tk.send({"type": "clock.start", "game": "cup-final"})
    scored = await ump.send({"type": "goal", "game": "cup-final", "team": "away", "player": "a1"})
    await tk.send({"type": "clock.start", "game": "cup-final"})
    voided = await ump.send({"type": "goal", "game": "cup-final", "team": "away", "player": "a2"})
    await ump2.send({"type": "void", "game": "cup-final", "target": voided["log_id"]})
    await tk.send({"type": "game.end", "game": "cup-final"})
    for d in (ump, ump2, tk):
        await d.close()

    view = await watch_view(server, "cup-final")
    assert view["score"] == {"home": 1.5, "away": 1}            # 1½ on handicap; one goal stands
    assert view["goals_on_handicap"]["source"] == "matrix"
    status, _, body = await get(server, "/games/cup-final/report.json")
    report = json.loads(body)
    assert (report["home"]["score"], report["away"]["score"]) == (1.5, 1)
    assert (report["home"]["on_handicap"], report["away"]["on_handicap"]) == (1.5, 0)
    goals = {g["cause"]: g for g in report["goals"]}
    assert goals[scored["log_id"]]["voided"] is False
    disallowed = goals[voided["log_id"]]
    assert disallowed["voided"] is True and disallowed["voided_by"] == "ump-two"
    assert "disallowed" in disallowed["detail"] and disallowed["text"]["es"].startswith("Anulado: gol")
    status, _, page = await get(server, "/games/cup-final/report")
    assert '<div class="score">1½ – 1</div>' in page and "Goals on handicap" in page
    row = page.split(f'data-cause="{voided["log_id"]}"', 1)[1].split("</tr>", 1)[0]
    assert "voided by ump-two" in row and "disallowed" in row
    status, _, text = await get(server, "/games/cup-final/report.csv")
    first = next(csv.DictReader(io.StringIO(text)))
    assert (first["kind"], first["detail"].split(" · ")[0]) == ("result", "1½–1")
    status, draw = await server.api("GET", "/api/events/cup/draw")
    final = next(g for g in draw["games"] if g["game"] == "cup-final")
    assert (final["score"], final["winner"]) == ([1.5, 1], "g1-home")
