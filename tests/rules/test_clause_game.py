"""Per-clause tests of the game around Rule 14: A1 (periods and clock), A2 (goals),
A3 (teams), A4 (ties), L1 (the log), and what exists of R9 and R11.

Each case is a function taking a fresh ``Script`` (or building its own, for a
setting or a setup field); its docstring starts with the clause id and quotes
or paraphrases the clause. Cases are collected in one table per clause and run
through one ``parametrize`` each, ids = function names (see ``clause_helpers``;
docs/rules.md maps each clause to its cases). ``s.t += ms`` moves the next
event's time without letting the engine see the gap, so that a stoppage can
land exactly on a boundary; ``s.run(ms)`` lets time pass and returns the
deadlines that fell due.
"""

from __future__ import annotations

import pytest

from stream.rules import notices as nt

from .clause_helpers import (
    PERIOD,
    TWO_MIN,
    Case,
    box,
    check_cases,
    one,
    second_yellow,
    state_bytes,
    sub_refused,
    table,
    tags,
)
from .script import Script

# ==========================================================================
# A1, A2, A3, A4, L1: the game around Rule 14


def a2_goals_add_points(s: Script) -> None:
    """A2: "Arena has 2-point goals": a goal adds its ``points`` (1 or 2)."""
    s.start()
    g = one(s.goal("home", points=2, player="h1"), nt.GoalScored)
    assert (g.side, g.points, g.home, g.away, g.player, g.clause) == ("home", 2, 2, 0, "h1", "A2")
    s.start()
    g = one(s.goal("away"), nt.GoalScored)
    assert (g.points, g.home, g.away) == (1, 2, 1)
    assert (s.view.score.home, s.view.score.away) == (2, 1)


def a1_goal_stops_clock(s: Script) -> None:
    """A1: a goal is a stoppage; by default (``clock_stops_on_goal``) the clock
    stops."""
    s.start()
    s.run(30_000)
    out = s.goal("home")
    assert tags(out) == ["goal.scored"]  # an ordinary stop is in the view, not a notice
    assert (s.view.clock.running, s.view.clock.play_ms) == (False, 30_000)
    s.run(10_000)
    assert (s.view.clock.running, s.view.clock.play_ms) == (False, 30_000)


def a1_goal_does_not_stop_clock_when_set(_: Script) -> None:
    """A1: "Whether the clock stops [...] on goals is not known": with
    ``clock_stops_on_goal: false`` the clock runs on, yet the goal releases."""
    s = Script(clock_stops_on_goal=False)
    second_yellow(s)
    s.run(TWO_MIN)
    out = s.goal("away")
    assert tags(out) == ["goal.scored", "box.release"]
    assert s.view.clock.running is True
    assert s.players["h2"].box is None


def a1_whistle_does_not_stop_clock_when_set(_: Script) -> None:
    """A1: with ``clock_stops_on_whistle: false`` a whistle leaves the clock
    running (play keeps counting)."""
    s = Script(clock_stops_on_whistle=False)
    s.start()
    s.run(10_000)
    assert s.whistle() == []
    s.run(5_000)
    assert (s.view.clock.running, s.view.clock.play_ms) == (True, 15_000)


def a1_live_events_before_first_start_are_facts(s: Script) -> None:
    """A1: "The timer's horn ends a period": before the first clock start no period
    is under way. A whistle, a horn and a clock.stop there are facts (house rule
    6): accepted as stoppages, changing no clock, the horn and the stop with an
    alert; ``arena.left`` needs a game under way (``game_not_started``)."""
    assert s.whistle() == []
    assert [(n.code, n.clause) for n in s.horn()] == [("horn_before_start", "A1")]
    out = s.must("clock.stop")
    assert [(n.code, n.clause) for n in out] == [("clock_not_running", "A1")]
    v = s.view
    assert (v.status, v.clock.period, v.clock.running, v.clock.period_over) == ("scheduled", 1, False, False)
    r = s.refused("arena.left", player="h1")
    assert (r.reason, r.clause) == ("game_not_started", "A1")


def a1_goal_before_the_clock_begins_the_game(s: Script) -> None:
    """A1/A2: a goal scored before the timekeeper ever started the clock is a fact:
    it counts, the game is under way, and the timekeeper is told to start the
    clock (``goal_before_clock``)."""
    out = s.goal("home")
    assert [(n.code, n.clause) for n in s.of(nt.Alert, out)] == [("goal_before_clock", "A1")]
    assert one(out, nt.GoalScored).home == 1
    assert (s.view.status, s.view.score.home, s.view.clock.running) == ("live", 1, False)
    s.must("arena.left", player="h1")       # the game is under way


def a1_events_after_game_end_refused(s: Script) -> None:
    """A1/R9: after the game has ended, game events are refused ``game_over``; a
    card cites R9 ("If a player demonstrates unsportsmanlike conduct after the
    game ends") because it must be a post-game card."""
    s.start()
    s.run(1_000)
    s.must("game.end")
    for t, fields, clause in (("whistle", {}, "A1"), ("clock.start", {}, "A1"),
                              ("goal", {"team": "away"}, "A1"),
                              ("card", {"player": "h1", "color": "yellow", "conduct": "arguing"}, "R9")):
        r = s.refused(t, **fields)
        assert (r.reason, r.clause) == ("game_over", clause), t


