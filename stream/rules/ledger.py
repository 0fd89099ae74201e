"""What follows a player out of a game: the carry-over ledger (R6, R9–R16).

Each player has a list of obligations, derived by the fold from the log and
never entered by hand:

==============  ===========================================================  ======
kind            what the next qualifying game does with it                   clause
==============  ===========================================================  ======
sit_out         starts in the box for ``owed_ms`` of play; out at the first   R10, R9
                stoppage after it; no substitute meanwhile
suspension      may not play at all. ``owed_ms`` > 0 (a post-game red): the   R6, R14,
                team plays short until the first stoppage after that much     R9
                play, then a substitute may come on
yellow_status   starts with one yellow: the first yellow there is a second   R12
==============  ===========================================================  ======

Which game is "next" (R15, R16): handicap equal or higher; not a consolation
game, a first-round subsidiary game or a shootout; a USPA obligation only in a
USPA event (a Club one in either); the same team, unless the team was
entered in no uncompleted event of equal or higher handicap when the game
ended, and then any team. Only games the player is rostered in count.

A game takes at most one suspension or sit-out per player; when cards
during and after one game both demand one, the most severe is served first
and the other in the following qualifying game (the sequence rule).

Everything here is pure: functions of the games' states and the tournaments.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from ..errors import Refused
from .state import Carried, Game, Player, Sitout

Kind = Literal["sit_out", "suspension", "yellow_status"]
#: Severity for the sequence rule: a whole game out beats any sit-out (whose
#: severity is its play time owed); a post-game red also leaves the team short.
FULL = 10**9
EXCLUDED_KINDS = frozenset({"consolation", "subsidiary_first_round", "shootout"})
#: R9: a post-game card -> (kind, owed_ms, severity) in the next qualifying game.
POSTGAME = {"2y": ("sit_out", 120_000, 120_000), "3y": ("sit_out", 240_000, 240_000),
            "red": ("suspension", 240_000, 2 * FULL)}


class Obligation(msgspec.Struct, kw_only=True):
    id: str
    player: str
    kind: Kind
    owed_ms: int
    clause: str
    cause: str                     # the event that created it
    origin_game: str
    origin_event: str
    origin_class: str              # "club" or "uspa"
    handicap: int
    team: str
    any_team: bool                 # R15: the team had no uncompleted event left
    postgame: bool
    severity: int                  # the sequence rule: higher is served first
    order: int = 0                 # serving order: when its source arose, then the sequence rule
    status: Literal["pending", "serving", "served"] = "pending"
    applied_in: str | None = None  # the game it was (or is being) served in
    by: str | None = None          # a committee increase: who ...
    reason: str | None = None      # ... and why


class GameInfo(msgspec.Struct, frozen=True):
    """What qualification needs to know of a game."""

    id: str
    handicap: int
    kind: str
    event_class: str


def qualifies(ob: Obligation, info: GameInfo, team: str) -> bool:
    """R15/R16: may ``ob`` be served in this game, for a player playing for ``team``?"""
    return (info.handicap >= ob.handicap
            and info.kind not in EXCLUDED_KINDS
            and (ob.origin_class != "uspa" or info.event_class == "uspa")
            and (ob.any_team or team == ob.team))


def _suspension_like(ob: Obligation) -> bool:
    return ob.kind != "yellow_status"


# ---------------------------------------------------------------- derivation


def _base(g: Game, p: Player, event_class: str, any_team: bool) -> dict[str, object]:
    return {"player": p.id, "origin_game": g.id, "origin_event": g.event, "origin_class": event_class,
            "handicap": g.handicap, "team": g.team(p.side).team, "any_team": any_team}


def derive(g: Game, end_cause: str, play_end: int, event_class: str,
           any_team: dict[str, bool]) -> list[Obligation]:
    """Every obligation an ended game creates, per player in the order they are
    to be served (the sequence rule within the game)."""
    out: list[Obligation] = []
    for p in g.players.values():
        base = _base(g, p, event_class, any_team[p.side])
        mine: list[Obligation] = []
        if p.sent_off:
            clause = p.sent_off_clause or "R6"
            mine.append(Obligation(id=f"{end_cause}:{p.id}:suspension", kind="suspension", owed_ms=0,
                                   clause=clause, cause=end_cause, postgame=False, severity=FULL,
                                   **base))  # type: ignore[arg-type]
        elif p.box is not None:
            owed = max(0, p.box.target_play_ms - play_end)
            mine.append(Obligation(id=f"{end_cause}:{p.id}:sit_out", kind="sit_out", owed_ms=owed,
                                   clause="R10", cause=end_cause, postgame=False,
                                   severity=owed, **base))  # type: ignore[arg-type]
        received = p.yellows - (1 if p.carried_yellow else 0)
        if received >= 3 and not p.sent_off:
            mine.append(Obligation(id=f"{end_cause}:{p.id}:yellow_status", kind="yellow_status",
                                   owed_ms=0, clause="R12", cause=end_cause, postgame=False, severity=0,
                                   **base))  # type: ignore[arg-type]
        for pc in g.postgame:
            if pc.player != p.id:
                continue
            kind, owed, severity = POSTGAME[pc.level]
            mine.append(Obligation(id=f"{pc.cause}:{p.id}:{kind}", kind=kind,  # type: ignore[arg-type]
                                   owed_ms=owed, clause="R9", cause=pc.cause, postgame=True,
                                   severity=severity, **base))  # type: ignore[arg-type]
        # R9 sequence: during- and after-game suspensions in turn, most severe first.
        mine.sort(key=lambda o: -o.severity if _suspension_like(o) else 1)
        out.extend(mine)
    return out


# ---------------------------------------------------------------- applying


class Plan(msgspec.Struct):
    """The obligations a game set-up takes, checked before anything changes."""

    taken: list[Obligation]


def plan(ledger: dict[str, list[Obligation]], g: Game, info: GameInfo) -> Plan:
    """Which pending obligations this game takes; refuses a lineup that breaks one."""
    taken: list[Obligation] = []
    for p in g.players.values():
        team = g.team(p.side)
        # What the game already took for him (at set-up, when this runs at its start).
        had = [c.kind for c in g.carried if c.player == p.id]
        had_suspension = any(k != "yellow_status" for k in had)
        had_yellow = "yellow_status" in had
        for ob in ledger.get(p.id, ()):
            if ob.status != "pending" or not qualifies(ob, info, team.team):
                continue
            if ob.kind == "yellow_status":
                if had_yellow:
                    continue
                had_yellow = True
            if _suspension_like(ob):
                if had_suspension:
                    continue
                had_suspension = True
                in_lineup = p.id in team.lineup
                if ob.kind == "suspension" and ob.owed_ms == 0 and in_lineup:
                    raise Refused("suspended_player", f"{p.id!r} is suspended for this game "
                                  f"(from game {ob.origin_game!r}) and can't start", ob.clause)
                if ob.kind == "suspension" and ob.owed_ms > 0 and not in_lineup:
                    raise Refused("suspended_player_not_listed", f"{p.id!r} is suspended for this game "
                                  "and the team plays short until the first stoppage after 4:00 of "
                                  f"play: list {p.id!r} in the starting lineup so the slot stays empty",
                                  ob.clause)
                if ob.kind == "sit_out" and not in_lineup:
                    # R13: a sit-out "may not be avoided by the substitution of another player".
                    raise Refused("suspended_player_not_listed", f"{p.id!r} begins this game in the "
                                  f"penalty box and the team plays short meanwhile: list {p.id!r} in "
                                  "the starting lineup", ob.clause)
            taken.append(ob)
    return Plan(taken)


def apply_plan(plan: Plan, g: Game) -> None:
    """Start the game with what the plan took: boxes, suspensions, yellow status."""
    for ob in plan.taken:
        p = g.players[ob.player]
        if ob.kind == "yellow_status":
            p.yellows, p.offenses, p.carried_yellow = 1, 1, True
        elif ob.kind == "sit_out":
            p.box = Sitout("box", ob.owed_ms, ob.owed_ms, ob.cause, ob.clause)
        else:
            p.suspended = True
            if ob.owed_ms > 0:  # post-game red: the slot stays empty, no substitute for a while
                p.no_sub = Sitout("no_sub", ob.owed_ms, ob.owed_ms, ob.cause, ob.clause)
        if ob.kind != "yellow_status" and p.id not in g.pending and (p.box or p.no_sub):
            g.pending.append(p.id)
        g.carried.append(Carried(ob.id, ob.player, ob.kind, ob.owed_ms, ob.clause, ob.origin_game))
        ob.status = "serving"
        ob.applied_in = g.id
