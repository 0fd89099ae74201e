"""Who a notice's text names: players and teams as the roster registers them at that point
of the log (L2), for ``text.render``.

House rules
-----------
* A notice's fields keep their ids; only its ``text`` names people. A player is
  "#4 José Díaz (Aiken Arena)": the shirt number if registered, the name, and the
  registered name of the team he plays for in the notice's game. A team is its
  registered name. Whatever is not registered is shown by id, exactly as before
  registrations existed, so a log without them reads as it always did.
* The names are those of the roster just after the event that raised the notice: the
  live service renders each notice once, right after its event is folded
  (``Face.names``); a fold of one game again (``Engine.fork_game``: a viewer's resume
  after a restart, the game report) asks ``Along`` for the names as of each event of
  that game, so that a later rename changes later texts and never earlier ones.
* Nothing here changes the fold: a ``Names`` only reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from .records import GameRecord
from .rosters import E, PlayerEntry, Registry, Revisions, TeamEntry

__all__ = ["NO_NAMES", "Along", "Names", "RosterNames", "shirt"]


class Names(Protocol):
    """What ``text.render`` asks; None: not registered (the text shows the id)."""

    def player(self, player: str) -> PlayerEntry | None: ...

    def team(self, team: str) -> TeamEntry | None: ...

    def team_of(self, game: str | None, side: str) -> str | None:
        """The id of the team playing ``side`` in ``game``."""
        ...

    def side_of(self, game: str | None, player: str) -> str | None:
        """The side ``player`` is on in ``game``'s team sheets."""
        ...


class _NoNames:
    """Every id as it is (no roster at hand)."""

    def player(self, player: str) -> PlayerEntry | None:
        return None

    def team(self, team: str) -> TeamEntry | None:
        return None

    def team_of(self, game: str | None, side: str) -> str | None:
        return None

    def side_of(self, game: str | None, player: str) -> str | None:
        return None


NO_NAMES: Names = _NoNames()


def shirt(p: PlayerEntry) -> str:
    """A registered player as every display shows him: ``"#2 Ortega"``, or ``"Ortega"``."""
    return p.name if p.number is None else f"#{p.number} {p.name}"


class RosterNames:
    """The names of ``registry`` (every revision for which ``shown`` holds, the latest
    of them; all of them if ``shown`` is None), the sides of ``games``."""

    def __init__(self, registry: Registry, games: Mapping[str, GameRecord],
                 shown: Callable[[str], bool] | None = None) -> None:
        self._registry, self._games, self._shown = registry, games, shown

    def _latest(self, revs: Revisions[E], key: str) -> E | None:
        if self._shown is None:
            return revs.current(key)
        return next((r for r in reversed(revs.by_id.get(key, ())) if self._shown(r.cause)), None)

    def player(self, player: str) -> PlayerEntry | None:
        return self._latest(self._registry.players, player)

    def team(self, team: str) -> TeamEntry | None:
        return self._latest(self._registry.teams, team)

    def team_of(self, game: str | None, side: str) -> str | None:
        rec = self._games.get(game) if game is not None else None
        return None if rec is None else rec.game.team("home" if side == "home" else "away").team

    def side_of(self, game: str | None, player: str) -> str | None:
        rec = self._games.get(game) if game is not None else None
        p = None if rec is None else rec.game.players.get(player)
        return None if p is None else p.side


class Along:
    """The names as of each event of one game, folded again: ``at(event_id)`` is the
    roster just after that event, in the order of ``log`` (every accepted event id of
    the log and its game, in log order: ``Engine.owner``)."""

    def __init__(self, registry: Registry, games: Mapping[str, GameRecord],
                 log: Iterable[tuple[str, str | None]], game: str) -> None:
        self._registry, self._games = registry, games
        # Registrations are no game's; only this game's events are ever asked about.
        self._pos = {eid: i for i, (eid, g) in enumerate(log) if g is None or g == game}
        self._last = -1

    def at(self, event_id: str) -> Names:
        # An event the log holds no more (a voided one) reads as the one before it did.
        now = self._last = self._pos.get(event_id, self._last)
        pos = self._pos
        return RosterNames(self._registry, self._games, lambda cause: pos.get(cause, now + 1) <= now)


_SIDE_ES = {"home": "local", "away": "visitante"}


class Words:
    """How a notice of ``game`` names its players and teams, in English and Spanish,
    from ``names``; each falls back to the id (and "home"/"local") as texts read before
    rosters were registered."""

    def __init__(self, names: Names, game: str | None) -> None:
        self.names, self.game = names, game

    def _team_name(self, team: str | None) -> str | None:
        t = None if team is None else self.names.team(team)
        return None if t is None else t.name

    def team(self, team: str) -> str:
        """A team by id: its registered name."""
        return self._team_name(team) or team

    def side(self, side: str) -> str:
        """A side of the game: its team's registered name, or "home"/"away"."""
        return self._team_name(self.names.team_of(self.game, side)) or side

    def side_es(self, side: str) -> str:
        return self._team_name(self.names.team_of(self.game, side)) or _SIDE_ES.get(side, side)

    def de(self, side: str) -> str:
        """Spanish "of" a side: "del local", "de Aiken Arena"."""
        name = self._team_name(self.names.team_of(self.game, side))
        return f"de {name}" if name else f"del {_SIDE_ES.get(side, side)}"

    def el(self, side: str, cap: bool = False) -> str:
        """Spanish for a side as a subject: "el local" ("El local"), "Aiken Arena"."""
        name = self._team_name(self.names.team_of(self.game, side))
        return name or f"{'E' if cap else 'e'}l {_SIDE_ES.get(side, side)}"

    def game_name(self, game: str) -> str:
        """A game as people name it, by its teams' registered names: "Aiken Arena v
        Wellington Blue" (a team not registered by its id); its id where neither is."""
        return self._game(game, "v")

    def game_name_es(self, game: str) -> str:
        return self._game(game, "contra")

    def _game(self, game: str, v: str) -> str:
        teams = [self.names.team_of(game, side) for side in ("home", "away")]
        shown = [self._team_name(t) for t in teams]
        if not any(shown):
            return game
        return f" {v} ".join(name or team or "" for name, team in zip(shown, teams, strict=True))

    def p(self, player: str) -> str:
        """A player alone (his team said already): "#4 José Díaz", or the id."""
        entry = self.names.player(player)
        return player if entry is None else shirt(entry)

    def who(self, player: str, side: str | None) -> str:
        """A player and his side: "#4 José Díaz (Aiken Arena)", "jdiaz (home)"."""
        return self.named(player) if side is None else f"{self.p(player)} ({self.side(side)})"

    def who_es(self, player: str, side: str | None) -> str:
        return self.named(player) if side is None else f"{self.p(player)} ({self.side_es(side)})"

    def named(self, player: str) -> str:
        """A player where no side is said: "#4 José Díaz (Aiken Arena)" (the team he plays
        for in this game, else the one he is registered with), or the id."""
        entry = self.names.player(player)
        if entry is None:
            return player
        side = self.names.side_of(self.game, player)
        team = self._team_name(self.names.team_of(self.game, side) if side else entry.team)
        return shirt(entry) if team is None else f"{shirt(entry)} ({team})"
