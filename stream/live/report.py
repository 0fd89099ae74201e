"""The game report: every card (to players and to team officials), penalty, box
trip, release and alert of one game, each with its clause, the obligations the
game created for later games, and a timeline of play time, as HTML (printable),
JSON and CSV.

It is a function of the log. The game's records are read from the store and
decoded; the events the rules still hold (not voids, not voided targets) are
put in fold order (by ``at``, ties in log order: where a late event was
folded) and fed again to a fresh engine holding only the game as it was just
after its setup (``Engine.fork_game``), the way the hub rebuilds deltas. Each
notice is placed on the play-time axis by the clock figures of the events
around it, so that a deadline (a box trip's play time served) sits exactly
where it fell due. Voided cards are listed apart, marked voided.

    GET /games/{game}/report        HTML, with an inline SVG timeline; prints on A4
    GET /games/{game}/report.json   the same, as one JSON document (``Report``)
    GET /games/{game}/report.csv    one row per entry (``ENTRY_COLUMNS``)
"""

from __future__ import annotations

import csv
import html
import io
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec

from ..rules import codec
from ..rules import events as ev
from ..rules import notices as nt
from ..rules.clauses import CLAUSES, cite
from ..rules.ledger import Obligation
from ..rules.text import mmss, render
from ..rules.view import CarriedView, GameView, PostgameView
from .hub import SYSTEM, Hub, now_ms

# ------------------------------------------------------------------ the document


class Moment(msgspec.Struct, frozen=True):
    """Where something happened on the game's clocks."""

    at: int          # wall time, ms
    play_ms: int     # play time since the first period started
    period: int
    clock_ms: int    # the period's clock: time remaining


class Entry(msgspec.Struct, kw_only=True):
    """One notice of the game, as a line of the report."""

    kind: str                # the notice type: card.recorded, official.carded, box.enter, alert, ...
    seq: int | None          # the log position of the event that brought it (a card, a whistle, a tick)
    cause: str               # the notice's cause: the event it follows from (a box release: the card)
    moment: Moment
    player: str | None
    side: str | None
    team: str | None
    detail: str              # the short facts: "yellow ×2 · rough_play · offense 2"
    clause: str
    citation: str            # "Rule 14 · Second yellow: penalty box"
    official: str            # who entered the event at ``seq`` ("the service": a deadline's tick)
    voided: bool = False
    color: str | None = None       # a card's color, as applied
    owed_ms: int | None = None     # box.enter: play time owed; sent_off: the no-substitute window
    stoppage: str | None = None    # box.release, sub.allowed: the stoppage that released
    role: str | None = None        # official.carded: the team official's role (coach, groom, ...)
    code: str | None = None        # alert: its code (docs/log-format.md, "Alerts")
    text: nt.Text


class BoxTrip(msgspec.Struct, kw_only=True):
    player: str
    side: str
    team: str
    kind: str                # card, returned, carried
    owed_ms: int
    clause: str
    cause: str
    enter: Moment
    eligible: Moment | None  # the play time served
    release: Moment | None   # out at this stoppage (None: still in the box at the end)
    stoppage: str | None     # as in the notice: "whistle:<event id>", "goal:…"; "left early", "shootout"
    release_clause: str | None


class TeamSheet(msgspec.Struct):
    side: str
    team: str
    lineup: list[str]
    bench: list[str]
    score: int


class Report(msgspec.Struct, kw_only=True):
    game: str
    event: str
    arena: str
    kind: str
    handicap: int
    status: str
    home: TeamSheet
    away: TeamSheet
    periods: int
    period_ms: int
    play_ms: int             # play time at the end of the log
    period_starts: list[int]  # the play time at which each period began (periods may end early)
    seq: int                 # the last log position folded
    generated_at: int
    cards: list[Entry]       # every card, to players and to team officials (voided ones too, marked)
    penalties: list[Entry]
    box_trips: list[BoxTrip]
    releases: list[Entry]    # box.release and sub.allowed
    sent_off: list[Entry]
    goals: list[Entry]
    alerts: list[Entry]      # where the record and the rules disagreed, and what the officials were told
    entries: list[Entry]     # every notice worth a line, in time order (cards, box, goals, ...)
    obligations: list[Obligation]   # created by this game, as the ledger holds them now
    carried: list[CarriedView]      # obligations from earlier games this game served
    postgame: list[PostgameView]


