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
6. **Facts are never refused.** ``clock.start``, ``clock.stop``, ``whistle``,
   ``goal``, ``horn`` and ``game.end`` happened on the field: while the game
   exists and has not ended they are applied, whatever the record says. Where
   the record disagrees with the rules (a second ``clock.start``, a scorer
   who was in the box, a shootout the game did not choose), the handler
   applies the rule and emits an ``alert`` that names the problem and the
   clause; the officials act on it.

The table at the bottom, ``TRANSITIONS``, lists each event type with the
phases in which it is accepted, the handler that applies it, whether it may
begin the game (A27) and whether the game's obligations are derived again
after it (R13); read it beside docs/rules.md. ``apply`` is the one way an
event is applied to its game, live and folded again alike: a phase the row
does not accept is refused with the game untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import Refused
from . import clock as clk
from . import events as ev
from . import ledger as lg
from . import notices as nt
from . import steps as st
from .state import Game, MountWindow, OfficialCards, OnHandicap, Player, PostgameEntry, Team, goals
from .steps import BOX_MS, MOUNT_WINDOW_MS, Out

Phase = Literal["scheduled", "live", "ended"]


# --------------------------------------------------------------------------
# Handlers: (game, event, out) -> None. The game's own rules (``g.rules``)
# are the event's readings of Rule 14.


# The clock's every start and stop is in the view (and in each delta's patch);
# a ``clock`` notice marks only the moments worth announcing: a period starts,
# a period ends.


def _begin(g: Game, e: ev.EventBase) -> None:
    """The game is under way; the first time, it began here (an event whose row ``opens`` it, A27)."""
    if g.status == "scheduled":
        g.began_at = e.at
    g.status = "live"


def clock_start(g: Game, e: ev.ClockStart, out: Out) -> None:
    if g.clock.running:
        st.alert(g, e, out, "clock_already_running", "A1", subject=e.id)
        return
    opens = g.clock.period_over or not g.clock.started
    clk.start(g.clock, g.period_ms, e.at)
    _begin(g, e)
    if opens:
        out.append(st.clock_notice(g, e))


def clock_stop(g: Game, e: ev.ClockStop, out: Out) -> None:
    if g.clock.running:
        clk.stop(g.clock, g.period_ms, e.at)
    else:
        st.alert(g, e, out, "clock_not_running", "A1", subject=e.id)
    if g.pending:
        st.stoppage(g, e, out)


def whistle(g: Game, e: ev.Whistle, out: Out) -> None:
    if g.stops_on_whistle and g.clock.running:
        clk.stop(g.clock, g.period_ms, e.at)
    if g.pending:
        st.stoppage(g, e, out)


def goal(g: Game, e: ev.Goal, out: Out) -> None:
    if g.status == "scheduled":
        # Play happened: the game is under way, clock or not.
        _begin(g, e)
        st.alert(g, e, out, "goal_before_clock", "A1", subject=e.id, side=e.team)
    if not e.disallowed:
        if e.player is not None:
            p = g.players.get(e.player)
            if p is None or p.side != e.team or not st.on_field(g, p):
                st.alert(g, e, out, "scorer_not_on_field", "A3", subject=e.id, player=e.player,
                       side=e.team)
        if e.team == "home":
            g.score_home += e.points
        else:
            g.score_away += e.points
        home, away = g.totals()
        out.append(nt.GoalScored(cause=e.id, at=e.at, game=g.id, clause="A2", side=e.team,
                                 player=e.player, points=e.points, home=home, away=away))
    if g.stops_on_goal and g.clock.running:
        clk.stop(g.clock, g.period_ms, e.at)
    if g.pending:
        st.stoppage(g, e, out)


