"""The game report: every card (to players and to team officials), penalty, box
trip, release and alert of one game, each with its clause, the obligations the
game created for later games (rescinded ones too, marked) and the committee's
decisions about them, and a timeline of play time, as HTML (printable), JSON and CSV.

Its result is the engine's own (``Engine.view``: score with goals on handicap, teams,
what the game carried, post-game cards; the ledger's obligations), what every display
shows: it never counts on its own. The game's records are read from the store for who
sent what and when; the engine's own standing events of the game (``Engine.game_events``:
in fold order, a disallowed goal as disallowed) are fed again to a fresh engine holding
only the game as it was just after its setup (``Engine.fork_game``), the way the hub
rebuilds deltas, to place each notice on the play-time axis by the clock figures of the
events around it, so that a deadline (a box trip's play time served) sits exactly where it
fell due. Voided cards and disallowed goals are listed apart, marked voided, with who
voided them.

    GET /games/{game}/report        HTML, with an inline SVG timeline; prints on A4
    GET /games/{game}/report.json   the same, as one JSON document (``Report``)
    GET /games/{game}/report.csv    one row per entry (``ENTRY_COLUMNS``)

This module builds the document (``build``) and encodes it as JSON; the HTML
page with its timeline is ``report_html.to_html``, the CSV ``report_csv.to_csv``.
The engine is asked only through its read-only face.

Names: every line keeps its ids (``player``, ``team``) and adds what the roster
registers now (``player_name``, ``number``, ``team_name``); the team sheets carry
the teams' names, short letters and colours, and ``roster`` the game's whole
roster (``engine.roster``). ``who`` gives a player as the pages show him:
"#2 Ortega", or the id when he is not registered.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

import msgspec

from ...rules import codec
from ...rules import events as ev
from ...rules import notices as nt
from ...rules.clauses import CLAUSES, cite
from ...rules.engine import Engine
from ...rules.ledger import Obligation
from ...rules.names import NO_NAMES, Names, Words, shirt
from ...rules.rosters import GameRoster
from ...rules.text import mmss, render, spanish
from ...rules.view import CarriedView, GameView, HandicapView, PostgameView
from ...store import Record
from ..hub.hub import SYSTEM, Hub
from ..ops.wallclock import now_ms
from ..wire.api_types import CommitteeDecision
from . import audit

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
    voided_by: str | None = None   # voided: who voided it (the official's name, else the device) ...
    voided_at: int | None = None   # ... and when (the void's ``at``)
    color: str | None = None       # a card's color, as applied
    owed_ms: int | None = None     # box.enter: play time owed; sent_off: the no-substitute window
    stoppage: str | None = None    # box.release, sub.allowed: the stoppage that released
    role: str | None = None        # official.carded: the team official's role (coach, groom, ...)
    code: str | None = None        # alert: its code (docs/log-format.md, "Alerts")
    text: nt.Text
    player_name: str | None = None  # the player's registered name (None: not registered)
    number: int | None = None       # his registered shirt number
    team_name: str | None = None    # the team's registered name


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
    # as in the notice: "whistle:<event id>", "goal:…"; "left early", "shootout", "sent off"
    # (a red in the box superseded it)
    stoppage: str | None
    release_clause: str | None
    player_name: str | None = None
    number: int | None = None
    team_name: str | None = None


class TeamSheet(msgspec.Struct):
    side: str
    team: str
    lineup: list[str]
    bench: list[str]
    score: int | float             # the total, goals on handicap included (A5), a half as .5
    name: str | None = None        # the team's registered name, short letters, colours and logo
    short: str | None = None
    colors: ev.Colors | None = None
    logo: str | None = None
    on_handicap: int | float = 0   # the goals on handicap it started with (A5)


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
    obligations: list[Obligation]   # created by this game, as the ledger holds them now (rescinded too)
    carried: list[CarriedView]      # obligations from earlier games this game served
    postgame: list[PostgameView]
    roster: GameRoster | None = None  # the names, numbers and colours registered now
    # The committee's decisions about the obligations this game created: rescinds, decreases
    # and increases, oldest first, with who, when and why (``audit.of_obligations``).
    decisions: list[CommitteeDecision] = []
    # The goals each side started with (A5), as the engine's view gives them (None: none given).
    goals_on_handicap: HandicapView | None = None


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
        return f"{color} · {n.role} (team official) · {n.conduct or 'conduct not named'}"
    if isinstance(n, nt.Alert):
        return n.code + (f" · {n.subject}" if n.subject else "")
    if isinstance(n, nt.CardRecorded):
        color = n.color + (f" ×{n.count}" if n.count > 1 else "")
        conv = f" (converted: {n.converted})" if n.converted else ""
        yellows = f" · {n.yellows} yellow in the game" if n.yellows else ""
        return f"{color}{conv} · {n.conduct or 'conduct not named'} · offense {n.offense}{yellows}"
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


def who(roster: GameRoster | None, player: str) -> str:
    """A player as the report shows him: ``"#2 Ortega"``, ``"Ortega"`` (no number), or his id."""
    p = roster.players.get(player) if roster is not None else None
    return player if p is None else shirt(p)


def _named(roster: GameRoster, x: Entry | BoxTrip) -> None:
    """Add the registered names to a line that names a player or a team by id."""
    p = roster.players.get(x.player) if x.player else None
    if p is not None:
        x.player_name, x.number = p.name, p.number
    team = roster.home if x.side == "home" else roster.away if x.side == "away" else None
    if team is not None and team.team == x.team:
        x.team_name = team.name


def _sheet(view: GameView, side: ev.Side, roster: GameRoster) -> TeamSheet:
    """A side of the game as the engine's view holds it, named as the roster registers it now."""
    tv = view.teams.home if side == "home" else view.teams.away
    score = view.score.home if side == "home" else view.score.away
    h = view.goals_on_handicap
    given = 0 if h is None else h.home if side == "home" else h.away
    sheet = TeamSheet(side, tv.team, list(tv.lineup), list(tv.bench), score, on_handicap=given)
    t = roster.home if side == "home" else roster.away
    if t is not None and t.team == tv.team:
        sheet.name, sheet.short, sheet.colors, sheet.logo = t.name, t.short.upper(), t.colors, t.logo
    return sheet


