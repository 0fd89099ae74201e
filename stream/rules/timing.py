"""Realistic times: when each game of an arena is expected to start and end when the day runs
late (docs/rules.md, register A35). Pure arithmetic on the games' own times and ``now``.

The rule
--------
* A game's **expected length** is its play (``periods`` × ``period_ms``), the intervals
  between its periods (``interval_ms`` after each, ``long_interval_ms`` after half of them:
  after the 2nd of 4) and a **stoppage allowance** of ``STOPPAGE_MS`` (2 minutes) a period:
  the clock stops on whistles and goals (arena facts; a setting, A2), so a period takes more
  than its play. The arena facts give no figure for it: this one is the house's.
* An **ended** game ended at its ``game.end``; it began at what began it (A27).
* A **live** game is expected to end at the later of its begin + its expected length and now
  + the play left (the clock's remaining time in this period, and every later period's) +
  the intervals left (the rest of one under way, and those after the later periods) + the
  allowance of each period not yet begun.
* A game **not begun** is expected to start at the latest of its planned start, now, and the
  moment the arena is free: the expected end of the game before it on the arena (and of
  every game on it under way or just ended) + a **changeover** of ``CHANGEOVER_MS`` (10
  minutes: teams, mounts and officials change between games; again a house figure). It is
  expected to end its expected length later.
* A game is **late** when its expected start (for a game that has begun: when it began) is
  more than ``LATE_MS`` (5 minutes) after its planned start: the public pages say "not before
  about 14:40". A game with no planned start is never late.
* The arena's games are taken in planned order: by planned start, then the games with none,
  each in the order they are given (set up).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from . import clock as clk
from .clock import Clock

__all__ = ["CHANGEOVER_MS", "LATE_MS", "STOPPAGE_MS", "GameTimes", "Planned", "expected_length",
           "expected_times"]

STOPPAGE_MS = 120_000     # per period: play stopped for whistles and goals
CHANGEOVER_MS = 600_000   # between two games on one arena
LATE_MS = 300_000         # later than planned by more than this: running late


class Planned(msgspec.Struct, frozen=True, kw_only=True):
    """One game on an arena, as far as its times go."""

    game: str
    event: str
    arena: str
    starts_at: int | None            # planned (its schedule); None: none given
    status: Literal["scheduled", "live", "ended"]
    began_at: int | None = None      # what began it (A27)
    ended_at: int | None = None      # its game.end
    periods: int = 4
    period_ms: int = 450_000
    interval_ms: int = 240_000
    long_interval_ms: int = 600_000
    clock: Clock | None = None       # a live game's


class GameTimes(msgspec.Struct, frozen=True, kw_only=True):
    """When a game was planned to start, and is expected (or was seen) to start and end."""

    game: str
    event: str
    arena: str
    status: Literal["scheduled", "live", "ended"]
    planned_start: int | None
    expected_start: int              # a game begun: when it began
    expected_end: int                # a game ended: when it ended
    late: bool                       # expected_start is more than LATE_MS after planned_start


def _interval_after(g: Planned, period: int) -> int:
    """The interval after ``period`` (none after the last)."""
    if period >= g.periods:
        return 0
    return g.long_interval_ms if period == g.periods // 2 else g.interval_ms


def expected_length(g: Planned) -> int:
    """Play, the intervals between periods, and the stoppage allowance."""
    intervals = sum(_interval_after(g, p) for p in range(1, g.periods))
    return g.periods * (g.period_ms + STOPPAGE_MS) + intervals


def _left(g: Planned, c: Clock, now: int) -> int:
    """What a live game still has to play at ``now``: play, intervals and allowance."""
    if not c.started:
        return expected_length(g)
    later = range(c.period + 1, g.periods + 1)
    play = sum(g.period_ms + STOPPAGE_MS for _ in later)
    intervals = sum(_interval_after(g, p) for p in later)
    if c.period_over:  # in the interval after ``c.period``: what is left of it
        return play + intervals + max(0, c.since + _interval_after(g, c.period) - now)
    return play + intervals + _interval_after(g, c.period) + clk.remaining_at(c, g.period_ms, now)


def _began(g: Planned, now: int) -> int:
    return g.began_at if g.began_at is not None else now


def expected_times(games: list[Planned], now: int) -> list[GameTimes]:
    """Register A35: the games of one arena, in planned order, with their expected times."""
    order = sorted(range(len(games)), key=lambda i: (games[i].starts_at is None, games[i].starts_at or 0, i))
    ends: dict[int, int] = {}
    for i, g in enumerate(games):
        if g.status == "ended":
            ends[i] = g.ended_at if g.ended_at is not None else _began(g, now)
        elif g.status == "live":
            c = g.clock if g.clock is not None else Clock()
            ends[i] = max(_began(g, now) + expected_length(g), now + _left(g, c, now))
    free = max([now, *(end + CHANGEOVER_MS for end in ends.values())])
    out: list[GameTimes] = []
    for i in order:
        g = games[i]
        if i in ends:
            start, end = _began(g, now), ends[i]
        else:
            start = free if g.starts_at is None else max(free, g.starts_at)
            end = start + expected_length(g)
            free = end + CHANGEOVER_MS
        out.append(GameTimes(game=g.game, event=g.event, arena=g.arena, status=g.status,
                             planned_start=g.starts_at, expected_start=start, expected_end=end,
                             late=g.starts_at is not None and start - g.starts_at > LATE_MS))
    return out