def horn(g: Game, e: ev.Horn, out: Out) -> None:
    if not e.split and (g.status == "scheduled" or g.clock.period_over):
        # No period is in progress: the horn is a stoppage and ends nothing.
        code = "horn_before_start" if g.status == "scheduled" else "period_already_over"
        st.alert(g, e, out, code, "A1", subject=e.id)
    if e.split or g.status == "scheduled" or g.clock.period_over:
        st.stoppage(g, e, out)
        return
    clk.end_period(g.clock, g.period_ms, e.at)
    out.append(st.clock_notice(g, e))
    st.stoppage(g, e, out)
    if (g.shootout_option and not g.shootout and g.clock.period == g.periods
            and g.totals()[0] == g.totals()[1]):  # tied on the total, goals on handicap too (A5)
        # Regulation ends tied under 5.c(2): a shootout follows (R11, A4).
        st.exclude_from_shootout(g, e, out)


def game_end(g: Game, e: ev.GameEnd, out: Out) -> None:
    if g.clock.running:
        clk.stop(g.clock, g.period_ms, e.at)
    st.stoppage(g, e, out)
    if e.shootout and not g.shootout_option:
        # The officials held a shootout the game did not choose: R11 does not apply.
        st.alert(g, e, out, "no_shootout_option", "A4", subject=e.id)
    elif e.shootout and not g.shootout:
        # The horn that ended regulation tied was not recorded: exclude now.
        st.exclude_from_shootout(g, e, out)
    if g.status == "scheduled":
        g.began_at = e.at  # ended without any play: it began, and served, there (A27)
    g.status = "ended"
    g.shootout = g.shootout or e.shootout
    g.ended_at = e.at
    g.ended_by = e.id
    home, away = g.totals()
    out.append(nt.GameEnded(cause=e.id, at=e.at, game=g.id, clause="A1",
                            home=home, away=away, shootout=g.shootout))


def _official_card(g: Game, e: ev.Card, out: Out) -> None:
    """R1: "Inappropriate behavior by any member of a team organization": the card
    awards the penalty (R2); no one goes to the box."""
    o = e.official
    assert o is not None
    if e.color == "red" and e.count != 1:
        raise Refused("bad_count", "a red card is one card; count applies to yellows", "R7")
    rec = next((x for x in g.officials if x.side == o.team and x.role == o.role), None)
    if rec is None:
        rec = OfficialCards(o.team, o.role)
        g.officials.append(rec)
    if e.color == "red":
        rec.reds += 1
    else:
        rec.yellows += e.count
    g.cards[e.id] = None
    out.append(nt.OfficialCarded(cause=e.id, at=e.at, game=g.id, clause="R1", side=o.team,
                                 role=o.role, color=e.color, count=e.count, conduct=e.conduct))
    st.penalty(g, o.team, None, e, e.penalty, "card", "R2", out)


def card(g: Game, e: ev.Card, out: Out) -> None:
    if (e.player is None) == (e.official is None):
        raise Refused("card_target", "a card names either a player or a team official", "R1")
    if e.player is None:
        _official_card(g, e, out)
        return
    p = st.player(g, e.player)
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
    g.cards[e.id] = p.id
    p.offenses = offense
    if color == "yellow":
        p.yellows = yellows
        clause = "R7" if e.count > 1 else ("R2", "R3", "R4")[min(yellows, 3) - 1]
    else:
        # R7 lets the umpires give a red at a first or second offense; R6 says what it is.
        clause = "R5" if converted or offense >= 4 else "R4" if offense == 3 else "R6"
    out.append(nt.CardRecorded(cause=e.id, at=e.at, game=g.id, clause=clause, player=p.id,
                               side=p.side, color=color, count=e.count if color == "yellow" else 1,
                               yellows=p.yellows, offense=offense, conduct=e.conduct,
                               converted=converted))
    st.penalty(g, p.side, p.id, e, e.penalty, "card", "R2", out)
    if color == "red" and clause == "R4":
        # R4: a red at the third offense, "no substitute allowed until the first play
        # stoppage ... following the next two minutes of play" (the event may read four).
        st.send_off(g, p, e, out, no_sub_ms=g.rules.third_offense_red_no_sub_ms, window_clause="R4")
    elif color == "red":
        st.send_off(g, p, e, out)
    elif yellows >= 2:
        # R3/R4: "until the first play stoppage ... following the next two
        # minutes of play". Already in the box: the later target stands.
        target = st.play_time(g, e.at) + BOX_MS
        if p.box is not None:
            target = max(target, p.box.target_play_ms)
        st.box(g, p, e, target, BOX_MS, clause, "card", out)


