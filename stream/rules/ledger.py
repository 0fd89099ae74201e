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
USPA event (a Club one in either); the same team, unless the team is entered
in no uncompleted event of equal or higher handicap (judged when the game
ends, and again when an event completes or eliminates the team), and then any
team. A same-team obligation goes to the team's next qualifying game whether
or not the player is listed in it (R13: it "may not be avoided by the
substitution of another player"); an any-team one to the next qualifying game
he is listed in, for any team.

A game takes its obligations when it begins (its first ``clock.start``, goal
or ``game.end``): at most one suspension or sit-out per player; when cards
during and after one game both demand one, the most severe is served first
and the other in the following qualifying game (the sequence rule). The
team sheet never refuses anything: a player who must sit out holds a lineup
slot even if he was not listed to start, a suspended player listed to start
leaves his slot empty until a substitute comes on, and an ``alert`` says so.

Everything here is pure: functions of the games' states and the tournaments.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import msgspec

from .events import Side
from .notices import Alert, Notice
from .state import Carried, Game, Player, Sitout

Kind = Literal["sit_out", "suspension", "yellow_status"]
#: Severity for the sequence rule: a whole game out beats any sit-out (whose
#: severity is its play time owed); a post-game red also leaves the team short.
FULL = 10**9
EXCLUDED_KINDS = frozenset({"consolation", "subsidiary_first_round", "shootout"})
#: R9: a post-game card -> (kind, owed_ms, severity) in the next qualifying game.
POSTGAME = {"2y": ("sit_out", 120_000, 120_000), "3y": ("sit_out", 240_000, 240_000),
            "red": ("suspension", 240_000, 2 * FULL)}


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """A committee's decision on an obligation, as the ledger keeps it: who (as the
    decision names them), why, by which event, and when (the event's ``at``)."""

    by: str
    reason: str
    cause: str          # the committee.rescind, committee.decrease or committee.increase event
    at: int = 0         # the decision's ``at`` (ms)


class Decrease(Decision, frozen=True, kw_only=True):
    """A committee's decrease of an obligation, and what it owed before. Rule 14 grants an
    increase (R6) and no decrease; a decrease is a committee correction beyond the rule,
    so it always carries its reason."""

    from_ms: int        # the play time owed before it


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
    # rescinded: by the committee before any game took it; never applied, kept with who and why
    status: Literal["pending", "serving", "served", "rescinded"] = "pending"
    applied_in: str | None = None  # the game it was (or is being) served in
    by: str | None = None          # a committee increase: who ...
    reason: str | None = None      # ... and why
    decreased: Decrease | None = None  # the committee's decrease (beyond Rule 14), with its reason
    rescinded: Decision | None = None  # the committee's rescind (status ``rescinded``)
    increased: Decision | None = None  # a committee increase's who, why and when


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


def plan(ledger: dict[str, list[Obligation]], g: Game, info: GameInfo,
         unlisted: Iterable[str] = ()) -> list[Obligation]:
    """The pending obligations this game takes when it begins: its listed players'
    (in roster order), then those of ``unlisted`` players of its two teams (R13).
    Reads only; never refuses: ``apply_plan`` fits any team sheet to them."""
    taken: list[Obligation] = []
    sides = {g.home.team: "home", g.away.team: "away"}
    for pid in [*g.players, *unlisted]:
        obs = ledger.get(pid)
        if not obs:
            continue  # most players owe nothing: nothing more to read
        p = g.players.get(pid)
        had: list[str] | None = None  # what the game already carries for him, read when first needed
        had_suspension = had_yellow = False
        for ob in obs:
            if ob.status != "pending":
                continue
            if p is not None:
                team = g.team(p.side).team
            elif not ob.any_team and ob.team in sides:
                team = ob.team  # his team's next game, listed or not (R13)
            else:
                continue
            if not qualifies(ob, info, team):
                continue
            if had is None:
                had = [c.kind for c in g.carried if c.player == pid]
                had_suspension = any(k != "yellow_status" for k in had)
                had_yellow = "yellow_status" in had
            if ob.kind == "yellow_status":
                if had_yellow:
                    continue
                had_yellow = True
            else:
                if had_suspension:
                    continue
                had_suspension = True
            taken.append(ob)
    return taken


def _hold_slot(g: Game, p: Player) -> str | None:
    """Put ``p`` in his side's lineup, so that his team plays short while he serves
    (R13). A free slot if the side started short; else the last listed starter who
    is free to play goes to the bench (returned)."""
    team = g.team(p.side)
    if p.id in team.bench:
        team.bench.remove(p.id)
    if len(team.lineup) < 3:
        team.lineup.append(p.id)
        return None
    for i in range(len(team.lineup) - 1, -1, -1):
        q = g.players[team.lineup[i]]
        if not (q.sent_off or q.suspended or q.box is not None):
            team.lineup[i] = p.id
            team.bench.append(q.id)
            return q.id
    team.lineup.append(p.id)  # every slot is already empty: nothing more to take
    return None


def _sheet_alert(g: Game, ob: Obligation, p: Player, cause: str, at: int, code: str,
                 **fields: Any) -> Alert:
    return Alert(cause=cause, at=at, game=g.id, clause=ob.clause, code=code, player=ob.player,
                 side=p.side, origin_game=ob.origin_game, owed_ms=ob.owed_ms, **fields)


def apply_plan(taken: Iterable[Obligation], g: Game, cause: str, at: int, out: list[Notice]) -> None:
    """Begin the game with what it took: boxes, suspensions, yellow status, fitted to
    the team sheet as written; an ``alert`` where the sheet had it otherwise."""
    for ob in taken:
        g.carried.append(Carried(ob.id, ob.player, ob.kind, ob.owed_ms, ob.clause, ob.origin_game))
        p = g.players.get(ob.player)
        if ob.kind == "yellow_status":
            if p is not None:  # not listed: the status lapses with the game he did not play
                p.yellows, p.offenses, p.carried_yellow = p.yellows + 1, p.offenses + 1, True
            continue
        if p is None:
            side: Side = "home" if g.home.team == ob.team else "away"
            p = g.players[ob.player] = Player(ob.player, side)
        team = g.team(p.side)
        if ob.kind == "suspension" and ob.owed_ms == 0:
            # A whole game out, "with a substitute allowed".
            p.suspended = True
            if p.id in team.lineup:
                p.sub_allowed = True
                out.append(_sheet_alert(g, ob, p, cause, at, "suspended_in_lineup", reason=ob.kind))
            elif p.id in team.bench:  # listed as a substitute: he may not come on
                out.append(_sheet_alert(g, ob, p, cause, at, "suspended_on_bench", reason=ob.kind))
            continue
        # A sit-out, or a post-game red: his slot stays empty while he serves. Listed to
        # start, he is kept off the field all the same; not listed, he takes a slot.
        if p.id in team.lineup:
            out.append(_sheet_alert(g, ob, p, cause, at, "suspended_in_lineup", reason=ob.kind))
        else:
            out.append(_sheet_alert(g, ob, p, cause, at, "slot_held", other=_hold_slot(g, p),
                                    reason=ob.kind))
        if ob.kind == "sit_out":
            p.box = Sitout("box", ob.owed_ms, ob.owed_ms, ob.cause, ob.clause)
        else:
            p.suspended = True
            p.no_sub = Sitout("no_sub", ob.owed_ms, ob.owed_ms, ob.cause, ob.clause)
        if p.id not in g.pending:
            g.pending.append(p.id)