#: Notices that are not lines of the report (they show elsewhere, or say nothing new).
_SKIP = frozenset({"clock", "correction", "rejected", "game.ready"})

# ------------------------------------------------------------------ building it


class _Clock:
    """The game's clock figures after each folded event: the play time of any moment."""

    def __init__(self) -> None:
        self.ats: list[int] = []
        self.states: list[tuple[int, bool, int, int]] = []  # play_ms, running, remaining, period

    def add(self, view: GameView) -> None:
        c = view.clock
        self.ats.append(c.at)
        self.states.append((c.play_ms, c.running and not c.period_over, c.remaining_ms, c.period))

    def period_starts(self) -> list[int]:
        starts: dict[int, int] = {1: 0}
        for play, _, _, period in self.states:
            starts.setdefault(period, play)
        return [starts[p] for p in sorted(starts)]

    def at(self, t: int) -> Moment:
        i = bisect_right(self.ats, t) - 1
        if i < 0:
            return Moment(t, 0, 1, self.states[0][2] if self.states else 0)
        play, running, remaining, period = self.states[i]
        ran = min(max(0, t - self.ats[i]), remaining) if running else 0
        return Moment(t, play + ran, period, remaining - ran)


def _detail(n: Any) -> str:
    if isinstance(n, nt.OfficialCarded):
        color = n.color + (f" ×{n.count}" if n.count > 1 else "")
        return f"{color} · {n.role} (team official) · {n.conduct}"
    if isinstance(n, nt.Alert):
        return n.code + (f" · {n.subject}" if n.subject else "")
    if isinstance(n, nt.CardRecorded):
        color = n.color + (f" ×{n.count}" if n.count > 1 else "")
        conv = f" (converted: {n.converted})" if n.converted else ""
        yellows = f" · {n.yellows} yellow in the game" if n.yellows else ""
        return f"{color}{conv} · {n.conduct} · offense {n.offense}{yellows}"
    if isinstance(n, nt.PenaltyAwarded):
        sev = f" ({n.severity})" if n.severity is not None else ""
        return f"penalty{sev} to {n.to} · {n.reason}"
    if isinstance(n, nt.BoxEnter):
        return f"{mmss(n.owed_ms)} of play · {n.kind}"
    if isinstance(n, nt.BoxEligible):
        return "play time served: out at the next stoppage"
    if isinstance(n, nt.BoxRelease | nt.SubAllowed):
        return f"at the {stoppage(n.stoppage)}"
    if isinstance(n, nt.SentOff):
        return f"no substitute for {mmss(n.no_sub_ms)} of play"
    if isinstance(n, nt.GoalScored):
        return f"{n.points} point{'s' if n.points > 1 else ''} · {n.home}–{n.away}"
    if isinstance(n, nt.MountDeadline):
        return f"{n.reason} · {n.status}"
    if isinstance(n, nt.SubstitutionMade):
        return f"{n.out} → {n.in_}"
    if isinstance(n, nt.PostgameRecorded):
        return f"post-game {n.level}"
    if isinstance(n, nt.ShootoutExcluded):
        return f"{mmss(n.owed_ms)} of box time left"
    if isinstance(n, nt.GameEnded):
        return f"{n.home}–{n.away}" + (" (shootout)" if n.shootout else "")
    if isinstance(n, nt.ObligationCreated | nt.ObligationApplied | nt.ObligationServed
                  | nt.ObligationWithdrawn | nt.ObligationUpdated):
        return f"{n.kind} {mmss(n.owed_ms)} · {n.obligation}" if n.owed_ms else f"{n.kind} · {n.obligation}"
    return ""


def stoppage(s: str) -> str:
    """``"whistle:ump-3/u-4"`` -> ``"whistle (ump-3/u-4)"``."""
    kind, _, event = s.partition(":")
    return f"{kind.replace('.', ' ')} ({event})" if event else kind


def _citation(clause: str) -> str:
    return cite(clause) if clause in CLAUSES else clause


