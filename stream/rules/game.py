"""One game's transitions under Rule 14, as a table.

House rules
-----------
1. **Check, then change.** Every handler makes all of its checks before its
   first write, and a failed check raises ``Refused``. A refused event leaves
   the game exactly as it was.
2. **Time is the event's.** ``e.at`` is the only clock. Play time is
   ``clock.play_at``: time with the game clock running, never past the end
   of the period.
3. **Sit-outs are counted in play and served at stoppages.** A box trip or a
   no-substitute window owes a number of play milliseconds. It becomes
   *eligible* when play time reaches its target, and is *served* at the first
   stoppage at or after that moment ("a stoppage exactly at the boundary
   releases"). Stoppages are ``whistle``, ``goal``, ``horn`` (period end or
   split), ``clock.stop`` and ``game.end``.
4. **Every notice cites.** Each notice names its cause (an event id) and
   the clause it applies; refusals name the clause at stake.
5. **Nothing here does I/O**, reads the time, or draws a random number.

The table at the bottom, ``TRANSITIONS``, lists each event type with the
phases in which it is accepted and the handler that applies it; read it
beside docs/rules.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from ..errors import Refused
from . import clock as clk
from . import events as ev
from . import notices as nt
from .state import Game, MountWindow, Player, PostgameEntry, Sitout, Team, other

BOX_MS = 120_000          # R3, R4, R8: "the next two minutes of play"
RED_NO_SUB_MS = 240_000   # R6: "the next four minutes of play"
MOUNT_WINDOW_MS = 300_000  # R17: "a maximum of 5 minutes for its replacement"

Phase = Literal["scheduled", "live", "ended"]
Out = list[Any]  # list[nt.Notice]


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Readings of the rule that a committee may choose (docs/rules.md, ambiguity register)."""

    # R8: "the remainder of his or her original suspension and until the first
    # play stoppage ... following the next two minutes of play". "concurrent":
    # both from the return, so max(remainder, 2:00); "sequential": the
    # remainder, then a fresh 2:00.
    left_early: Literal["concurrent", "sequential"] = "concurrent"


# --------------------------------------------------------------------------
# Lookups that refuse


def _player(g: Game, pid: str) -> Player:
    p = g.players.get(pid)
    if p is None:
        raise Refused("unknown_player", f"{pid!r} is on neither roster of game {g.id!r}", "A3")
    return p


def _on_field(g: Game, p: Player) -> bool:
    return p.id in g.team(p.side).lineup and not p.sent_off and not p.suspended and p.box is None


def _play(g: Game, at: int) -> int:
    return clk.play_at(g.clock, g.period_ms, at)


# --------------------------------------------------------------------------
# Shared steps


def _clock_notice(g: Game, e: ev._Event) -> nt.ClockChanged:
    """The clock as the last start/stop left it (settled at ``e.at``)."""
    c = g.clock
    return nt.ClockChanged(
        cause=e.id, at=e.at, game=g.id, clause="A1",
        running=c.running, period=c.period,
        remaining_ms=g.period_ms - c.period_elapsed_ms,
        play_ms=c.play_ms, period_over=c.period_over,
    )


def _watch(g: Game, p: Player) -> None:
    if p.id not in g.pending:
        g.pending.append(p.id)


def _unwatch_served(g: Game) -> None:
    g.pending = [pid for pid in g.pending if (p := g.players[pid]).box is not None
                 or p.no_sub is not None or p.mount is not None]


def _stoppage(g: Game, e: ev._Event, out: Out) -> None:
    """House rule 3: serve every sit-out whose play target has been reached."""
    if not g.pending:
        return
    play = _play(g, e.at)
    stoppage = ev.event_type(e)
    served = False
    for pid in g.pending:
        p = g.players[pid]
        if p.box is not None and play >= p.box.target_play_ms:
            out.append(nt.BoxRelease(cause=p.box.cause, at=e.at, game=g.id, clause=p.box.clause,
                                     player=p.id, side=p.side, stoppage=f"{stoppage}:{e.id}"))
            p.box = None
            served = True
        if p.no_sub is not None and play >= p.no_sub.target_play_ms:
            out.append(nt.SubAllowed(cause=p.no_sub.cause, at=e.at, game=g.id, clause=p.no_sub.clause,
                                     player=p.id, side=p.side, stoppage=f"{stoppage}:{e.id}"))
            p.no_sub = None
            p.sub_allowed = True
            served = True
    if served:
        _unwatch_served(g)


