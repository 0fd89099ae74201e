"""Rosters from a CSV: the template, and the import of teams and players.

The import checks every row (the event's schema, the token's rights, the file's own
consistency and the engine's checks) before it sends anything; a file with one bad row
imports nothing and names each bad row by line and column (403 ``out_of_scope`` when a
row is of another event than the committee token's, else 400 ``invalid_csv``). Rows
that register what is registered already are skipped. Each registration of a file has
an id made of the file's digest and its line, so a file sent again is acked as
duplicates. Its routes are in the rosters' table (``rosters.py``).
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import re
from typing import Any

import msgspec
from aiohttp import web

from ...errors import AuthError, MalformedEvent, Refused
from ...rules import codec
from ...rules.engine import Engine
from ...rules.events import PlayerRegistered, TeamRegistered
from ...rules.rosters import PlayerEntry, TeamEntry
from ..devices.ingest import submit_fields
from ..reports import report_csv
from ..service import Service
from ..wire import api_types, auth
from ..wire import protocol as pr
from . import committee_api
from .responses import RETRY, error_status, problem, send

#: The CSV's columns, in the template's order (one row per player; the team's repeat).
COLUMNS = ("team", "team_name", "short", "primary", "secondary", "player", "player_name", "number",
           "handicap")
TEMPLATE_ROWS = (
    ("la-aguada", "La Aguada", "AGU", "#1f4e9c", "#ffffff", "novillo-astrada", "Eduardo Novillo Astrada",
     "1", "7"),
    ("la-aguada", "La Aguada", "AGU", "#1f4e9c", "#ffffff", "ortega", "Martín Ortega", "2", "5"),
    ("el-nandu", "El Ñandú", "ÑAN", "#c62828", "#f5d90a", "", "", "", ""),
)
#: The CSV column an event field comes from (for a bad row's report).
_TEAM_COLUMNS = {"team": "team", "name": "team_name", "short": "short", "colors": "primary",
                 "colors.primary": "primary", "colors.secondary": "secondary", "event": "event"}
_PLAYER_COLUMNS = {"player": "player", "name": "player_name", "number": "number",
                   "handicap": "handicap", "team": "team"}


def _bad_rows(code: str, detail: str, rows: list[api_types.CsvRowProblem], status: int = 400) -> web.Response:
    """A file that can't be imported (400; 403 with a row outside a committee token's event):
    every bad row, by line and column."""
    return send(api_types.InvalidCsv(code=code, detail=detail, rows=sorted(rows, key=lambda r: r.line)),
                 status)


async def template_csv(request: web.Request) -> web.Response:
    out = io.StringIO()
    w = report_csv.SafeWriter(out)
    w.writerow(COLUMNS)
    w.writerows(TEMPLATE_ROWS)
    # With a BOM, so that a spreadsheet opens the accents right; the import takes it or not.
    return web.Response(body=("\ufeff" + out.getvalue()).encode(), content_type="text/csv", charset="utf-8",
                        headers={"Content-Disposition": 'attachment; filename="rosters.csv"'})


class _Row(msgspec.Struct):
    """One registration a file makes: its line, its fields, and the event they decode to."""

    line: int
    kind: str                       # "team" or "player"
    fields: dict[str, Any]


class _Bad(Exception):
    def __init__(self, line: int, field: str, reason: str) -> None:
        super().__init__(reason)
        self.problem = api_types.CsvRowProblem(line=line, field=field, reason=reason)


def _int(text: str, line: int, column: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise _Bad(line, column, f"{text!r} is not a whole number") from None


def _field_of(err: MalformedEvent, columns: dict[str, str]) -> str:
    """The CSV column a schema error names (``… - at `$.colors.primary` ``)."""
    m = re.search(r"at `\$\.([\w.]+)`", err.detail)
    path = m.group(1) if m else ""
    return columns.get(path, columns.get(path.split(".")[0], path or "row"))


def _parse(text: str) -> tuple[list[_Row], list[api_types.CsvRowProblem]]:
    """Every registration the file makes (teams once each, in the order first met), and every
    row that can't be read as one, by line."""
    problems: list[api_types.CsvRowProblem] = []
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        return [], [api_types.CsvRowProblem(line=1, field="", reason="the file is empty")]
    except csv.Error as err:
        return [], [api_types.CsvRowProblem(line=1, field="", reason=f"not CSV: {err}")]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        return [], [api_types.CsvRowProblem(line=1, field=c, reason="the header has no such column")
                    for c in missing]
    at = {c: header.index(c) for c in COLUMNS}
    out: list[_Row] = []
    teams: dict[str, tuple[int, dict[str, Any]]] = {}
    players: dict[str, int] = {}
    while True:
        line = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as err:
            problems.append(api_types.CsvRowProblem(line=line, field="", reason=f"not CSV: {err}"))
            break
        if not any(c.strip() for c in cells):
            continue  # a blank line
        cell = {c: (cells[i].strip() if i < len(cells) else "") for c, i in at.items()}
        try:
            team = cell["team"]
            if not team:
                raise _Bad(line, "team", "every row names its team")
            team_fields = {"team": team, "name": cell["team_name"], "short": cell["short"],
                           "colors": {"primary": cell["primary"], "secondary": cell["secondary"]}}
            first = teams.get(team)
            if first is None:
                teams[team] = (line, team_fields)
                out.append(_Row(line, "team", team_fields))
            elif first[1] != team_fields:
                differs = next(k for k in ("name", "short", "colors") if first[1][k] != team_fields[k])
                column = {"name": "team_name", "colors": "primary"}.get(differs, differs)
                raise _Bad(line, column, f"team {team!r} is given other {column} on line {first[0]}")
            if cell["player"]:
                player = cell["player"]
                if player in players:
                    raise _Bad(line, "player", f"player {player!r} is on line {players[player]} already")
                players[player] = line
                out.append(_Row(line, "player", {
                    "player": player, "name": cell["player_name"], "team": team,
                    "number": _int(cell["number"], line, "number"),
                    "handicap": _int(cell["handicap"], line, "handicap")}))
            elif cell["player_name"] or cell["number"] or cell["handicap"]:
                raise _Bad(line, "player", "a row with a player's name, number or handicap names the player")
        except _Bad as bad:
            problems.append(bad.problem)
    return out, problems


