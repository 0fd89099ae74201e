"""The steps the transitions of ``game.py`` share: lookups that refuse, and what
a stoppage, a send-off, a box trip, a penalty or an alert does to a game.
Each follows the house rules of ``game.py``: checks raise ``Refused`` before
any change, time is the event's, and every notice cites its clause.
"""

from __future__ import annotations

from typing import Literal

from ..errors import Refused
from . import clock as clk
from . import events as ev
from . import notices as nt
from .state import Game, Player, Sitout, other

BOX_MS = 120_000          # R3, R4, R8: "the next two minutes of play"
RED_NO_SUB_MS = 240_000   # R6: "the next four minutes of play"
MOUNT_WINDOW_MS = 300_000  # R17: "a maximum of 5 minutes for its replacement"

Out = list[nt.Notice]


# --------------------------------------------------------------------------
# Lookups that refuse


def player(g: Game, pid: str) -> Player:
    p = g.players.get(pid)
    if p is None:
        raise Refused("unknown_player", f"{pid!r} is on neither roster of game {g.id!r}", "A3")
    return p


def on_field(g: Game, p: Player) -> bool:
    return p.id in g.team(p.side).lineup and not p.sent_off and not p.suspended and p.box is None


def play_time(g: Game, at: int) -> int:
    return clk.play_at(g.clock, g.period_ms, at)


# --------------------------------------------------------------------------
# Shared steps


def clock_notice(g: Game, e: ev.EventBase) -> nt.ClockChanged:
    """The clock as the last start/stop left it (settled at ``e.at``)."""
    c = g.clock
    return nt.ClockChanged(
        cause=e.id, at=e.at, game=g.id, clause="A1",
        running=c.running, period=c.period,
        remaining_ms=g.period_ms - c.period_elapsed_ms,
        play_ms=c.play_ms, period_over=c.period_over,
    )


def watch(g: Game, p: Player) -> None:
    if p.id not in g.pending:
        g.pending.append(p.id)


def unwatch_served(g: Game) -> None:
    g.pending = [pid for pid in g.pending if (p := g.players[pid]).box is not None
                 or p.no_sub is not None or p.mount is not None]


def stoppage(g: Game, e: ev.EventBase, out: Out) -> None:
    """House rule 3: serve every sit-out whose play target has been reached."""
    if not g.pending:
        return
    play = play_time(g, e.at)
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
        unwatch_served(g)


def alert(g: Game, e: ev.EventBase, out: Out, code: str, clause: str, *, player: str | None = None,
          side: ev.Side | None = None, subject: str | None = None) -> None:
    """House rule 6: the fact stands; tell the officials where the record and the rule part."""
    out.append(nt.Alert(cause=e.id, at=e.at, game=g.id, clause=clause, code=code, player=player,
                        side=side, subject=subject))


def send_off(g: Game, p: Player, e: ev.EventBase, out: Out, clause: str = "R6",
              no_sub_ms: int = RED_NO_SUB_MS, window_clause: str = "R6") -> None:
    """R6: off for the rest of the game; no substitute until the first stoppage
    after the next four minutes of play (R4: two, after a red at the third
    offense, as the event's rules say). A box trip in progress is superseded."""
    play = play_time(g, e.at)
    p.sent_off = True
    p.sent_off_clause = clause
    p.box = None
    p.no_sub = Sitout("no_sub", play + no_sub_ms, no_sub_ms, e.id, window_clause)
    watch(g, p)
    out.append(nt.SentOff(cause=e.id, at=e.at, game=g.id, clause=window_clause,
                          player=p.id, side=p.side, no_sub_ms=no_sub_ms))


def penalty(g: Game, side: ev.Side, player: str | None, e: ev.EventBase, severity: str | int | None,
             reason: Literal["card", "left_box_early", "mount_abuse", "left_arena"],
             clause: str, out: Out) -> None:
    out.append(nt.PenaltyAwarded(cause=e.id, at=e.at, game=g.id, clause=clause,
                                 to=other(side), against=side, player=player,
                                 severity=severity, reason=reason))


def box(g: Game, p: Player, e: ev.EventBase, target: int, owed: int, clause: str,
         kind: Literal["card", "returned", "carried"], out: Out) -> None:
    p.box = Sitout("box", target, owed, e.id, clause)
    watch(g, p)
    out.append(nt.BoxEnter(cause=e.id, at=e.at, game=g.id, clause=clause,
                           player=p.id, side=p.side, owed_ms=target - play_time(g, e.at), kind=kind))


def exclude_from_shootout(g: Game, e: ev.EventBase, out: Out) -> None:
    """R11: box time left at the end of regulation keeps the player out of the
    shootout, and is deemed served."""
    play = play_time(g, e.at)
    for p in g.players.values():
        if p.box is not None:
            out.append(nt.ShootoutExcluded(cause=e.id, at=e.at, game=g.id, clause="R11",
                                           player=p.id, side=p.side,
                                           owed_ms=max(0, p.box.target_play_ms - play)))
            p.box = None
            p.shootout_excluded = True
    unwatch_served(g)
    g.shootout = True