def a1_clock_start_while_running_is_a_fact(s: Script) -> None:
    """A1: the timekeeper drives the clock; a start of a running clock and a stop of
    a stopped one are facts (house rule 6): accepted, nothing changes but the
    stop's stoppage, and an alert each (``clock_already_running``,
    ``clock_not_running``)."""
    s.start()
    s.run(5_000)
    out = s.must("clock.start")
    assert [(n.code, n.clause, n.subject) for n in out] == [("clock_already_running", "A1", s.last_id())]
    assert (s.view.clock.running, s.view.clock.play_ms) == (True, 5_000)
    s.must("clock.stop")
    out = s.must("clock.stop")
    assert [(n.code, n.clause) for n in out] == [("clock_not_running", "A1")]
    assert (s.view.clock.running, s.view.clock.play_ms) == (False, 5_000)


def a1_second_period_horn_is_a_stoppage(s: Script) -> None:
    """A1: "The timer's horn ends a period": a second horn for the same period ends
    nothing (``period_already_over``) but is a stoppage; the next start opens
    period 2."""
    s.start()
    s.run(PERIOD)
    s.horn()
    out = s.horn()
    assert [(n.code, n.clause) for n in out] == [("period_already_over", "A1")]
    s.start()
    assert (s.view.clock.period, s.view.clock.remaining_ms) == (2, PERIOD)


def a1_intervals_are_timed_from_the_horn(s: Script) -> None:
    """A1: "Intervals are 4 minutes, 10 after the 2nd period": while the horn has ended
    a period, the clock's view gives the interval (from the horn's moment) that a
    scoreboard counts down; the next start ends it."""
    assert s.view.clock.interval is None
    for period, ms in ((1, 240_000), (2, 600_000), (3, 240_000)):
        s.start()
        s.run(PERIOD)
        s.horn()
        horn_at = s.t
        interval = s.view.clock.interval
        assert interval is not None and (interval.started_at, interval.ms, interval.ends_at) == (
            horn_at, ms, horn_at + ms), period
        s.run(ms)
    s.start()
    assert s.view.clock.interval is None and s.view.clock.period == 4


def r9_postgame_card_only_after_end(s: Script) -> None:
    """R9: "If a player demonstrates unsportsmanlike conduct after the game ends":
    ``postgame.card`` before the end is refused ``game_not_over``; after it, it
    is recorded."""
    r = s.refused("postgame.card", player="h1", level="2y")
    assert (r.reason, r.clause) == ("game_not_over", "R9")
    s.start()
    r = s.refused("postgame.card", player="h1", level="2y")
    assert (r.reason, r.clause) == ("game_not_over", "R9")
    s.run(1_000)
    s.must("game.end")
    out = s.must("postgame.card", player="h1", level="3y")
    assert tags(out) == ["postgame.recorded", "obligation.created"]
    assert (out[0].player, out[0].level, out[0].clause) == ("h1", "3y", "R9")
    assert [(x.player, x.level, x.cause) for x in s.view.postgame] == [("h1", "3y", s.last_id())]
    assert s.players["h1"].yellows == 0  # "separate from [...] cards assessed during the game"


def r11_shootout_excludes_boxed_players(_: Script) -> None:
    """R11: "a player with remaining time in the penalty box at the end of
    regulation play may not participate in any shootout, but [...] shall be
    deemed to have served his or her time"."""
    s = Script(shootout_option=True)
    s.start()
    s.card("a1", count=2)          # a1 serves his two minutes ...
    s.run(TWO_MIN + 5_000)
    s.card("h2", count=2)          # ... h2 still owes 90 s at the end
    s.run(30_000)
    out = s.must("game.end", shootout=True)
    assert tags(out) == ["box.release", "shootout.excluded", "game.ended"]
    assert one(out, nt.BoxRelease).player == "a1"
    ex = one(out, nt.ShootoutExcluded)
    assert (ex.player, ex.owed_ms, ex.clause) == ("h2", TWO_MIN - 30_000, "R11")
    assert (s.players["h2"].box, s.players["a1"].box) == (None, None)
    assert s.view.shootout is True


def r10_box_owed_at_game_end_stays_in_state(s: Script) -> None:
    """R10: "A player who is in the penalty box at the end of a game [...] shall
    begin his or her next game [...] in the penalty box for the unexpired time":
    without a shootout, the trip still owed stays in the ended game's state and
    becomes an obligation for the next qualifying game (tests/rules/test_ledger.py)."""
    second_yellow(s)
    s.run(30_000)
    out = s.must("game.end")
    assert tags(out) == ["game.ended", "obligation.created"]
    (ob,) = s.of(nt.ObligationCreated, out)
    assert (ob.player, ob.kind, ob.owed_ms, ob.clause) == ("h2", "sit_out", TWO_MIN - 30_000, "R10")
    assert s.view.status == "ended"
    assert box(s).remaining_ms == TWO_MIN - 30_000


