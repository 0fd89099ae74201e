"""The game report as HTML (``GET /games/{game}/report``): the report's tables
(``report.build``) on one page that prints on A4, with an inline SVG timeline of
play time (``timeline_svg``): periods, goals and cards as marks, box trips and
red cards' no-substitute windows as bars. Players show as "#2 Ortega" with their
id beside, teams by their registered names in their colours (ids when nothing is
registered). ``?lang=es`` gives it in Spanish: its words (``report_words``), and what the
officials were told in the notices' own Spanish."""

from __future__ import annotations

import html
import typing
from collections.abc import Iterable, Sequence

from ..rules.events import Conduct
from ..rules.ledger import Obligation
from ..rules.notices import Text
from ..rules.text import half, mmss, spanish
from . import audit
from .report import BoxTrip, Entry, Moment, Report, TeamSheet, stoppage, who
from .report_words import citation_in, words
from .wallclock import iso

_HOME, _AWAY = "#1d64c8", "#d9730d"
_YELLOW, _RED, _GREEN = "#f0c000", "#d32f2f", "#2e9d57"


def _e(s: object) -> str:
    return html.escape(str(s), quote=True)


def _when(m: Moment, lang: str = "en") -> str:
    return (f'<span class="when">P{m.period} {mmss(m.clock_ms)}</span>'
            f'<span class="play">{mmss(m.play_ms)} {words(lang)("of_play")}</span>')


def _cite(c: str, lang: str) -> str:
    return f'<span class="clause"><b>{_e(c)}</b> {_e(citation_in(c, lang).split(" · ", 1)[-1])}</span>'


def _clause(x: Entry | BoxTrip, clause: str | None = None, lang: str = "en") -> str:
    return _cite(clause or x.clause, lang)


def _said(t: Text, lang: str) -> str:
    """A notice's text in the report's language."""
    return t.es if lang == "es" else t.en


_CONDUCTS = frozenset(typing.get_args(Conduct))


def _facts(x: Entry, lang: str) -> str:
    """A line's short facts: its ``detail``; in Spanish, a card's conduct (its colour, count and
    offense are in its text beneath) and whether it was voided, and the notice's own Spanish
    for any other line."""
    if lang != "es":
        return x.detail
    if x.kind not in ("card.recorded", "official.carded"):
        return x.text.es
    conduct = next((spanish(t) for t in x.detail.split(" · ") if t in _CONDUCTS), "conducta sin nombrar")
    return f"{conduct} · anulada" if x.voided else conduct


def _table(head: Sequence[str], rows: Iterable[str], empty: str) -> str:
    body = "".join(rows)
    if not body:
        return f'<p class="none">{_e(empty)}</p>'
    ths = "".join(f"<th>{_e(h)}</th>" for h in head)
    return f"<table><thead><tr>{ths}</tr></thead><tbody>{body}</tbody></table>"


def _side(x: Entry | BoxTrip) -> str:
    return f'<span class="side {_e(x.side or "")}">{_e(x.team_name or x.team or x.side or "")}</span>'


def _player(r: Report, player: str | None, empty: str = "") -> str:
    """``<b>#2 Ortega</b> <small>ortega</small>``: the registered number and name, then the id."""
    if not player:
        return _e(empty)
    shown = who(r.roster, player)
    if shown == player:
        return f"<b>{_e(player)}</b>"
    return f'<b>{_e(shown)}</b> <small class="id">{_e(player)}</small>'


def _mark(r: Report, player: str) -> str:
    """A player on the timeline, where room is short: "#2 Ortega" cut to 16 characters."""
    shown = who(r.roster, player)
    return shown if len(shown) <= 16 else shown[:15] + "…"


def _event(r: Report) -> str:
    """The event as displays name it: its name, with its id after it when they differ."""
    name = r.roster.event_name if r.roster is not None else None
    return r.event if not name else f"{name} ({r.event})" if name != r.event else name


def _team_name(r: Report, team: str) -> str:
    for sheet in (r.home, r.away):
        if sheet.team == team and sheet.name:
            return sheet.name
    return team


