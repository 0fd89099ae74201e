"""Display-ready documents of the state: what ``--state`` prints, what a
scoreboard's snapshot holds, and what a correction compares.

A view is computed at a moment ``now`` (the game's time cursor), because
play time served in the box depends on how long the clock has run since its
last change. Displays extrapolate from ``clock.at`` themselves.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from . import clock as clk
from .events import Side
from .notices import Text
from .state import Game, Player, Sitout, Team, goals


class Score(msgspec.Struct):
    """The score as it stands: goals scored plus goals on handicap (A5), a half as .5."""

    home: int | float
    away: int | float


class HandicapView(msgspec.Struct):
    """The goals each side started with (A5), included in ``score``; where they come from:
    ``matrix`` (worked out from the two team handicaps) or ``committee`` (as it set them)."""

    home: int | float
    away: int | float
    source: Literal["matrix", "committee"]
    home_handicap: int | None
    away_handicap: int | None
    goals_per_goal: int | float | None


class IntervalView(msgspec.Struct):
    """The interval after a period the horn ended (arena facts: 4 minutes, 10 after half
    the periods and before an extra period): a display counts down to ``ends_at``."""

    started_at: int
    ms: int
    ends_at: int


class ClockView(msgspec.Struct):
    running: bool
    period: int
    periods: int
    period_ms: int
    remaining_ms: int
    play_ms: int
    at: int
    period_over: bool
    overtime: bool
    interval: IntervalView | None = None


class SitoutView(msgspec.Struct):
    kind: Literal["box", "no_sub"]
    owed_ms: int
    served_ms: int
    remaining_ms: int
    eligible: bool
    # "after_play": waiting for play time; "next_stoppage": served, out at the next stoppage.
    release: Literal["after_play", "next_stoppage"]
    clause: str
    cause: str
    text: Text


class MountView(msgspec.Struct):
    deadline_at: int
    remaining_ms: int
    expired: bool
    reason: str


class PlayerView(msgspec.Struct):
    id: str
    side: Side
    yellows: int
    offenses: int
    on_field: bool
    sent_off: bool
    suspended: bool
    sub_allowed: bool
    carried_yellow: bool
    shootout_excluded: bool
    box: SitoutView | None
    no_sub: SitoutView | None
    mount: MountView | None


class ShortView(msgspec.Struct):
    player: str
    reason: Literal["box", "sent_off", "suspended"]


class TeamView(msgspec.Struct):
    side: Side
    team: str
    lineup: list[str]
    bench: list[str]
    on_field: int
    substitute_allowed: bool
    short: list[ShortView]


class Teams(msgspec.Struct):
    home: TeamView
    away: TeamView


class CarriedView(msgspec.Struct):
    """An obligation from an earlier game served in this one (R9-R16)."""

    id: str
    player: str
    kind: str
    owed_ms: int
    clause: str
    origin_game: str


class PostgameView(msgspec.Struct):
    player: str
    level: str
    cause: str


class OfficialView(msgspec.Struct):
    """Cards shown to a member of a team's organization (R1)."""

    side: Side
    role: str
    yellows: int
    reds: int


class GameView(msgspec.Struct):
    game: str
    event: str
    arena: str
    kind: str
    handicap: int
    status: str
    shootout_option: bool
    shootout: bool
    score: Score
    clock: ClockView
    teams: Teams
    players: list[PlayerView]
    postgame: list[PostgameView]
    carried: list[CarriedView]
    officials: list[OfficialView]
    goals_on_handicap: HandicapView | None = None


_RELEASE_TEXT = {
    ("box", True): Text("returns at next stoppage", "vuelve en la próxima detención"),
    ("box", False): Text("out until the first stoppage after the play time owed",
                         "fuera hasta la primera detención tras el tiempo de juego debido"),
    ("no_sub", True): Text("substitute at next stoppage", "sustituto en la próxima detención"),
    ("no_sub", False): Text("team plays short: no substitute yet",
                            "el equipo juega con uno menos: todavía sin sustituto"),
}


def _sitout(so: Sitout | None, play: int) -> SitoutView | None:
    if so is None:
        return None
    remaining = max(0, so.target_play_ms - play)
    return SitoutView(
        kind=so.kind, owed_ms=so.owed_ms, served_ms=max(0, so.owed_ms - remaining),
        remaining_ms=remaining, eligible=remaining == 0,
        release="next_stoppage" if remaining == 0 else "after_play",
        clause=so.clause, cause=so.cause, text=_RELEASE_TEXT[so.kind, remaining == 0],
    )


