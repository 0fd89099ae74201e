"""The game report as HTML (``GET /games/{game}/report``): the report's tables
(``report.build``) on one page that prints on A4, with an inline SVG timeline of
play time (``report_timeline.timeline_svg``): periods, goals and cards as marks, box trips and
red cards' no-substitute windows as bars. Players show as "#2 Ortega" with their
id beside, teams by their registered names in their colours (ids when nothing is
registered). ``?lang=es`` gives it in Spanish: its words (``report_words``), and what the
officials were told in the notices' own Spanish."""

from __future__ import annotations

import typing
from collections.abc import Iterable, Sequence

from ...rules.events import Conduct
from ...rules.ledger import Obligation
from ...rules.text import half, mmss, spanish
from ..ops.wallclock import iso
from . import audit
from .report import BoxTrip, Entry, Moment, Report, TeamSheet, stoppage, who
from .report_timeline import AWAY, HOME, RED, YELLOW, timeline_svg
from .report_words import citation_in, esc, said, words


def _when(m: Moment, lang: str = "en") -> str:
    return (f'<span class="when">P{m.period} {mmss(m.clock_ms)}</span>'
            f'<span class="play">{mmss(m.play_ms)} {words(lang)("of_play")}</span>')


def _cite(c: str, lang: str) -> str:
    return f'<span class="clause"><b>{esc(c)}</b> {esc(citation_in(c, lang).split(" · ", 1)[-1])}</span>'


def _clause(x: Entry | BoxTrip, clause: str | None = None, lang: str = "en") -> str:
    return _cite(clause or x.clause, lang)


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
        return f'<p class="none">{esc(empty)}</p>'
    ths = "".join(f"<th>{esc(h)}</th>" for h in head)
    return f"<table><thead><tr>{ths}</tr></thead><tbody>{body}</tbody></table>"


def _side(x: Entry | BoxTrip) -> str:
    return f'<span class="side {esc(x.side or "")}">{esc(x.team_name or x.team or x.side or "")}</span>'


def _player(r: Report, player: str | None, empty: str = "") -> str:
    """``<b>#2 Ortega</b> <small>ortega</small>``: the registered number and name, then the id."""
    if not player:
        return esc(empty)
    shown = who(r.roster, player)
    if shown == player:
        return f"<b>{esc(player)}</b>"
    return f'<b>{esc(shown)}</b> <small class="id">{esc(player)}</small>'


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
        return f'<div class="team {sheet.side}">{esc(sheet.team)}</div>'
    c = sheet.colors
    logo = f'<img class="logo" src="/logos/{esc(sheet.logo)}" alt="">' if sheet.logo else ""
    return (f'<div class="team {sheet.side}" data-colors="true" style="border-color: {esc(c.primary)}">'
            f'{logo}<span class="chip" style="background: {esc(c.primary)}; '
            f'border-color: {esc(c.secondary)}"></span>{esc(sheet.name or sheet.team)}'
            f'<small class="id">{esc(sheet.short or "")} · {esc(sheet.team)}</small></div>')


def _voided_by(x: Entry, lang: str) -> str:
    """Who voided a line, and when: "voided by ump-two at 14:05:09"."""
    if not x.voided or x.voided_by is None:
        return ""
    w = words(lang)
    when = f" {w('at_time')} {iso(x.voided_at)[11:19]} UTC" if x.voided_at is not None else ""
    return f'<div class="text">{esc(w("voided_by"))} {esc(x.voided_by)}{when}</div>'


def _on_handicap(r: Report, lang: str) -> str:
    """The goals each side started with (A5), under the score: "Goals on handicap: Aiken 1½"."""
    h = r.goals_on_handicap
    if h is None:
        return ""
    w = words(lang)
    given = [f"{esc(s.name or s.team)} {half(s.on_handicap)}" for s in (r.home, r.away) if s.on_handicap]
    how = (f"{w('hcp_matrix')}: {h.home_handicap} – {h.away_handicap}" if h.source == "matrix"
           else w("hcp_committee"))
    return (f'<div class="meta on-handicap">{esc(w("on_handicap"))}: {", ".join(given) or "0"} '
            f'<small>({esc(how)})</small></div>')