def _team_head(sheet: TeamSheet) -> str:
    """A team in the header: its registered name in its colours, with its logo."""
    if sheet.colors is None:
        return f'<div class="team {sheet.side}">{_e(sheet.team)}</div>'
    c = sheet.colors
    logo = f'<img class="logo" src="/logos/{_e(sheet.logo)}" alt="">' if sheet.logo else ""
    return (f'<div class="team {sheet.side}" data-colors="true" style="border-color: {_e(c.primary)}">'
            f'{logo}<span class="chip" style="background: {_e(c.primary)}; '
            f'border-color: {_e(c.secondary)}"></span>{_e(sheet.name or sheet.team)}'
            f'<small class="id">{_e(sheet.short or "")} · {_e(sheet.team)}</small></div>')


def _voided_by(x: Entry, lang: str) -> str:
    """Who voided a line, and when: "voided by ump-two at 14:05:09"."""
    if not x.voided or x.voided_by is None:
        return ""
    w = words(lang)
    when = f" {w('at_time')} {iso(x.voided_at)[11:19]} UTC" if x.voided_at is not None else ""
    return f'<div class="text">{_e(w("voided_by"))} {_e(x.voided_by)}{when}</div>'


def _on_handicap(r: Report, lang: str) -> str:
    """The goals each side started with (A5), under the score: "Goals on handicap: Aiken 1½"."""
    h = r.goals_on_handicap
    if h is None:
        return ""
    w = words(lang)
    given = [f"{_e(s.name or s.team)} {half(s.on_handicap)}" for s in (r.home, r.away) if s.on_handicap]
    how = (f"{w('hcp_matrix')}: {h.home_handicap} – {h.away_handicap}" if h.source == "matrix"
           else w("hcp_committee"))
    return (f'<div class="meta on-handicap">{_e(w("on_handicap"))}: {", ".join(given) or "0"} '
            f'<small>({_e(how)})</small></div>')


def _lineup(r: Report, sheet: TeamSheet, lang: str = "en") -> str:
    names = ", ".join(who(r.roster, p) for p in sheet.bench)
    bench = f" · {words(lang)('bench')} {names}" if sheet.bench else ""
    lineup = ", ".join(who(r.roster, p) for p in sheet.lineup)
    return f"<span>{_e(sheet.name or sheet.team)}: {_e(lineup)}{_e(bench)}</span>"