def _player(g: Game, p: Player, play: int, now: int) -> PlayerView:
    m = p.mount
    return PlayerView(
        id=p.id, side=p.side, yellows=p.yellows, offenses=p.offenses,
        on_field=p.id in g.team(p.side).lineup and not p.sent_off and not p.suspended and p.box is None,
        sent_off=p.sent_off, suspended=p.suspended, sub_allowed=p.sub_allowed,
        carried_yellow=p.carried_yellow, shootout_excluded=p.shootout_excluded,
        box=_sitout(p.box, play), no_sub=_sitout(p.no_sub, play),
        mount=None if m is None else MountView(
            deadline_at=m.deadline_at, remaining_ms=max(0, m.deadline_at - now),
            expired=now >= m.deadline_at, reason=m.reason),
    )


def _team(g: Game, side: Side, t: Team) -> TeamView:
    short: list[ShortView] = []
    for pid in t.lineup:
        p = g.players[pid]
        if p.sent_off:
            short.append(ShortView(pid, "sent_off"))
        elif p.suspended:
            short.append(ShortView(pid, "suspended"))
        elif p.box is not None:
            short.append(ShortView(pid, "box"))
    blocked = any(p.side == side and (p.box is not None or p.no_sub is not None)
                  for p in g.players.values())
    return TeamView(side=side, team=t.team, lineup=list(t.lineup), bench=list(t.bench),
                    on_field=len(t.lineup) - len(short), substitute_allowed=not blocked,
                    short=short)


def _interval(g: Game) -> IntervalView | None:
    c = g.clock
    if not c.period_over or g.status != "live":
        return None
    extra = c.period >= g.periods and not g.shootout_option  # 5.c(1): extra periods
    ms = g.long_interval_ms if c.period == g.periods // 2 or extra else g.interval_ms
    return IntervalView(started_at=c.since, ms=ms, ends_at=c.since + ms)


def _on_handicap(g: Game) -> HandicapView | None:
    h = g.on_handicap
    if h is None:
        return None
    return HandicapView(goals(h.home), goals(h.away), h.source, h.home_handicap, h.away_handicap,
                        None if h.goals_per_goal is None else goals(h.goals_per_goal))


def game_view(g: Game, now: int) -> GameView:
    c = g.clock
    play = clk.play_at(c, g.period_ms, now)
    return GameView(
        game=g.id, event=g.event, arena=g.arena, kind=g.kind, handicap=g.handicap, status=g.status,
        shootout_option=g.shootout_option, shootout=g.shootout,
        score=Score(*g.totals()),
        clock=ClockView(running=c.running, period=c.period, periods=g.periods,
                        period_ms=g.period_ms, remaining_ms=clk.remaining_at(c, g.period_ms, now),
                        play_ms=play, at=now, period_over=c.period_over,
                        overtime=c.period > g.periods, interval=_interval(g)),
        teams=Teams(_team(g, "home", g.home), _team(g, "away", g.away)),
        players=[_player(g, p, play, now) for p in g.players.values()],
        postgame=[PostgameView(x.player, x.level, x.cause) for x in g.postgame],
        carried=[CarriedView(c.id, c.player, c.kind, c.owed_ms, c.clause, c.origin_game)
                 for c in g.carried],
        officials=[OfficialView(o.side, o.role, o.yellows, o.reds) for o in g.officials],
        goals_on_handicap=_on_handicap(g),
    )


def diff(before: object, after: object) -> list[tuple[str, object, object]]:
    """The leaves that differ between two views, as ``(path, before, after)``.
    Lists of objects with an ``id`` are matched by id; equal subtrees are skipped."""
    return diff_builtins(msgspec.to_builtins(before), msgspec.to_builtins(after))


def diff_builtins(before: object, after: object) -> list[tuple[str, object, object]]:
    """``diff`` of two views already turned into builtins (``msgspec.to_builtins``)."""
    out: list[tuple[str, object, object]] = []
    _diff(before, after, "", out)
    return out


def _keyed(x: object) -> dict[str, object] | None:
    if isinstance(x, list) and x and all(isinstance(i, dict) and "id" in i for i in x):
        return {str(i["id"]): i for i in x}
    return None


def _diff(a: object, b: object, path: str, out: list[tuple[str, object, object]]) -> None:
    if a == b:
        return
    ka, kb = _keyed(a), _keyed(b)
    if ka is not None or kb is not None:
        a, b = ka if ka is not None else {}, kb if kb is not None else {}
    if isinstance(a, dict) and isinstance(b, dict):
        for k in [*a.keys(), *(k for k in b if k not in a)]:
            _diff(a.get(k), b.get(k), f"{path}.{k}" if path else str(k), out)
        return
    out.append((path, a, b))