async def build(hub: Hub, game: str) -> Report:
    """Fold ``game``'s log again and collect its report. ``KeyError`` if there is no such game."""
    feed = hub.feeds[game]
    records = [r for r in await hub.store.game_records(game) if r.seq is not None]
    voided = hub.engine.voided
    officials: dict[str, str] = {}
    seqs: dict[str, int] = {}
    held: list[tuple[int, int, Any]] = []        # (at, log order, event): what the rules still hold
    dropped: list[tuple[Any, int]] = []          # voided events, with their seq
    for n, r in enumerate(records):
        e = codec.decode_event(r.body)
        officials[e.id] = "the service" if r.device == SYSTEM else r.official or r.device
        seqs[e.id] = r.seq or 0
        if isinstance(e, ev.GameSetup | ev.Void):
            continue
        if e.id in voided:
            dropped.append((e, r.seq or 0))
        else:
            held.append((e.at, n, e))
    held.sort(key=lambda x: (x[0], x[1]))

    fork = hub.engine.fork_game(game)
    rec = fork.games[game]
    if held and held[0][0] < rec.now:
        # Events dated before the setup (a synced device may date an event any time in the
        # past) were folded as late events; here they are folded in time order from the
        # start, so that each view is taken at its event's own moment.
        rec.now = held[0][0]
    clock = _Clock()
    clock.add(fork.view(game))
    teams = {"home": rec.game.home.team, "away": rec.game.away.team}
    # (notice, where it happened, the logged event that brought it: a card, a whistle, a tick)
    out: list[tuple[Any, Moment, str]] = [(n, clock.at(n.at), n.cause) for n in rec.setup_notices]
    for _, _, e in held:
        notices = fork.feed(e)
        clock.add(fork.view(game))
        out.extend((n, clock.at(n.at), e.id) for n in notices)
    final = fork.view(game)

    entries: list[Entry] = []
    for n, moment, by in out:
        tag = str(type(n).__struct_config__.tag)
        if tag in _SKIP:
            continue
        side = getattr(n, "side", None) or getattr(n, "against", None)
        entries.append(Entry(
            kind=tag, seq=seqs.get(by), cause=n.cause, moment=moment,
            player=getattr(n, "player", None), side=side, team=teams.get(side or ""),
            detail=_detail(n), clause=n.clause, citation=_citation(n.clause),
            official=officials.get(by, "the service"),
            color=getattr(n, "color", None),
            owed_ms=n.owed_ms if isinstance(n, nt.BoxEnter) else n.no_sub_ms if isinstance(n, nt.SentOff)
            else None,
            stoppage=getattr(n, "stoppage", None),
            role=n.role if isinstance(n, nt.OfficialCarded) else None,
            code=n.code if isinstance(n, nt.Alert) else None,
            text=render(n).text or nt.Text("", ""),
        ))
    for e, seq in dropped:
        if isinstance(e, ev.Card):
            color = e.color + (f" ×{e.count}" if e.count > 1 else "")
            if e.official is not None:  # a team official's card (R1)
                side, whom = e.official.team, f"the {e.official.team} {e.official.role}"
                whom_es = f"el {e.official.role} del {'local' if side == 'home' else 'visitante'}"
            else:
                p = rec.game.players.get(e.player or "")
                side = p.side if p is not None else "away"
                whom = whom_es = e.player or ""
            entries.append(Entry(
                kind="official.carded" if e.official is not None else "card.recorded", seq=seq, cause=e.id,
                moment=clock.at(e.at), player=e.player, side=side, team=teams[side],
                detail=f"{color} · {e.conduct} · voided", clause="L1", citation=_citation("L1"),
                official=officials.get(e.id, ""), voided=True, color=e.color,
                role=e.official.role if e.official is not None else None,
                text=nt.Text(f"Voided: {color} card to {whom}.", f"Anulada: tarjeta {color} para {whom_es}."),
            ))
    entries.sort(key=lambda x: (x.moment.at, x.seq or 0))

    return Report(
        game=game, event=final.event, arena=final.arena, kind=final.kind, handicap=final.handicap,
        status=final.status,
        home=TeamSheet("home", final.teams.home.team, final.teams.home.lineup, final.teams.home.bench,
                       final.score.home),
        away=TeamSheet("away", final.teams.away.team, final.teams.away.lineup, final.teams.away.bench,
                       final.score.away),
        periods=final.clock.periods, period_ms=final.clock.period_ms, play_ms=final.clock.play_ms,
        period_starts=clock.period_starts(),
        seq=feed.seq, generated_at=now_ms(),
        cards=[x for x in entries if x.kind in ("card.recorded", "official.carded")],
        penalties=[x for x in entries if x.kind == "penalty.awarded"],
        box_trips=_box_trips(entries),
        releases=[x for x in entries if x.kind in ("box.release", "sub.allowed")],
        sent_off=[x for x in entries if x.kind == "sent_off"],
        goals=[x for x in entries if x.kind == "goal.scored"],
        alerts=[x for x in entries if x.kind == "alert"],
        entries=entries,
        obligations=sorted((o for obs in hub.engine.ledger.values() for o in obs if o.origin_game == game),
                           key=lambda o: (o.order, o.player)),
        carried=list(final.carried),
        postgame=list(final.postgame),
    )