def timeline_svg(report: Report, lang: str = "en") -> str:
    """Play time on the x axis: periods, goals and cards as marks, box trips as bars."""
    # Where each period starts on the play-time axis: as played, then (a game still to
    # finish) a full period each.
    starts = list(report.period_starts) or [0]
    if report.status != "ended":
        while len(starts) < report.periods:
            starts.append(starts[-1] + report.period_ms)
        total = max(report.play_ms, starts[-1] + report.period_ms)
    else:
        total = report.play_ms
    total = max(total, 60_000)
    trips = report.box_trips
    red_windows = _red_windows(report)
    lanes = [(t.player, t.side) for t in trips] + [(p, s) for p, s, _, _ in red_windows]
    left, right, top = 120, 980, 34
    width = right - left
    lane_h = 22

    def x(ms: int) -> float:
        return round(left + width * min(ms, total) / total, 1)

    # Labels that would overlap go on another line.
    goal_rows = _stagger([x(g.moment.play_ms) for g in report.goals], 30)
    card_rows = _stagger([x(c.moment.play_ms) for c in report.cards], 44)
    goals_y = top + 26 + 11 * max(goal_rows, default=0)
    cards_y = goals_y + 32
    box_top = cards_y + 30 + 11 * max(card_rows, default=0)
    height = box_top + max(1, len(lanes)) * lane_h + 26

    w = words(lang)
    parts = [f'<svg class="timeline" viewBox="0 0 1000 {height}" xmlns="http://www.w3.org/2000/svg" '
             f'role="img" aria-label="{_e(w("timeline_label"))}">',
             "<defs><pattern id=\"wait\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
             "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fff3c4\"/>"
             f"<rect width=\"3\" height=\"6\" fill=\"{_YELLOW}\"/></pattern></defs>"]
    # period bands and the minute ruler
    for k, start in enumerate(starts):
        x0, x1 = x(start), x(starts[k + 1] if k + 1 < len(starts) else total)
        fill = "#f4f6fa" if k % 2 == 0 else "#ffffff"
        label = f"P{k + 1}" if k < report.periods else f"OT{k + 1 - report.periods}"
        parts.append(f'<rect x="{x0}" y="{top}" width="{round(x1 - x0, 1)}" height="{height - top - 18}" '
                     f'fill="{fill}"/><text x="{round((x0 + x1) / 2, 1)}" y="{top - 8}" '
                     f'class="t-period">{label}</text>')
    minute = 60_000
    every = 1 if total <= 10 * minute else 5   # a label every minute, or every five
    for m in range(0, total + 1, minute):
        big = m % (every * minute) == 0
        parts.append(f'<line x1="{x(m)}" x2="{x(m)}" y1="{height - 18}" y2="{height - (12 if big else 15)}" '
                     f'stroke="#8a94a6"/>')
        if big:
            parts.append(f'<text x="{x(m)}" y="{height - 2}" class="t-tick">{m // minute}′</text>')
    parts.append(f'<line x1="{left}" x2="{right}" y1="{height - 18}" y2="{height - 18}" stroke="#8a94a6"/>')
    # row labels
    parts.append(f'<text x="{left - 8}" y="{goals_y + 4}" class="t-lane">{_e(w("goals"))}</text>')
    parts.append(f'<text x="{left - 8}" y="{cards_y + 4}" class="t-lane">{_e(w("cards"))}</text>')
    for g, row in zip(report.goals, goal_rows, strict=True):
        color = _HOME if g.side == "home" else _AWAY
        score = "×" if g.voided else g.detail.rsplit("· ", 1)[-1]
        cx = x(g.moment.play_ms)
        parts.append(f'<g><title>{_e(_said(g.text, lang))}</title><circle cx="{cx}" cy="{goals_y}" r="6" '
                     f'fill="{color}"/><text x="{cx}" y="{goals_y - 9 - 11 * row}" class="t-mark">'
                     f"{_e(score)}</text></g>")
    for c, row in zip(report.cards, card_rows, strict=True):
        color = _RED if c.color == "red" else _YELLOW
        dash = ' stroke-dasharray="2 2" fill-opacity="0.25"' if c.voided else ""
        cx = x(c.moment.play_ms)
        parts.append(f'<g><title>{_e(_said(c.text, lang))}</title>'
                     f'<rect x="{round(cx - 4, 1)}" y="{cards_y - 7}" '
                     f'width="8" height="12" rx="1.5" fill="{color}" stroke="#333" stroke-width="0.6"{dash}/>'
                     f'<text x="{cx}" y="{cards_y + 17 + 11 * row}" class="t-mark">'
                     f'{_e(_mark(report, c.player) if c.player else c.role or "")}</text></g>')
    # box trips: solid while play time is owed, hatched while waiting for the stoppage
    end = report.play_ms
    for i, t in enumerate(trips):
        y = box_top + i * lane_h
        color = _HOME if t.side == "home" else _AWAY
        x0 = x(t.enter.play_ms)
        served = t.eligible.play_ms if t.eligible else min(end, t.enter.play_ms + t.owed_ms)
        out = t.release.play_ms if t.release else end
        parts.append(f'<text x="{left - 8}" y="{y + 12}" class="t-lane" fill="{color}">'
                     f'{_e(_mark(report, t.player))}</text>')
        parts.append(f'<g><title>{_e(who(report.roster, t.player))}: {_e(w("trips"))} {mmss(t.owed_ms)} '
                     f'{_e(w("of_play"))} ({_e(t.clause)}), '
                     f'{_e(w("in"))} {mmss(t.enter.play_ms)}, {_e(w("released"))} '
                     f'{mmss(out) if t.release else _e(w("the_end"))}</title>'
                     f'<rect x="{x0}" y="{y + 3}" width="{max(1.0, round(x(served) - x0, 1))}" height="12" '
                     f'fill="{_YELLOW}" stroke="{color}" stroke-width="1"/>')
        if out > served:
            wide = max(1.0, round(x(out) - x(served), 1))
            parts.append(f'<rect x="{x(served)}" y="{y + 3}" width="{wide}" '
                         f'height="12" fill="url(#wait)" stroke="{color}" stroke-width="1"/>')
        parts.append("</g>")
    for j, (player, side, start, stop) in enumerate(red_windows):
        y = box_top + (len(trips) + j) * lane_h
        color = _HOME if side == "home" else _AWAY
        parts.append(f'<text x="{left - 8}" y="{y + 12}" class="t-lane" fill="{color}">'
                     f'{_e(_mark(report, player))}</text>'
                     f'<g><title>{_e(who(report.roster, player))}: {_e(w("lg_red"))}</title>'
                     f'<rect x="{x(start)}" y="{y + 3}" width="{max(1.0, round(x(stop) - x(start), 1))}" '
                     f'height="12" fill="{_RED}" fill-opacity="0.8" stroke="{color}"/></g>')
    if not lanes:
        parts.append(f'<text x="{left + 6}" y="{box_top + 14}" class="t-none">'
                     f'{_e(w("no_trips_short"))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _stagger(xs: Sequence[float], gap: float) -> list[int]:
    """A line for each label at ``xs`` (in order): the first line where it doesn't touch the last one."""
    ends: list[float] = []
    rows = []
    for v in xs:
        row = next((i for i, end in enumerate(ends) if v - end >= gap), len(ends))
        if row == len(ends):
            ends.append(v)
        ends[row] = v
        rows.append(row)
    return rows


def _red_windows(report: Report) -> list[tuple[str, str, int, int]]:
    """(player, side, from, to) in play time: a red card's no-substitute window."""
    out = []
    for s in report.sent_off:
        if s.player is None:
            continue
        allowed = next((r for r in report.releases if r.kind == "sub.allowed" and r.player == s.player
                        and r.moment.play_ms >= s.moment.play_ms), None)
        out.append((s.player, s.side or "", s.moment.play_ms,
                    allowed.moment.play_ms if allowed else report.play_ms))
    return out


_CSS = (f":root {{ --home: {_HOME}; --away: {_AWAY}; --yellow: {_YELLOW}; --red: {_RED}; "
        "--ink: #141a24; --muted: #5b6576; --line: #d9dee7; }") + """
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 "Helvetica Neue", Arial, "Liberation Sans", "DejaVu Sans", sans-serif;
       color: var(--ink); background: #eef1f6; }
main { max-width: 1100px; margin: 24px auto; padding: 28px 36px; background: #fff;
        box-shadow: 0 2px 14px rgba(0,0,0,.08); border-radius: 8px; }
header { display: grid; grid-template-columns: 1fr auto 1fr; align-items: center; gap: 24px;
          border-bottom: 3px solid var(--ink); padding-bottom: 16px; }
header .team { font-size: 22px; font-weight: 700; text-transform: uppercase; letter-spacing: .03em; }
header .team.home { border-left: 8px solid var(--home); padding-left: 12px; }
header .team.away { border-right: 8px solid var(--away); padding-right: 12px; text-align: right; }
header .score { font-size: 44px; font-weight: 800; font-variant-numeric: tabular-nums; }
.meta { display: flex; flex-wrap: wrap; gap: 6px 22px; margin: 12px 0 4px; color: var(--muted); }
.meta b { color: var(--ink); }
h1 { font-size: 13px; letter-spacing: .14em; text-transform: uppercase; color: var(--muted);
      margin: 0 0 10px; }
h2 { font-size: 17px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h2 small { font-weight: 400; color: var(--muted); }
table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
th { text-align: left; font-size: .78em; letter-spacing: .08em; text-transform: uppercase;
      color: var(--muted); border-bottom: 1px solid var(--ink); padding: 4px 8px 4px 0; }
td { border-bottom: 1px solid var(--line); padding: 6px 8px 6px 0; vertical-align: top; }
tr { break-inside: avoid; }
tr.voided td { color: var(--muted); text-decoration: line-through; }
tr.rescinded td { color: var(--muted); }
.decided { font-weight: 600; }
.when { display: block; font-weight: 700; white-space: nowrap; }
.play { display: block; font-size: .86em; color: var(--muted); white-space: nowrap; }
.side { font-weight: 700; }
small.id { font-weight: 400; color: var(--muted); font-size: .82em; }
header .team small.id { display: block; font-size: 12px; letter-spacing: .06em; }
header .team .chip { display: inline-block; width: 14px; height: 14px; margin-right: 8px; border-radius: 3px;
                     border: 3px solid; vertical-align: 1px; }
header .team .logo { height: 40px; width: auto; max-width: 80px; object-fit: contain; margin-right: 10px;
                     vertical-align: middle; }
.side.home { color: var(--home); } .side.away { color: var(--away); }
.clause { white-space: nowrap; }
.clause b { display: inline-block; min-width: 2.4em; padding: 0 5px; margin-right: 4px;
             border: 1px solid var(--ink); border-radius: 3px; font-size: .86em; text-align: center; }
.card { display: inline-block; width: 10px; height: 14px; border-radius: 2px; margin-right: 6px;
         vertical-align: -2px; border: 1px solid rgba(0,0,0,.35); }
.card.yellow { background: var(--yellow); } .card.red { background: var(--red); }
.text { color: var(--muted); font-size: .9em; }
.none { color: var(--muted); font-style: italic; }
.timeline { width: 100%; height: auto; margin-top: 6px; }
.timeline text { font: 12px "Helvetica Neue", Arial, "Liberation Sans", sans-serif; fill: #3a4456; }
.timeline .t-period { text-anchor: middle; font-weight: 700; }
.timeline .t-tick { text-anchor: middle; font-size: 11px; }
.timeline .t-lane { text-anchor: end; font-weight: 700; }
.timeline .t-mark { text-anchor: middle; font-size: 11px; }
.timeline .t-none { fill: #8a94a6; font-style: italic; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; font-size: 12px; color: var(--muted); }
.legend i { display: inline-block; width: 18px; height: 10px; margin-right: 5px; vertical-align: -1px;
             border: 1px solid #555; }
.links { margin-top: 28px; font-size: 12px; color: var(--muted); }
.links a { color: inherit; }
@page { size: A4; margin: 14mm 12mm; }
@media print {
  body { background: #fff; font-size: 11px; }
  main { max-width: none; margin: 0; padding: 0; box-shadow: none; border-radius: 0; }
  header .score { font-size: 34px; }
  h2 { break-after: avoid; margin-top: 18px; }
  .timeline { break-inside: avoid; }
  .links { display: none; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""


def _released(t: BoxTrip, lang: str) -> str:
    w = words(lang)
    if t.release is None:
        return _e(w("still_in"))
    at = f'{_e(w("at_the"))} {_e(stoppage(t.stoppage or ""))}'
    return f'{_when(t.release, lang)}<div class="text">{at}</div>'


def _ob_source(o: Obligation, lang: str) -> str:
    """Where it came from, and what the committee decided about it (the report's language first,
    the other beneath)."""
    decided = audit.note(o)
    source = _e(o.cause if o.increased or not o.by else f"committee: {o.by}" + (f" — {o.reason}" if o.reason
                                                                                else ""))
    if decided is None:
        return source
    first, then = (decided.es, decided.en) if lang == "es" else (decided.en, decided.es)
    return f'{source}<div class="decided">{_e(first)}</div><div class="text">{_e(then)}</div>'


def _ob_what(o: Obligation, lang: str) -> str:
    w = words(lang)
    what = f"{_e(w(o.kind))}{' ' + mmss(o.owed_ms) + ' ' + w('of_play') if o.owed_ms else ''}"
    return f"<del>{what}</del>" if o.status == "rescinded" else what


def _card_icon(x: Entry) -> str:
    return f'<i class="card {"red" if x.color == "red" else "yellow"}"></i>'


def to_html(report: Report, lang: str = "en") -> str:
    """The page, in English or (``lang="es"``) Spanish."""
    r, w = report, words(lang)
    status = w(f"st_{r.status}")
    official = f" <small>({_e(w('team_official'))})</small>"
    other = "en" if lang == "es" else "es"
    cards = _table(
        [w("when"), w("player"), w("team"), w("card"), w("clause"), w("official")],
        (f'<tr class="{"voided" if c.voided else ""}" data-cause="{_e(c.cause)}">'
         f"<td>{_when(c.moment, lang)}</td><td>{_player(r, c.player)}"
         f"{_e(c.role or '')}{official if c.role else ''}</td>"
         f"<td>{_side(c)}</td>"
         f'<td>{_card_icon(c)}{_e(_facts(c, lang))}<div class="text">{_e(_said(c.text, lang))}</div></td>'
         f"<td>{_clause(c, lang=lang)}</td><td>{_e(c.official)}{_voided_by(c, lang)}</td></tr>"
         for c in r.cards),
        w("no_cards"))
    penalties = _table(
        [w("when"), w("against"), w("player"), w("penalty"), w("clause")],
        (f"<tr><td>{_when(p.moment, lang)}</td><td>{_side(p)}</td><td>{_player(r, p.player, '—')}</td>"
         f"<td>{_e(_facts(p, lang))}</td><td>{_clause(p, lang=lang)}</td></tr>" for p in r.penalties),
        w("no_penalties"))
    trips = _table(
        [w("player"), w("team"), w("in"), w("owed"), w("served"), w("released"), w("clause")],
        (f'<tr data-player="{_e(t.player)}"><td>{_player(r, t.player)}'
         f'<div class="text">{_e(spanish(t.kind) if lang == "es" else t.kind)}</div></td>'
         f"<td>{_side(t)}</td><td>{_when(t.enter, lang)}</td><td>{mmss(t.owed_ms)} {_e(w('of_play'))}</td>"
         f"<td>{_when(t.eligible, lang) if t.eligible else '—'}</td>"
         f"<td>{_released(t, lang)}</td>"
         f"<td>{_clause(t, lang=lang)}"
         f"{'<br>' + _clause(t, t.release_clause, lang) if t.release_clause else ''}</td></tr>"
         for t in r.box_trips),
        w("no_trips"))
    releases = _table(
        [w("when"), w("player"), w("team"), w("what"), w("clause")],
        (f"<tr><td>{_when(x.moment, lang)}</td><td>{_player(r, x.player)}</td><td>{_side(x)}</td>"
         f"<td>{_e(_said(x.text, lang))}</td><td>{_clause(x, lang=lang)}</td></tr>" for x in r.releases),
        w("no_releases"))
    sent = _table(
        [w("when"), w("player"), w("team"), w("no_sub"), w("clause")],
        (f"<tr><td>{_when(x.moment, lang)}</td><td>{_player(r, x.player)}</td><td>{_side(x)}</td>"
         f"<td>{_e(_facts(x, lang))}</td><td>{_clause(x, lang=lang)}</td></tr>" for x in r.sent_off),
        w("no_sent_off"))
    goals = _table(
        [w("when"), w("team"), w("player"), w("score")],
        (f'<tr class="{"voided" if g.voided else ""}" data-cause="{_e(g.cause)}">'
         f"<td>{_when(g.moment, lang)}</td><td>{_side(g)}</td><td>{_player(r, g.player, '—')}</td>"
         f"<td>{_e(_facts(g, lang))}{_voided_by(g, lang)}</td></tr>" for g in r.goals),
        w("no_goals"))
    alerts = _table(
        [w("when"), w("alert"), w("told"), w("clause"), w("event_col")],
        (f'<tr data-code="{_e(a.code or "")}"><td>{_when(a.moment, lang)}</td>'
         f'<td><b>{_e(a.code or "")}</b></td>'
         f'<td>{_e(_said(a.text, lang))}<div class="text">{_e(_said(a.text, other))}'
         f"</div></td><td>{_clause(a, lang=lang)}</td>"
         f"<td>{_e(a.cause)}<div class=\"text\">{_e(a.official)}</div></td></tr>" for a in r.alerts),
        w("no_alerts"))
    obligations = _table(
        [w("player"), w("team"), w("obligation"), w("clause"), w("status"), w("served_in"), w("from")],
        (f'<tr class="{_e(o.status)}" data-obligation="{_e(o.id)}"><td>{_player(r, o.player)}</td>'
         f"<td>{_e(_team_name(r, o.team))}</td>"
         f'<td>{_ob_what(o, lang)}<div class="text">{_e(o.id)}</div></td>'
         f"<td>{_cite(o.clause, lang)}</td><td>{_e(w(o.status))}</td><td>{_e(o.applied_in or '—')}</td>"
         f"<td>{_ob_source(o, lang)}</td></tr>"
         for o in r.obligations),
        w("no_obligations"))
    decisions = _table(
        [w("when"), w("decision"), w("player"), w("by"), w("changed")],
        (f'<tr data-decision="{_e(d.id)}"><td>{_e(iso(d.at))}</td><td><b>{_e(d.type)}</b></td>'
         f"<td>{_player(r, d.player, '—')}</td><td>{_e(d.by)}</td>"
         f'<td>{_e(_said(d.text, lang))}<div class="text">{_e(_said(d.text, other))}'
         f"</div></td></tr>" for d in r.decisions),
        w("no_decisions"))
    carried = _table(
        [w("player"), w("obligation"), w("clause"), w("from_game")],
        (f"<tr><td>{_player(r, c.player)}</td><td>{_e(w(c.kind))} {mmss(c.owed_ms)}</td>"
         f'<td><span class="clause"><b>{_e(c.clause)}</b></span></td><td>{_e(c.origin_game)}</td></tr>'
         for c in r.carried),
        w("no_carried"))
    legend = (f'<div class="legend"><span><i style="background:{_YELLOW}"></i>{_e(w("lg_box"))}</span>'
              f'<span><i style="background:repeating-linear-gradient(45deg,{_YELLOW} 0 3px,#fff3c4 3px 6px)">'
              f"</i>"
              f"{_e(w('lg_wait'))}</span>"
              f'<span><i style="background:{_RED}"></i>{_e(w("lg_red"))}</span>'
              f'<span><i style="background:{_HOME}"></i>{_e(r.home.name or r.home.team)}</span>'
              f'<span><i style="background:{_AWAY}"></i>{_e(r.away.name or r.away.team)}</span></div>')
    g = _e(r.game)
    q = "?lang=es" if lang == "es" else ""
    meta = "".join(f"<span>{_e(w(k))} <b>{_e(v)}</b>{_e(tail)}</span>" for k, v, tail in (
        ("game", r.game, ""), ("event", _event(r), ""), ("arena", r.arena or "—", ""),
        ("handicap", r.handicap, ""), ("kind", w("kind_" + r.kind), ""), ("status", status, ""),
        ("play", mmss(r.play_ms), f" {w('of')} {r.periods} × {mmss(r.period_ms)}"),
        ("log", f"seq {r.seq}", ""), ("generated", iso(r.generated_at), "")))
    return (
        f'<!doctype html><html lang="{"es" if lang == "es" else "en"}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<link rel="icon" href="data:,">'  # no /favicon.ico asked for (a 404): img-src allows data:
        f"<title>{_e(w('title'))} · {g}</title><style>{_CSS}</style></head><body><main>"
        f"<h1>{_e(w('title'))} · {_e(w('rule14'))}</h1>"
        f'<header>{_team_head(r.home)}'
        f'<div class="score">{half(r.home.score)} – {half(r.away.score)}</div>'
        f'{_team_head(r.away)}</header>'
        f'{_on_handicap(r, lang)}'
        f'<div class="meta">{meta}</div>'
        f'<div class="meta">{_lineup(r, r.home, lang)}{_lineup(r, r.away, lang)}</div>'
        f"<h2>{_e(w('timeline'))} <small>— {_e(w('x_axis'))}</small></h2>{timeline_svg(r, lang)}{legend}"
        f"<h2>{_e(w('cards'))} <small>({len(r.cards)})</small></h2>{cards}"
        f"<h2>{_e(w('penalties'))} <small>({len(r.penalties)})</small></h2>{penalties}"
        f"<h2>{_e(w('trips'))} <small>({len(r.box_trips)})</small></h2>{trips}"
        f"<h2>{_e(w('releases'))}</h2>{releases}"
        f"<h2>{_e(w('sent_off'))}</h2>{sent}"
        f"<h2>{_e(w('goals'))}</h2>{goals}"
        f"<h2>{_e(w('alerts'))} <small>({len(r.alerts)})</small></h2>{alerts}"
        f"<h2>{_e(w('obligations'))} <small>— {_e(w('ledger_now'))}</small></h2>{obligations}"
        f"<h2>{_e(w('decisions'))} <small>({len(r.decisions)})</small></h2>{decisions}"
        f"<h2>{_e(w('carried'))}</h2>{carried}"
        f'<p class="links">{_e(w("also"))} <a href="/games/{g}/report.json">JSON</a> · '
        f'<a href="/games/{g}/report.csv">CSV</a> · <a href="/api/games/{g}/log">{_e(w("the_log"))}</a> · '
        f'<a href="/scoreboard?game={g}{"&lang=es" if q else ""}">{_e(w("scoreboard"))}</a> · '
        f'<a href="/games/{g}/report{"" if q else "?lang=es"}">{"English" if q else "Español"}</a></p>'
        f"</main></body></html>"
    )