def _send_off(g: Game, p: Player, e: ev._Event, out: Out, clause: str = "R6") -> None:
    """R6: off for the rest of the game; no substitute until the first stoppage
    after the next four minutes of play. A box trip in progress is superseded."""
    play = _play(g, e.at)
    p.sent_off = True
    p.sent_off_clause = clause
    p.box = None
    p.no_sub = Sitout("no_sub", play + RED_NO_SUB_MS, RED_NO_SUB_MS, e.id, "R6")
    _watch(g, p)
    out.append(nt.SentOff(cause=e.id, at=e.at, game=g.id, clause="R6",
                          player=p.id, side=p.side, no_sub_ms=RED_NO_SUB_MS))


def _penalty(g: Game, p: Player, e: ev._Event, severity: str | int | None,
             reason: Literal["card", "left_box_early", "mount_abuse", "left_arena"],
             clause: str, out: Out) -> None:
    out.append(nt.PenaltyAwarded(cause=e.id, at=e.at, game=g.id, clause=clause,
                                 to=other(p.side), against=p.side, player=p.id,
                                 severity=severity, reason=reason))


def _box(g: Game, p: Player, e: ev._Event, target: int, owed: int, clause: str,
         kind: Literal["card", "returned", "carried"], out: Out) -> None:
    p.box = Sitout("box", target, owed, e.id, clause)
    _watch(g, p)
    out.append(nt.BoxEnter(cause=e.id, at=e.at, game=g.id, clause=clause,
                           player=p.id, side=p.side, owed_ms=target - _play(g, e.at), kind=kind))


# --------------------------------------------------------------------------
# Handlers: (game, event, settings, out) -> None


# The clock's every start and stop is in the view (and in each delta's patch);
# a ``clock`` notice marks only the moments worth announcing: a period starts,
# a period ends.


def clock_start(g: Game, e: ev.ClockStart, s: Settings, out: Out) -> None:
    if g.clock.running:
        raise Refused("clock_running", "the clock is already running", "A1")
    opens = g.clock.period_over or not g.clock.started
    clk.start(g.clock, g.period_ms, e.at)
    g.status = "live"
    if opens:
        out.append(_clock_notice(g, e))


def clock_stop(g: Game, e: ev.ClockStop, s: Settings, out: Out) -> None:
    if not g.clock.running:
        raise Refused("clock_not_running", "the clock is not running", "A1")
    clk.stop(g.clock, g.period_ms, e.at)
    if g.pending:
        _stoppage(g, e, out)


def whistle(g: Game, e: ev.Whistle, s: Settings, out: Out) -> None:
    if g.stops_on_whistle and g.clock.running:
        clk.stop(g.clock, g.period_ms, e.at)
    if g.pending:
        _stoppage(g, e, out)


def goal(g: Game, e: ev.Goal, s: Settings, out: Out) -> None:
    if e.player is not None:
        p = _player(g, e.player)
        if p.side != e.team or not _on_field(g, p):
            raise Refused("player_not_on_field", f"{p.id!r} is not on the field for {e.team}", "A3")
    if e.team == "home":
        g.score_home += e.points
    else:
        g.score_away += e.points
    out.append(nt.GoalScored(cause=e.id, at=e.at, game=g.id, clause="A2", side=e.team,
                             player=e.player, points=e.points,
                             home=g.score_home, away=g.score_away))
    if g.stops_on_goal and g.clock.running:
        clk.stop(g.clock, g.period_ms, e.at)
    if g.pending:
        _stoppage(g, e, out)


def horn(g: Game, e: ev.Horn, s: Settings, out: Out) -> None:
    if e.split:
        _stoppage(g, e, out)
        return
    if g.clock.period_over:
        raise Refused("period_over", f"period {g.clock.period} has already ended", "A1")
    clk.end_period(g.clock, g.period_ms, e.at)
    out.append(_clock_notice(g, e))
    _stoppage(g, e, out)


