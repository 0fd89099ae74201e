"""The game report as CSV (``GET /games/{game}/report.csv``): one row per entry of
the report (``report.build``), then one per obligation the game created."""

from __future__ import annotations

import csv
import io

from ..rules.text import mmss
from .report import Report, citation, iso

ENTRY_COLUMNS = ["kind", "seq", "at", "period", "clock", "play", "player", "side", "team", "detail",
                 "clause", "citation", "official", "voided", "cause", "text_en", "text_es"]


def to_csv(report: Report) -> str:
    """One row per entry (cards, penalties, box trips, releases, goals, ...), then one per obligation
    created by the game (``kind`` ``obligation``, ``detail`` its kind and status)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(ENTRY_COLUMNS)
    for x in report.entries:
        m = x.moment
        w.writerow([x.kind, x.seq if x.seq is not None else "", iso(m.at), m.period, mmss(m.clock_ms),
                    mmss(m.play_ms), x.player or "", x.side or "", x.team or "", x.detail, x.clause,
                    x.citation, x.official, "yes" if x.voided else "", x.cause, x.text.en, x.text.es])
    for o in report.obligations:
        where = f" · in {o.applied_in}" if o.applied_in else ""
        detail = f"{o.kind} {mmss(o.owed_ms)} · {o.status}{where}"
        w.writerow(["obligation", "", "", "", "", "", o.player, "", o.team, detail, o.clause,
                    citation(o.clause), o.by or "", "", o.cause, o.reason or "", ""])
    return buf.getvalue()
