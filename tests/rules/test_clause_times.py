"""Realistic times (A1, register A35 in docs/rules.md): when each game of an arena is expected
to start and end when the day runs late.

The figures are the register's, written here from the docs: a game of 4 periods of 7½
minutes, with intervals of 4 minutes and 10 after the 2nd, and an allowance of 2 minutes a
period for stoppages, is expected to last 4 × 9½ + 4 + 10 + 4 = 56 minutes; a changeover
between games is 10 minutes; a game more than 5 minutes later than planned is late. Each
case is a table of games and the times the docs give them, worked out by hand.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.rules.clock import Clock
from stream.rules.timing import Planned, expected_times

from .clause_helpers import Season, check_cases, roster

MIN = 60_000
DAY = 1_780_000_000_000 - 1_780_000_000_000 % 86_400_000   # midnight UTC
LENGTH = 56 * MIN
CHANGEOVER = 10 * MIN


def hm(h: int, m: int = 0) -> int:
    return DAY + (h * 60 + m) * MIN


Status = Literal["scheduled", "live", "ended"]
#: A game's statuses, not begun twice as often as the others.
STATUSES: tuple[Status, ...] = ("scheduled", "scheduled", "ended", "live")


def planned(game: str, starts_at: int | None, status: Status = "scheduled", **kw: Any) -> Planned:
    return Planned(game=game, event="cup", arena="a", starts_at=starts_at, status=status, **kw)


def times(games: list[Planned], now: int) -> list[tuple[str, int, int, bool]]:
    return [(t.game, t.expected_start, t.expected_end, t.late) for t in expected_times(games, now)]


def a1_an_on_time_day_keeps_its_plan(_: Season) -> None:
    """A1 (register A35): games planned far enough apart, none begun: each is expected at its
    planned start and to end 56 minutes later; none is late."""
    games = [planned("g1", hm(10)), planned("g2", hm(11, 10)), planned("g3", hm(12, 20))]
    assert times(games, hm(9)) == [("g1", hm(10), hm(10, 56), False), ("g2", hm(11, 10), hm(12, 6), False),
                                   ("g3", hm(12, 20), hm(13, 16), False)]


def a1_a_long_game_makes_the_next_ones_late(_: Season) -> None:
    """A1 (register A35): a live game in its 2nd period with 5:00 on the clock at 10:50 has
    5 + 2 × 9½ of play and allowance and 10 + 4 of intervals left: it ends about 11:28, later
    than its begin + 56 minutes; the next game starts after a changeover, 11:38 (28 minutes
    late), the one after at 12:44; one planned at 14:00 is on time."""
    now = hm(10, 50)
    clock = Clock(period=2, running=True, started=True, period_elapsed_ms=150_000, play_ms=600_000,
                  since=now)
    games = [planned("g1", hm(10), "live", began_at=hm(10), clock=clock), planned("g2", hm(11, 10)),
             planned("g3", hm(12, 20)), planned("g4", hm(14))]
    assert times(games, now) == [("g1", hm(10), hm(11, 28), False), ("g2", hm(11, 38), hm(12, 34), True),
                                 ("g3", hm(12, 44), hm(13, 40), True), ("g4", hm(14), hm(14, 56), False)]


def a1_a_live_game_in_its_long_interval(_: Season) -> None:
    """A1 (register A35): the 2nd period's horn at 10:30, at 10:35 the 10-minute interval has
    5 minutes left, then 2 × 9½ and a 4-minute interval: it ends about 11:03."""
    clock = Clock(period=2, started=True, period_over=True, period_elapsed_ms=450_000, play_ms=900_000,
                  since=hm(10, 30))
    games = [planned("g1", hm(10), "live", began_at=hm(10), clock=clock)]
    assert times(games, hm(10, 35)) == [("g1", hm(10), hm(11, 3), False)]


def a1_a_live_game_ahead_of_its_length(_: Season) -> None:
    """A1 (register A35): a game begun at 10:00 is expected to last its 56 minutes even where
    what its clock has left (6½ + 3 × 9½ + 18 at 10:01) would end it sooner."""
    clock = Clock(period=1, running=True, started=True, period_elapsed_ms=60_000, play_ms=60_000,
                  since=hm(10, 1))
    games = [planned("g1", hm(10), "live", began_at=hm(10), clock=clock)]
    assert times(games, hm(10, 1)) == [("g1", hm(10), hm(10, 56), False)]


def a1_ended_games_are_what_happened(_: Season) -> None:
    """A1 (register A35): an ended game began and ended when it did (one begun 20 minutes
    after its planned start was late); the arena is free a changeover after the last ended."""
    games = [planned("g1", hm(9), "ended", began_at=hm(9, 20), ended_at=hm(10, 5)),
             planned("g2", hm(10), "ended", began_at=hm(10, 10), ended_at=hm(10, 40)),
             planned("g3", hm(10, 45))]
    assert times(games, hm(10, 42)) == [("g1", hm(9, 20), hm(10, 5), True),
                                        ("g2", hm(10, 10), hm(10, 40), True),
                                        ("g3", hm(10, 50), hm(11, 46), False)]


def a1_a_game_not_begun_at_its_time(_: Season) -> None:
    """A1 (register A35): a game planned at 10:00 that has not begun at 10:20 is expected no
    sooner than now: late."""
    assert times([planned("g1", hm(10))], hm(10, 20)) == [("g1", hm(10, 20), hm(11, 16), True)]


def a1_games_with_no_planned_start_come_last(_: Season) -> None:
    """A1 (register A35): games with no planned start follow the planned ones, in the order
    given, each after the one before; a game with no planned start is never late."""
    games = [planned("u1", None), planned("g1", hm(10)), planned("u2", None)]
    assert times(games, hm(9)) == [("g1", hm(10), hm(10, 56), False), ("u1", hm(11, 6), hm(12, 2), False),
                                   ("u2", hm(12, 12), hm(13, 8), False)]


def a1_late_means_more_than_five_minutes(_: Season) -> None:
    """A1 (register A35): expected 5 minutes after its planned start, a game is not late; a
    millisecond more, it is."""
    assert times([planned("g1", hm(10))], hm(10, 5)) == [("g1", hm(10, 5), hm(11, 1), False)]
    assert times([planned("g1", hm(10))], hm(10, 5) + 1)[0][3] is True


def a1_the_order_of_play_from_the_fold(s: Season) -> None:
    """A1 (register A35): the engine's query gathers the games set up on each arena, whatever
    their event, with their schedules: a game of another event running long on the arena
    makes the cup's game late; another arena is on time; the cup's games only are returned."""
    s.must("event.setup", event="cup", **{"class": "club"}, handicap=8, teams=["A", "B"])
    s.must("event.setup", event="plate", **{"class": "club"}, handicap=8, teams=["C", "D"])
    t0 = s.t
    c, d = roster("C", ["c1", "c2", "c3"]), roster("D", ["d1", "d2", "d3"])
    s.setup("p1", event="plate", arena="north", starts_at=t0, home=c, away=d)
    s.setup("g1", event="cup", arena="north", starts_at=t0 + 60 * MIN)
    s.setup("g2", event="cup", arena="south", starts_at=t0 + 90 * MIN,
            home=roster("A", ["x1", "x2", "x3"]), away=roster("B", ["y1", "y2", "y3"]))
    s.start("p1")
    s.run(1 * MIN)
    s.must("clock.stop", "p1")
    s.run(60 * MIN)  # play stopped an hour in the 1st period: 6½ minutes of it left
    now = s.t
    got = s.engine.expected_times(now, event="cup")
    # p1 ends at now + 6½ of play, then the intervals after its 1st, 2nd and 3rd periods (4, 10
    # and 4) and 3 periods of 9½ each: 53 minutes on; g1 starts a changeover later.
    p1_end = now + 6 * MIN + 30_000 + 4 * MIN + 10 * MIN + 4 * MIN + 3 * (9 * MIN + 30_000)
    assert [(t.game, t.arena, t.planned_start, t.expected_start, t.late) for t in got] == [
        ("g1", "north", t0 + 60 * MIN, p1_end + CHANGEOVER, True),
        ("g2", "south", t0 + 90 * MIN, t0 + 90 * MIN, False)]
    assert [t.game for t in s.engine.expected_times(now, arena="north")] == ["p1", "g1"]


CASES = [pytest.param(f, id=f.__name__) for f in (
    a1_an_on_time_day_keeps_its_plan, a1_a_long_game_makes_the_next_ones_late,
    a1_a_live_game_in_its_long_interval, a1_a_live_game_ahead_of_its_length, a1_ended_games_are_what_happened,
    a1_a_game_not_begun_at_its_time,
    a1_games_with_no_planned_start_come_last, a1_late_means_more_than_five_minutes,
    a1_the_order_of_play_from_the_fold,
)]


@pytest.mark.parametrize("case", CASES)
def test_times(case: Callable[[Season], None]) -> None:
    case(Season())


def test_cases_cite_their_clauses() -> None:
    check_cases(CASES)


# ------------------------------------------------------------------ properties


@st.composite
def arenas(draw: st.DrawFn) -> tuple[list[Planned], int]:
    """An arena's games, some ended, one perhaps live, the rest not begun, at a moment ``now``."""
    now = hm(12)
    out: list[Planned] = []
    for i in range(draw(st.integers(0, 8))):
        starts = draw(st.none() | st.integers(hm(8), hm(18)))
        status = draw(st.sampled_from(STATUSES))
        periods = draw(st.integers(1, 6))
        shape: dict[str, Any] = {"periods": periods, "period_ms": draw(st.integers(1, 15)) * 30_000}
        if status == "ended":
            begun = draw(st.integers(hm(8), now))
            shape |= {"began_at": begun, "ended_at": draw(st.integers(begun, now))}
        elif status == "live":
            period = draw(st.integers(1, periods))
            elapsed = draw(st.integers(0, shape["period_ms"]))
            shape |= {"began_at": draw(st.integers(hm(8), now)),
                      "clock": Clock(period=period, started=True, running=draw(st.booleans()),
                                     period_over=draw(st.booleans()), period_elapsed_ms=elapsed,
                                     since=draw(st.integers(now - 20 * MIN, now)))}
        out.append(planned(f"g{i}", starts, status, **shape))
    return out, now