def game_end(g: Game, e: ev.GameEnd, s: Settings, out: Out) -> None:
    if e.shootout and not g.shootout_option:
        raise Refused("no_shootout_option",
                      "this game did not choose Arena Rule 5.c(2); ties go to extra periods", "A4")
    if g.clock.running:
        clk.stop(g.clock, g.period_ms, e.at)
    _stoppage(g, e, out)
    g.status = "ended"
    g.shootout = e.shootout
    g.ended_at = e.at
    g.ended_by = e.id
    if e.shootout:
        play = _play(g, e.at)
        for p in g.players.values():
            if p.box is not None:
                out.append(nt.ShootoutExcluded(cause=e.id, at=e.at, game=g.id, clause="R11",
                                               player=p.id, side=p.side,
                                               owed_ms=p.box.target_play_ms - play))
                p.box = None
        _unwatch_served(g)
    out.append(nt.GameEnded(cause=e.id, at=e.at, game=g.id, clause="A1",
                            home=g.score_home, away=g.score_away, shootout=e.shootout))


def card(g: Game, e: ev.Card, s: Settings, out: Out) -> None:
    p = _player(g, e.player)
    if p.sent_off:
        raise Refused("player_sent_off", f"{p.id!r} has been sent off for the rest of the game", "R6")
    if e.color == "red" and e.count != 1:
        raise Refused("bad_count", "a red card is one card; count applies to yellows", "R7")
    offense = p.offenses + 1
    yellows = p.yellows + e.count if e.color == "yellow" else p.yellows
    color: Literal["yellow", "red"] = e.color
    converted = None
    if color == "yellow" and (yellows >= 4 or offense >= 4):
        color, converted = "red", "fourth_offense"
    # -- checks done; changes follow --
    p.offenses = offense
    if color == "yellow":
        p.yellows = yellows
        clause = "R7" if e.count > 1 else ("R2", "R3", "R4")[min(yellows, 3) - 1]
    else:
        clause = "R5" if converted or offense >= 4 else "R4" if offense == 3 else "R7"
    out.append(nt.CardRecorded(cause=e.id, at=e.at, game=g.id, clause=clause, player=p.id,
                               side=p.side, color=color, count=e.count if color == "yellow" else 1,
                               yellows=p.yellows, offense=offense, conduct=e.conduct,
                               converted=converted))
    _penalty(g, p, e, e.penalty, "card", "R2", out)
    if color == "red":
        _send_off(g, p, e, out)
    elif yellows >= 2:
        # R3/R4: "until the first play stoppage ... following the next two
        # minutes of play". Already in the box: the later target stands.
        target = _play(g, e.at) + BOX_MS
        if p.box is not None:
            target = max(target, p.box.target_play_ms)
        _box(g, p, e, target, BOX_MS, clause, "card", out)


def arena_left(g: Game, e: ev.ArenaLeft, s: Settings, out: Out) -> None:
    p = _player(g, e.player)
    if p.sent_off:
        raise Refused("player_sent_off", f"{p.id!r} has already been sent off", "R6")
    p.offenses += 1
    out.append(nt.CardRecorded(cause=e.id, at=e.at, game=g.id, clause="R14", player=p.id,
                               side=p.side, color="red", count=1, yellows=p.yellows,
                               offense=p.offenses, conduct="left_arena", converted="left_arena"))
    _penalty(g, p, e, e.penalty, "left_arena", "R2", out)
    _send_off(g, p, e, out, "R14")


def box_left_early(g: Game, e: ev.BoxLeftEarly, s: Settings, out: Out) -> None:
    p = _player(g, e.player)
    if p.box is None:
        raise Refused("not_in_box", f"{p.id!r} is not in the penalty box", "R8")
    play = _play(g, e.at)
    remainder = max(0, p.box.target_play_ms - play)
    target = play + remainder + BOX_MS if s.left_early == "sequential" else play + max(remainder, BOX_MS)
    _penalty(g, p, e, e.penalty, "left_box_early", "R8", out)
    _box(g, p, e, target, target - play, "R8", "returned", out)


