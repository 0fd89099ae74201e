"""The fold's read-only face: what the shell may ask of ``Engine``, which it never
reaches into. ``Engine`` is a ``Face``; nothing here changes anything.

Here are the fold's queries: a game's view, the whole state and its hash, the next
deadline, a game's events and set-up notices, the ledger, the draws, the rosters, the names a
notice's text uses and the order of play's expected times (``timing``). What applies an
event is ``engine``'s and ``season``'s (whose previews say what a game would take, through
the set-up's own checks).
"""

from __future__ import annotations

import hashlib

import msgspec

from ..errors import Refused
from . import deadlines as dl
from . import draw as dr
from . import events as ev
from . import ledger as lg
from . import text as tx
from .book import Book
from .names import Along, Names, RosterNames, Words
from .notices import Notice, Text
from .records import GameRecord
from .rosters import GameRoster, PlayerEntry, Registry, TeamEntry, involves, player_events, team_events
from .schedule import ScheduleEntry, Schedules
from .timing import GameTimes, Planned, expected_times
from .tournaments import Tournament, Tournaments
from .view import GameView, game_view


class EngineState(msgspec.Struct):
    """The whole state as one document (``arena-stream replay --state``)."""

    events: dict[str, Tournament]
    games: dict[str, GameView]
    ledger: dict[str, list[lg.Obligation]]
    teams: dict[str, list[TeamEntry]] = {}
    players: dict[str, list[PlayerEntry]] = {}
    schedules: dict[str, list[ScheduleEntry]] = {}
    draws: dict[str, ev.DrawMade] = {}  # each event's draw (L3), as last made


