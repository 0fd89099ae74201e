"""A round robin's standings (L3, register A34): the order of its table, and which tie-break
placed each row.

Each case is a table of results (home, away, goals) played through the draw's own games, and
the table the docs say they give: rows best first, each with the first of wins, goal
difference, goals for and seed order on which it differs from the row above it (the first
row: from the row below it). The expected tables are worked out by hand from those results.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import pytest

from stream.rules import codec
from stream.rules.engine import Engine

from .clause_helpers import Season, check_cases
from .test_clause_draw import bracket, drawn, sheet

SeasonCase = Callable[[Season], None]

#: What the docs say ranks a round robin's standings, in order.
ORDER = ["won", "goal_difference", "goals_for", "seed"]

Result = tuple[str, str, int, int]   # team, team, the first's goals, the second's


def play_results(s: Season, n: int, results: list[Result]) -> list[tuple[str, str | None]]:
    """Draw a round robin of the first ``n`` teams, play ``results`` through its games, and
    return the table: (team, placed_by), best first."""
    b = drawn(s, n, fmt="round_robin")
    assert b.tie_breaks == ORDER
    for x, y, gx, gy in results:
        g = next(g for g in b.games if {g.home.team, g.away.team} == {x, y})
        home_goals, away_goals = (gx, gy) if g.home.team == x else (gy, gx)
        assert g.home.team is not None and g.away.team is not None
        s.setup(g.game, event="cup", kind=g.kind, home=sheet(g.home.team), away=sheet(g.away.team))
        s.start(g.game)
        for side, count in (("home", home_goals), ("away", away_goals)):
            for _ in range(count):
                s.run(5_000)
                s.must("goal", g.game, team=side)
                s.start(g.game)
        s.run(5_000)
        s.end(g.game)
    table = bracket(s).standings
    assert sum(row.played for row in table) == 2 * len(results)
    return [(row.team, row.placed_by) for row in table]


def l3_standings_placed_by_wins(s: Season) -> None:
    """L3 (register A34): "wins first": A beats B and C, B beats C: A, B, C, each row apart
    from its neighbour on wins."""
    got = play_results(s, 3, [("A", "B", 1, 0), ("A", "C", 2, 1), ("B", "C", 3, 0)])
    assert got == [("A", "won"), ("B", "won"), ("C", "won")]


def l3_standings_placed_by_goal_difference(s: Season) -> None:
    """L3 (register A34): level on wins, goal difference ranks: A 3-0 B, B 2-1 C, C 2-1 A leaves
    one win each, A +2, C 0, B -2."""
    got = play_results(s, 3, [("A", "B", 3, 0), ("B", "C", 2, 1), ("C", "A", 2, 1)])
    assert got == [("A", "goal_difference"), ("C", "goal_difference"), ("B", "goal_difference")]


def l3_standings_placed_by_goals_for(s: Season) -> None:
    """L3 (register A34): level on wins and goal difference, goals for rank: A 3-2 B, B 1-0 C,
    C 2-1 A leaves one win and a difference of 0 each, A 4 goals, B 3, C 2."""
    got = play_results(s, 3, [("A", "B", 3, 2), ("B", "C", 1, 0), ("C", "A", 2, 1)])
    assert got == [("A", "goals_for"), ("B", "goals_for"), ("C", "goals_for")]


def l3_standings_placed_by_seed(s: Season) -> None:
    """L3 (register A34): level on everything, seed order ranks: before any game, and after
    three draws of 1-1, the table is the seed order, each row placed by seed."""
    assert play_results(s, 3, []) == [("A", "seed"), ("B", "seed"), ("C", "seed")]
    s2 = Season()
    got = play_results(s2, 3, [("C", "A", 1, 1), ("B", "C", 1, 1), ("A", "B", 1, 1)])
    assert got == [("A", "seed"), ("B", "seed"), ("C", "seed")]


def l3_standings_each_row_its_own_tie_break(s: Season) -> None:
    """L3 (register A34): each row is compared with the row just above it (the first with the
    row below it): D has two wins, B, C and A one; B and C a difference of 0, A -2; B 7 goals
    for, C 4. D and B are placed by wins, C by goals for (from B), A by goal difference (from C)."""
    got = play_results(s, 4, [("D", "A", 2, 0), ("D", "C", 1, 0), ("B", "D", 2, 1),
                              ("A", "B", 3, 2), ("C", "A", 1, 0), ("B", "C", 3, 3)])
    # D: W2 L1, 4-2 (+2). B: W1 L1 T1, 7-7 (0), 7 for. A: W1 L2, 3-5 (-2). C: W1 L1 T1, 4-4 (0), 4 for.
    assert got == [("D", "won"), ("B", "won"), ("C", "goals_for"), ("A", "goal_difference")]


def l3_a_knockout_has_no_table(s: Season) -> None:
    """L3 (register A34): a knockout has no standings and no tie-breaks."""
    b = drawn(s, 4)
    assert (b.standings, b.tie_breaks) == ([], [])


CASES = [pytest.param(f, id=f.__name__) for f in (
    l3_standings_placed_by_wins, l3_standings_placed_by_goal_difference, l3_standings_placed_by_goals_for,
    l3_standings_placed_by_seed, l3_standings_each_row_its_own_tie_break, l3_a_knockout_has_no_table,
)]


@pytest.mark.parametrize("case", CASES)
def test_standings(case: SeasonCase) -> None:
    s = Season()
    case(s)
    again = Engine()
    for body in s.log:
        again.feed(codec.decode_event(msgspec.json.encode(body)))
    assert msgspec.json.encode(again.draw("cup")) == msgspec.json.encode(s.engine.draw("cup"))


def test_cases_cite_their_clauses() -> None:
    check_cases(CASES)
