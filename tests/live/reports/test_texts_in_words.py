"""The texts the service writes, read as people read them (docs/log-format.md, "Notices";
docs/protocol-http.md, "The committee's decisions" and the draw): a Spanish text names
every colour, conduct, kind and status in Spanish, in the game report (JSON, CSV and the
printable page) and in the committee's decisions; the decisions name the event by its
display name and a game by its teams' registered names, and the draw's proposals a game
by its teams and its round. A real service on a SQLite file, driven as officials do."""

from __future__ import annotations

import csv
import html
import io
import re
from typing import Any

import aiohttp

from ...rules.test_spanish_words import english_codes
from ..conftest import Server

EVENT_NAME = "Copa de Otoño 2026"
TEAMS = {"g1-home": "Aiken Arena", "g1-away": "Wellington Blue"}
GAME = "Aiken Arena v Wellington Blue"
GAME_ES = "Aiken Arena contra Wellington Blue"


async def _text(server: Server, path: str) -> str:
    async with aiohttp.ClientSession() as s, s.get(server.http + path) as r:
        assert r.status == 200, path
        return await r.text()


async def register(server: Server, teams: dict[str, str], event: str | None = None) -> None:
    for team, name in teams.items():
        status, ack = await server.api("POST", "/api/teams", {
            "team": team, "name": name, "short": name[:3].upper(),
            "colors": {"primary": "#0b3d2e", "secondary": "#f2c230"}, **({"event": event} if event else {})})
        assert status == 201, ack


async def a_game_and_its_decisions(server: Server) -> str:
    """Event "cup" (named), game g1 between two registered teams: a yellow and a red card
    voided, a team official's card voided, a red to a2 that stands, two yellows to a1 (the
    box, carried), a goal, a post-game 2y for h1;
    then the committee decreases h1's sit-out, increases a2's penalty and rescinds his
    suspension. The committee's token."""
    status, ack = await server.api("POST", "/api/events", {
        "id": "ev", "event": "cup", "name": EVENT_NAME, "class": "uspa", "handicap": 8,
        "teams": list(TEAMS)})
    assert status == 201, ack
    await register(server, TEAMS)
    await server.setup_game("g1")
    tk, ump = await server.device("timekeeper", "g1"), await server.device("umpire", "g1")
    await tk.send({"type": "clock.start", "game": "g1"})
    for card in ({"player": "h3", "color": "yellow", "conduct": "rough_play"},
                 {"player": "h2", "color": "red", "conduct": "dangerous_riding"},
                 {"official": {"team": "away", "role": "coach"}, "color": "yellow", "conduct": "arguing"}):
        ack = await ump.send({"type": "card", "game": "g1", **card})
        assert ack["type"] == "ack", ack
        ack = await ump.send({"type": "void", "game": "g1", "target": ack["log_id"]})
        assert ack["type"] == "ack", ack
    await ump.send({"type": "card", "game": "g1", "player": "a2", "color": "red", "conduct": "striking"})
    await ump.send({"type": "card", "game": "g1", "player": "a1", "color": "yellow", "count": 2,
                    "conduct": "hit_after_whistle"})
    await ump.send({"type": "goal", "game": "g1", "team": "home", "player": "h1"})
    await ump.send({"type": "game.end", "game": "g1"})
    await ump.send({"type": "postgame.card", "game": "g1", "player": "h1", "level": "2y"})
    await tk.close()
    await ump.close()
    htc = server.token("committee", "htc-cup", event="cup", official="Host Tournament Committee")
    status, doc = await server.api("GET", "/api/players/h1/obligations", token=htc)
    (sit_out,) = doc["obligations"]
    status, ack = await server.api("POST", "/api/committee/decrease", {
        "id": "d1", "obligation": sit_out["id"], "owed_ms": 60_000, "by": "M. Pérez",
        "reason": "appeal upheld"}, token=htc)
    assert status == 201, ack
    status, ack = await server.api("POST", "/api/committee/increase", {
        "id": "i1", "player": "a2", "origin_game": "g1", "games": 1, "sit_out_ms": 60_000, "by": "J. Soto",
        "reason": "struck an umpire's mount"}, token=htc)
    assert status == 201, ack
    status, doc = await server.api("GET", "/api/players/a2/obligations", token=htc)
    first = next(o for o in doc["obligations"] if o["kind"] == "suspension")
    status, ack = await server.api("POST", "/api/committee/rescind", {
        "id": "r1", "obligation": first["id"], "by": "M. Pérez", "reason": "mistaken identity"}, token=htc)
    assert status == 201, ack
    return htc