class Face:
    games: dict[str, GameRecord]
    tournaments: Tournaments
    book: Book
    registry: Registry
    schedules: Schedules
    draws: dict[str, ev.DrawMade]
    owner: dict[str, str | None]
    voided: set[str]

    def has_game(self, game: str) -> bool:
        return game in self.games

    def has_event(self, event: str) -> bool:  # a tournament event, set up
        return event in self.tournaments.by_id

    def game_ids(self) -> list[str]:
        return list(self.games)

    def arena_of(self, game: str) -> str | None:
        """The arena (venue) a game is played in; None if there is no such game."""
        rec = self.games.get(game)
        return None if rec is None else rec.game.arena

    def status_of(self, game: str) -> str | None:
        rec = self.games.get(game)
        return None if rec is None else rec.game.status

    def knows(self, event_id: str) -> bool:
        """Whether ``event_id`` is an accepted event of the log (voided ones are not)."""
        return event_id in self.owner

    def game_of(self, event_id: str) -> str | None:
        """The game an accepted event belongs to (None: not a game's, or not accepted)."""
        return self.owner.get(event_id)

    def logged_under(self, e: ev.Event) -> str | None:
        """The game the log keeps ``e`` under, judged before it is applied (None: not a
        game's): a game's event (its set-up included) is its game's; a void is its target's
        game's, or, once applied, its own (a void that removed its target names that game
        no more). The live service (``Hub``) and ``arena-stream import`` both ask this, so
        an imported record is filed exactly where the service would have filed it."""
        if isinstance(e, ev.GameEventBase):
            return e.game
        if isinstance(e, ev.Void):
            return self.owner.get(e.target) or self.owner.get(e.id)
        return None

    def event_type_of(self, event_id: str) -> str | None:
        """The ``type`` of an accepted game event, as the log has it."""
        gid = self.owner.get(event_id)
        if gid is None:
            return None
        return next((ev.event_type(x) for x in self.games[gid].events if x.id == event_id), None)

    def is_voided(self, event_id: str) -> bool:
        return event_id in self.voided

    def event_count(self) -> int:  # accepted events folded (voids included, their targets not)
        return len(self.owner)

    def obligations(self, player: str) -> list[lg.Obligation]:
        return self.book.of(player)

    def all_obligations(self, *, status: str | None = None, origin_game: str | None = None
                        ) -> list[lg.Obligation]:
        """Every obligation of the ledger, by player, optionally of one status or origin game."""
        return self.book.all(status=status, origin_game=origin_game)

    def event_of(self, game: str) -> str | None:
        """The tournament event a game belongs to; None if there is no such game."""
        rec = self.games.get(game)
        return None if rec is None else rec.game.event

    def tournament(self, event: str) -> Tournament | None:
        return self.tournaments.by_id.get(event)

    def private(self, event: str) -> bool:
        """Whether the committee keeps ``event`` off the public pages (``event.setup``'s ``private``)."""
        t = self.tournaments.by_id.get(event)
        return t is not None and t.private

    def tournaments_all(self) -> list[Tournament]:
        return [self.tournaments.by_id[k] for k in sorted(self.tournaments.by_id)]

    def obligation(self, oid: str) -> lg.Obligation | None:
        """The obligation of the ledger with this id, rescinded ones included."""
        return next((o for os in self.book.ledger.values() for o in os if o.id == oid), None)

    def obligation_event(self, oid: str) -> str | None:
        """The tournament event of an obligation's origin game, rescinded ones included (even
        once a correction has taken a rescinded one out); None if there is no such obligation."""
        o = self.obligation(oid)
        return self.book.withdrawn.get(oid) if o is None else o.origin_event

    # ------------------------------------------------------- a game, the whole state

    def view(self, game: str) -> GameView:
        rec = self._record(game)
        return game_view(rec.game, rec.now)

    def state_hash(self) -> str:
        """SHA-256 of the state document, keys sorted: equal states, equal hashes.
        A live service and a fresh replay of its log must agree on it."""
        return hashlib.sha256(msgspec.json.encode(self.state(), order="sorted")).hexdigest()

    def state(self) -> EngineState:
        ledger = self.book.ledger
        return EngineState(
            events=dict(self.tournaments.by_id),
            games={gid: game_view(r.game, r.now) for gid, r in self.games.items()},
            ledger={p: list(ledger[p]) for p in sorted(ledger) if ledger[p]},
            teams=self.registry.teams.by_id, players=self.registry.players.by_id,
            schedules=self.schedules.by_game,
            draws=dict(sorted(self.draws.items())),
        )

    def next_deadline(self) -> tuple[int, str] | None:
        """The earliest moment, and its game, at which time passing alone would
        bring a notice: the live shell sets its one timer for it."""
        best: tuple[int, str] | None = None
        for gid, rec in self.games.items():
            if rec.game.status != "ended" and rec.game.pending:
                t = dl.next_deadline(rec.game, rec.now)
                if t is not None and (best is None or t < best[0]):
                    best = (t, gid)
        return best

    def setup_notices(self, game: str) -> list[Notice]:  # what its set-up said (its first delta)
        return list(self._record(game).setup_notices)

    def game_events(self, game: str) -> list[ev.EventBase]:
        """The game's accepted, unvoided events in fold order (after its setup)."""
        return list(self._record(game).events)

    # ------------------------------------------------------------ the order of play

    def expected_times(self, now: int, *, event: str | None = None, arena: str | None = None
                       ) -> list[GameTimes]:
        """Register A35: when each game was planned to start and is expected to start and end, at
        ``now``; the games of ``event`` and/or ``arena`` (None: any), arena by arena in planned
        order. An arena's times count every game on it, whatever its event."""
        by_arena: dict[str, list[Planned]] = {}
        for gid, rec in self.games.items():
            g, sched = rec.game, self.schedules.current(gid)
            by_arena.setdefault(g.arena, []).append(Planned(
                game=gid, event=g.event, arena=g.arena, starts_at=None if sched is None else sched.starts_at,
                status=g.status, began_at=g.began_at, ended_at=g.ended_at, periods=g.periods,
                period_ms=g.period_ms, interval_ms=g.interval_ms, long_interval_ms=g.long_interval_ms,
                clock=g.clock if g.status == "live" else None))
        return [t for a in sorted(by_arena) if arena in (None, a)
                if event is None or any(p.event == event for p in by_arena[a])
                for t in expected_times(by_arena[a], now) if event in (None, t.event)]

    # ------------------------------------------------------------ the draw (L3)

    def draw(self, event: str) -> dr.Bracket | None:
        """The event's draw as it stands (None: not drawn), its proposals with their texts."""
        b = self._bracket(event)
        if b is None:
            return None
        words = Words(self.names(), None)
        for p in b.proposals:
            p.text = tx.proposal(p, words.team(p.team or ""), self.game_named(p.game or ""),
                                 self.event_named(p.subsidiary or ""))
        return b

    def _bracket(self, event: str) -> dr.Bracket | None:
        d = self.draws.get(event)
        if d is None:
            return None
        games = self.games
        return dr.bracket(d, self.tournaments.get(event), lambda g: r.game if (r := games.get(g)) else None)

    def brackets(self) -> dict[str, dr.Bracket]:
        """Every draw as it stands (what the rules hold a game's set-up to; no texts)."""
        return {e: b for e in self.draws if (b := self._bracket(e)) is not None}

    def event_named(self, event: str) -> str:
        """An event as displays name it: its ``event.setup``'s name, else its id."""
        return self.tournaments.name_of(event) or event

    def game_named(self, game: str) -> Text:
        """A game as people name it, in English and Spanish: by its teams' registered names,
        and its round where it is a game of a draw ("Aiken Arena v Wellington Blue
        (semi-final)"); by its id where neither team is registered."""
        words = Words(self.names(), None)
        en, es = words.game_name(game), words.game_name_es(game)
        d = self.draws.get(self.event_of(game) or "")
        g = None if d is None else dr.place(d, game)
        if g is None:
            return Text(en, es)
        r_en, r_es = tx.draw_round(g.name, g.bracket == "consolation")
        return Text(f"{en} ({r_en})", f"{es} ({r_es})")

    # ------------------------------------------------------------ rosters (L2)

    def team(self, team: str) -> TeamEntry | None:
        """The team's current registration."""
        return self.registry.teams.current(team)

    def player(self, player: str) -> PlayerEntry | None:
        return self.registry.players.current(player)

    def teams(self) -> list[TeamEntry]:
        by_id = self.registry.teams.by_id
        return [by_id[k][-1] for k in sorted(by_id)]

    def players(self) -> list[PlayerEntry]:
        by_id = self.registry.players.by_id
        return [by_id[k][-1] for k in sorted(by_id)]

    def team_history(self, team: str) -> list[TeamEntry]:
        """Every revision of the team's registration, oldest first."""
        return list(self.registry.teams.by_id.get(team, []))

    def player_history(self, player: str) -> list[PlayerEntry]:
        return list(self.registry.players.by_id.get(player, []))

    def team_events(self, team: str) -> frozenset[str]:
        """The tournament events a team is of: entered in, or playing a game of (``rosters``)."""
        return team_events(team, self.tournaments.by_id.values(), (r.game for r in self.games.values()))

    def player_events(self, player: str) -> frozenset[str]:
        """The tournament events a player is of: their current team's, and those of every game
        whose team sheets list them (``rosters``)."""
        current = self.registry.players.current(player)
        return player_events(player, None if current is None else current.team,
                             self.tournaments.by_id.values(), (r.game for r in self.games.values()))

    def names(self) -> Names:
        """The roster as it stands now, to render the notices of the event just folded
        (``text.render``)."""
        return RosterNames(self.registry, self.games)

    def names_along(self, game: str) -> Along:
        """The roster as of each event of ``game``, for a fold of it again (``fork_game``)."""
        return Along(self.registry, self.games, self.owner.items(), game)

    def check_registration(self, e: ev.TeamRegistered | ev.PlayerRegistered) -> None:
        """``Refused`` as applying ``e`` would be (a CSV import checks every row first);
        changes nothing."""
        if isinstance(e, ev.TeamRegistered):
            self.registry.check_team(e)
            if e.event is not None:
                self.tournaments.check_enter(e.event)
        else:
            self.registry.players.check("player", e.player, e.revision)

    def roster(self, game: str) -> GameRoster:
        """What the game's displays name (``Refused`` ``unknown_game``)."""
        g = self._record(game).game
        return self.registry.roster(g, self.tournaments.name_of(g.event), self.schedules.current(game))

    def rosters_of(self, key: str) -> list[str]:
        """The games whose roster a registration of ``key`` (a team or player id) changes."""
        return [gid for gid, r in self.games.items() if involves(r.game, key)]

    def games_of_event(self, event: str) -> list[str]:
        """The games of a tournament event (whose roster its ``event.setup`` names)."""
        return [gid for gid, r in self.games.items() if r.game.event == event]

    def _record(self, game: str) -> GameRecord:
        rec = self.games.get(game)
        if rec is None:
            raise Refused("unknown_game", f"no game {game!r} has been set up", "L1")
        return rec