@given(arenas())
@settings(max_examples=200, deadline=None)
def test_games_not_begun_are_expected_in_order_never_before_their_time(
        case: tuple[list[Planned], int]) -> None:
    """A1 (register A35): on an arena, the games not begun are expected in planned order, one
    after the other's end and a changeover, never before their planned start or now, and never
    before a game under way ends; every game ends after it starts."""
    games, now = case
    got = expected_times(games, now)
    assert sorted(t.game for t in got) == sorted(g.game for g in games)
    waiting = [t for t in got if t.status == "scheduled"]
    begun_ends = [t.expected_end for t in got if t.status != "scheduled"]
    for t in got:
        assert t.expected_end >= t.expected_start
    for before, after in itertools.pairwise(waiting):
        assert after.expected_start >= before.expected_end + CHANGEOVER
    for t in waiting:
        assert t.expected_start >= max([now, t.planned_start or now, *(e + CHANGEOVER for e in begun_ends)])
    planned_starts = [t.planned_start for t in got if t.planned_start is not None]
    assert planned_starts == sorted(planned_starts)
    assert all(t.planned_start is None for t in got[len(planned_starts):])


@given(st.lists(st.integers(0, 120), min_size=1, max_size=8), st.integers(0, 600))
@settings(max_examples=100, deadline=None)
def test_an_on_time_day_shows_no_lateness(gaps: list[int], lead: int) -> None:
    """A1 (register A35): games planned at least a game's length and a changeover apart, none
    begun before its time: each is expected at its planned start, and none is late."""
    starts, at = [], hm(10) + lead * MIN
    for gap in gaps:
        starts.append(at)
        at += LENGTH + CHANGEOVER + gap * MIN
    got = expected_times([planned(f"g{i}", t) for i, t in enumerate(starts)], hm(10))
    assert [(t.expected_start, t.late) for t in got] == [(t, False) for t in starts]