def stoppage(s: str) -> str:
    """``"whistle:ump-3/u-4"`` -> ``"whistle (ump-3/u-4)"``."""
    kind, _, event = s.partition(":")
    return f"{kind.replace('.', ' ')} ({event})" if event else kind


def citation(clause: str) -> str:
    """``"R6"`` -> ``"Rule 14 · Red card"``: a clause as the rule book names it (itself if unknown)."""
    return cite(clause) if clause in CLAUSES else clause


async def build(hub: Hub, game: str) -> Report:
    """Collect ``game``'s report from its records in the store. ``KeyError`` if there is no
    such game."""
    seq = hub.feeds[game].seq
    records = [r for r in await hub.store.game_records(game) if r.seq is not None]
    return assemble(hub.engine, game, records, seq)


def assemble(engine: Engine, game: str, records: Sequence[Record], seq: int) -> Report:
    """``game``'s report from its logged ``records`` (in log order) and the engine that folded
    them, as of log position ``seq``.

    The result (score, teams, what the game carried, post-game cards, obligations) is the
    engine's own: ``engine.view(game)`` and its ledger, what every display shows. The
    game's events are folded again only to place each notice on the clocks: the engine's own
    standing events (``Engine.game_events``: a disallowed goal as disallowed, late events
    where they were folded), so the fold can't count what the engine does not."""
    officials: dict[str, str] = {}
    seqs: dict[str, int] = {}
    dropped: list[tuple[Any, int]] = []          # voided events, with their seq
    voided_by: dict[str, tuple[str, int]] = {}   # a void's target -> who voided it, and when
    along = engine.names_along(game)
    names: dict[str, Names] = {}                 # the roster as of each event, in log order
    decoded = []
    for r in records:
        e = codec.decode_event(r.body)
        officials[e.id] = "the service" if r.device == SYSTEM else r.official or r.device
        seqs[e.id] = r.seq or 0
        names[e.id] = along.at(e.id)
        decoded.append((e, r.seq or 0))
        if isinstance(e, ev.Void) and engine.knows(e.id):
            voided_by[e.target] = (officials[e.id], e.at)
    for e, pos in decoded:
        if not isinstance(e, ev.GameSetup | ev.Void) and engine.is_voided(e.id):
            dropped.append((e, pos))

    # The fork's time cursor starts before everything (as the engine's does), so that events
    # dated before the setup (a synced device may date an event any time in the past) are
    # folded in time order from the start, each view taken at its event's own moment.
    fork = engine.fork_game(game, as_it_stands=True)
    clock = _Clock()
    first = fork.view(game)
    clock.add(first)
    teams = {"home": first.teams.home.team, "away": first.teams.away.team}
    # (notice, where it happened, the logged event that brought it: a card, a whistle, a tick),
    # its text in the names of the roster as of that event, as its viewers read it then
    out: list[tuple[Any, Moment, str]] = [
        (render(n, names.get(n.cause, NO_NAMES)), clock.at(n.at), n.cause) for n in fork.setup_notices(game)]
    disallowed: list[ev.Goal] = []
    for ge in engine.game_events(game):
        notices = fork.feed(ge)  # type: ignore[arg-type]  # a game's events are events of the log
        clock.add(fork.view(game))
        out.extend((render(n, names[ge.id]), clock.at(n.at), ge.id) for n in notices)
        if isinstance(ge, ev.Goal) and ge.disallowed:
            disallowed.append(ge)
    final = engine.view(game)   # the result, as the engine holds it
    sides = {p.id: p.side for p in final.players}

    # A card's conduct, as last named (R1: a card.amended names it after the card).
    conducts = {n.target: n.conduct for n, _, _ in out if isinstance(n, nt.ConductNamed)}
    entries: list[Entry] = []
    for n, moment, by in out:
        tag = str(type(n).__struct_config__.tag)
        if tag in _SKIP:
            continue
        if isinstance(n, nt.CardRecorded | nt.OfficialCarded) and n.cause in conducts:
            n = msgspec.structs.replace(n, conduct=conducts[n.cause])
        side = getattr(n, "side", None) or getattr(n, "against", None)
        entries.append(Entry(
            kind=tag, seq=seqs.get(by), cause=n.cause, moment=moment,
            player=getattr(n, "player", None), side=side, team=teams.get(side or ""),
            detail=_detail(n), clause=n.clause, citation=citation(n.clause),
            official=officials.get(by, "the service"),
            color=getattr(n, "color", None),
            owed_ms=n.owed_ms if isinstance(n, nt.BoxEnter) else n.no_sub_ms if isinstance(n, nt.SentOff)
            else None,
            stoppage=getattr(n, "stoppage", None),
            role=n.role if isinstance(n, nt.OfficialCarded) else None,
            code=n.code if isinstance(n, nt.Alert) else None,
            text=n.text or nt.Text("", ""),
        ))
    for e, pos in dropped:
        if isinstance(e, ev.Card):
            entries.append(_voided_card(e, pos, names[e.id], game, sides, teams, clock.at(e.at),
                                        officials.get(e.id, ""), voided_by.get(e.id)))
    for goal in disallowed:
        entries.append(_disallowed_goal(goal, seqs.get(goal.id), names[goal.id], game, teams,
                                        clock.at(goal.at), officials.get(goal.id, ""),
                                        voided_by.get(goal.id)))
    entries.sort(key=lambda x: (x.moment.at, x.seq or 0))
    roster = engine.roster(game)
    for x in entries:
        _named(roster, x)
    trips = _box_trips(entries)
    for trip in trips:
        _named(roster, trip)
    obligations = sorted(engine.all_obligations(origin_game=game), key=lambda o: (o.order, o.player))

    return Report(
        game=game, event=final.event, arena=final.arena, kind=final.kind, handicap=final.handicap,
        status=final.status,
        home=_sheet(final, "home", roster),
        away=_sheet(final, "away", roster),
        periods=final.clock.periods, period_ms=final.clock.period_ms, play_ms=final.clock.play_ms,
        period_starts=clock.period_starts(),
        seq=seq, generated_at=now_ms(),
        cards=[x for x in entries if x.kind in ("card.recorded", "official.carded")],
        penalties=[x for x in entries if x.kind == "penalty.awarded"],
        box_trips=trips,
        releases=[x for x in entries if x.kind in ("box.release", "sub.allowed")],
        sent_off=[x for x in entries if x.kind == "sent_off"],
        goals=[x for x in entries if x.kind == "goal.scored"],
        alerts=[x for x in entries if x.kind == "alert"],
        entries=entries,
        obligations=obligations,
        carried=list(final.carried),
        postgame=list(final.postgame),
        roster=roster,
        decisions=audit.of_obligations(engine, obligations),
        goals_on_handicap=final.goals_on_handicap,
    )