def a4_shootout_needs_the_option(s: Script) -> None:
    """A4/R11: "5.c(2): a shootout" only where the committee chose it: a shootout
    recorded in a game that did not is a fact (the game ends), but R11 does not
    apply: box time is carried, and an alert says so (``no_shootout_option``)."""
    second_yellow(s)
    s.run(30_000)
    out = s.must("game.end", shootout=True)
    assert [(n.code, n.clause) for n in s.of(nt.Alert, out)] == [("no_shootout_option", "A4")]
    assert s.of(nt.ShootoutExcluded, out) == []
    assert s.view.status == "ended"
    assert box(s).remaining_ms == TWO_MIN - 30_000


def l1_duplicate_id_refused(s: Script) -> None:
    """L1: "Each event has a unique id": a second event with a used id is refused
    ``duplicate_id``."""
    s.start()
    used = s.last_id()
    before = state_bytes(s)
    out = s.send_raw({"type": "whistle", "id": used, "at": s.t, "game": s.game})
    assert [(n.reason, n.clause) for n in out] == [("duplicate_id", "L1")]
    assert state_bytes(s) == before


def l1_unknown_game_refused(s: Script) -> None:
    """L1: "a game is set up before its events": an event for a game never set up
    is refused ``unknown_game``."""
    r = s.refused("clock.start", game="g-nope")
    assert (r.reason, r.clause) == ("unknown_game", "L1")


def a3_unknown_player_refused(s: Script) -> None:
    """A3: "Three players a side [...] plus alternates": a player on neither
    roster is refused ``unknown_player``."""
    s.start()
    r = s.refused("card", player="x9", color="yellow", conduct="arguing")
    assert (r.reason, r.clause) == ("unknown_player", "A3")


def a3_substitution_needs_lineup_and_bench(s: Script) -> None:
    """A3: a substitution takes a lineup player off and a bench player on:
    ``not_in_lineup`` / ``not_on_bench`` otherwise."""
    s.start()
    s.whistle()
    r = sub_refused(s, "home", "h4", "h1")
    assert (r.reason, r.clause) == ("not_in_lineup", "A3")
    r = sub_refused(s, "home", "h1", "a4")
    assert (r.reason, r.clause) == ("not_on_bench", "A3")


def a3_goal_credited_to_a_boxed_player_counts(s: Script) -> None:
    """A3/A2: a goal is a fact (house rule 6): credited to a player sitting out, it
    counts for his side and an alert asks the umpires to check the scorer
    (``scorer_not_on_field``); so does one credited to nobody on the rosters."""
    second_yellow(s)
    out = s.goal("home", player="h2")
    (alert,) = s.of(nt.Alert, out)
    assert (alert.code, alert.clause, alert.player, alert.side) == ("scorer_not_on_field", "A3", "h2", "home")
    assert s.view.score.home == 1
    s.start()
    out = s.goal("away", player="zz")
    assert [n.code for n in s.of(nt.Alert, out)] == ["scorer_not_on_field"]
    assert s.view.score.away == 1


A1 = table(a1_goal_stops_clock, a1_goal_does_not_stop_clock_when_set, a1_whistle_does_not_stop_clock_when_set,
           a1_live_events_before_first_start_are_facts, a1_goal_before_the_clock_begins_the_game,
           a1_events_after_game_end_refused,
           a1_clock_start_while_running_is_a_fact, a1_second_period_horn_is_a_stoppage,
           a1_intervals_are_timed_from_the_horn)
A2 = table(a2_goals_add_points)
A3 = table(a3_unknown_player_refused, a3_substitution_needs_lineup_and_bench,
           a3_goal_credited_to_a_boxed_player_counts)
A4 = table(a4_shootout_needs_the_option)
L1 = table(l1_duplicate_id_refused, l1_unknown_game_refused)
AFTER = table(r9_postgame_card_only_after_end, r10_box_owed_at_game_end_stays_in_state,
              r11_shootout_excludes_boxed_players)


@pytest.mark.parametrize("case", A1)
def test_a1(case: Case) -> None:
    case(Script())


@pytest.mark.parametrize("case", A2)
def test_a2(case: Case) -> None:
    case(Script())


@pytest.mark.parametrize("case", A3)
def test_a3(case: Case) -> None:
    case(Script())


@pytest.mark.parametrize("case", A4)
def test_a4(case: Case) -> None:
    case(Script())


@pytest.mark.parametrize("case", L1)
def test_l1(case: Case) -> None:
    case(Script())


@pytest.mark.parametrize("case", AFTER)
def test_r9_r10_r11(case: Case) -> None:
    case(Script())


def test_cases_cite_their_clauses() -> None:
    check_cases([*A1, *A2, *A3, *A4, *L1, *AFTER])
