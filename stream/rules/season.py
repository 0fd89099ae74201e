"""What the log says outside any one game's play: a game's set-up and its place in the
order of play, a tournament event's set-up, draw, completion and eliminations (R15),
teams' and players' registrations, and the committee's decisions on obligations.

``Season.TABLE`` says what applies each such event (the engine's ``apply`` looks it
up; a game's own events go through ``game.TRANSITIONS``). Each check comes before
the first change: a refused event changes nothing. ``preview_setup`` and ``preview_game``
run a set-up's checks and plan alone: what a game would take if it began now.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import msgspec

from ..errors import Refused
from . import draw as dr
from . import events as ev
from . import game as gm
from . import ledger as lg
from . import notices as nt
from . import tournaments as tn
from .face import Face
from .records import GameRecord
from .state import Game, goals
from .tournaments import team_handicap

_pack = msgspec.msgpack.Encoder()
_unpack_game = msgspec.msgpack.Decoder(Game)


class Season(Face):
    """The engine's own transitions: the events that are not a game's (``Engine`` is a
    ``Season``)."""

    def _info(self, g: Game) -> lg.GameInfo:
        return lg.GameInfo(g.id, g.handicap, g.kind, self.tournaments.event_class(g.event))

    def _new_game(self, e: ev.GameSetup) -> Game:
        """The game a set-up describes, under its event's rules; refuses what can't be set up."""
        if e.game in self.games:
            raise Refused("duplicate_game", f"game {e.game!r} is already set up", "L1")
        rules = self.tournaments.rules_for(e)
        if self.draws:
            dr.check_setup(e, self.brackets())
        g = gm.new_game(e, rules)
        if e.goals_on_handicap is None and self.tournaments.has_matrix(g.event):
            found = self.worked_out(g)
            if not isinstance(found, str):
                g.on_handicap = gm.on_handicap(e, *found)
        return g

    def worked_out(self, g: Game) -> tuple[ev.HandicapGoals, ev.WorkedOut] | str:
        """A5: the goals on handicap ``g``'s event's matrix gives it from its starters' handicaps
        as registered now; or why none can be worked out."""
        rate = self.tournaments.matrix_rate(g.event, g.periods)
        if rate is None:
            return (f"event {g.event!r} has no handicap matrix" if not self.tournaments.has_matrix(g.event)
                    else f"the handicap matrix has no row for {g.periods} periods")
        current = self.registry.players.current
        home, away = ([p.handicap if (p := current(pid)) else None for pid in g.team(side).lineup]
                      for side in ("home", "away"))
        return tn.work_out(rate, home, away)

    def preview_setup(self, e: ev.GameSetup) -> list[lg.Obligation]:
        """The obligations this game would take if it began now, or ``Refused`` if
        the set-up itself would be refused. Changes nothing."""
        g = self._new_game(e)
        return self.book.plan(g, self._info(g))

    def preview_game(self, game: str) -> list[lg.Obligation]:
        """What a set-up game will take when it begins, as things stand (``Refused``
        ``game_begun`` once it has begun: ``applied_in`` then says what it took)."""
        g = self._record(game).game
        if g.status != "scheduled":
            raise Refused("game_begun", f"game {game!r} has begun: it took its obligations then", "R15")
        return self.book.plan(g, self._info(g))

    def _filled(self, e: ev.GameHandicap) -> ev.GameHandicap:
        """A ``game.handicap`` as its game takes it: the goals worked out where it asks for that
        (A5); ``Refused`` if they can't be."""
        rec = self.games.get(e.game)
        if e.goals is not None or rec is None:
            return e  # as given (or refused as any game event of no game is)
        found = self.worked_out(rec.game)
        if isinstance(found, str):
            raise Refused("not_worked_out", f"goals on handicap can't be worked out: {found}; "
                          "give them", "A5")
        return msgspec.structs.replace(e, goals=found[0], worked=found[1])

    def _game_setup(self, e: ev.GameSetup) -> list[nt.Notice]:
        g = self._new_game(e)
        out: list[nt.Notice] = [nt.GameReady(cause=e.id, at=e.at, game=e.game, clause="A3",
                                             home=e.teams.home.team, away=e.teams.away.team)]
        # What the team sheets mean for what the game would take if it began now:
        # the alerts, on a copy (the game takes its obligations when it begins).
        plan = self.book.plan(g, self._info(g))
        if plan:
            lg.apply_plan(plan, _unpack_game.decode(_pack.encode(g)), e.id, e.at, out)
        limits = self.tournaments.team_limits(g.event)
        for side in ("home", "away"):
            team = g.team(side)
            if len(team.lineup) < 3 and team.bench:
                out.append(nt.Alert(cause=e.id, at=e.at, game=g.id, clause="A3", code="short_lineup",
                                    side=side, detail=f"{len(team.lineup)} starters"))
            if limits is not None:  # the starters' handicaps as registered now, against the event's
                found = team_handicap([p.handicap if (p := self.registry.players.current(pid)) else None
                                       for pid in team.lineup], *limits, cause=e.id, at=e.at, game=g.id,
                                      side=side)
                if found is not None:
                    out.append(found)
        if e.goals_on_handicap is None and g.on_handicap is None and self.tournaments.has_matrix(g.event):
            why = self.worked_out(g)
            out.append(nt.Alert(cause=e.id, at=e.at, game=g.id, clause="A5", code="handicap_goals_unknown",
                                detail=why if isinstance(why, str) else ""))
        elif g.on_handicap is not None:
            h = g.on_handicap
            home, away = g.totals()
            out.append(nt.HandicapSet(cause=e.id, at=e.at, game=g.id, clause="A5", home=home, away=away,
                                      on_home=goals(h.home), on_away=goals(h.away), source=h.source,
                                      home_handicap=h.home_handicap, away_handicap=h.away_handicap))
        self.games[e.game] = GameRecord(g, e.at, out)
        self.schedules.set_up(e)
        return out

    def _game_scheduled(self, e: ev.GameScheduled) -> list[nt.Notice]:
        self._record(e.game)  # a game set up (``unknown_game``), ended or not
        self.schedules.schedule(e)
        return []

    def _event_setup(self, e: ev.EventSetup) -> list[nt.Notice]:
        self.tournaments.setup(e)
        return []

    def _event_complete(self, e: ev.EventComplete) -> list[nt.Notice]:
        self.tournaments.complete(e)
        return self._rejudge_r15(e)

    def _team_eliminated(self, e: ev.TeamEliminated) -> list[nt.Notice]:
        self.tournaments.eliminate(e)
        return self._rejudge_r15(e)

    def _rejudge_r15(self, e: ev.Event) -> list[nt.Notice]:
        """R15 after an event completes or a team is eliminated; games already played never change."""
        no_further = self.tournaments.no_further_event
        for rec in self.games.values():
            if rec.any_team is not None:
                for side in ("home", "away"):
                    if not rec.any_team[side] and no_further(rec.game.team(side).team, rec.game.handicap):
                        rec.any_team[side] = True
        return self.book.rejudge(e, no_further)

    def _draw_made(self, e: ev.DrawMade) -> list[nt.Notice]:
        dr.check_draw(e, self.tournaments.by_id, self.draws.get(e.event), self.has_game)
        self.draws[e.event] = e
        return []

    def _committee_rescind(self, e: ev.CommitteeRescind) -> list[nt.Notice]:
        """The rescind, and an alert to each game set up but not begun whose set-up warned of
        the obligation (an alert naming the player and its origin game): he need not sit out."""
        o = self.book.find(e.obligation)
        planned = [rec.game for rec in self.games.values() if rec.game.status == "scheduled"
                   and any(isinstance(n, nt.Alert) and (n.player, n.origin_game) == (o.player, o.origin_game)
                           for n in rec.setup_notices)]
        out = self.book.rescind(e)  # raises before any change
        for g in planned:
            p = g.players.get(o.player)
            side: ev.Side = p.side if p is not None else ("home" if g.home.team == o.team else "away")
            out.append(nt.Alert(cause=e.id, at=e.at, game=g.id, clause=o.clause, code="no_longer_owed",
                                player=o.player, side=side, origin_game=o.origin_game, owed_ms=o.owed_ms,
                                reason=o.kind))
        return out

    def _committee_increase(self, e: ev.CommitteeIncrease) -> list[nt.Notice]:
        rec = self.games.get(e.origin_game)
        if rec is None or rec.game.status != "ended":
            raise Refused("game_not_over", f"game {e.origin_game!r} has not ended", "R6")
        g = rec.game
        any_team = rec.any_team if rec.any_team is not None else self.tournaments.any_team(g)
        return self.book.increase(e, g, self.tournaments.event_class(g.event), any_team)

    def _team_registered(self, e: ev.TeamRegistered) -> list[nt.Notice]:
        revision = self.registry.check_team(e)  # both checks before any change
        if e.event is not None:
            self.tournaments.enter(e.event, e.team)
        self.registry.register_team(e, revision)
        return []

    #: The events of the season, and what applies each.
    TABLE: ClassVar[dict[type, Callable[[Season, Any], list[nt.Notice]]]] = {
        ev.GameSetup: _game_setup,
        ev.EventSetup: _event_setup,
        ev.EventComplete: _event_complete,
        ev.TeamEliminated: _team_eliminated,
        ev.DrawMade: _draw_made,
        ev.CommitteeIncrease: _committee_increase,
        ev.CommitteeRescind: _committee_rescind,
        ev.CommitteeDecrease: lambda self, e: self.book.decrease(e),
        ev.TeamRegistered: _team_registered,
        ev.PlayerRegistered: lambda self, e: self.registry.register_player(e),
        ev.GameScheduled: _game_scheduled,
    }
