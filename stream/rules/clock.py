"""The game clock, and "minutes of play" measured on it.

Rule 14 counts its suspensions in *play* time: time with the game clock
running, as the timekeeper drives it (arena facts). Play time is a single
number per game, ``play_ms``, that grows only while the clock runs and never
past the end of the current period (the ball is dead at the horn, so play
can't outlast the period even if the horn is pressed late).

Everything here is arithmetic on the events' own ``at``; nothing reads a
wall clock.
"""

from __future__ import annotations

import msgspec


class Clock(msgspec.Struct, gc=False):
    period: int = 1
    running: bool = False
    started: bool = False          # the first clock.start has happened
    period_over: bool = False      # a horn ended the period; the next start opens a new one
    period_elapsed_ms: int = 0     # within the current period, as of ``since``
    play_ms: int = 0               # total play in the game, as of ``since``
    since: int = 0                 # the ``at`` of the last change


def _run_ms(clock: Clock, period_ms: int, at: int) -> int:
    """Play accrued since the last change, capped at the end of the period."""
    if not clock.running or at <= clock.since:
        return 0
    return min(at - clock.since, period_ms - clock.period_elapsed_ms)


def play_at(clock: Clock, period_ms: int, at: int) -> int:
    """Total play time in the game at wall time ``at``."""
    return clock.play_ms + _run_ms(clock, period_ms, at)


def remaining_at(clock: Clock, period_ms: int, at: int) -> int:
    """Time left in the current period at ``at``."""
    return period_ms - clock.period_elapsed_ms - _run_ms(clock, period_ms, at)


def settle(clock: Clock, period_ms: int, at: int) -> None:
    """Bring ``play_ms`` and ``period_elapsed_ms`` up to ``at``."""
    since = clock.since
    if at > since:
        if clock.running:
            run = min(at - since, period_ms - clock.period_elapsed_ms)
            clock.play_ms += run
            clock.period_elapsed_ms += run
        clock.since = at


def start(clock: Clock, period_ms: int, at: int) -> None:
    settle(clock, period_ms, at)
    if clock.period_over:
        clock.period += 1
        clock.period_over = False
        clock.period_elapsed_ms = 0
    clock.running = True
    clock.started = True


def stop(clock: Clock, period_ms: int, at: int) -> None:
    settle(clock, period_ms, at)
    clock.running = False


def end_period(clock: Clock, period_ms: int, at: int) -> None:
    stop(clock, period_ms, at)
    clock.period_over = True


def due_at(clock: Clock, period_ms: int, target_play_ms: int) -> int | None:
    """The wall time at which play reaches ``target_play_ms``, if the clock,
    left running, gets there within this period; else None."""
    if not clock.running:
        return None
    need = target_play_ms - clock.play_ms
    if need <= 0 or need > period_ms - clock.period_elapsed_ms:
        return None
    return clock.since + need
