"""The committee's decisions stay visible (docs/protocol-http.md, "The committee's
decisions"): a rescinded obligation stays in the ledger marked rescinded, with who,
when and why; a decrease shows from what to what; an increase who and why; the origin
game's report (HTML, JSON, CSV) lists them; the event's decisions are one listing and
one CSV. A real service on a real SQLite file, as a committee would use it."""

from __future__ import annotations

import csv
import io

import aiohttp

from ..conftest import Server
from ..http.test_ledger_api import _red_in_game_one as red_in_game_one

BY = "Host Tournament Committee"


async def _red_in_game_one(server: Server) -> str:
    """Event ``cup``; game g1: a2 (team g1-away) shown a red; g1 ends. The committee's token."""
    await red_in_game_one(server)
    return server.token("committee", "htc-cup", event="cup", official=BY)


async def _text(server: Server, path: str) -> str:
    async with aiohttp.ClientSession() as s, s.get(server.http + path) as r:
        assert r.status == 200, path
        return await r.text()


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


async def test_a_rescinded_suspension_stays_in_the_ledger_and_the_report(server: Server) -> None:
    htc = await _red_in_game_one(server)
    status, doc = await server.api("GET", "/api/players/a2/obligations", token=htc)
    (ob,) = doc["obligations"]
    status, ack = await server.api("POST", "/api/committee/rescind", {
        "id": "r1", "obligation": ob["id"], "by": "M. Pérez", "reason": "shown to the wrong player"},
        token=htc)
    assert status == 201, ack
    at = ack["at"]

    # The ledger keeps it, marked rescinded, with who, when and why.
    status, every = await server.api("GET", "/api/obligations", token=htc)
    (kept,) = [o for o in every if o["id"] == ob["id"]]
    assert kept["status"] == "rescinded"
    assert kept["rescinded"] == {"by": "M. Pérez", "reason": "shown to the wrong player",
                                 "cause": "htc-cup/r1", "at": at}
    status, owed = await server.api("GET", "/api/obligations?status=pending", token=htc)
    assert [o["id"] for o in owed] == []          # a client reading what is owed sees nothing owed
    status, rescinded = await server.api("GET", "/api/obligations?status=rescinded", token=htc)
    assert [o["id"] for o in rescinded] == [ob["id"]]
    status, doc = await server.api("GET", "/api/players/a2/obligations", token=htc)
    assert [(o["id"], o["status"], o["rescinded"]["by"]) for o in doc["obligations"]] == [
        (ob["id"], "rescinded", "M. Pérez")]

    # Game 1's report lists it as rescinded: JSON, CSV, HTML.
    status, report = await server.api("GET", "/games/g1/report.json")
    (listed,) = report["obligations"]
    assert (listed["id"], listed["status"], listed["rescinded"]["reason"]) == (
        ob["id"], "rescinded", "shown to the wrong player")
    (decision,) = report["decisions"]
    assert (decision["type"], decision["by"], decision["at"], decision["reason"], decision["obligation"]) == (
        "committee.rescind", "M. Pérez", at, "shown to the wrong player", ob["id"])
    rows = _csv(await _text(server, "/games/g1/report.csv"))
    (row,) = [r for r in rows if r["kind"] == "obligation"]
    assert "rescinded" in row["detail"]
    assert row["official"] == "M. Pérez" and row["text_en"].startswith("Rescinded by M. Pérez")
    assert "shown to the wrong player" in row["text_en"] and "Anulada por M. Pérez" in row["text_es"]
    (drow,) = [r for r in rows if r["kind"] == "committee.rescind"]
    assert (drow["official"], drow["cause"]) == ("M. Pérez", "htc-cup/r1")
    html = await _text(server, "/games/g1/report")
    assert "created no obligations" not in html
    assert "<del>" in html and "Rescinded by M. Pérez" in html and "shown to the wrong player" in html

    # The next game of a2's team takes nothing from it.
    status, ack = await server.api("POST", "/api/games", {
        "id": "setup-g2", "game": "g2", "event": "cup", "handicap": 8, "arena": "a1", "teams": {
            "home": {"team": "g1-away", "players": ["a1", "a2", "a3"]},
            "away": {"team": "g1-home", "players": ["h1", "h2", "h3"]}}})
    assert status == 201, ack
    assert [n for n in ack["notices"] if n["type"] == "alert"] == []
    tk = await server.device("timekeeper", "g2")
    start = await tk.send({"type": "clock.start", "game": "g2"})
    await tk.close()
    assert [n for n in start["notices"] if n["type"].startswith("obligation.")] == []
    status, view = await server.api("GET", "/api/games/g2")
    a2 = next(p for p in view["view"]["players"] if p["id"] == "a2")
    assert a2["suspended"] is False
    status, doc = await server.api("GET", "/api/players/a2/obligations", token=htc)
    assert [(o["status"], o["applied_in"]) for o in doc["obligations"]] == [("rescinded", None)]

    # Rescinding it again is refused: nothing is owed.
    status, refused = await server.api("POST", "/api/committee/rescind", {
        "id": "r2", "obligation": ob["id"], "by": BY, "reason": "again"}, token=htc)
    assert status == 409 and refused["code"] == "unknown_obligation"
    assert "rescinded" in refused["detail"]