def english_in(texts: dict[str, str]) -> dict[str, list[str]]:
    """Each text (by where it was read) that says a code of the log format as it is."""
    return {where: found for where, text in texts.items() if (found := english_codes(text))}


async def test_the_reports_and_the_decisions_spanish_texts_say_every_code_in_spanish(server: Server) -> None:
    htc = await a_game_and_its_decisions(server)
    status, report = await server.api("GET", "/games/g1/report.json")
    assert status == 200
    voided = [c for c in report["cards"] if c["voided"]]
    assert sorted(c["color"] for c in voided) == ["red", "yellow", "yellow"]
    assert {c["text"]["es"].split(" para ")[0].split(" al ")[0] for c in voided} == {
        "Anulada: tarjeta amarilla", "Anulada: tarjeta roja"}, [c["text"]["es"] for c in voided]
    spanish = {f"entry {x['cause']} {x['kind']}": x["text"]["es"] for x in report["entries"]}
    spanish |= {f"decision {d['id']}": d["text"]["es"] for d in report["decisions"]}
    status, decisions = await server.api("GET", "/api/events/cup/decisions", token=htc)
    spanish |= {f"listed {d['id']}": d["text"]["es"] for d in decisions}
    rows = list(csv.DictReader(io.StringIO(await _text(server, "/games/g1/report.csv"))))
    spanish |= {f"csv {r['kind']} {r['cause']}": r["text_es"] for r in rows}
    assert len(spanish) > 20 and all(spanish.values()), spanish
    assert english_in(spanish) == {}

    # The printable page in Spanish: what it shows, but for the ids and the English it
    # shows beneath the Spanish on purpose.
    page = await _text(server, "/games/g1/report?lang=es")
    shown = html.unescape(re.sub(r"<[^>]+>", "\n", page.split("<body>", 1)[1]))
    english = [x["text"]["en"] for x in report["entries"]] + [d["text"]["en"] for d in report["decisions"]]
    english += [r["text_en"] for r in rows]
    ids = [o["id"] for o in report["obligations"]] + [o["cause"] for o in report["obligations"]]
    for said in sorted({*english, *ids}, key=len, reverse=True):
        shown = shown.replace(said, "")
    lines = {f"page line {i}": line for i, line in enumerate(shown.splitlines()) if line.strip()}
    assert english_in(lines) == {}


async def test_the_decisions_name_the_event_and_the_game_as_people_do(server: Server) -> None:
    htc = await a_game_and_its_decisions(server)
    status, decisions = await server.api("GET", "/api/events/cup/decisions", token=htc)
    assert status == 200
    by_type = {d["type"]: d["text"] for d in decisions}
    setup = by_type["event.setup"]
    assert setup["en"].startswith(f"Event {EVENT_NAME} set up") and "cup" not in setup["en"], setup
    assert setup["es"].startswith(f"Evento {EVENT_NAME} preparado"), setup
    for kind in ("committee.decrease", "committee.increase", "committee.rescind"):
        text = by_type[kind]
        assert f"from game {GAME}" in text["en"] and "game g1" not in text["en"], text
        assert f"del partido {GAME_ES}" in text["es"], text
    status, report = await server.api("GET", "/games/g1/report.json")
    assert {kind: d["text"] for d in report["decisions"] for kind in [d["type"]]} == {
        k: v for k, v in by_type.items() if k.startswith("committee.")}
    # The ledger's own notices say where an obligation comes from the same way.
    status, ack = await server.api("POST", "/api/committee/rescind", {
        "id": "r2", "obligation": next(o["id"] for o in report["obligations"] if o["player"] == "h1"),
        "by": "M. Pérez", "reason": "appeal upheld"}, token=htc)
    assert status == 201, ack
    (withdrawn,) = [n for n in ack["notices"] if n["type"] == "obligation.withdrawn"]
    assert f"from game {GAME} is withdrawn" in withdrawn["text"]["en"], withdrawn
    assert f"del partido {GAME_ES}" in withdrawn["text"]["es"], withdrawn