def substitution(g: Game, e: ev.Substitution, s: Settings, out: Out) -> None:
    team = g.team(e.team)
    if e.out not in team.lineup:
        raise Refused("not_in_lineup", f"{e.out!r} is not in the {e.team} lineup", "A3")
    if e.in_ not in team.bench:
        raise Refused("not_on_bench", f"{e.in_!r} is not a substitute on the {e.team} bench", "A3")
    po, pi = g.players[e.out], g.players[e.in_]
    if po.box is not None:
        raise Refused("sitting_out", f"{po.id!r} is sitting out; the team plays short "
                      "and the suspension can't be avoided by substitution", "R13")
    out_of_game = po.sent_off or po.suspended
    if out_of_game and not po.sub_allowed:
        raise Refused("no_substitute_yet", f"no substitute for {po.id!r} until the first "
                      "stoppage after four minutes of play", "R9" if po.suspended else "R6")
    if pi.sent_off:
        raise Refused("player_sent_off", f"{pi.id!r} has been sent off", "R6")
    if pi.suspended:
        raise Refused("player_suspended", f"{pi.id!r} is suspended for this game", "R13")
    if pi.box is not None:
        raise Refused("sitting_out", f"{pi.id!r} is sitting out a suspension", "R13")
    team.lineup[team.lineup.index(e.out)] = e.in_
    team.bench.remove(e.in_)
    if not out_of_game:
        team.bench.append(e.out)
    out.append(nt.SubstitutionMade(cause=e.id, at=e.at, game=g.id,
                                   clause=("R9" if po.suspended else "R6") if out_of_game else "R13",
                                   side=e.team, out=e.out, in_=e.in_))


def mount_removed(g: Game, e: ev.MountRemoved, s: Settings, out: Out) -> None:
    p = _player(g, e.player)
    if p.id not in g.team(p.side).lineup or p.sent_off or p.suspended:
        raise Refused("player_not_on_field", f"{p.id!r} is not riding in this game", "R17")
    if p.mount is not None:
        raise Refused("mount_window_open", f"{p.id!r} already has a mount being replaced", "R17")
    deadline = e.at + MOUNT_WINDOW_MS
    p.mount = MountWindow(deadline, e.reason, e.id)
    _watch(g, p)
    out.append(nt.MountDeadline(cause=e.id, at=e.at, game=g.id, clause="R17", player=p.id,
                                side=p.side, deadline_at=deadline, status="open", reason=e.reason))
    if e.reason == "abuse":
        _penalty(g, p, e, e.penalty, "mount_abuse", "R17", out)


def mount_replaced(g: Game, e: ev.MountReplaced, s: Settings, out: Out) -> None:
    p = _player(g, e.player)
    if p.mount is None:
        raise Refused("no_mount_window", f"{p.id!r} has no mount being replaced", "R17")
    p.mount = None
    _unwatch_served(g)
    out.append(nt.MountReplacedNotice(cause=e.id, at=e.at, game=g.id, clause="R17",
                                      player=p.id, side=p.side))


def postgame_card(g: Game, e: ev.PostgameCard, s: Settings, out: Out) -> None:
    p = _player(g, e.player)
    g.postgame.append(PostgameEntry(p.id, e.level, e.id))
    out.append(nt.PostgameRecorded(cause=e.id, at=e.at, game=g.id, clause="R9",
                                   player=p.id, side=p.side, level=e.level))


def tick(g: Game, e: ev.Tick, s: Settings, out: Out) -> None:
    """Time passes; the deadlines it brings were emitted before the handler ran."""


# --------------------------------------------------------------------------
# Time passing: deadlines that fall due while nothing is sent


def deadlines(g: Game, after: int, upto: int) -> list[tuple[int, Any]]:
    """Notices for the deadlines that fall in ``(after, upto]``, as (at, notice)."""
    due: list[tuple[int, Any]] = []
    c = g.clock
    for pid in g.pending:
        p = g.players[pid]
        for so in (p.box, p.no_sub):
            if so is None:
                continue
            t = clk.due_at(c, g.period_ms, so.target_play_ms)
            if t is not None and after < t <= upto:
                if so.kind == "box":
                    n: Any = nt.BoxEligible(cause=so.cause, at=t, game=g.id, clause=so.clause,
                                            player=p.id, side=p.side)
                else:
                    n = nt.SubEligible(cause=so.cause, at=t, game=g.id, clause=so.clause,
                                       player=p.id, side=p.side)
                due.append((t, n))
        m = p.mount
        if m is not None and after < m.deadline_at <= upto:
            due.append((m.deadline_at, nt.MountDeadline(
                cause=m.cause, at=m.deadline_at, game=g.id, clause="R17", player=p.id,
                side=p.side, deadline_at=m.deadline_at, status="expired", reason=m.reason)))
    if len(due) > 1:
        due.sort(key=lambda d: d[0])
    return due


def next_deadline(g: Game, after: int) -> int | None:
    """The earliest deadline strictly after ``after``, if any."""
    best: int | None = None
    c = g.clock
    for pid in g.pending:
        p = g.players[pid]
        for so in (p.box, p.no_sub):
            if so is not None:
                t = clk.due_at(c, g.period_ms, so.target_play_ms)
                if t is not None and t > after and (best is None or t < best):
                    best = t
        m = p.mount
        if m is not None and m.deadline_at > after and (best is None or m.deadline_at < best):
            best = m.deadline_at
    return best