def arena_left(g: Game, e: ev.ArenaLeft, out: Out) -> None:
    p = st.player(g, e.player)
    if p.sent_off:
        raise Refused("player_sent_off", f"{p.id!r} has already been sent off", "R6")
    if g.clock.period_over:
        # R14 forbids leaving "during the course of a period": in an interval (a horn has
        # ended the period and the next has not started) it is no offense and no card. It
        # is recorded, and the umpires are asked whether he had their permission to go.
        st.alert(g, e, out, "left_arena_in_interval", "R14", subject=e.id, player=p.id, side=p.side)
        return
    p.offenses += 1
    out.append(nt.CardRecorded(cause=e.id, at=e.at, game=g.id, clause="R14", player=p.id,
                               side=p.side, color="red", count=1, yellows=p.yellows,
                               offense=p.offenses, conduct="left_arena", converted="left_arena"))
    st.penalty(g, p.side, p.id, e, e.penalty, "left_arena", "R2", out)
    st.send_off(g, p, e, out, "R14")


def box_left_early(g: Game, e: ev.BoxLeftEarly, out: Out) -> None:
    p = st.player(g, e.player)
    if p.box is None:
        raise Refused("not_in_box", f"{p.id!r} is not in the penalty box", "R8")
    play = st.play_time(g, e.at)
    remainder = max(0, p.box.target_play_ms - play)
    if g.rules.left_early == "sequential":
        target = play + remainder + BOX_MS
    else:
        target = play + max(remainder, BOX_MS)
    st.penalty(g, p.side, p.id, e, e.penalty, "left_box_early", "R8", out)
    st.box(g, p, e, target, target - play, "R8", "returned", out)


def substitution(g: Game, e: ev.Substitution, out: Out) -> None:
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
                      "stoppage after the play time owed", "R9" if po.suspended else "R6")
    if pi.sent_off:
        raise Refused("player_sent_off", f"{pi.id!r} has been sent off", "R6")
    if pi.suspended:
        raise Refused("player_suspended", f"{pi.id!r} is suspended for this game", "R13")
    if pi.box is not None:
        raise Refused("sitting_out", f"{pi.id!r} is sitting out a suspension", "R13")
    # R13 governs it where the substitute would otherwise inherit something: the yellows of
    # the player he replaces, or a teammate's box trip; an ordinary one is A3's.
    r13 = po.yellows or po.carried_yellow or any(g.players[x].box is not None for x in team.lineup)
    team.lineup[team.lineup.index(e.out)] = e.in_
    team.bench.remove(e.in_)
    if not out_of_game:
        team.bench.append(e.out)
    out.append(nt.SubstitutionMade(cause=e.id, at=e.at, game=g.id,
                                   clause=("R9" if po.suspended else "R6") if out_of_game else
                                   "R13" if r13 else "A3", side=e.team, out=e.out, in_=e.in_))


def mount_removed(g: Game, e: ev.MountRemoved, out: Out) -> None:
    p = st.player(g, e.player)
    if p.id not in g.team(p.side).lineup or p.sent_off or p.suspended:
        raise Refused("player_not_on_field", f"{p.id!r} is not riding in this game", "R17")
    if p.mount is not None:
        raise Refused("mount_window_open", f"{p.id!r} already has a mount being replaced", "R17")
    deadline = e.at + MOUNT_WINDOW_MS
    p.mount = MountWindow(deadline, e.reason, e.id)
    st.watch(g, p)
    out.append(nt.MountDeadline(cause=e.id, at=e.at, game=g.id, clause="R17", player=p.id,
                                side=p.side, deadline_at=deadline, status="open", reason=e.reason))
    if e.reason == "abuse":
        st.penalty(g, p.side, p.id, e, e.penalty, "mount_abuse", "R17", out)


def mount_replaced(g: Game, e: ev.MountReplaced, out: Out) -> None:
    p = st.player(g, e.player)
    if p.mount is None:
        raise Refused("no_mount_window", f"{p.id!r} has no mount being replaced", "R17")
    p.mount = None
    st.unwatch_served(g)
    out.append(nt.MountReplacedNotice(cause=e.id, at=e.at, game=g.id, clause="R17",
                                      player=p.id, side=p.side))