def _box_trips(entries: Sequence[Entry]) -> list[BoxTrip]:
    trips: list[BoxTrip] = []
    open_: dict[str, BoxTrip] = {}
    for x in entries:
        if x.voided or x.player is None:
            continue
        if x.kind == "box.enter":
            before = open_.get(x.player)
            if before is not None:  # left the box early (R8): that trip ends here, a new one starts
                before.release, before.stoppage, before.release_clause = x.moment, "left early", x.clause
            kind = x.detail.rsplit("· ", 1)[-1]
            open_[x.player] = BoxTrip(
                player=x.player, side=x.side or "", team=x.team or "", kind=kind, owed_ms=x.owed_ms or 0,
                clause=x.clause, cause=x.cause, enter=x.moment, eligible=None, release=None,
                stoppage=None, release_clause=None)
            trips.append(open_[x.player])
        elif x.kind == "box.eligible" and x.player in open_:
            open_[x.player].eligible = x.moment
        elif x.kind in ("box.release", "shootout.excluded") and x.player in open_:
            trip = open_.pop(x.player)
            trip.release = x.moment
            trip.stoppage = x.stoppage if x.kind == "box.release" else "shootout"
            trip.release_clause = x.clause
    return trips


# ------------------------------------------------------------------ JSON and CSV

ENTRY_COLUMNS = ["kind", "seq", "at", "period", "clock", "play", "player", "side", "team", "detail",
                 "clause", "citation", "official", "voided", "cause", "text_en", "text_es"]