async def test_a_decrease_and_an_increase_show_who_when_and_why(server: Server) -> None:
    htc = await _red_in_game_one(server)
    ump = await server.device("umpire", "g1")
    await ump.send({"type": "postgame.card", "game": "g1", "player": "h1", "level": "2y"})
    await ump.close()
    status, doc = await server.api("GET", "/api/players/h1/obligations", token=htc)
    (sit_out,) = doc["obligations"]
    status, dec = await server.api("POST", "/api/committee/decrease", {
        "id": "d1", "obligation": sit_out["id"], "owed_ms": 60_000, "by": "M. Pérez",
        "reason": "appeal upheld"}, token=htc)
    assert status == 201, dec
    status, inc = await server.api("POST", "/api/committee/increase", {
        "id": "i1", "player": "a2", "origin_game": "g1", "games": 1, "by": "J. Soto",
        "reason": "struck an umpire's mount"}, token=htc)
    assert status == 201, inc

    status, doc = await server.api("GET", "/api/players/h1/obligations", token=htc)
    (o,) = doc["obligations"]
    assert (o["status"], o["owed_ms"]) == ("pending", 60_000)
    assert o["decreased"] == {"by": "M. Pérez", "reason": "appeal upheld", "cause": "htc-cup/d1",
                              "at": dec["at"], "from_ms": 120_000}
    status, doc = await server.api("GET", "/api/players/a2/obligations", token=htc)
    (added,) = [o for o in doc["obligations"] if o["clause"] == "R6" and o["cause"] == "htc-cup/i1"]
    assert added["increased"] == {"by": "J. Soto", "reason": "struck an umpire's mount",
                                  "cause": "htc-cup/i1", "at": inc["at"]}

    status, report = await server.api("GET", "/games/g1/report.json")
    assert [(d["type"], d["by"], d["at"], d["player"]) for d in report["decisions"]] == [
        ("committee.decrease", "M. Pérez", dec["at"], "h1"),
        ("committee.increase", "J. Soto", inc["at"], "a2")]
    assert report["decisions"][0]["from_ms"] == 120_000 and report["decisions"][0]["owed_ms"] == 60_000
    rows = _csv(await _text(server, "/games/g1/report.csv"))
    assert [r["kind"] for r in rows if r["kind"].startswith("committee.")] == [
        "committee.decrease", "committee.increase"]
    (d,) = [r for r in rows if r["kind"] == "committee.decrease"]
    assert "2:00 → 1:00" in d["detail"] and d["text_en"].endswith("appeal upheld")
    html = await _text(server, "/games/g1/report")
    assert "Decreased from 2:00 to 1:00 by M. Pérez" in html and "Increased by J. Soto" in html


async def test_the_events_decisions_listing_and_export(server: Server) -> None:
    htc = await _red_in_game_one(server)
    status, doc = await server.api("GET", "/api/players/a2/obligations", token=htc)
    (ob,) = doc["obligations"]
    await server.api("POST", "/api/committee/rescind", {
        "id": "r1", "obligation": ob["id"], "by": "M. Pérez", "reason": "=HYPERLINK(\"x\")"}, token=htc)
    status, ack = await server.api("POST", "/api/players", {
        "id": "p1", "player": "a2", "name": "José Díaz", "number": 4, "team": "g1-away"}, token=htc)
    assert status == 201, ack
    status, ack = await server.api("POST", "/api/events/cup/eliminate", {"team": "g1-home"}, token=htc)
    assert status == 201, ack
    status, ack = await server.api("POST", "/api/events/cup/complete", {}, token=htc)
    assert status == 201, ack

    status, rows = await server.api("GET", "/api/events/cup/decisions", token=htc)
    assert status == 200, rows
    got = [(d["type"], d["id"]) for d in rows]
    assert got == [("event.setup", "admin/ev"), ("committee.rescind", "htc-cup/r1"),
                   ("player.registered", "htc-cup/p1"), ("team.eliminated", "htc-cup/eliminate-cup-g1-home"),
                   ("event.complete", "htc-cup/complete-cup")], got
    assert [d["at"] for d in rows] == sorted(d["at"] for d in rows)
    rescind = rows[1]
    assert (rescind["by"], rescind["device"], rescind["official"]) == ("M. Pérez", "htc-cup", BY)
    assert (rescind["obligation"], rescind["game"], rescind["player"]) == (ob["id"], "g1", "a2")
    assert rows[2]["by"] == BY and rows[2]["player"] == "a2" and "José Díaz" in rows[2]["text"]["en"]
    assert rows[3]["team"] == "g1-home" and rows[3]["text"]["es"]

    # Another event's committee may not read them.
    other = server.token("committee", "htc-other", event="other")
    status, refused = await server.api("GET", "/api/events/cup/decisions", token=other)
    assert status == 403 and refused["code"] == "out_of_scope"
    status, refused = await server.api("GET", "/api/events/nope/decisions")
    assert status == 404 and refused["code"] == "unknown_event"

    # The CSV export: one row per decision, no cell a spreadsheet would run.
    status, text = await server.api("GET", "/api/events/cup/decisions.csv", token=htc)
    assert status == 200
    table = _csv(text)
    assert [r["type"] for r in table] == [d["type"] for d in rows]
    assert table[1]["reason"] == "'=HYPERLINK(\"x\")"