def _unchanged(engine: Engine, row: _Row, event: str | None) -> bool:
    """Whether ``row`` registers exactly what is registered now (and its team is in ``event``)."""
    f = row.fields
    if row.kind == "team":
        t: TeamEntry | None = engine.team(f["team"])
        tournament = engine.tournament(event) if event is not None else None
        entered = event is None or (tournament is not None and f["team"] in tournament.teams)
        return (t is not None and entered and (t.name, t.short, t.colors.primary.lower(),
                                               t.colors.secondary.lower())
                == (f["name"], f["short"], f["colors"]["primary"].lower(), f["colors"]["secondary"].lower()))
    p: PlayerEntry | None = engine.player(f["player"])
    return p is not None and (p.name, p.number, p.handicap, p.team) == (
        f["name"], f["number"], f["handicap"], f["team"])


def _scope_column(row: _Row, err: AuthError) -> str:
    """The column a committee's refusal of a row names: the team's, or the player's."""
    return "team" if row.kind == "team" or err.detail.startswith("team ") else "player"


async def import_csv(request: web.Request) -> web.Response:
    claims = committee_api.staff(request)
    svc = request.app[Service.KEY]
    event = request.query.get("event") or None
    if event is not None and (refusal := committee_api.event_refusal(claims, event)) is not None:
        return refusal
    raw = await request.read()
    digest = hashlib.sha256(raw).hexdigest()[:16]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        return _bad_rows("invalid_csv", "the file is not UTF-8; nothing was imported", [
            api_types.CsvRowProblem(line=line, field="", reason=f"byte {err.start + 1} is not UTF-8")])
    rows, problems = _parse(text)
    engine = svc.hub.engine
    known = svc.hub.keys
    sends: list[tuple[_Row, dict[str, Any]]] = []
    unchanged = 0
    outside = 0  # rows a committee token may not send (another event's team or player)
    for row in rows:
        cid = f"csv-{digest}-{row.line}-{row.kind[0]}"
        fields = {**row.fields, "type": f"{row.kind}.registered", "id": cid}
        if row.kind == "team":
            # A file names no logo: a team keeps the one it has (as this id first registered it).
            team = row.fields["team"]
            mine = next((e for e in engine.team_history(team) if e.cause == f"{claims.sub}/{cid}"), None)
            current = mine or engine.team(team)
            if current is not None and current.logo is not None:
                fields["logo"] = current.logo
            if event is not None:
                fields["event"] = event
        columns = _TEAM_COLUMNS if row.kind == "team" else _PLAYER_COLUMNS
        try:
            trial = codec.event_from_fields({**fields, "id": f"{claims.sub}/{cid}", "at": 0})
            auth.authorize(engine, claims, fields["type"], fields)
            assert isinstance(trial, TeamRegistered | PlayerRegistered)
            engine.check_registration(trial)  # what the rules would refuse, nothing applied
        except Refused as err:
            problems.append(api_types.CsvRowProblem(line=row.line, field="event", reason=err.detail))
            continue
        except MalformedEvent as err:
            problems.append(api_types.CsvRowProblem(line=row.line, field=_field_of(err, columns),
                                                    reason=_reason(err.detail)))
            continue
        except AuthError as err:
            if claims.role != "committee" or err.code != "out_of_scope":
                return problem(403, err.code, err.detail)  # the token's, not the row's
            outside += 1
            problems.append(api_types.CsvRowProblem(line=row.line, field=_scope_column(row, err),
                                                    reason=err.detail))
            continue
        if (claims.sub, cid) not in known and _unchanged(engine, row, event):
            unchanged += 1  # (a file sent again: its rows are sent, and acked as duplicates)
            continue
        sends.append((row, fields))
    if outside:
        more = len(problems) - outside
        also = f", {more} more can't be imported" if more else ""
        return _bad_rows("out_of_scope", f"{outside} row(s) change a team or player of another event than "
                                         f"{claims.event!r}{also}; nothing was imported", problems, 403)
    if problems:
        return _bad_rows("invalid_csv", f"{len(problems)} row(s) can't be imported; nothing was imported",
                         problems)
    # Sent together: each is applied in this order as it is submitted, and committed at once.
    results = await asyncio.gather(*(submit_fields(svc, claims, fields, None) for _, fields in sends))
    acks = [r for r in results if isinstance(r, pr.Ack)]
    failed = next((r for r in results if isinstance(r, pr.Error)), None)
    new = [row.kind for (row, _), r in zip(sends, results, strict=True)
           if isinstance(r, pr.Ack) and not r.duplicate]
    done = api_types.RosterImported(teams=new.count("team"), players=new.count("player"),
                                    unchanged=unchanged, acks=acks, error=failed)
    if failed is not None:
        return send(done, error_status(failed), RETRY if failed.retry else None)
    return send(done)


def _reason(detail: str) -> str:
    """A schema error's reason, without the path (the column says where)."""
    return re.sub(r"\s*-\s*at `\$[^`]*`$", "", detail)
