"""The game report as CSV (``GET /games/{game}/report.csv``): one row per entry of
the report (``report.build``), then one per obligation the game created (rescinded ones
too), then one per committee decision about those. Ids stay in
``player`` and ``team``; ``player_name``, ``number`` and ``team_name`` are what the
roster registers (empty when nothing is).

Every CSV the service writes goes through ``SafeWriter``: a cell that a spreadsheet would read
as a formula (one that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return,
OWASP's rule: an importer strips a leading tab or CR and then reads what follows) is
written with a ``'`` before it, which the spreadsheet shows as text and hides. Names are
stored as given; only the export neutralises them."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from typing import Any

from ...rules.text import half, mmss
from ..ops.wallclock import iso
from . import audit
from .report import Report, citation

ENTRY_COLUMNS = ["kind", "seq", "at", "period", "clock", "play", "player", "player_name", "number", "side",
                 "team", "team_name", "detail", "clause", "citation", "official", "voided", "cause",
                 "text_en", "text_es"]


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutral(cell: object) -> str:
    """The cell as text a spreadsheet will not run: ``'`` before one that starts a formula."""
    text = str(cell)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class SafeWriter:
    """``csv.writer`` (CRLF lines) whose every cell goes through ``neutral``."""

    def __init__(self, out: Any) -> None:
        self._w = csv.writer(out, lineterminator="\r\n")

    def writerow(self, row: Iterable[object]) -> None:
        self._w.writerow([neutral(c) for c in row])

    def writerows(self, rows: Iterable[Iterable[object]]) -> None:
        for row in rows:
            self.writerow(row)


def _opt(value: object) -> str:
    return "" if value is None else str(value)


def to_csv(report: Report) -> str:
    """The result (``result_row``), then one row per entry (cards, penalties, box trips,
    releases, goals, ...), then one per obligation
    created by the game (``kind`` ``obligation``, ``detail`` its kind and status, ``official`` who
    decided on it and ``text_en``/``text_es`` what: "Rescinded by … at …: why"), then one per
    committee decision about them (``kind`` its type: ``committee.rescind``, …; ``cause`` its id)."""
    buf = io.StringIO()
    w = SafeWriter(buf)
    w.writerow(ENTRY_COLUMNS)
    w.writerows(rows(report))
    return buf.getvalue()


def result_row(report: Report) -> list[object]:
    """The game's result first (``kind`` ``result``): ``detail`` the score as it stands, goals on
    handicap included ("5½–4"), then the goals on handicap ("on handicap 1½–0") and the status;
    ``seq`` the last log position the report folded."""
    h, a = report.home, report.away
    detail = f"{half(h.score)}–{half(a.score)}"
    en = f"{h.name or h.team} {half(h.score)} – {half(a.score)} {a.name or a.team}"
    es = en
    if report.goals_on_handicap is not None:
        detail += f" · on handicap {half(h.on_handicap)}–{half(a.on_handicap)}"
        en += f" (goals on handicap: {half(h.on_handicap)}–{half(a.on_handicap)})"
        es += f" (goles de hándicap: {half(h.on_handicap)}–{half(a.on_handicap)})"
    detail += f" · {report.status}"
    return ["result", report.seq, "", "", "", "", "", "", "", "", "", "", detail, "", "", "", "", "", en, es]


def rows(report: Report) -> Iterator[list[object]]:
    """The report's rows as ``to_csv`` writes them, before neutralising (no header): the result,
    then the entries, the obligations and the decisions."""
    yield result_row(report)
    for x in report.entries:
        m = x.moment
        yield [x.kind, _opt(x.seq), iso(m.at), m.period, mmss(m.clock_ms), mmss(m.play_ms),
               x.player or "", x.player_name or "", _opt(x.number), x.side or "", x.team or "",
               x.team_name or "", x.detail, x.clause, x.citation, x.official, "yes" if x.voided else "",
               x.cause, x.text.en, x.text.es]
    roster = report.roster
    teams = {s.team: s.name for s in (report.home, report.away) if s.name}
    for o in report.obligations:
        where = f" · in {o.applied_in}" if o.applied_in else ""
        detail = f"{o.kind} {mmss(o.owed_ms)} · {o.status}{where}"
        p = roster.players.get(o.player) if roster is not None else None
        decided = audit.note(o)
        by = o.rescinded.by if o.rescinded else o.decreased.by if o.decreased else o.by or ""
        yield ["obligation", "", "", "", "", "", o.player, p.name if p else "",
               _opt(p.number if p else None), "", o.team, teams.get(o.team, ""), detail, o.clause,
               citation(o.clause), by, "", o.cause, decided.en if decided else o.reason or "",
               decided.es if decided else ""]
    for d in report.decisions:
        p = roster.players.get(d.player) if roster is not None and d.player else None
        change = f"{mmss(d.from_ms)} → {mmss(d.owed_ms or 0)}" if d.from_ms is not None else ""
        detail = " · ".join(x for x in (d.kind or "", change, d.obligation or "") if x)
        yield [d.type, "", iso(d.at), "", "", "", d.player or "", p.name if p else "",
               _opt(p.number if p else None), "", d.team or "", teams.get(d.team or "", ""), detail, "", "",
               d.by, "", d.id, d.text.en, d.text.es]
