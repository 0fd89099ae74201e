"""Who the displays name: teams and players as registered in the log (L2).

House rules
-----------
* A registration is an event like any other (``team.registered``,
  ``player.registered``): the roster at any point of the log is the fold of
  the registrations before it, so a replay or a resume shows what was shown.
* Each registration of an id is its next revision (the first is 1); every
  revision is kept, in log order. A later one changes the displays from that
  point on and never rewrites an earlier one.
* A registration made from revision ``n`` (its ``revision`` field) is refused,
  with nothing changed, if the id's current revision is not ``n``: two members
  of a committee editing one team at once never lose an update; the second is
  told what changed since the revision it had.
* Registrations change no game's state and no obligation: they are names.

A game's roster (``GameRoster``) is what its displays need: both teams'
current registrations and those of every player of its team sheets.

Which tournament events a registration is of (who may change it: docs/security.md)
----------------------------------------------------------------------------------
* A team is of the events it is entered in (``event.setup``'s ``teams``, a
  ``team.registered`` naming an ``event``) and of the events of the games it
  plays (a Club game's event need not be set up): ``team_events``.
* A player is of the events of their current team and of the events of every
  game whose team sheets list them: ``player_events``.
* Either may be of no event (registered, entered nowhere yet): any committee's
  to enter in its own event.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic, TypeVar

import msgspec

from ..errors import Refused
from . import events as ev
from .notices import Notice
from .schedule import ScheduleEntry
from .state import Game
from .tournaments import Tournament

__all__ = ["GameRoster", "PlayerEntry", "Registry", "TeamEntry", "player_events", "team_events"]


class TeamEntry(msgspec.Struct, kw_only=True):
    """One revision of a team's registration."""

    team: str
    name: str
    short: str
    colors: ev.Colors
    logo: str | None
    revision: int
    at: int
    cause: str           # the id of the registration event


class PlayerEntry(msgspec.Struct, kw_only=True):
    """One revision of a player's registration."""

    player: str
    name: str
    number: int | None
    handicap: int | None
    team: str | None
    revision: int
    at: int
    cause: str


class GameRoster(msgspec.Struct, kw_only=True):
    """What a game's displays name: its teams, every player of its team sheets
    who is registered (a player not in ``players`` is shown by id), and its
    tournament event's name (None: show the event's id)."""

    game: str
    home: TeamEntry | None
    away: TeamEntry | None
    players: dict[str, PlayerEntry]
    event_name: str | None = None
    # By side, the colours a team wears in this game instead of its registered ones
    # (the game's set-up chose them for a kit clash); a side not in it wears its own.
    kits: dict[str, ev.Colors] = msgspec.field(default_factory=dict)
    # The game's place in the order of play: its start time and officials by name (None: none given).
    schedule: ScheduleEntry | None = None


E = TypeVar("E", TeamEntry, PlayerEntry)

#: The fields a registration shows, by kind: what "what changed" compares.
_SHOWN = {TeamEntry: ("name", "short", "colors", "logo"),
          PlayerEntry: ("name", "number", "handicap", "team")}


def _shown(value: object) -> str:
    if isinstance(value, ev.Colors):
        return f"{value.primary}/{value.secondary}"
    return "none" if value is None else repr(value)


