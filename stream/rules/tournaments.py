"""The tournaments of a log (events in the USPA sense): their class, handicap,
teams, completion, the teams knocked out, and the readings of Rule 14 each
chose. What R15 and R16 ask of them is answered here.
"""

from __future__ import annotations

import zoneinfo
from typing import Any

import msgspec

from ..errors import Refused
from . import events as ev
from .events import Side
from .notices import Alert
from .state import Game


class Tournament(msgspec.Struct):
    """An event in the USPA sense (a tournament), as ``event.setup`` gives it."""

    id: str
    cls: str = msgspec.field(name="class")
    handicap: int
    teams: list[str]
    completed: bool
    eliminated: list[str] = msgspec.field(default_factory=list)
    rules: ev.Rules = msgspec.field(default_factory=ev.Rules)
    name: str | None = None  # what displays call it; None: its id
    team_handicap_min: int | None = None   # the limits of a side's starters' handicaps, summed
    team_handicap_max: int | None = None
    handicap_matrix: list[ev.MatrixRow] | None = None  # A5: goals per goal of difference, by periods
    timezone: str | None = None  # an IANA name: the public pages write the event's times in it
    private: bool = False        # not shown on the public pages


def known_zone(name: str) -> bool:
    """Whether ``name`` is a time zone the IANA zone database knows ("America/Chicago")."""
    try:
        zoneinfo.ZoneInfo(name)
    except (ValueError, OSError, zoneinfo.ZoneInfoNotFoundError):  # a path, a folder, no such zone
        return False
    return True


def team_handicap(handicaps: list[int | None], low: int | None, high: int | None, *, cause: str,
                  at: int, game: str, side: Side) -> Alert | None:
    """A3: a side's starters' handicaps (None: not registered) against the event's team limits:
    the alert to raise at the set-up, or None when the side is within them."""
    known = [h for h in handicaps if h is not None]
    total, unknown = sum(known), len(handicaps) - len(known)
    limits = f"{'' if low is None else low}–{'' if high is None else high}"
    at_set_up: dict[str, Any] = dict(cause=cause, at=at, game=game, clause="A3", side=side)
    if high is not None and total > high:  # over, whatever the unregistered ones add
        return Alert(code="team_handicap_over", detail=f"{total} goals (limits {limits})", **at_set_up)
    if unknown:
        return Alert(code="team_handicap_unknown", detail=f"{unknown} of {len(handicaps)} starters",
                     **at_set_up)
    if low is not None and total < low:
        return Alert(code="team_handicap_under", detail=f"{total} goals (limits {limits})", **at_set_up)
    return None


def work_out(rate: float, home: list[int | None], away: list[int | None]
             ) -> tuple[ev.HandicapGoals, ev.WorkedOut] | str:
    """A5: the goals on handicap the matrix gives (``rate`` goals per goal of difference, to the
    side with the lower team handicap), from each side's starters' registered handicaps; or why
    they can't be worked out."""
    missing = sum(h is None for h in [*home, *away])
    if missing:
        return f"{missing} starter(s) with no registered handicap"
    h, a = sum(x or 0 for x in home), sum(x or 0 for x in away)
    given = abs(h - a) * rate
    goals = ev.HandicapGoals(home=given if h < a else 0.0, away=given if a < h else 0.0)
    return goals, ev.WorkedOut(home_handicap=h, away_handicap=a, goals_per_goal=rate)