def _voided_card(e: ev.Card, seq: int, names: Names, game: str, sides: dict[str, ev.Side],
                 teams: dict[str, str], moment: Moment, official: str, by: tuple[str, int] | None) -> Entry:
    """A card voided entered_in_error or struck out: listed, marked voided, with who voided it."""
    color = e.color + (f" ×{e.count}" if e.count > 1 else "")
    color_es = f"tarjeta {spanish(e.color)}" + (f" ×{e.count}" if e.count > 1 else "")
    w = Words(names, game)
    side: ev.Side
    if e.official is not None:  # a team official's card (R1)
        side, whom = e.official.team, f"the {w.side(e.official.team)} {e.official.role}"
        whom_es = f"el {e.official.role} {w.de(side)}"
    else:
        side = sides.get(e.player or "", "away")
        whom = whom_es = w.named(e.player or "")
    return Entry(
        kind="official.carded" if e.official is not None else "card.recorded", seq=seq, cause=e.id,
        moment=moment, player=e.player, side=side, team=teams[side],
        detail=f"{color} · {e.conduct or 'conduct not named'} · voided", clause="L1",
        citation=citation("L1"), official=official, voided=True, color=e.color,
        role=e.official.role if e.official is not None else None,
        voided_by=by[0] if by else None, voided_at=by[1] if by else None,
        text=nt.Text(f"Voided: {color} card to {whom}.", f"Anulada: {color_es} para {whom_es}."),
    )