class Revisions(Generic[E]):
    """Every revision of one kind of registration, by id, oldest first."""

    def __init__(self, by_id: dict[str, list[E]] | None = None) -> None:
        self.by_id: dict[str, list[E]] = {} if by_id is None else by_id

    def current(self, key: str) -> E | None:
        revs = self.by_id.get(key)
        return revs[-1] if revs else None

    def check(self, kind: str, key: str, made_from: int | None) -> int:
        """The next revision of ``key``; ``Refused`` if the sender's is stale."""
        revs = self.by_id.get(key, [])
        now = len(revs)
        if made_from is not None and made_from != now:
            if made_from > now:
                detail = (f"{kind} {key!r} has no revision {made_from}: "
                          + (f"it is at revision {now}" if now else "it is not registered yet"))
            elif made_from == 0:
                detail = (f"{kind} {key!r} is already registered (revision {now}): "
                          + _describe(revs[-1]))
            else:
                had, cur = revs[made_from - 1], revs[-1]
                changed = [f"{f} {_shown(getattr(had, f))} → {_shown(getattr(cur, f))}"
                           for f in _SHOWN[type(cur)] if getattr(had, f) != getattr(cur, f)]
                detail = (f"{kind} {key!r} was registered again since revision {made_from} "
                          f"(now revision {now}): " + ("; ".join(changed) or "nothing shown changed"))
            raise Refused("stale_registration", detail, "L2")
        return now + 1

    def add(self, key: str, entry: E) -> None:
        self.by_id.setdefault(key, []).append(entry)


def _describe(e: TeamEntry | PlayerEntry) -> str:
    return "; ".join(f"{f} {_shown(getattr(e, f))}" for f in _SHOWN[type(e)])


class Registry:
    """The teams and players registered so far (see the module's house rules)."""

    def __init__(self, teams: dict[str, list[TeamEntry]] | None = None,
                 players: dict[str, list[PlayerEntry]] | None = None) -> None:
        self.teams: Revisions[TeamEntry] = Revisions(teams)
        self.players: Revisions[PlayerEntry] = Revisions(players)

    # ------------------------------------------------------------- changes

    def check_team(self, e: ev.TeamRegistered) -> int:
        """The revision ``e`` would make, or ``Refused``; changes nothing."""
        return self.teams.check("team", e.team, e.revision)

    def register_team(self, e: ev.TeamRegistered, revision: int) -> None:
        self.teams.add(e.team, TeamEntry(team=e.team, name=e.name, short=e.short, colors=e.colors,
                                         logo=e.logo, revision=revision, at=e.at, cause=e.id))

    def register_player(self, e: ev.PlayerRegistered) -> list[Notice]:
        revision = self.players.check("player", e.player, e.revision)  # raises before any change
        self.players.add(e.player, PlayerEntry(
            player=e.player, name=e.name, number=e.number, handicap=e.handicap, team=e.team,
            revision=revision, at=e.at, cause=e.id))
        return []

    # ------------------------------------------------------------- reading

    def roster(self, g: Game, event_name: str | None = None,
               schedule: ScheduleEntry | None = None) -> GameRoster:
        # Every player of its team sheets (``g.players`` keeps sheet order).
        players = {pid: p for pid in g.players if (p := self.players.current(pid)) is not None}
        return GameRoster(game=g.id, home=self.teams.current(g.home.team),
                          away=self.teams.current(g.away.team), players=players,
                          event_name=event_name,
                          kits={side: t.kit for side, t in (("home", g.home), ("away", g.away))
                                if t.kit is not None},
                          schedule=schedule)


def involves(g: Game, key: str) -> bool:
    """Whether a registration of ``key`` (a team or a player id) changes ``g``'s roster."""
    return key in (g.home.team, g.away.team) or key in g.players


def team_events(team: str, tournaments: Iterable[Tournament], games: Iterable[Game]) -> frozenset[str]:
    """The tournament events ``team`` is of: those it is entered in, and those of its games."""
    entered = {t.id for t in tournaments if team in t.teams}
    return frozenset(entered | {g.event for g in games if team in (g.home.team, g.away.team)})


def player_events(player: str, team: str | None, tournaments: Iterable[Tournament],
                  games: Iterable[Game]) -> frozenset[str]:
    """The tournament events ``player`` (now on ``team``, if any) is of: the team's, and those
    of every game whose team sheets list the player."""
    games = list(games)
    of_team = team_events(team, tournaments, games) if team is not None else frozenset()
    return of_team | {g.event for g in games if player in g.players}