def card_amended(g: Game, e: ev.CardAmended, out: Out) -> None:
    """R1: the conduct of a card already on record, named. It changes nothing else."""
    if e.target not in g.cards:
        raise Refused("not_a_card", f"{e.target!r} is not a card recorded in game {g.id!r}", "R1")
    out.append(nt.ConductNamed(cause=e.id, at=e.at, game=g.id, clause="R1", target=e.target,
                              player=g.cards[e.target], conduct=e.conduct))


def postgame_card(g: Game, e: ev.PostgameCard, out: Out) -> None:
    p = st.player(g, e.player)
    g.postgame.append(PostgameEntry(p.id, e.level, e.id))
    out.append(nt.PostgameRecorded(cause=e.id, at=e.at, game=g.id, clause="R9",
                                   player=p.id, side=p.side, level=e.level))


def on_handicap(e: ev.GameSetup | ev.GameHandicap, goals: ev.HandicapGoals | None,
                worked: ev.WorkedOut | None) -> OnHandicap | None:
    """Goals on handicap as ``e`` sets them (A5): as given, or as worked out from the matrix;
    None: neither (no goals)."""
    if goals is None:
        return None
    if worked is None:
        return OnHandicap(goals.home, goals.away, "committee", e.id)
    return OnHandicap(goals.home, goals.away, "matrix", e.id, worked.home_handicap, worked.away_handicap,
                      worked.goals_per_goal)


def game_handicap(g: Game, e: ev.GameHandicap, out: Out) -> None:
    """A5: the committee sets the goals each side starts with, until the game begins. The
    fold fills ``goals`` in before the event reaches the game when it is to be worked out."""
    if e.goals is None:
        raise Refused("not_worked_out", "no goals on handicap were given, and none were worked out", "A5")
    g.on_handicap = on_handicap(e, e.goals, e.worked)
    home, away = g.totals()
    out.append(nt.HandicapSet(cause=e.id, at=e.at, game=g.id, clause="A5", home=home, away=away,
                              on_home=goals(e.goals.home), on_away=goals(e.goals.away),
                              source=g.on_handicap.source if g.on_handicap else "committee",
                              home_handicap=e.worked.home_handicap if e.worked else None,
                              away_handicap=e.worked.away_handicap if e.worked else None,
                              by=e.by, reason=e.reason))


def tick(g: Game, e: ev.Tick, out: Out) -> None:
    """Time passes; the deadlines it brings were emitted before the handler ran."""


# --------------------------------------------------------------------------
# Setup


def _team(r: ev.Roster) -> Team:
    return Team(r.team, list(r.players), list(r.subs), r.colors)


def new_game(e: ev.GameSetup, rules: ev.Rules) -> Game:
    """A game as ``game.setup`` describes it, under its event's ``rules``.
    Refuses rosters that repeat a player."""
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
        home=_team(e.teams.home), away=_team(e.teams.away),
        players=players, rules=rules, interval_ms=e.interval_ms, long_interval_ms=e.long_interval_ms,
        on_handicap=on_handicap(e, e.goals_on_handicap, None),
    )


# --------------------------------------------------------------------------
# The table


Handler = Callable[[Game, Any, Out], None]


@dataclass(frozen=True, slots=True)
class Transition:
    phases: frozenset[Phase]   # the phases in which the event is accepted
    handler: Handler
    # A fact that, arriving while the game is still scheduled, shows that it has begun:
    # the game takes its players' obligations from earlier games there (A27).
    opens: bool = False
    # The game's obligations are derived again after it (R13).
    ledger: bool = False

    def begins(self, g: Game) -> bool:
        """Whether this row's event, applied to ``g`` now, begins it."""
        return self.opens and g.status == "scheduled"


_LIVE: frozenset[Phase] = frozenset({"live"})
_OPEN: frozenset[Phase] = frozenset({"scheduled", "live"})
_ENDED: frozenset[Phase] = frozenset({"ended"})
_ANY: frozenset[Phase] = frozenset({"scheduled", "live", "ended"})
_SCHEDULED: frozenset[Phase] = frozenset({"scheduled"})

