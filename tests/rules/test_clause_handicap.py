"""Goals on handicap (A5): the goals a side starts with, as the committee sets them or as the
event's handicap matrix gives them from the two team handicaps, in the score from the
throw-in, deciding winners, ties and shootouts on the total.

Each case is a function taking a fresh ``Season`` and cites its clause first. The expected
goals are worked out from the matrix as the arena facts state it (½ goal per goal of net
difference for 2 or 3 periods, 1 goal for 4 periods), never read back from the engine. After
every case its log is folded again by a fresh engine, which must give the same state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from stream.errors import MalformedEvent
from stream.rules import codec
from stream.rules import notices as nt
from stream.rules.engine import Engine
from stream.rules.text import describe

from .clause_helpers import P, Season, check_cases, roster

SeasonCase = Callable[[Season], None]

#: The USPA Arena Handicap Matrix, as the arena facts give it: per goal of net difference.
USPA_ARENA: list[dict[str, Any]] = [{"periods": 2, "goals_per_goal": 0.5},
                                   {"periods": 3, "goals_per_goal": 0.5},
                                   {"periods": 4, "goals_per_goal": 1}]
#: Registered handicaps: team A's starters add up to 7, team B's to 10 (a difference of 3).
HANDICAPS = {P: 3, "a2": 2, "a3": 2, "a4": 0, "b1": 4, "b2": 3, "b3": 3, "b4": 1}


def handicap_event(s: Season, matrix: list[dict[str, Any]] | None = USPA_ARENA, **over: Any) -> None:
    s.must("event.setup", event="cup", **{"class": "uspa"}, handicap=12, teams=["A", "B"],
           handicap_matrix=matrix, **over)
    for pid, h in HANDICAPS.items():
        s.must("player.registered", player=pid, name=pid.upper(), handicap=h)


def score(s: Season, game: str = "g1") -> tuple[float, float]:
    v = s.view(game)
    return v.score.home, v.score.away


# ------------------------------------------------------------------ the cases


def matrix_four_periods(s: Season) -> None:
    """A5: "a 3-goal difference over 4 periods starts 3–0": 1 goal per goal of difference, to the
    team with the lower team handicap, on the scoreboard from the set-up."""
    handicap_event(s)
    out = s.setup("g1", periods=4)
    assert score(s) == (3, 0)
    h = s.view("g1").goals_on_handicap
    assert h is not None and (h.home, h.away, h.source) == (3, 0, "matrix")
    assert (h.home_handicap, h.away_handicap) == (7, 10)
    n = next(x for x in out if isinstance(x, nt.HandicapSet))
    assert (n.clause, n.on_home, n.on_away, n.home, n.away) == ("A5", 3, 0, 3, 0)


def matrix_three_periods_half_goals(s: Season) -> None:
    """A5: "over 3 periods 1½–0": ½ goal per goal of difference for 2 or 3 periods."""
    handicap_event(s)
    s.setup("g1", periods=3)
    assert score(s) == (1.5, 0)
    s.start("g1")
    s.run(10_000)
    out = s.must("goal", "g1", team="away", player="b1")
    goal = next(x for x in out if isinstance(x, nt.GoalScored))
    assert (goal.home, goal.away) == (1.5, 1)
    text = describe(goal)
    assert text.en.endswith("1½-1. (Arena · Goals)") and "1½-1" in text.es


def lower_team_away(s: Season) -> None:
    """A5: the goals go to the side with the lower team handicap, home or away."""
    handicap_event(s)
    s.setup("g1", periods=4, home=roster("B", ["b1", "b2", "b3"], ["b4"]),
            away=roster("A", [P, "a2", "a3"], ["a4"]))
    assert score(s) == (0, 3)


def equal_handicaps_no_goals(s: Season) -> None:
    """A5: no net difference, no goals: the matrix is applied and gives 0–0."""
    handicap_event(s)
    s.must("player.registered", player="b1", name="B1", handicap=1)  # B: 1 + 3 + 3 = 7, as A
    s.setup("g1", periods=4)
    h = s.view("g1").goals_on_handicap
    assert score(s) == (0, 0) and h is not None and (h.home_handicap, h.away_handicap) == (7, 7)


def committee_sets_them_at_setup(s: Season) -> None:
    """A5: the committee may enter the goals itself when it sets the game up (the matrix is
    not consulted)."""
    handicap_event(s)
    s.setup("g1", periods=4, goals_on_handicap={"home": 2.5, "away": 0})
    h = s.view("g1").goals_on_handicap
    assert score(s) == (2.5, 0) and h is not None and h.source == "committee"


def committee_changes_them_until_it_begins(s: Season) -> None:
    """A5: the committee can change them until the game begins; from its first play they are
    fixed (``game_begun``), and nothing changes."""
    handicap_event(s)
    s.setup("g1", periods=4)
    out = s.must("game.handicap", "g1", goals={"home": 1, "away": 0.5}, by="HTC", reason="appeal upheld")
    n = next(x for x in out if isinstance(x, nt.HandicapSet))
    assert (n.source, n.by, n.reason) == ("committee", "HTC", "appeal upheld")
    assert score(s) == (1, 0.5)
    s.start("g1")
    r = s.refused("game.handicap", "g1", goals={"home": 0, "away": 0}, by="HTC", reason="too late")
    assert (r.reason, r.clause) == ("game_begun", "A5")
    assert score(s) == (1, 0.5)


def worked_out_again_from_registrations(s: Season) -> None:
    """A5: asked to work them out again, the service uses the starters' handicaps as
    registered now (a corrected registration counts)."""
    handicap_event(s)
    s.setup("g1", periods=4)
    assert score(s) == (3, 0)
    s.must("player.registered", player="b1", name="B1", handicap=6)  # B: 6 + 3 + 3 = 12, difference 5
    assert score(s) == (3, 0)  # a registration alone changes no score
    s.must("game.handicap", "g1", by="HTC", reason="b1's handicap corrected")
    h = s.view("g1").goals_on_handicap
    assert score(s) == (5, 0) and h is not None and (h.source, h.away_handicap) == ("matrix", 12)


def unknown_handicap_alert(s: Season) -> None:
    """A5: a starter with no registered handicap: nothing can be worked out; the set-up says
    so and the game starts with none, until the committee gives them."""
    handicap_event(s)
    s.must("player.registered", player="b1", name="B1")  # no handicap
    out = s.setup("g1", periods=4)
    alert = next(x for x in out if isinstance(x, nt.Alert) and x.code == "handicap_goals_unknown")
    assert alert.clause == "A5" and "1 starter" in alert.detail
    assert s.view("g1").goals_on_handicap is None and score(s) == (0, 0)
    r = s.refused("game.handicap", "g1", by="HTC", reason="work them out")
    assert (r.reason, r.clause) == ("not_worked_out", "A5")
    s.must("game.handicap", "g1", goals={"home": 1.5, "away": 0}, by="HTC", reason="from the sheet")
    assert score(s) == (1.5, 0)


def no_matrix_row_for_periods(s: Season) -> None:
    """A5: the matrix is data: a game of a period count it has no row for gets none (6 periods
    of 5 minutes, with no row for 6)."""
    handicap_event(s)
    out = s.setup("g1", periods=6, period_ms=300_000)
    assert any(isinstance(x, nt.Alert) and x.code == "handicap_goals_unknown" for x in out)
    assert score(s) == (0, 0)


def open_event_has_none(s: Season) -> None:
    """A5: an open event (no matrix) gives no goals, and its views are as before: whole numbers,
    no goals on handicap."""
    handicap_event(s, matrix=None)
    out = s.setup("g1", periods=4)
    assert not any(isinstance(x, nt.HandicapSet | nt.Alert) for x in out)
    v = s.view("g1")
    assert v.goals_on_handicap is None and score(s) == (0, 0) and type(v.score.home) is int


def winner_on_the_total(s: Season) -> None:
    """A5/L3: winners are decided on the total: B scores 2 goals, A none, and A wins 3–2 on
    its goals on handicap; the draw moves A on."""
    handicap_event(s)
    s.must("draw.made", event="cup", format="knockout", teams=["A", "B"])
    s.setup("cup-final", periods=4)
    s.start("cup-final")
    s.run(10_000)
    s.must("goal", "cup-final", team="away", player="b1")
    s.must("goal", "cup-final", team="away", player="b2")
    ended = next(x for x in s.end("cup-final") if isinstance(x, nt.GameEnded))
    assert (ended.home, ended.away) == (3, 2)
    d = s.engine.draw("cup")
    assert d is not None
    g = next(x for x in d.games if x.game == "cup-final")
    assert (g.winner, g.score) == ("A", [3, 2])


def _regulation_ends(s: Season, on_home: float) -> bool:
    """Play a 3-period 5.c(2) game in which B scores once and B's b2 goes to the box 30 s
    before the last horn; whether b2 is excluded from the shootout (R11)."""
    s.setup("g1", periods=3, shootout_option=True, goals_on_handicap={"home": on_home, "away": 0})
    for period in (1, 2, 3):
        s.start("g1")
        s.run(420_000)
        if period == 3:
            s.must("goal", "g1", team="away", player="b1")
            s.start("g1")
            s.card("g1", "b2")
            s.card("g1", "b2")  # two minutes of play owed, 30 s left to play
        s.run(30_000)
        s.must("horn", "g1")
    return any(isinstance(x, nt.ShootoutExcluded) for x in s.notices)


def tie_on_the_total_means_shootout(s: Season) -> None:
    """A5/R11: regulation "ends tied" on the total: A's 1 goal on handicap against B's goal is
    a tie, and a player with box time left is excluded from the shootout."""
    handicap_event(s)
    assert _regulation_ends(s, on_home=1)


def no_tie_with_a_half_goal(s: Season) -> None:
    """A5/R11: A's 1½ on handicap against B's goal is no tie: no shootout, no exclusion."""
    handicap_event(s)
    assert not _regulation_ends(s, on_home=1.5)


def void_of_the_change(s: Season) -> None:
    """A5/L1: a ``game.handicap`` voided entered in error is taken back: the goals the set-up
    gave stand again."""
    handicap_event(s)
    s.setup("g1", periods=4)
    s.must("game.handicap", "g1", goals={"home": 0, "away": 0}, by="HTC", reason="flat")
    changed = s.last_id()
    assert score(s) == (0, 0)
    s.must("void", "g1", target=changed, entered_in_error=True)
    assert score(s) == (3, 0)


def disallowed_goal_keeps_the_handicap(s: Season) -> None:
    """A5/A2: a goal the umpires disallow comes off; the goals on handicap stay."""
    handicap_event(s)
    s.setup("g1", periods=3)
    s.start("g1")
    s.run(10_000)
    s.must("goal", "g1", team="home", player=P)
    goal = s.last_id()
    assert score(s) == (2.5, 0)
    s.must("void", "g1", target=goal)
    assert score(s) == (1.5, 0)


def matrix_lists_periods_once(s: Season) -> None:
    """A5: a matrix that lists a number of periods twice is refused."""
    r = s.refused("event.setup", event="cup", **{"class": "uspa"}, handicap=12, teams=["A", "B"],
                  handicap_matrix=[{"periods": 4, "goals_per_goal": 1},
                                   {"periods": 4, "goals_per_goal": 0.5}])
    assert (r.reason, r.clause) == ("bad_matrix", "A5")


def quarter_goals_are_refused(s: Season) -> None:
    """A5: goals are whole or half: a quarter goal is not a valid ``game.handicap``."""
    handicap_event(s)
    s.setup("g1", periods=4)
    with pytest.raises(MalformedEvent, match=r"invalid_field: .*multiple of 0\.5.*goals\.home"):
        s.send("game.handicap", "g1", goals={"home": 0.25, "away": 0}, by="HTC", reason="typo")
    assert score(s) == (3, 0)


CASES = [matrix_four_periods, matrix_three_periods_half_goals, lower_team_away, equal_handicaps_no_goals,
         committee_sets_them_at_setup, committee_changes_them_until_it_begins,
         worked_out_again_from_registrations, unknown_handicap_alert, no_matrix_row_for_periods,
         open_event_has_none, winner_on_the_total, tie_on_the_total_means_shootout, no_tie_with_a_half_goal,
         void_of_the_change,
         disallowed_goal_keeps_the_handicap, matrix_lists_periods_once, quarter_goals_are_refused]
PARAMS = [pytest.param(f, id=f.__name__) for f in CASES]


def test_cases_cite_their_clause() -> None:
    check_cases(PARAMS)


@pytest.mark.parametrize("case", PARAMS)
def test_handicap(case: SeasonCase) -> None:
    s = Season()
    case(s)
    again = Engine()
    for body in s.log:
        try:
            again.feed(codec.decode_event(msgspec.json.encode(body)))
        except MalformedEvent:
            continue  # refused at decoding, as the live service refuses it before the fold
    again.advance(s.t)
    s.engine.advance(s.t)
    assert again.state_hash() == s.engine.state_hash()
