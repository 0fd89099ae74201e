"""The fold: events in, state and notices out.

``Engine`` holds every game and tournament event of one log. Feed it events
one at a time, as the live service does, or a whole log, as ``replay`` does;
both take the same path, so they give the same state and the same notices.

How an event is applied
-----------------------
* Its id must be new (``duplicate_id``), and a game event's game must exist.
* An event at or after its game's time cursor is applied in place: first the
  deadlines that fell due since the cursor (``box.eligible``, ``sub.eligible``,
  an expired mount window), then the event's own transition from
  ``game.TRANSITIONS``.
* An event *earlier* than the cursor is late: it is inserted in time order
  and the game is folded again from its setup. Its own notices are emitted,
  then a ``correction`` listing every display field that changed.
* A ``void`` removes its target and folds the game again the same way.
* A refusal raises ``Refused`` from ``apply`` (``feed`` turns it into a
  ``rejected`` notice); nothing of the event is kept.

Time passes only through events' ``at`` and through ``advance(at)``, which
the live shell calls when ``next_deadline()`` comes round. The cursor is not
part of the state: two engines fed the same events and advanced to the same
moment are equal.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from typing import Any

import msgspec

from ..errors import Refused
from . import events as ev
from . import game as gm
from . import notices as nt
from .state import Game
from .view import GameView, diff, game_view

_pack = msgspec.msgpack.Encoder()
_unpack_game = msgspec.msgpack.Decoder(Game)


CHECKPOINT_EVERY = 32


class GameRecord:
    """One game: its state, its accepted events in time order, and its cursor.

    ``checkpoints[k]`` is the state after the first ``k * CHECKPOINT_EVERY``
    events (``checkpoints[0]`` is the state just after setup), so that a late
    event or a void folds again only the events after the last checkpoint
    before it.
    """

    __slots__ = ("checkpoints", "events", "game", "now", "opened_at", "setup_notices")

    def __init__(self, game: Game, at: int, setup_notices: list[Any] | None = None) -> None:
        self.game = game
        self.setup_notices = setup_notices or []
        self.events: list[Any] = []
        self.now = at
        self.opened_at = at
        self.checkpoints: list[bytes] = [_pack.encode(game)]


class Tournament(msgspec.Struct):
    """An event in the USPA sense (a tournament), as ``event.setup`` gives it."""

    id: str
    cls: str = msgspec.field(name="class")
    handicap: int
    teams: list[str]
    completed: bool


class EngineState(msgspec.Struct):
    """The whole state as one document (``arena-stream replay --state``)."""

    events: dict[str, Tournament]
    games: dict[str, GameView]


class Engine:
    def __init__(self, settings: gm.Settings | None = None) -> None:
        self.settings = settings or gm.Settings()
        self.games: dict[str, GameRecord] = {}
        self.tournaments: dict[str, Tournament] = {}
        # Every accepted event id -> the game it belongs to (None: not a game's).
        self.owner: dict[str, str | None] = {}
        self.voids: set[str] = set()     # ids of accepted voids
        self.voided: set[str] = set()    # ids they removed

    # ------------------------------------------------------------------ input

    def feed(self, e: ev._Event) -> list[Any]:
        """Apply ``e``; a refusal comes back as a ``rejected`` notice."""
        try:
            return self.apply(e)
        except Refused as r:
            return [nt.Rejected(cause=e.id, at=e.at, game=getattr(e, "game", None),
                                clause=r.clause, event_type=ev.event_type(e),
                                reason=r.code, detail=r.detail)]

    def apply(self, e: ev._Event) -> list[Any]:
        """Apply ``e`` and return its notices, or raise ``Refused`` and change nothing."""
        owner = self.owner
        if e.id in owner:
            raise Refused("duplicate_id", f"event id {e.id!r} is already in the log", "L1")
        t = type(e)
        row = gm.TRANSITIONS.get(t)
        if row is not None:
            gid: str = e.game  # type: ignore[attr-defined]
            rec = self.games.get(gid)
            if rec is None:
                raise Refused("unknown_game", f"no game {gid!r} has been set up", "L1")
            if e.at < rec.now:
                out = self._late(rec, e)
            else:
                g = rec.game
                out = []
                if g.pending and g.status != "ended":
                    out = [n for _, n in gm.deadlines(g, rec.now, e.at)]
                if g.status not in row.phases:
                    raise gm.refuse_phase(g, e)
                row.handler(g, e, self.settings, out)  # raises before any change
                events = rec.events
                events.append(e)
                if not len(events) % CHECKPOINT_EVERY:
                    rec.checkpoints.append(_pack.encode(g))
                rec.now = e.at
            owner[e.id] = gid
            return out
        if t is ev.Void:
            return self._void(e)  # type: ignore[arg-type]
        if t is ev.GameSetup:
            return self._game_setup(e)  # type: ignore[arg-type]
        if t is ev.EventSetup:
            return self._event_setup(e)  # type: ignore[arg-type]
        if t is ev.EventComplete:
            return self._event_complete(e)  # type: ignore[arg-type]
        raise Refused("unknown_type", f"no transition for {t.__name__}", "L1")  # pragma: no cover

    def feed_all(self, events: Iterable[ev._Event]) -> list[Any]:
        out: list[Any] = []
        for e in events:
            out.extend(self.feed(e))
        return out

    # ------------------------------------------------------------------- time

    def advance(self, at: int) -> list[Any]:
        """Let time pass to ``at`` with no event: the deadlines that fall due."""
        out: list[Any] = []
        for rec in self.games.values():
            if rec.now < at:
                if rec.game.status != "ended":
                    out.extend(n for _, n in gm.deadlines(rec.game, rec.now, at))
                rec.now = at
        out.sort(key=lambda n: n.at)
        return out

    def next_deadline(self) -> tuple[int, str] | None:
        """The earliest moment, and its game, at which time passing alone would
        bring a notice: the live shell sets its one timer for it."""
        best: tuple[int, str] | None = None
        for gid, rec in self.games.items():
            if rec.game.status != "ended" and rec.game.pending:
                t = gm.next_deadline(rec.game, rec.now)
                if t is not None and (best is None or t < best[0]):
                    best = (t, gid)
        return best

    # ----------------------------------------------------------------- output

    def view(self, game: str) -> GameView:
        rec = self._record(game)
        return game_view(rec.game, rec.now)

    def state(self) -> EngineState:
        return EngineState(
            events=dict(self.tournaments),
            games={gid: game_view(r.game, r.now) for gid, r in self.games.items()},
        )

    def fork_game(self, game: str) -> Engine:
        """A new engine holding only ``game`` as it was just after its setup:
        feeding it the game's logged events again reproduces its notices."""
        rec = self._record(game)
        fork = Engine(self.settings)
        fork.games[game] = GameRecord(_unpack_game.decode(rec.checkpoints[0]), rec.opened_at,
                                      rec.setup_notices)
        return fork

    def game_events(self, game: str) -> list[Any]:
        """The game's accepted, unvoided events in fold order (after its setup)."""
        return list(self._record(game).events)

    # -------------------------------------------------------------- internals

    def _record(self, game: str) -> GameRecord:
        rec = self.games.get(game)
        if rec is None:
            raise Refused("unknown_game", f"no game {game!r} has been set up", "L1")
        return rec

    def _refold(self, rec: GameRecord, events: list[Any], start: int
                ) -> tuple[Game, dict[str, list[Any]], dict[str, Refused], list[bytes]]:
        """Fold a game again from the last checkpoint at or before index ``start``
        (``events[:start]`` must be unchanged): (state, notices by cause,
        refusals by id, checkpoints)."""
        k = min(start // CHECKPOINT_EVERY, len(rec.checkpoints) - 1)
        checkpoints = rec.checkpoints[: k + 1]
        g = _unpack_game.decode(checkpoints[k])
        by_cause: dict[str, list[Any]] = {}
        refused: dict[str, Refused] = {}
        i = k * CHECKPOINT_EVERY
        cursor = events[i - 1].at if i else 0
        for x in events[i:]:
            out: list[Any] = [n for _, n in gm.deadlines(g, cursor, x.at)] if g.status != "ended" else []
            try:
                gm.apply(g, x, self.settings, out)
            except Refused as r:
                refused[x.id] = r
            cursor = max(cursor, x.at)
            for n in out:
                by_cause.setdefault(n.cause, []).append(n)
            i += 1
            if i % CHECKPOINT_EVERY == 0:
                checkpoints.append(_pack.encode(g))
        if g.status != "ended":
            for _, n in gm.deadlines(g, cursor, rec.now):
                by_cause.setdefault(n.cause, []).append(n)
        return g, by_cause, refused, checkpoints

    def _commit_refold(self, rec: GameRecord, events: list[Any], start: int, target: str,
                       reason: str, at: int) -> tuple[dict[str, list[Any]], nt.Correction]:
        before = game_view(rec.game, rec.now)
        g, by_cause, refused, checkpoints = self._refold(rec, events, start)
        if target in refused:
            raise refused[target]
        changes = [nt.Change(k, a, b) for k, a, b in diff(before, game_view(g, rec.now))]
        changes.extend(nt.Change(f"events.{x}.applied", True, False) for x in refused)
        rec.game = g
        rec.events = events
        rec.checkpoints = checkpoints
        corr = nt.Correction(cause=target, at=at, game=g.id, clause="L1", target=target,
                             reason=reason, changes=changes)  # type: ignore[arg-type]
        return by_cause, corr

    def _late(self, rec: GameRecord, e: ev._Event) -> list[Any]:
        i = bisect_right(rec.events, e.at, key=lambda x: x.at)
        events = [*rec.events[:i], e, *rec.events[i:]]
        by_cause, corr = self._commit_refold(rec, events, i, e.id, "late", e.at)
        return [*by_cause.get(e.id, []), corr]

    def _void(self, e: ev.Void) -> list[Any]:
        if e.target in self.voids:
            raise Refused("cannot_void_void", "a void is not voided; enter the event again", "L1")
        if e.target not in self.owner:
            code = "already_voided" if e.target in self.voided else "unknown_target"
            raise Refused(code, f"no event {e.target!r} to void", "L1")
        gid = self.owner[e.target]
        if gid is None:
            raise Refused("cannot_void_setup", "a setup is not voided; set up a corrected one", "L1")
        if e.game is not None and e.game != gid:
            raise Refused("wrong_game", f"{e.target!r} belongs to game {gid!r}", "L1")
        rec = self.games[gid]
        i = next((i for i, x in enumerate(rec.events) if x.id == e.target), -1)
        if i < 0:
            raise Refused("cannot_void", f"{e.target!r} can't be voided", "L1")
        due: list[Any] = []
        if e.at > rec.now:
            if rec.game.status != "ended":
                due = [n for _, n in gm.deadlines(rec.game, rec.now, e.at)]
            rec.now = e.at
        events = [*rec.events[:i], *rec.events[i + 1:]]
        _, corr = self._commit_refold(rec, events, i, e.target, "void", e.at)
        del self.owner[e.target]
        self.voided.add(e.target)
        self.voids.add(e.id)
        self.owner[e.id] = gid
        return [*due, msgspec.structs.replace(corr, cause=e.id)]

    def _game_setup(self, e: ev.GameSetup) -> list[Any]:
        if e.game in self.games:
            raise Refused("duplicate_game", f"game {e.game!r} is already set up", "L1")
        g = gm.new_game(e)
        out: list[Any] = [nt.GameReady(cause=e.id, at=e.at, game=e.game, clause="A3",
                                       home=e.teams.home.team, away=e.teams.away.team)]
        self.games[e.game] = GameRecord(g, e.at, out)
        self.owner[e.id] = None
        return out

    def _event_setup(self, e: ev.EventSetup) -> list[Any]:
        if e.event in self.tournaments:
            raise Refused("duplicate_event", f"event {e.event!r} is already set up", "L1")
        self.tournaments[e.event] = Tournament(e.event, e.cls, e.handicap, list(e.teams), e.completed)
        self.owner[e.id] = None
        return []

    def _event_complete(self, e: ev.EventComplete) -> list[Any]:
        t = self.tournaments.get(e.event)
        if t is None:
            raise Refused("unknown_event", f"no event {e.event!r} has been set up", "L1")
        t.completed = True
        self.owner[e.id] = None
        return []