def _disallowed_goal(e: ev.Goal, seq: int | None, names: Names, game: str, teams: dict[str, str],
                     moment: Moment, official: str, by: tuple[str, int] | None) -> Entry:
    """A goal the umpires disallowed (a void of it, A28): no points, its stoppage stands."""
    w = Words(names, game)
    scorer, scorer_es = (f" by {w.p(e.player)}", f" de {w.p(e.player)}") if e.player else ("", "")
    points = f"{e.points} point{'s' if e.points > 1 else ''}"
    return Entry(
        kind="goal.scored", seq=seq, cause=e.id, moment=moment, player=e.player, side=e.team,
        team=teams[e.team], detail=f"{points} · disallowed", clause="A2", citation=citation("A2"),
        official=official, voided=True, voided_by=by[0] if by else None, voided_at=by[1] if by else None,
        text=nt.Text(f"Disallowed: goal {w.side(e.team)}{scorer}; no points, the stoppage stands.",
                     f"Anulado: gol {w.de(e.team)}{scorer_es}; no suma, la detención se mantiene."),
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
        elif x.kind in ("box.release", "shootout.excluded", "sent_off") and x.player in open_:
            # released at a stoppage; excluded from the shootout (R11); or a red in the box
            # superseded it (R6): he is off for the rest of the game, not in the box
            trip = open_.pop(x.player)
            trip.release = x.moment
            ends = {"box.release": x.stoppage, "shootout.excluded": "shootout"}
            trip.stoppage = ends.get(x.kind, "sent off")
            trip.release_clause = x.clause
    return trips


# ------------------------------------------------------------------ JSON


def to_json(report: Report) -> bytes:
    return msgspec.json.encode(report)