TRANSITIONS: dict[type, Transition] = {
    #  event         accepted while, handler, begins it (A27), changes the ledger (R13)    clause
    ev.ClockStart:    Transition(_OPEN, clock_start, opens=True),             # A1, A27; a fact (house rule 6)
    ev.ClockStop:     Transition(_OPEN, clock_stop),                          # A1, house rule 3; a fact
    ev.Whistle:       Transition(_OPEN, whistle),                             # house rule 3; a fact
    ev.Goal:          Transition(_OPEN, goal, opens=True),                    # A2, A27, house rule 3; a fact
    ev.Horn:          Transition(_OPEN, horn),                                # A1, R11, house rule 3; a fact
    ev.GameEnd:       Transition(_OPEN, game_end, opens=True, ledger=True),   # A1, R11, A27, R13; a fact
    ev.Card:          Transition(_OPEN, card),                                # R1-R7
    ev.CardAmended:   Transition(_ANY,  card_amended),                        # R1: the conduct, named later
    ev.BoxLeftEarly:  Transition(_OPEN, box_left_early),                      # R8
    ev.ArenaLeft:     Transition(_LIVE, arena_left),                          # R14
    ev.Substitution:  Transition(_OPEN, substitution),                        # R13, R6, A3
    ev.MountRemoved:  Transition(_OPEN, mount_removed),                       # R17
    ev.MountReplaced: Transition(_OPEN, mount_replaced),                      # R17
    ev.PostgameCard:  Transition(_ENDED, postgame_card, ledger=True),         # R9, R13
    ev.Tick:          Transition(_ANY,  tick),                                # house rule 2
    ev.GameHandicap:  Transition(_SCHEDULED, game_handicap),                  # A5: until it begins
}

def only_its_game(status: str | None, e: ev.Event) -> bool:
    """Whether applying ``e`` to its game, now in ``status``, changes that game alone: an
    event of the table while the game is under way, neither beginning nor ending it (the
    ledger of obligations, which other games read) nor anything else's (a void, a set-up,
    a tournament's event). Such events commute with other games' events."""
    row = TRANSITIONS.get(type(e))
    return status == "live" and row is not None and not row.ledger


def refuse_phase(g: Game, e: ev.EventBase) -> Refused:
    """The refusal for an event that arrives in a phase its row doesn't accept."""
    t = ev.event_type(e)
    if isinstance(e, ev.GameHandicap):
        return Refused("game_begun", f"game {g.id!r} has begun: its goals on handicap are "
                       "fixed from its first play", "A5")
    if g.status == "ended":
        if isinstance(e, ev.Card):
            return Refused("game_over", "the game has ended; a card after the game is a "
                           "postgame.card", "R9")
        return Refused("game_over", f"{t} after the game has ended", "A1")
    if g.status == "scheduled":
        if isinstance(e, ev.PostgameCard):
            return Refused("game_not_over", "a post-game card needs the game to have ended", "R9")
        return Refused("game_not_started", f"{t} before the game has begun", "A1")
    return Refused("game_not_over", "a post-game card needs the game to have ended", "R9")


def transition(g: Game, e: ev.EventBase) -> Transition:
    """``e``'s row of the table, if ``g``'s phase accepts it; else ``Refused``, nothing changed."""
    row = TRANSITIONS[type(e)]
    if g.status not in row.phases:
        raise refuse_phase(g, e)
    return row


def apply(g: Game, e: ev.EventBase, out: Out, taken: Sequence[lg.Obligation] = ()) -> Transition:
    """Apply one game event per the table, the game taking ``taken`` (its players'
    obligations from earlier games) if ``e`` begins it; or raise ``Refused`` with ``g``
    untouched (every handler checks before it changes, and an event that begins the
    game is a fact, never refused). The fold's one way of applying a game's event,
    live and folded again alike. Returns the event's row."""
    row = transition(g, e)
    if row.begins(g):
        lg.apply_plan(taken, g, e.id, e.at, out)
    row.handler(g, e, out)
    return row