def _lineup(r: Report, sheet: TeamSheet, lang: str = "en") -> str:
    names = ", ".join(who(r.roster, p) for p in sheet.bench)
    bench = f" · {words(lang)('bench')} {names}" if sheet.bench else ""
    lineup = ", ".join(who(r.roster, p) for p in sheet.lineup)
    return f"<span>{esc(sheet.name or sheet.team)}: {esc(lineup)}{esc(bench)}</span>"


_CSS = (f":root {{ --home: {HOME}; --away: {AWAY}; --yellow: {YELLOW}; --red: {RED}; "
        "--ink: #141a24; --muted: #3d4656; --line: #d9dee7; "
        "--home-ink: #0f3f80; --away-ink: #8a4300; }") + """
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
.side.home { color: var(--home-ink); } .side.away { color: var(--away-ink); }
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
.timeline .t-none { fill: #4a5468; font-style: italic; }
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
        return esc(w("still_in"))
    at = f'{esc(w("at_the"))} {esc(stoppage(t.stoppage or ""))}'
    return f'{_when(t.release, lang)}<div class="text">{at}</div>'


def _ob_source(o: Obligation, lang: str) -> str:
    """Where it came from, and what the committee decided about it (the report's language first,
    the other beneath)."""
    decided = audit.note(o)
    source = esc(o.cause if o.increased or not o.by else f"committee: {o.by}" + (f" — {o.reason}" if o.reason
                                                                                else ""))
    if decided is None:
        return source
    first, then = (decided.es, decided.en) if lang == "es" else (decided.en, decided.es)
    return f'{source}<div class="decided">{esc(first)}</div><div class="text">{esc(then)}</div>'


def _ob_what(o: Obligation, lang: str) -> str:
    w = words(lang)
    what = f"{esc(w(o.kind))}{' ' + mmss(o.owed_ms) + ' ' + w('of_play') if o.owed_ms else ''}"
    return f"<del>{what}</del>" if o.status == "rescinded" else what


def _card_icon(x: Entry) -> str:
    return f'<i class="card {"red" if x.color == "red" else "yellow"}"></i>'


def to_html(report: Report, lang: str = "en") -> str:
    """The page, in English or (``lang="es"``) Spanish."""
    r, w = report, words(lang)
    status = w(f"st_{r.status}")
    official = f" <small>({esc(w('team_official'))})</small>"
    other = "en" if lang == "es" else "es"
    cards = _table(
        [w("when"), w("player"), w("team"), w("card"), w("clause"), w("official")],
        (f'<tr class="{"voided" if c.voided else ""}" data-cause="{esc(c.cause)}">'
         f"<td>{_when(c.moment, lang)}</td><td>{_player(r, c.player)}"
         f"{esc(c.role or '')}{official if c.role else ''}</td>"
         f"<td>{_side(c)}</td>"
         f'<td>{_card_icon(c)}{esc(_facts(c, lang))}<div class="text">{esc(said(c.text, lang))}</div></td>'
         f"<td>{_clause(c, lang=lang)}</td><td>{esc(c.official)}{_voided_by(c, lang)}</td></tr>"
         for c in r.cards),
        w("no_cards"))
    penalties = _table(
        [w("when"), w("against"), w("player"), w("penalty"), w("clause")],
        (f"<tr><td>{_when(p.moment, lang)}</td><td>{_side(p)}</td><td>{_player(r, p.player, '—')}</td>"
         f"<td>{esc(_facts(p, lang))}</td><td>{_clause(p, lang=lang)}</td></tr>" for p in r.penalties),
        w("no_penalties"))
    trips = _table(
        [w("player"), w("team"), w("in"), w("owed"), w("served"), w("released"), w("clause")],
        (f'<tr data-player="{esc(t.player)}"><td>{_player(r, t.player)}'
         f'<div class="text">{esc(spanish(t.kind) if lang == "es" else t.kind)}</div></td>'
         f"<td>{_side(t)}</td><td>{_when(t.enter, lang)}</td><td>{mmss(t.owed_ms)} {esc(w('of_play'))}</td>"
         f"<td>{_when(t.eligible, lang) if t.eligible else '—'}</td>"
         f"<td>{_released(t, lang)}</td>"
         f"<td>{_clause(t, lang=lang)}"
         f"{'<br>' + _clause(t, t.release_clause, lang) if t.release_clause else ''}</td></tr>"
         for t in r.box_trips),
        w("no_trips"))
    releases = _table(
        [w("when"), w("player"), w("team"), w("what"), w("clause")],
        (f"<tr><td>{_when(x.moment, lang)}</td><td>{_player(r, x.player)}</td><td>{_side(x)}</td>"
         f"<td>{esc(said(x.text, lang))}</td><td>{_clause(x, lang=lang)}</td></tr>" for x in r.releases),
        w("no_releases"))
    sent = _table(
        [w("when"), w("player"), w("team"), w("no_sub"), w("clause")],
        (f"<tr><td>{_when(x.moment, lang)}</td><td>{_player(r, x.player)}</td><td>{_side(x)}</td>"
         f"<td>{esc(_facts(x, lang))}</td><td>{_clause(x, lang=lang)}</td></tr>" for x in r.sent_off),
        w("no_sent_off"))
    goals = _table(
        [w("when"), w("team"), w("player"), w("score")],
        (f'<tr class="{"voided" if g.voided else ""}" data-cause="{esc(g.cause)}">'
         f"<td>{_when(g.moment, lang)}</td><td>{_side(g)}</td><td>{_player(r, g.player, '—')}</td>"
         f"<td>{esc(_facts(g, lang))}{_voided_by(g, lang)}</td></tr>" for g in r.goals),
        w("no_goals"))
    alerts = _table(
        [w("when"), w("alert"), w("told"), w("clause"), w("event_col")],
        (f'<tr data-code="{esc(a.code or "")}"><td>{_when(a.moment, lang)}</td>'
         f'<td><b>{esc(a.code or "")}</b></td>'
         f'<td>{esc(said(a.text, lang))}<div class="text">{esc(said(a.text, other))}'
         f"</div></td><td>{_clause(a, lang=lang)}</td>"
         f"<td>{esc(a.cause)}<div class=\"text\">{esc(a.official)}</div></td></tr>" for a in r.alerts),
        w("no_alerts"))
    obligations = _table(
        [w("player"), w("team"), w("obligation"), w("clause"), w("status"), w("served_in"), w("from")],
        (f'<tr class="{esc(o.status)}" data-obligation="{esc(o.id)}"><td>{_player(r, o.player)}</td>'
         f"<td>{esc(_team_name(r, o.team))}</td>"
         f'<td>{_ob_what(o, lang)}<div class="text">{esc(o.id)}</div></td>'
         f"<td>{_cite(o.clause, lang)}</td><td>{esc(w(o.status))}</td><td>{esc(o.applied_in or '—')}</td>"
         f"<td>{_ob_source(o, lang)}</td></tr>"
         for o in r.obligations),
        w("no_obligations"))
    decisions = _table(
        [w("when"), w("decision"), w("player"), w("by"), w("changed")],
        (f'<tr data-decision="{esc(d.id)}"><td>{esc(iso(d.at))}</td><td><b>{esc(d.type)}</b></td>'
         f"<td>{_player(r, d.player, '—')}</td><td>{esc(d.by)}</td>"
         f'<td>{esc(said(d.text, lang))}<div class="text">{esc(said(d.text, other))}'
         f"</div></td></tr>" for d in r.decisions),
        w("no_decisions"))
    carried = _table(
        [w("player"), w("obligation"), w("clause"), w("from_game")],
        (f"<tr><td>{_player(r, c.player)}</td><td>{esc(w(c.kind))} {mmss(c.owed_ms)}</td>"
         f'<td><span class="clause"><b>{esc(c.clause)}</b></span></td><td>{esc(c.origin_game)}</td></tr>'
         for c in r.carried),
        w("no_carried"))
    legend = (f'<div class="legend"><span><i style="background:{YELLOW}"></i>{esc(w("lg_box"))}</span>'
              f'<span><i style="background:repeating-linear-gradient(45deg,{YELLOW} 0 3px,#fff3c4 3px 6px)">'
              f"</i>"
              f"{esc(w('lg_wait'))}</span>"
              f'<span><i style="background:{RED}"></i>{esc(w("lg_red"))}</span>'
              f'<span><i style="background:{HOME}"></i>{esc(r.home.name or r.home.team)}</span>'
              f'<span><i style="background:{AWAY}"></i>{esc(r.away.name or r.away.team)}</span></div>')
    g = esc(r.game)
    q = "?lang=es" if lang == "es" else ""
    meta = "".join(f"<span>{esc(w(k))} <b>{esc(v)}</b>{esc(tail)}</span>" for k, v, tail in (
        ("game", r.game, ""), ("event", _event(r), ""), ("arena", r.arena or "—", ""),
        ("handicap", r.handicap, ""), ("kind", w("kind_" + r.kind), ""), ("status", status, ""),
        ("play", mmss(r.play_ms), f" {w('of')} {r.periods} × {mmss(r.period_ms)}"),
        ("log", f"seq {r.seq}", ""), ("generated", iso(r.generated_at), "")))
    return (
        f'<!doctype html><html lang="{"es" if lang == "es" else "en"}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<link rel="icon" href="data:,">'  # no /favicon.ico asked for (a 404): img-src allows data:
        f"<title>{esc(w('title'))} · {g}</title><style>{_CSS}</style></head><body><main>"
        f"<h1>{esc(w('title'))} · {esc(w('rule14'))}</h1>"
        f'<header>{_team_head(r.home)}'
        f'<div class="score">{half(r.home.score)} – {half(r.away.score)}</div>'
        f'{_team_head(r.away)}</header>'
        f'{_on_handicap(r, lang)}'
        f'<div class="meta">{meta}</div>'
        f'<div class="meta">{_lineup(r, r.home, lang)}{_lineup(r, r.away, lang)}</div>'
        f"<h2>{esc(w('timeline'))} <small>— {esc(w('x_axis'))}</small></h2>{timeline_svg(r, lang)}{legend}"
        f"<h2>{esc(w('cards'))} <small>({len(r.cards)})</small></h2>{cards}"
        f"<h2>{esc(w('penalties'))} <small>({len(r.penalties)})</small></h2>{penalties}"
        f"<h2>{esc(w('trips'))} <small>({len(r.box_trips)})</small></h2>{trips}"
        f"<h2>{esc(w('releases'))}</h2>{releases}"
        f"<h2>{esc(w('sent_off'))}</h2>{sent}"
        f"<h2>{esc(w('goals'))}</h2>{goals}"
        f"<h2>{esc(w('alerts'))} <small>({len(r.alerts)})</small></h2>{alerts}"
        f"<h2>{esc(w('obligations'))} <small>— {esc(w('ledger_now'))}</small></h2>{obligations}"
        f"<h2>{esc(w('decisions'))} <small>({len(r.decisions)})</small></h2>{decisions}"
        f"<h2>{esc(w('carried'))}</h2>{carried}"
        f'<p class="links">{esc(w("also"))} <a href="/games/{g}/report.json">JSON</a> · '
        f'<a href="/games/{g}/report.csv">CSV</a> · <a href="/api/games/{g}/log">{esc(w("the_log"))}</a> · '
        f'<a href="/scoreboard?game={g}{"&lang=es" if q else ""}">{esc(w("scoreboard"))}</a> · '
        f'<a href="/games/{g}/report{"" if q else "?lang=es"}">{"English" if q else "Español"}</a></p>'
        f"</main></body></html>"
    )
