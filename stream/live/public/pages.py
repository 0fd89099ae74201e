"""The public pages as HTML, rendered on the server from the public documents, so that the
first paint already holds the state (a slow link shows it before any script runs). The
script (``clients/web/public/public.js``) then follows the event on one socket and redraws
what changes: scores, clocks, states. No inline script and no style element: a team's
colours are two CSS custom properties in a ``style`` attribute (``--c1``, ``--c2``), which
the pages' policy allows for attributes alone (``style-src-attr 'unsafe-inline'``, the
value escaped and a registered colour: ``#rrggbb``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from html import escape
from urllib.parse import quote

from ...rules.draw import Bracket, DrawGame, DrawSide, Standing
from ...rules.text import half
from ..wire.public_types import EventPage, Front, GameCard, Side, TeamPage
from .words import day, hhmm, words

Say = Callable[..., str]


def e(x: object) -> str:
    return escape(str(x), quote=True)


def _colors(s: Side) -> str:
    if s.colors is None:
        return ""
    return f' style="--c1:{e(s.colors.primary)};--c2:{e(s.colors.secondary)}"'


def _score(x: int | float) -> str:
    return half(x)


def _when(c: GameCard, tz: str, say: Say) -> str:
    if c.planned_start is None:
        return f'<span class="time tbd">{e(say("tbd"))}</span>'
    out = f'<time class="time" datetime="{c.planned_start}">{e(hhmm(c.planned_start, tz))}</time>'
    if c.late and c.expected_start is not None and c.status == "scheduled":
        out += f' <span class="late">{e(say("not_before", t=hhmm(c.expected_start, tz)))}</span>'
    return out


def _hcp(c: GameCard, side: str, say: Say) -> str:
    h = c.goals_on_handicap
    n = (h.home if side == "home" else h.away) if h is not None else 0
    return f'<small class="hcp">{e(say("incl_hcp", n=half(n)))}</small>' if n else ""


def game(c: GameCard, tz: str, say: Say, lang: str) -> str:
    """One game: when, where, who, its state and score (the script keeps the live parts current)."""
    q = f"?lang={lang}" if lang == "es" else ""
    period = say("overtime") if c.clock.overtime else say("period", p=c.clock.period, n=c.clock.periods)
    extra = []
    if c.box:
        extra.append(say("in_box", n=c.box))
    if c.sent_off:
        extra.append(say("sent_off", n=c.sent_off))
    sides = "".join(
        f'<div class="side {w}"{_colors(s)}><span class="kit" aria-hidden="true"></span>'
        f'<a href="{e(s.url + q)}">{e(s.name)}</a>'
        f'<b class="goals" data-score="{w}">{e(_score(c.score.home if w == "home" else c.score.away))}</b>'
        f'{_hcp(c, w, say)}</div>'
        for w, s in (("home", c.home), ("away", c.away)))
    return (f'<article class="game" data-game="{e(c.game)}" data-status="{e(c.status)}"'
            f' data-running="{str(c.clock.running).lower()}" data-remaining="{c.clock.remaining_ms}"'
            f' data-at="{c.clock.at}">'
            f'<p class="meta">{_when(c, tz, say)} · {e(say("arena", a=c.arena))}'
            f'{" · " + e(c.round) if c.round else ""}</p>'
            f'{sides}'
            f'<p class="state"><span class="status">{e(say(c.status))}</span>'
            f' <span class="period">{e(period) if c.status == "live" else ""}</span>'
            f' <span class="clock">{_mmss(c.clock.remaining_ms) if c.status == "live" else ""}</span>'
            f' <span class="extra">{e(" · ".join(extra))}</span>'
            f' <a class="report" href="{e(c.report + q)}">{e(say("report"))}</a></p>'
            f'</article>')


def _none(text: str) -> str:
    return f'<p class="none">{e(text)}</p>'


def _mmss(ms: int) -> str:
    s = max(0, ms) // 1000
    return f"{s // 60}:{s % 60:02d}"


def _list(cards: Iterable[GameCard], tz: str, say: Say, lang: str, empty: str) -> str:
    body = "".join(game(c, tz, say, lang) for c in cards)
    return f'<div class="games">{body}</div>' if body else f'<p class="none">{e(say(empty))}</p>'


def shell(title: str, lang: str, body: str, *, event: str | None = None, path: str = "/",
          events: Iterable[str] = (), widget: bool = False) -> str:
    """The page around ``body``: its language, stylesheet, script, and the switch to the other language."""
    say = words(lang)
    other = "en" if lang == "es" else "es"
    kind = ' class="widget"' if widget else ""
    follow = f' data-event="{e(event)}"' if event else ""
    if not event and (listed := " ".join(events)):
        follow = f' data-events="{e(listed)}"'   # the front door follows each event it shows
    return (f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width,initial-scale=1">'
            f'<title>{e(title)}</title><link rel="icon" href="data:,">'
            f'<link rel="stylesheet" href="/clients/public/public.css">'
            f'<script type="module" src="/clients/public/public.js"></script></head>'
            f'<body{follow} data-lang="{lang}"{kind}><header class="top">'
            f'<a class="home" href="/?lang={lang}">'
            f'{e(say("site"))}</a> <a class="lang" hreflang="{other}" href="{e(path)}?lang={other}">'
            f'{e(say("lang"))}</a> <span class="conn" role="status"></span></header>'
            f'<main>{body}</main><div class="announce" aria-live="polite" role="status"></div>'
            f'</body></html>')


def render_front(doc: Front, lang: str) -> str:
    say = words(lang)
    events = "".join(
        f'<li><a href="{e(c.url)}?lang={lang}">{e(c.name)}</a>'
        f' <span class="arenas">{e(", ".join(say("arena", a=a) for a in c.arenas))}</span>'
        f'{" · " + e(day(c.first_start, c.timezone, lang)) if c.first_start is not None else ""}'
        f' <span class="tz">({e(say("times_in", tz=c.timezone))})</span>'
        f'{" · " + e(str(c.live) + " " + say("live")) if c.live else ""}</li>'
        for c in doc.events)
    tz_of = {c.event: c.timezone for c in doc.events}
    live = "".join(game(c, tz_of.get(c.event, "UTC"), say, lang) for c in doc.live)
    nxt = "".join(game(c, tz_of.get(c.event, "UTC"), say, lang) for c in doc.next)
    body = (f'<h1>{e(say("site"))}</h1>'
            f'<section><h2>{e(say("live_now"))}</h2>'
            f'{f"<div class=games>{live}</div>" if live else _none(say("no_live"))}'
            f'</section><section><h2>{e(say("next_up"))}</h2>'
            f'{f"<div class=games>{nxt}</div>" if nxt else _none(say("no_next"))}'
            f'</section><section><h2>{e(say("events"))}</h2>'
            f'{f"<ul class=events>{events}</ul>" if events else _none(say("no_events"))}'
            f'</section>')
    return shell(say("site"), lang, body, path="/", events=[c.event for c in doc.events if c.games])


def _order(doc: EventPage, say: Say, lang: str) -> str:
    days: dict[str, list[GameCard]] = {}
    for c in doc.games:
        days.setdefault(day(c.planned_start, doc.timezone, lang) if c.planned_start is not None
                        else say("tbd"), []).append(c)
    return "".join(f'<h3>{e(d)}</h3>{_list(cs, doc.timezone, say, lang, "no_next")}'
                   for d, cs in days.items())


def _side_name(s: DrawSide, names: dict[str, str], say: Say) -> str:
    if s.team:
        return e(names.get(s.team, s.team))
    if s.bye:
        return e(say("bye"))
    if s.winner_of:
        return e(say("winner_of", g=s.winner_of))
    if s.loser_of:
        return e(say("loser_of", g=s.loser_of))
    return "—"


def _draw_game(g: DrawGame, names: dict[str, str], say: Say) -> str:
    score: list[int | float | None] = list(g.score) if g.score else [None, None]
    rows = "".join(
        f'<li class="{"won" if g.winner and g.winner == s.team else ""}">'
        f'<span>{_side_name(s, names, say)}</span><b>{"" if n is None else e(half(n))}</b></li>'
        for s, n in ((g.home, score[0]), (g.away, score[1])))
    return f'<ol class="match" data-game="{e(g.game)}" data-state="{e(g.state)}">{rows}</ol>'


def bracket(d: Bracket, names: dict[str, str], say: Say) -> str:
    if d.format == "round_robin":
        return standings(d.standings, names, say)
    parts = []
    for part, title in (("main", "bracket"), ("consolation", "consolation")):
        games = [g for g in d.games if g.bracket == part]
        if not games:
            continue
        rounds = sorted({g.round for g in games})
        cols = "".join('<div class="round">' + "".join(_draw_game(g, names, say) for g in games
                                                       if g.round == r) + "</div>" for r in rounds)
        parts.append(f'<h3>{e(say(title))}</h3><div class="bracket">{cols}</div>')
    champ = f'<p class="champion">{e(say("champion", t=names.get(d.champion, d.champion)))}</p>' \
        if d.champion else ""
    return "".join(parts) + champ


def standings(rows: list[Standing], names: dict[str, str], say: Say) -> str:
    head = "".join(f"<th scope=col>{e(say(k))}</th>" for k in
                   ("team", "played", "won", "lost", "tied", "gf", "ga", "placed_by"))
    body = "".join(
        f'<tr><th scope=row>{e(names.get(s.team, s.team))}</th><td>{s.played}</td><td>{s.won}</td>'
        f'<td>{s.lost}</td><td>{s.tied}</td><td>{e(half(s.goals_for))}</td><td>{e(half(s.goals_against))}</td>'
        f'<td>{e(say("by_" + str(s.placed_by)) if s.placed_by else "")}</td></tr>'
        for s in rows)
    return (f'<p class="tiebreak">{e(say("tie_break_order"))}</p>'
            f'<table class="standings"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


def render_event(doc: EventPage, lang: str, names: dict[str, str]) -> str:
    say = words(lang)
    live = [c for c in doc.games if c.status == "live"]
    draw = ""
    if doc.draw is not None:
        title = "standings" if doc.draw.format == "round_robin" else "bracket"
        draw = f'<section class="draw"><h2>{e(say(title))}</h2>{bracket(doc.draw, names, say)}</section>'
    body = (f'<h1>{e(doc.name)}</h1><p class="tz">{e(say("times_in", tz=doc.timezone))}</p>'
            f'<p class="cal"><a href="/events/{quote(doc.event)}.ics">{e(say("calendar"))}</a></p>'
            f'<section><h2>{e(say("live_now"))}</h2>{_list(live, doc.timezone, say, lang, "no_live")}'
            '</section>'
            f'<section><h2>{e(say("order"))}</h2>{_order(doc, say, lang)}</section>{draw}'
            f'<section class="results"><h2>{e(say("results"))}</h2>'
            f'{_list(doc.results, doc.timezone, say, lang, "no_results")}'
            f'</section><figure class="qr">{doc.qr}<figcaption>{e(say("scan"))}</figcaption></figure>')
    return shell(doc.name, lang, body, event=doc.event, path=f"/events/{quote(doc.event)}")


def render_team(doc: TeamPage, lang: str, tz: str) -> str:
    say = words(lang)
    style = (f' style="--c1:{e(doc.colors.primary)};--c2:{e(doc.colors.secondary)}"'
             if doc.colors is not None else "")
    logo = f'<img class="logo" src="{e(doc.logo)}" alt="" width="64" height="64">' if doc.logo else ""
    players = "".join(f'<tr><td>{"" if p.number is None else p.number}</td><th scope=row>{e(p.name)}</th>'
                      f'<td>{"" if p.handicap is None else p.handicap}</td></tr>' for p in doc.players)
    nxt = doc.next
    if nxt is not None:
        other = nxt.away if nxt.home.team == doc.team else nxt.home
        at = hhmm(nxt.planned_start, tz) if nxt.planned_start is not None else say("tbd")
        line = say("next", t=at, a=nxt.arena, o=other.name)
        if nxt.late and nxt.expected_start is not None:
            line += f" ({say('not_before', t=hhmm(nxt.expected_start, tz))})"
        next_html = f'<p class="next" data-game="{e(nxt.game)}">{e(line)}</p>'
    else:
        next_html = f'<p class="next none">{e(say("no_next_game"))}</p>'
    hcp = say("unknown") if doc.handicap is None else str(doc.handicap)
    body = (f'<h1 class="team-head"{style}>{logo}<span class="kit" aria-hidden="true"></span>'
            f'{e(doc.name)}</h1>'
            f'<p class="tz">{e(say("times_in", tz=tz))}</p>'
            f'<p class="cal"><a href="/teams/{quote(doc.team)}.ics">{e(say("calendar"))}</a></p>'
            f'{next_html}<p>{e(say("team_hcp"))}: <b>{e(hcp)}</b></p>'
            f'<section><h2>{e(say("roster"))}</h2><table class="roster"><thead><tr>'
            f'<th scope=col>{e(say("number"))}</th><th scope=col>{e(say("player"))}</th>'
            f'<th scope=col>{e(say("handicap"))}</th></tr></thead><tbody>{players}</tbody></table></section>'
            f'<section><h2>{e(say("games"))}</h2>{_list(doc.games, tz, say, lang, "no_next_game")}</section>')
    events = sorted({c.event for c in doc.games})
    return shell(doc.name, lang, body, event=events[0] if len(events) == 1 else None,
                 path=f"/teams/{quote(doc.team)}")


def render_scores(doc: EventPage, lang: str) -> str:
    """The compact score widget a club embeds in its own site: the event's games live now,
    else the next to begin, kept live like the event's page."""
    say = words(lang)
    live = [c for c in doc.games if c.status == "live"]
    shown = live or [c for c in doc.games if c.status == "scheduled"][:2]
    body = (f'<p class="widget-head"><a href="/events/{quote(doc.event)}" target="_top">{e(doc.name)}</a></p>'
            f'{_list(shown, doc.timezone, say, lang, "no_next")}')
    return shell(doc.name, lang, body, event=doc.event, path=f"/events/{quote(doc.event)}/scores",
                 widget=True)
