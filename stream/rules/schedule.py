"""The order of play: when each game is due to start and who officiates it, by name.

House rules
-----------
* A game's schedule comes from its ``game.setup`` (``starts_at``, ``officials``) and
  from each later ``game.scheduled``, which replaces it whole: the order of play at any
  point of the log is the fold of the schedules before it.
* Every revision is kept, in log order (the first is 1), like a registration's.
* A schedule changes no game's state and no obligation: it is names and a time. A game
  played earlier or later than scheduled is played all the same.
* ``game.scheduled`` names a game already set up (``unknown_game`` otherwise).
"""

from __future__ import annotations

import msgspec

from . import events as ev


class ScheduleEntry(msgspec.Struct, kw_only=True):
    """One revision of a game's schedule."""

    game: str
    starts_at: int | None
    officials: ev.Officials
    revision: int
    at: int
    cause: str           # the id of the game.setup or game.scheduled that set it


class Schedules:
    """Every game's schedule revisions, by game, oldest first."""

    def __init__(self, by_game: dict[str, list[ScheduleEntry]] | None = None) -> None:
        self.by_game: dict[str, list[ScheduleEntry]] = {} if by_game is None else by_game

    def current(self, game: str) -> ScheduleEntry | None:
        revs = self.by_game.get(game)
        return revs[-1] if revs else None

    def set_up(self, e: ev.GameSetup) -> None:
        """A set-up's schedule, if it gives one (its first revision)."""
        if e.starts_at is not None or e.officials is not None:
            self._add(e.game, e.starts_at, e.officials or ev.Officials(), e.at, e.id)

    def schedule(self, e: ev.GameScheduled) -> None:
        self._add(e.game, e.starts_at, e.officials, e.at, e.id)

    def _add(self, game: str, starts_at: int | None, officials: ev.Officials, at: int, cause: str) -> None:
        revs = self.by_game.setdefault(game, [])
        revs.append(ScheduleEntry(game=game, starts_at=starts_at, officials=officials,
                                  revision=len(revs) + 1, at=at, cause=cause))
