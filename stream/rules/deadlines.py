"""Time passing with no event: the deadlines of a game that fall due by
themselves (a box trip's or a no-substitute window's play time served, a mount
window run out). The engine emits them before the next event of the game,
a ``tick`` included: the live shell sets its one timer for the next
(``Engine.next_deadline``) and logs a ``tick`` when it comes round.
"""

from __future__ import annotations

from . import clock as clk
from . import notices as nt
from .state import Game


def deadlines(g: Game, after: int, upto: int) -> list[tuple[int, nt.Notice]]:
    """Notices for the deadlines that fall in ``(after, upto]``, as (at, notice)."""
    due: list[tuple[int, nt.Notice]] = []
    c = g.clock
    for pid in g.pending:
        p = g.players[pid]
        for so in (p.box, p.no_sub):
            if so is None:
                continue
            t = clk.due_at(c, g.period_ms, so.target_play_ms)
            if t is not None and after < t <= upto:
                if so.kind == "box":
                    n: nt.Notice = nt.BoxEligible(cause=so.cause, at=t, game=g.id, clause=so.clause,
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