# --------------------------------------------------------------------------
# Setup


def new_game(e: ev.GameSetup) -> Game:
    """A game as ``game.setup`` describes it. Refuses rosters that repeat a player."""
    seen: set[str] = set()
    for r in (e.teams.home, e.teams.away):
        for pid in [*r.players, *r.subs]:
            if pid in seen:
                raise Refused("duplicate_player", f"{pid!r} appears twice in the rosters", "A3")
            seen.add(pid)
    if e.teams.home.team == e.teams.away.team:
        raise Refused("same_team", "a team can't play itself", "A3")
    players: dict[str, Player] = {}
    for side, r in (("home", e.teams.home), ("away", e.teams.away)):
        for pid in [*r.players, *r.subs]:
            players[pid] = Player(pid, side)  # type: ignore[arg-type]
    return Game(
        id=e.game, event=e.event, arena=e.arena, handicap=e.handicap, kind=e.kind,
        shootout_option=e.shootout_option, periods=e.periods, period_ms=e.period_ms,
        stops_on_whistle=e.clock_stops_on_whistle, stops_on_goal=e.clock_stops_on_goal,
        home=Team(e.teams.home.team, list(e.teams.home.players), list(e.teams.home.subs)),
        away=Team(e.teams.away.team, list(e.teams.away.players), list(e.teams.away.subs)),
        players=players,
    )


# --------------------------------------------------------------------------
# The table


@dataclass(frozen=True)
class Transition:
    phases: frozenset[Phase]
    handler: Callable[[Game, Any, Settings, Out], None]


_LIVE: frozenset[Phase] = frozenset({"live"})
_OPEN: frozenset[Phase] = frozenset({"scheduled", "live"})
_ENDED: frozenset[Phase] = frozenset({"ended"})
_ANY: frozenset[Phase] = frozenset({"scheduled", "live", "ended"})

TRANSITIONS: dict[type, Transition] = {
    #  event               accepted while            handler           clause
    ev.ClockStart:    Transition(_OPEN,  clock_start),     # A1
    ev.ClockStop:     Transition(_LIVE,  clock_stop),      # A1, house rule 3
    ev.Whistle:       Transition(_LIVE,  whistle),         # house rule 3
    ev.Goal:          Transition(_LIVE,  goal),            # A2, house rule 3
    ev.Horn:          Transition(_LIVE,  horn),            # A1, house rule 3
    ev.GameEnd:       Transition(_OPEN,  game_end),        # A1, R11
    ev.Card:          Transition(_OPEN,  card),            # R1-R7
    ev.BoxLeftEarly:  Transition(_OPEN,  box_left_early),  # R8
    ev.ArenaLeft:     Transition(_LIVE,  arena_left),      # R14
    ev.Substitution:  Transition(_OPEN,  substitution),    # R13, R6, A3
    ev.MountRemoved:  Transition(_OPEN,  mount_removed),   # R17
    ev.MountReplaced: Transition(_OPEN,  mount_replaced),  # R17
    ev.PostgameCard:  Transition(_ENDED, postgame_card),   # R9
    ev.Tick:          Transition(_ANY,   tick),            # house rule 2
}


def refuse_phase(g: Game, e: ev._Event) -> Refused:
    """The refusal for an event that arrives in a phase its row doesn't accept."""
    t = ev.event_type(e)
    if g.status == "ended":
        if isinstance(e, ev.Card):
            return Refused("game_over", "the game has ended; a card after the game is a "
                           "postgame.card", "R9")
        return Refused("game_over", f"{t} after the game has ended", "A1")
    if g.status == "scheduled":
        if isinstance(e, ev.PostgameCard):
            return Refused("game_not_over", "a post-game card needs the game to have ended", "R9")
        return Refused("game_not_started", f"{t} before the clock has first started", "A1")
    return Refused("game_not_over", "a post-game card needs the game to have ended", "R9")


def apply(g: Game, e: ev._Event, s: Settings, out: Out) -> None:
    """Apply one game event per the table, or raise ``Refused`` with ``g`` untouched."""
    row = TRANSITIONS[type(e)]
    if g.status not in row.phases:
        raise refuse_phase(g, e)
    row.handler(g, e, s, out)