def to_json(report: Report) -> bytes:
    return msgspec.json.encode(report)


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def to_csv(report: Report) -> str:
    """One row per entry (cards, penalties, box trips, releases, goals, ...), then one per obligation
    created by the game (``kind`` ``obligation``, ``detail`` its kind and status)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(ENTRY_COLUMNS)
    for x in report.entries:
        m = x.moment
        w.writerow([x.kind, x.seq if x.seq is not None else "", _iso(m.at), m.period, mmss(m.clock_ms),
                    mmss(m.play_ms), x.player or "", x.side or "", x.team or "", x.detail, x.clause,
                    x.citation, x.official, "yes" if x.voided else "", x.cause, x.text.en, x.text.es])
    for o in report.obligations:
        where = f" · in {o.applied_in}" if o.applied_in else ""
        detail = f"{o.kind} {mmss(o.owed_ms)} · {o.status}{where}"
        w.writerow(["obligation", "", "", "", "", "", o.player, "", o.team, detail, o.clause,
                    _citation(o.clause), o.by or "", "", o.cause, o.reason or "", ""])
    return buf.getvalue()


# ------------------------------------------------------------------ HTML

_HOME, _AWAY = "#1d64c8", "#d9730d"
_YELLOW, _RED, _GREEN = "#f0c000", "#d32f2f", "#2e9d57"


def _e(s: object) -> str:
    return html.escape(str(s), quote=True)


def _when(m: Moment) -> str:
    return (f'<span class="when">P{m.period} {mmss(m.clock_ms)}</span>'
            f'<span class="play">{mmss(m.play_ms)} of play</span>')


def _clause(x: Entry | BoxTrip, clause: str | None = None) -> str:
    c = clause or x.clause
    return f'<span class="clause"><b>{_e(c)}</b> {_e(_citation(c).split(" · ", 1)[-1])}</span>'


def _table(head: Sequence[str], rows: Iterable[str], empty: str) -> str:
    body = "".join(rows)
    if not body:
        return f'<p class="none">{_e(empty)}</p>'
    ths = "".join(f"<th>{_e(h)}</th>" for h in head)
    return f"<table><thead><tr>{ths}</tr></thead><tbody>{body}</tbody></table>"


def _side(x: Entry | BoxTrip) -> str:
    return f'<span class="side {_e(x.side or "")}">{_e(x.team or x.side or "")}</span>'


def timeline_svg(report: Report) -> str:
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

    parts = [f'<svg class="timeline" viewBox="0 0 1000 {height}" xmlns="http://www.w3.org/2000/svg" '
             f'role="img" aria-label="Timeline of play time: goals, cards and box trips">',
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
    parts.append(f'<text x="{left - 8}" y="{goals_y + 4}" class="t-lane">Goals</text>')
    parts.append(f'<text x="{left - 8}" y="{cards_y + 4}" class="t-lane">Cards</text>')
    for g, row in zip(report.goals, goal_rows, strict=True):
        color = _HOME if g.side == "home" else _AWAY
        score = g.detail.rsplit("· ", 1)[-1]
        cx = x(g.moment.play_ms)
        parts.append(f'<g><title>{_e(g.text.en)}</title><circle cx="{cx}" cy="{goals_y}" r="6" '
                     f'fill="{color}"/><text x="{cx}" y="{goals_y - 9 - 11 * row}" class="t-mark">'
                     f"{_e(score)}</text></g>")
    for c, row in zip(report.cards, card_rows, strict=True):
        color = _RED if c.color == "red" else _YELLOW
        dash = ' stroke-dasharray="2 2" fill-opacity="0.25"' if c.voided else ""
        cx = x(c.moment.play_ms)
        parts.append(f'<g><title>{_e(c.text.en)}</title><rect x="{round(cx - 4, 1)}" y="{cards_y - 7}" '
                     f'width="8" height="12" rx="1.5" fill="{color}" stroke="#333" stroke-width="0.6"{dash}/>'
                     f'<text x="{cx}" y="{cards_y + 17 + 11 * row}" class="t-mark">'
                     f'{_e(c.player or c.role or "")}</text></g>')
    # box trips: solid while play time is owed, hatched while waiting for the stoppage
    end = report.play_ms
    for i, t in enumerate(trips):
        y = box_top + i * lane_h
        color = _HOME if t.side == "home" else _AWAY
        x0 = x(t.enter.play_ms)
        served = t.eligible.play_ms if t.eligible else min(end, t.enter.play_ms + t.owed_ms)
        out = t.release.play_ms if t.release else end
        parts.append(f'<text x="{left - 8}" y="{y + 12}" class="t-lane" fill="{color}">{_e(t.player)}</text>')
        parts.append(f'<g><title>{_e(t.player)}: box {mmss(t.owed_ms)} of play ({_e(t.clause)}), '
                     f'in at {mmss(t.enter.play_ms)}, out at '
                     f'{mmss(out) if t.release else "the end"}</title>'
                     f'<rect x="{x0}" y="{y + 3}" width="{max(1.0, round(x(served) - x0, 1))}" height="12" '
                     f'fill="{_YELLOW}" stroke="{color}" stroke-width="1"/>')
        if out > served:
            w = max(1.0, round(x(out) - x(served), 1))
            parts.append(f'<rect x="{x(served)}" y="{y + 3}" width="{w}" '
                         f'height="12" fill="url(#wait)" stroke="{color}" stroke-width="1"/>')
        parts.append("</g>")
    for j, (player, side, start, stop) in enumerate(red_windows):
        y = box_top + (len(trips) + j) * lane_h
        color = _HOME if side == "home" else _AWAY
        parts.append(f'<text x="{left - 8}" y="{y + 12}" class="t-lane" fill="{color}">{_e(player)}</text>'
                     f'<g><title>{_e(player)}: sent off; the team plays short</title>'
                     f'<rect x="{x(start)}" y="{y + 3}" width="{max(1.0, round(x(stop) - x(start), 1))}" '
                     f'height="12" fill="{_RED}" fill-opacity="0.8" stroke="{color}"/></g>')
    if not lanes:
        parts.append(f'<text x="{left + 6}" y="{box_top + 14}" class="t-none">No box trips</text>')
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
.when { display: block; font-weight: 700; white-space: nowrap; }
.play { display: block; font-size: .86em; color: var(--muted); white-space: nowrap; }
.side { font-weight: 700; }
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


def _released(t: BoxTrip) -> str:
    if t.release is None:
        return "still in the box"
    return f'{_when(t.release)}<div class="text">at the {_e(stoppage(t.stoppage or ""))}</div>'


def _ob_clause(o: Obligation) -> str:
    return f'<span class="clause"><b>{_e(o.clause)}</b> {_e(_citation(o.clause).split(" · ", 1)[-1])}</span>'


def _ob_source(o: Obligation) -> str:
    if o.by:
        return f"committee: {o.by}" + (f" — {o.reason}" if o.reason else "")
    return o.cause


def _card_icon(x: Entry) -> str:
    return f'<i class="card {"red" if x.color == "red" else "yellow"}"></i>'


def to_html(report: Report) -> str:
    r = report
    status = {"ended": "Final", "live": "In progress", "scheduled": "Not started"}.get(r.status, r.status)
    cards = _table(
        ["When", "Player", "Team", "Card", "Clause", "Official"],
        (f'<tr class="{"voided" if c.voided else ""}" data-cause="{_e(c.cause)}">'
         f"<td>{_when(c.moment)}</td><td><b>{_e(c.player or '')}</b>"
         f"{_e(c.role or '')}{' <small>(team official)</small>' if c.role else ''}</td><td>{_side(c)}</td>"
         f'<td>{_card_icon(c)}{_e(c.detail)}<div class="text">{_e(c.text.en)}</div></td>'
         f"<td>{_clause(c)}</td><td>{_e(c.official)}</td></tr>" for c in r.cards),
        "No cards.")
    penalties = _table(
        ["When", "Against", "Player", "Penalty", "Clause"],
        (f"<tr><td>{_when(p.moment)}</td><td>{_side(p)}</td><td>{_e(p.player or '—')}</td>"
         f"<td>{_e(p.detail)}</td><td>{_clause(p)}</td></tr>" for p in r.penalties),
        "No penalties.")
    trips = _table(
        ["Player", "Team", "In", "Owed", "Served", "Released", "Clause"],
        (f'<tr data-player="{_e(t.player)}"><td><b>{_e(t.player)}</b>'
         f'<div class="text">{_e(t.kind)}</div></td>'
         f"<td>{_side(t)}</td><td>{_when(t.enter)}</td><td>{mmss(t.owed_ms)} of play</td>"
         f"<td>{_when(t.eligible) if t.eligible else '—'}</td>"
         f"<td>{_released(t)}</td>"
         f"<td>{_clause(t)}{'<br>' + _clause(t, t.release_clause) if t.release_clause else ''}</td></tr>"
         for t in r.box_trips),
        "No box trips.")
    releases = _table(
        ["When", "Player", "Team", "What", "Clause"],
        (f"<tr><td>{_when(x.moment)}</td><td><b>{_e(x.player or '')}</b></td><td>{_side(x)}</td>"
         f"<td>{_e(x.text.en)}</td><td>{_clause(x)}</td></tr>" for x in r.releases),
        "No releases.")
    sent = _table(
        ["When", "Player", "Team", "No substitute", "Clause"],
        (f"<tr><td>{_when(x.moment)}</td><td><b>{_e(x.player or '')}</b></td><td>{_side(x)}</td>"
         f"<td>{_e(x.detail)}</td><td>{_clause(x)}</td></tr>" for x in r.sent_off),
        "No one was sent off.")
    goals = _table(
        ["When", "Team", "Player", "Score"],
        (f"<tr><td>{_when(g.moment)}</td><td>{_side(g)}</td><td>{_e(g.player or '—')}</td>"
         f"<td>{_e(g.detail)}</td></tr>" for g in r.goals),
        "No goals.")
    alerts = _table(
        ["When", "Alert", "What the officials were told", "Clause", "Event"],
        (f'<tr data-code="{_e(a.code or "")}"><td>{_when(a.moment)}</td><td><b>{_e(a.code or "")}</b></td>'
         f'<td>{_e(a.text.en)}<div class="text">{_e(a.text.es)}</div></td><td>{_clause(a)}</td>'
         f"<td>{_e(a.cause)}<div class=\"text\">{_e(a.official)}</div></td></tr>" for a in r.alerts),
        "No alerts: the record and the rules agreed throughout.")
    obligations = _table(
        ["Player", "Team", "Obligation", "Clause", "Status", "Served in", "From"],
        (f'<tr><td><b>{_e(o.player)}</b></td><td>{_e(o.team)}</td>'
         f"<td>{_e(o.kind.replace('_', ' '))}{' ' + mmss(o.owed_ms) + ' of play' if o.owed_ms else ''}"
         f'<div class="text">{_e(o.id)}</div></td>'
         f"<td>{_ob_clause(o)}</td><td>{_e(o.status)}</td><td>{_e(o.applied_in or '—')}</td>"
         f"<td>{_e(_ob_source(o))}</td></tr>"
         for o in r.obligations),
        "This game created no obligations for later games.")
    carried = _table(
        ["Player", "Obligation", "Clause", "From game"],
        (f"<tr><td><b>{_e(c.player)}</b></td><td>{_e(c.kind.replace('_', ' '))} {mmss(c.owed_ms)}</td>"
         f'<td><span class="clause"><b>{_e(c.clause)}</b></span></td><td>{_e(c.origin_game)}</td></tr>'
         for c in r.carried),
        "Nothing carried into this game.")
    legend = (f'<div class="legend"><span><i style="background:{_YELLOW}"></i>box: play time owed</span>'
              f'<span><i style="background:repeating-linear-gradient(45deg,{_YELLOW} 0 3px,#fff3c4 3px 6px)">'
              f"</i>"
              f"served, waiting for the stoppage</span>"
              f'<span><i style="background:{_RED}"></i>sent off, no substitute</span>'
              f'<span><i style="background:{_HOME}"></i>{_e(r.home.team)}</span>'
              f'<span><i style="background:{_AWAY}"></i>{_e(r.away.team)}</span></div>')
    g = _e(r.game)
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Game report · {g}</title><style>{_CSS}</style></head><body><main>"
        f"<h1>Game report · Rule 14</h1>"
        f'<header><div class="team home">{_e(r.home.team)}</div>'
        f'<div class="score">{r.home.score} – {r.away.score}</div>'
        f'<div class="team away">{_e(r.away.team)}</div></header>'
        f'<div class="meta"><span>Game <b>{g}</b></span><span>Event <b>{_e(r.event)}</b></span>'
        f"<span>Arena <b>{_e(r.arena or '—')}</b></span><span>Handicap <b>{r.handicap}</b></span>"
        f"<span>Kind <b>{_e(r.kind)}</b></span><span>Status <b>{_e(status)}</b></span>"
        f"<span>Play <b>{mmss(r.play_ms)}</b> of {r.periods} × {mmss(r.period_ms)}</span>"
        f"<span>Log <b>seq {r.seq}</b></span><span>Generated <b>{_e(_iso(r.generated_at))}</b></span></div>"
        f'<div class="meta"><span>{_e(r.home.team)}: {_e(", ".join(r.home.lineup))}'
        f"{_e(' · bench ' + ', '.join(r.home.bench)) if r.home.bench else ''}</span>"
        f'<span>{_e(r.away.team)}: {_e(", ".join(r.away.lineup))}'
        f"{_e(' · bench ' + ', '.join(r.away.bench)) if r.away.bench else ''}</span></div>"
        f"<h2>Timeline <small>— x axis: play time</small></h2>{timeline_svg(r)}{legend}"
        f"<h2>Cards <small>({len(r.cards)})</small></h2>{cards}"
        f"<h2>Penalties <small>({len(r.penalties)})</small></h2>{penalties}"
        f"<h2>Box trips <small>({len(r.box_trips)})</small></h2>{trips}"
        f"<h2>Releases</h2>{releases}"
        f"<h2>Sent off</h2>{sent}"
        f"<h2>Goals</h2>{goals}"
        f"<h2>Alerts <small>({len(r.alerts)})</small></h2>{alerts}"
        f"<h2>Obligations created by this game <small>— the ledger now</small></h2>{obligations}"
        f"<h2>Carried into this game</h2>{carried}"
        f'<p class="links">Also as <a href="/games/{g}/report.json">JSON</a> · '
        f'<a href="/games/{g}/report.csv">CSV</a> · <a href="/api/games/{g}/log">the log</a> · '
        f'<a href="/scoreboard?game={g}">scoreboard</a></p>'
        f"</main></body></html>"
    )