class Tournaments:
    def __init__(self, by_id: dict[str, Tournament] | None = None) -> None:
        self.by_id: dict[str, Tournament] = {} if by_id is None else by_id

    # ------------------------------------------------------------- changes

    def setup(self, e: ev.EventSetup) -> None:
        if e.event in self.by_id:
            raise Refused("duplicate_event", f"event {e.event!r} is already set up", "L1")
        low, high = e.team_handicap_min, e.team_handicap_max
        periods = [r.periods for r in e.handicap_matrix or ()]
        if len(set(periods)) != len(periods):
            raise Refused("bad_matrix", "the handicap matrix lists a number of periods twice", "A5")
        if low is not None and high is not None and low > high:
            raise Refused("bad_limits", f"a team handicap of at least {low} and at most {high} "
                          "admits no team", "A3")
        if e.timezone is not None and not known_zone(e.timezone):
            raise Refused("bad_timezone", f"{e.timezone!r} is not a time zone the zone database knows: "
                          'give an IANA name such as "America/Chicago"', "L1")
        self.by_id[e.event] = Tournament(e.event, e.cls, e.handicap, list(e.teams), e.completed, [],
                                         e.rules, e.name, e.team_handicap_min, e.team_handicap_max,
                                         list(e.handicap_matrix) if e.handicap_matrix is not None else None,
                                         e.timezone, e.private)

    def check_enter(self, event: str) -> Tournament:
        """The event a registration may enter a team in; ``Refused`` if none may."""
        t = self.get(event)
        if t.completed:
            raise Refused("event_completed", f"event {event!r} is completed: no team enters it now", "L2")
        return t

    def enter(self, event: str, team: str) -> None:
        """A registration enters ``team`` in ``event`` (nothing changes if it is entered)."""
        t = self.check_enter(event)
        if team not in t.teams:
            t.teams.append(team)

    def complete(self, e: ev.EventComplete) -> None:
        self.get(e.event).completed = True

    def eliminate(self, e: ev.TeamEliminated) -> None:
        t = self.get(e.event)
        if e.team not in t.teams:
            raise Refused("unknown_team", f"team {e.team!r} is not entered in event {e.event!r}", "R15")
        if e.team in t.eliminated:
            raise Refused("already_eliminated", f"team {e.team!r} is already out of {e.event!r}", "R15")
        t.eliminated.append(e.team)

    # ------------------------------------------------------------- reading

    def get(self, event: str) -> Tournament:
        t = self.by_id.get(event)
        if t is None:
            raise Refused("unknown_event", f"no event {event!r} has been set up", "L1")
        return t

    def rules_for(self, e: ev.GameSetup) -> ev.Rules:
        """The rules a game plays under: its event's. R16 depends on the event's
        class, so a game naming an event never set up must say it is a Club game."""
        t = self.by_id.get(e.event)
        if t is None and e.cls is None:
            raise Refused("unknown_event", f"no event {e.event!r} has been set up; a Club game "
                          'without one says "class": "club"', "R16")
        if t is not None and e.cls is not None and e.cls != t.cls:
            raise Refused("class_mismatch", f"event {e.event!r} is a {t.cls} event", "R16")
        return t.rules if t is not None else ev.Rules()

    def name_of(self, event: str) -> str | None:
        """What displays call the event (None: not set up, or set up with no name)."""
        t = self.by_id.get(event)
        return None if t is None else t.name

    def team_limits(self, event: str) -> tuple[int | None, int | None] | None:
        """The event's team handicap limits (None: the event sets none, or is not set up)."""
        t = self.by_id.get(event)
        if t is None or (t.team_handicap_min is None and t.team_handicap_max is None):
            return None
        return t.team_handicap_min, t.team_handicap_max

    def matrix_rate(self, event: str, periods: int) -> float | None:
        """A5: the goals on handicap per goal of difference for a game of ``periods`` periods
        in ``event`` (None: the event has no matrix, or it has no row for that many periods)."""
        t = self.by_id.get(event)
        row = next((r for r in t.handicap_matrix or () if r.periods == periods), None) if t else None
        return None if row is None else row.goals_per_goal

    def has_matrix(self, event: str) -> bool:
        t = self.by_id.get(event)
        return t is not None and t.handicap_matrix is not None

    def event_class(self, event: str) -> str:
        t = self.by_id.get(event)
        return t.cls if t is not None else "club"

    def no_further_event(self, team: str, handicap: int) -> bool:
        """R15: the team is entered, and still taking part, in no uncompleted event
        of equal or higher handicap."""
        for t in self.by_id.values():  # a loop, not any(): called for every game that ends
            if not t.completed and team in t.teams and t.handicap >= handicap and team not in t.eliminated:
                return False
        return True

    def any_team(self, g: Game) -> dict[str, bool]:
        """R15 for each side of ``g``, judged now."""
        return {side: self.no_further_event(g.team(side).team, g.handicap)
                for side in ("home", "away")}