async def test_the_draws_proposals_name_the_game_by_its_teams_and_round(server: Server) -> None:
    teams = {"aiken": "Aiken Arena", "bayou": "Bayou Blue", "cedar": "Cedar Creek"}
    status, ack = await server.api("POST", "/api/events", {
        "id": "ev", "event": "cup", "name": EVENT_NAME, "class": "uspa", "handicap": 8, "teams": list(teams)})
    assert status == 201, ack
    await register(server, teams)
    status, ack = await server.api("POST", "/api/events/cup/draw", {
        "id": "draw-1", "format": "knockout", "teams": list(teams)})
    assert status == 201, ack
    status, bracket = await server.api("GET", "/api/events/cup/draw")
    (semi,) = [g for g in bracket["games"] if g["name"] == "sf"]
    home, away = semi["home"]["team"], semi["away"]["team"]
    status, ack = await server.api("POST", "/api/games", {
        "game": semi["game"], "event": "cup", "kind": semi["kind"], "handicap": 8, "teams": {
            side: {"team": team, "players": [f"{team}-1", f"{team}-2", f"{team}-3"]}
            for side, team in (("home", home), ("away", away))}})
    assert status == 201, ack
    tk, ump = await server.device("timekeeper", semi["game"]), await server.device("umpire", semi["game"])
    await tk.send({"type": "clock.start", "game": semi["game"]})
    await ump.send({"type": "goal", "game": semi["game"], "team": "home"})
    await ump.send({"type": "game.end", "game": semi["game"]})
    await tk.close()
    await ump.close()

    status, bracket = await server.api("GET", "/api/events/cup/draw")
    (proposal,) = bracket["proposals"]
    assert (proposal["action"], proposal["team"], proposal["game"]) == ("eliminate", away, semi["game"])
    text: dict[str, Any] = proposal["text"]
    named = f"{teams[home]} v {teams[away]} (semi-final)"
    assert text["en"].startswith(f"{teams[away]} lost {named}"), text
    assert text["es"].startswith(f"{teams[away]} perdió {teams[home]} contra {teams[away]} (semifinal)"), text
    assert semi["game"] not in text["en"] + text["es"], text

    # The committee's decisions name a game of the draw the same way.
    status, ack = await server.api("POST", f"/api/games/{semi['game']}/schedule", {
        "starts_at": 1_796_148_000_000, "officials": {"umpires": ["M. Pérez"]}})
    assert status == 201, ack
    status, decisions = await server.api("GET", "/api/events/cup/decisions")
    (scheduled,) = [d["text"] for d in decisions if d["type"] == "game.scheduled"]
    assert scheduled["en"].startswith(f"Game {named} scheduled"), scheduled
    assert scheduled["es"].startswith(f"Partido {teams[home]} contra {teams[away]} (semifinal) programado")
    (draw,) = [d["text"] for d in decisions if d["type"] == "draw.made"]
    assert draw["en"].startswith(f"Draw of {EVENT_NAME} made: knockout"), draw
    assert draw["es"].startswith(f"Cuadro de {EVENT_NAME} sorteado: eliminación directa"), draw
