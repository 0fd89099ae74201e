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
* A ``void`` of a goal disallows it (its points come off, its stoppage
  stands); any other ``void``, or one ``entered_in_error``, removes its
  target. Either way the game is folded again the same way. An accepted
  event that a correction makes impossible is set aside, and an ``alert``
  says so.
* A game takes its players' obligations from earlier games when it begins
  (``game.OPENERS``); ``event.complete``, ``team.eliminated`` and the
  committee's decisions change pending obligations only.
* A refusal raises ``Refused`` from ``apply`` (``feed`` turns it into a
  ``rejected`` notice); nothing of the event is kept.

Time passes only through events' ``at`` and through ``advance(at)``, which
the live shell calls when ``next_deadline()`` comes round. The cursor is not
part of the state: two engines fed the same events and advanced to the same
moment are equal.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from ..errors import Refused
from . import events as ev
from . import game as gm
from . import ledger as lg
from . import notices as nt
from .clock import play_at
from .state import Game
from .view import GameView, diff, game_view

_pack = msgspec.msgpack.Encoder()
_unpack_game = msgspec.msgpack.Decoder(Game)
_unpack_events = msgspec.msgpack.Decoder(list[ev.Event])


CHECKPOINT_EVERY = 32
# Events after which the game's obligations are derived again.
_LEDGER_TYPES = (ev.GameEnd, ev.PostgameCard)
_OBLIGATION_NOTICES = (nt.ObligationCreated, nt.ObligationApplied, nt.ObligationServed,
                       nt.ObligationWithdrawn, nt.ObligationUpdated)


class GameRecord:
    """One game: its state, its accepted events in time order, and its cursor.

    ``checkpoints[k]`` is the state after the first ``k * CHECKPOINT_EVERY``
    events (``checkpoints[0]`` is the state just after setup), so that a late
    event or a void folds again only the events after the last checkpoint
    before it.
    """

    __slots__ = ("any_team", "checkpoints", "events", "game", "now", "opened_at", "packed",
                 "setup_notices")

    def __init__(self, game: Game, at: int, setup_notices: list[Any] | None = None) -> None:
        self.game = game
        # R15, fixed when the game first ends: per side, may its obligations be served with any team?
        self.any_team: dict[str, bool] | None = None
        self.setup_notices = setup_notices or []
        self.events: list[Any] = []
        # The time cursor starts before everything: a game's events may be stamped
        # before its set-up (a scoresheet entered afterwards, a device's own clock),
        # and are then simply in order, not late.
        self.now = 0
        self.opened_at = at
        self.checkpoints: list[bytes] = [_pack.encode(game)]
        # A game restored from a snapshot (stream/live/snapshot.py) holds its events packed,
        # with ``events`` unset, until something first reads them: most games of a long
        # log are never touched again. ``packed`` is None whenever ``events`` is set.
        self.packed: bytes | None = None

    if not TYPE_CHECKING:
        def __getattr__(self, name: str) -> Any:  # only for an attribute that is unset
            if name == "events" and self.packed is not None:
                self.events = _unpack_events.decode(self.packed)
                self.packed = None
                return self.events
            raise AttributeError(f"'GameRecord' object has no attribute {name!r}")


class Tournament(msgspec.Struct):
    """An event in the USPA sense (a tournament), as ``event.setup`` gives it."""

    id: str
    cls: str = msgspec.field(name="class")
    handicap: int
    teams: list[str]
    completed: bool
    eliminated: list[str] = msgspec.field(default_factory=list)
    rules: ev.Rules = msgspec.field(default_factory=ev.Rules)


class EngineState(msgspec.Struct):
    """The whole state as one document (``arena-stream replay --state``)."""

    events: dict[str, Tournament]
    games: dict[str, GameView]
    ledger: dict[str, list[lg.Obligation]]


def _alert_key(n: nt.Alert) -> tuple[object, ...]:
    return (n.cause, n.code, n.player, n.subject, n.other, n.reason)


#: A committee's decision on one obligation: ("rescind", 0) or ("decrease", owed_ms).
Decision = tuple[str, int]


class Engine:
    def __init__(self) -> None:
        self.games: dict[str, GameRecord] = {}
        self.tournaments: dict[str, Tournament] = {}
        # Every accepted event id -> the game it belongs to (None: not a game's).
        self.owner: dict[str, str | None] = {}
        self.ledger: dict[str, list[lg.Obligation]] = {}   # player -> obligations, in serving order
        self._sources: dict[str, int] = {}   # a game (when it first ended) or an increase -> its turn
        self.voids: set[str] = set()     # ids of accepted voids
        self.voided: set[str] = set()    # ids they removed
        # Obligation id -> the committee's decision on it, kept so that deriving a
        # game's obligations again (after a correction) keeps it too.
        self.decisions: dict[str, Decision] = {}
        # Team -> the players who have owed it something: where a game looks for what
        # its teams' unlisted players owe (R13). Derived from the ledger (``reindex``).
        self._by_team: dict[str, set[str]] = {}

    # ------------------------------------------------------------------ input

    def feed(self, e: ev._Event) -> list[Any]:
        """Apply ``e``; a refusal comes back as a ``rejected`` notice."""
        try:
            return self.apply(e)
        except Refused as r:
            game = getattr(e, "game", None)
            if game is None and isinstance(e, ev.Void):
                game = self.owner.get(e.target)
            return [nt.Rejected(cause=e.id, at=e.at, game=game,
                                clause=r.clause, event_type=ev.event_type(e),
                                reason=r.code, detail=r.detail)]

    def apply(self, e: ev._Event) -> list[Any]:
        """Apply ``e`` and return its notices, or raise ``Refused`` and change nothing."""
        owner = self.owner
        if e.id in owner:
            raise Refused("duplicate_id", f"event id {e.id!r} is already in the log", "L1")
        t = type(e)
        row = gm.TRANSITIONS.get(t)
        if row is None:
            handler = self._OTHER.get(t)
            if handler is None:  # pragma: no cover
                raise Refused("unknown_type", f"no transition for {t.__name__}", "L1")
            return handler(self, e)
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
            opening = g.status == "scheduled" and t in gm.OPENERS
            if opening or t in _LEDGER_TYPES:
                self._apply_with_ledger(rec, e, row, opening, out)
            else:
                row.handler(g, e, out)  # raises before any change
            events = rec.events
            events.append(e)
            if not len(events) % CHECKPOINT_EVERY:
                rec.checkpoints.append(_pack.encode(rec.game))
            rec.now = e.at
        owner[e.id] = gid
        return out

    def _apply_with_ledger(self, rec: GameRecord, e: ev._Event, row: gm.Transition, opening: bool,
                           out: list[Any]) -> None:
        """An event that begins a game (it takes obligations) or ends one (it creates
        them): the game and the ledger change together, or neither does."""
        g = rec.game
        before = _pack.encode(g)
        try:
            taken: list[lg.Obligation] = []
            if opening:
                taken = self._plan(g)
                out.extend(self._applied_notices(g, e.id, e.at, taken))
                lg.apply_plan(taken, g, e.id, e.at, out)
            row.handler(g, e, out)
            for ob in taken:
                ob.status, ob.applied_in = "serving", g.id
            if type(e) in _LEDGER_TYPES:
                out.extend(self._ledger_commit(g, *self._ledger_check(rec, g, e.at)))
        except Refused:
            for ob in taken:
                ob.status, ob.applied_in = "pending", None
            rec.game = _unpack_game.decode(before)
            raise

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

    def state_hash(self) -> str:
        """SHA-256 of the state document, keys sorted: equal states, equal hashes.
        A live service and a fresh replay of its log must agree on it."""
        return hashlib.sha256(msgspec.json.encode(self.state(), order="sorted")).hexdigest()

    def state(self) -> EngineState:
        return EngineState(
            events=dict(self.tournaments),
            games={gid: game_view(r.game, r.now) for gid, r in self.games.items()},
            ledger={p: list(self.ledger[p]) for p in sorted(self.ledger) if self.ledger[p]},
        )

    # ------------------------------------------------------- read-only face
    # What the shell may ask of the fold; it never reaches into its fields.

    def has_game(self, game: str) -> bool:
        return game in self.games

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

    def event_type_of(self, event_id: str) -> str | None:
        """The ``type`` of an accepted game event, as the log has it."""
        gid = self.owner.get(event_id)
        if gid is None:
            return None
        return next((ev.event_type(x) for x in self.games[gid].events if x.id == event_id), None)

    def is_voided(self, event_id: str) -> bool:
        return event_id in self.voided

    def event_count(self) -> int:
        """Accepted events folded so far (voids included, their targets not)."""
        return len(self.owner)

    def obligations(self, player: str) -> list[lg.Obligation]:
        return list(self.ledger.get(player, ()))

    def all_obligations(self, *, status: str | None = None, origin_game: str | None = None
                        ) -> list[lg.Obligation]:
        """Every obligation of the ledger, by player, optionally of one status or origin game."""
        return [o for obs in self.ledger.values() for o in obs
                if (status is None or o.status == status)
                and (origin_game is None or o.origin_game == origin_game)]

    def preview_setup(self, e: ev.GameSetup) -> list[lg.Obligation]:
        """The obligations this game would take if it began now, or ``Refused`` if
        the set-up itself would be refused. Changes nothing."""
        return self._plan(self._new_game(e))

    def reindex(self) -> None:
        """Derive the team index from the ledger (after the ledger was restored)."""
        self._by_team = {}
        for obs in self.ledger.values():
            for o in obs:
                self._by_team.setdefault(o.team, set()).add(o.player)

    def fork_game(self, game: str) -> Engine:
        """A new engine holding only ``game`` as it was just after its setup:
        feeding it the game's logged events again reproduces its notices."""
        rec = self._record(game)
        fork = Engine()
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

    def _plan(self, g: Game) -> list[lg.Obligation]:
        """What ``g`` would take if it began now."""
        teams = self._by_team.get(g.home.team, set()) | self._by_team.get(g.away.team, set())
        return lg.plan(self.ledger, g, self._info(g), sorted(teams - g.players.keys()))

    def _taken_by(self, g: Game) -> list[lg.Obligation]:
        """What ``g`` took when it began, in the order it took them."""
        out: list[lg.Obligation] = []
        for c in g.carried:
            out.extend(o for o in self.ledger.get(c.player, ()) if o.id == c.id)
        return out

    def _refold(self, rec: GameRecord, events: list[Any], start: int, taken: list[lg.Obligation]
                ) -> tuple[Game, dict[str, list[Any]], dict[str, Refused], list[bytes]]:
        """Fold a game again from the last checkpoint at or before index ``start``
        (``events[:start]`` must be unchanged), the game taking ``taken`` where it
        begins: (state, notices by cause, refusals by id, checkpoints)."""
        k = min(start // CHECKPOINT_EVERY, len(rec.checkpoints) - 1)
        checkpoints = rec.checkpoints[: k + 1]
        g = _unpack_game.decode(checkpoints[k])
        by_cause: dict[str, list[Any]] = {}
        refused: dict[str, Refused] = {}
        i = k * CHECKPOINT_EVERY
        cursor = events[i - 1].at if i else 0
        for x in events[i:]:
            out: list[Any] = [n for _, n in gm.deadlines(g, cursor, x.at)] if g.status != "ended" else []
            row = gm.TRANSITIONS[type(x)]
            if g.status not in row.phases:
                refused[x.id] = gm.refuse_phase(g, x)
            else:
                if g.status == "scheduled" and type(x) in gm.OPENERS:
                    # What this game takes when it begins, taken where it now begins.
                    lg.apply_plan(taken, g, x.id, x.at, out)
                try:
                    row.handler(g, x, out)
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
                       reason: str, at: int, cause: str
                       ) -> tuple[dict[str, list[Any]], list[Any]]:
        """Fold again and keep the result: (notices by cause, the correction and the
        alerts for any accepted event it sets aside), or ``Refused`` with nothing changed."""
        before = game_view(rec.game, rec.now)
        was_scheduled = rec.game.status == "scheduled"
        # Begun already: what it took. Not yet: what it takes if the correction begins it.
        taken = self._plan(rec.game) if was_scheduled else self._taken_by(rec.game)
        g, by_cause, refused, checkpoints = self._refold(rec, events, start, taken)
        if target in refused:
            raise refused[target]
        old_by_cause = self._refold(rec, rec.events, start, taken)[1]  # what the fold said before
        ledger = None
        if g.status == "ended" or rec.game.status == "ended":
            ledger = self._ledger_check(rec, g, at)  # raises record_closed before any change
        changes = [nt.Change(k, a, b) for k, a, b in diff(before, game_view(g, rec.now))]
        changes.extend(nt.Change(f"events.{x}.applied", True, False) for x in refused)
        rec.game = g
        rec.events = events
        rec.checkpoints = checkpoints
        if was_scheduled != (g.status == "scheduled"):
            # The correction begins the game, or takes back the only event that began it.
            for ob in taken:
                ob.status, ob.applied_in = ("serving", g.id) if was_scheduled else ("pending", None)
            if was_scheduled:
                by_cause.setdefault(target, [])[:0] = self._applied_notices(g, target, at, taken)
        if ledger is not None:
            by_cause.setdefault(target, []).extend(self._ledger_commit(g, *ledger))
        corr = nt.Correction(cause=cause, at=at, game=g.id, clause="L1", target=target,
                             reason=reason, changes=changes)  # type: ignore[arg-type]
        kinds = {x.id: ev.event_type(x) for x in events if x.id in refused}
        alerts = [nt.Alert(cause=cause, at=at, game=g.id, clause=r.clause, code="set_aside",
                           subject=x, reason=r.code, detail=f"{kinds[x]} {x}: {r.detail}")
                  for x, r in refused.items()]
        # An event that still stands but now breaks a rule (a scorer no longer on the
        # field): the alert its fold raises now and did not before, told now.
        old_alerts = {_alert_key(n) for ns in old_by_cause.values() for n in ns if isinstance(n, nt.Alert)}
        for x in events[start:]:
            if x.id != target:
                alerts.extend(msgspec.structs.replace(n, cause=cause, at=at, subject=n.subject or x.id)
                              for n in by_cause.get(x.id, ())
                              if isinstance(n, nt.Alert) and _alert_key(n) not in old_alerts)
        return by_cause, [corr, *alerts]

    def _late(self, rec: GameRecord, e: ev._Event) -> list[Any]:
        i = bisect_right(rec.events, e.at, key=lambda x: x.at)
        events = [*rec.events[:i], e, *rec.events[i:]]
        by_cause, tail = self._commit_refold(rec, events, i, e.id, "late", e.at, e.id)
        return [*by_cause.get(e.id, []), *tail]

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
        x = rec.events[i]
        disallow = isinstance(x, ev.Goal) and not e.entered_in_error
        if disallow and x.disallowed:
            raise Refused("already_voided", f"goal {e.target!r} is already disallowed; "
                          "void it entered_in_error to remove it entirely", "L1")
        if disallow:
            # A disallowed goal still stopped play: the release it caused stands (A28).
            events = [*rec.events[:i], msgspec.structs.replace(x, disallowed=True), *rec.events[i + 1:]]
        else:
            events = [*rec.events[:i], *rec.events[i + 1:]]
        due: list[Any] = []
        now = rec.now
        if e.at > rec.now:
            if rec.game.status != "ended":
                due = [n for _, n in gm.deadlines(rec.game, rec.now, e.at)]
            rec.now = e.at
        try:
            by_cause, tail = self._commit_refold(rec, events, i, e.target, "void", e.at, e.id)
        except Refused:
            rec.now = now
            raise
        if not disallow:
            del self.owner[e.target]
            self.voided.add(e.target)
        self.voids.add(e.id)
        self.owner[e.id] = gid
        ledger = [msgspec.structs.replace(n, cause=e.id) for n in by_cause.get(e.target, ())
                  if isinstance(n, _OBLIGATION_NOTICES)]
        return [*due, *ledger, *tail]

    def _new_game(self, e: ev.GameSetup) -> Game:
        """The game a set-up describes, under its event's rules; refuses what can't be set up."""
        if e.game in self.games:
            raise Refused("duplicate_game", f"game {e.game!r} is already set up", "L1")
        t = self.tournaments.get(e.event)
        if t is None and e.cls is None:
            raise Refused("unknown_event", f"no event {e.event!r} has been set up; a Club game "
                          'without one says "class": "club"', "R16")
        if t is not None and e.cls is not None and e.cls != t.cls:
            raise Refused("class_mismatch", f"event {e.event!r} is a {t.cls} event", "R16")
        return gm.new_game(e, t.rules if t is not None else ev.Rules())

    def _game_setup(self, e: ev.GameSetup) -> list[Any]:
        g = self._new_game(e)
        out: list[Any] = [nt.GameReady(cause=e.id, at=e.at, game=e.game, clause="A3",
                                       home=e.teams.home.team, away=e.teams.away.team)]
        # What the team sheets mean for what the game would take if it began now:
        # the alerts, on a copy (the game takes its obligations when it begins).
        lg.apply_plan(self._plan(g), _unpack_game.decode(_pack.encode(g)), e.id, e.at, out)
        for side in ("home", "away"):
            team = g.team(side)
            if len(team.lineup) < 3 and team.bench:
                out.append(nt.Alert(cause=e.id, at=e.at, game=g.id, clause="A3", code="short_lineup",
                                    side=side, detail=f"{len(team.lineup)} starters"))
        self.games[e.game] = GameRecord(g, e.at, out)
        self.owner[e.id] = None
        return out

    # ---------------------------------------------------------------- ledger

    def _info(self, g: Game) -> lg.GameInfo:
        return lg.GameInfo(g.id, g.handicap, g.kind, self._event_class(g.event))

    def _applied_notices(self, g: Game, cause: str, at: int, taken: list[lg.Obligation]) -> list[Any]:
        out: list[Any] = []
        for ob in taken:
            out.append(nt.ObligationApplied(cause=cause, at=at, game=g.id, clause=ob.clause,
                                            player=ob.player, obligation=ob.id, kind=ob.kind,
                                            owed_ms=ob.owed_ms, origin_game=ob.origin_game))
            if ob.kind == "sit_out":
                p = g.players.get(ob.player)
                side: ev.Side = p.side if p is not None else ("home" if g.home.team == ob.team else "away")
                out.append(nt.BoxEnter(cause=cause, at=at, game=g.id, clause=ob.clause, player=ob.player,
                                       side=side, owed_ms=ob.owed_ms, kind="carried"))
        return out

    def _event_class(self, event: str) -> str:
        t = self.tournaments.get(event)
        return t.cls if t is not None else "club"

    def _no_further_event(self, team: str, handicap: int) -> bool:
        """R15: the team is entered, and still taking part, in no uncompleted event
        of equal or higher handicap."""
        return not any(not t.completed and t.handicap >= handicap and team in t.teams
                       and team not in t.eliminated for t in self.tournaments.values())

    def _any_team(self, g: Game) -> dict[str, bool]:
        return {side: self._no_further_event(g.team(side).team, g.handicap)
                for side in ("home", "away")}

    def _decided(self, o: lg.Obligation) -> lg.Obligation | None:
        """``o`` as the committee's decisions leave it (None: rescinded)."""
        d = self.decisions.get(o.id)
        if d is None:
            return o
        if d[0] == "rescind":
            return None
        o.owed_ms = d[1]
        if o.kind == "sit_out":
            o.severity = d[1]
        return o

    def _ledger_check(self, rec: GameRecord, g: Game, at: int
                      ) -> tuple[list[lg.Obligation], list[lg.Obligation], int]:
        """The game's obligations as its state now implies, and the ones it had.
        Refuses (``record_closed``) a change to one a game that has begun already serves."""
        old = [o for pid in g.players for o in self.ledger.get(pid, ())
               if o.origin_game == g.id and o.by is None]
        new: list[lg.Obligation] = []
        if g.status == "ended":
            if rec.any_team is None:
                rec.any_team = self._any_team(g)
            play_end = play_at(g.clock, g.period_ms, g.ended_at or at)
            derived = lg.derive(g, g.ended_by or g.id, play_end, self._event_class(g.event), rec.any_team)
            new = [o for o in map(self._decided, derived) if o is not None]
            turn = self._sources.setdefault(g.id, len(self._sources))
            for i, o in enumerate(new):
                o.order = turn * 1000 + i
        fresh = {o.id: o for o in new}
        for o in old:
            if o.status != "pending":
                n = fresh.get(o.id)
                if n is None or (n.kind, n.owed_ms) != (o.kind, o.owed_ms):
                    raise Refused("record_closed", f"game {o.applied_in!r} has already begun serving "
                                  f"{o.player!r}'s {o.kind} from this game; the committee corrects it",
                                  "R16")
        return new, old, at

    def _ledger_commit(self, g: Game, new: list[lg.Obligation], old: list[lg.Obligation],
                       at: int) -> list[Any]:
        out: list[Any] = []
        kept = {o.id for o in old if o.status != "pending"}
        new_ids = {o.id for o in new}
        old_ids = {o.id for o in old}

        def notice(cls: Any, o: lg.Obligation) -> Any:
            return cls(cause=o.cause, at=at, game=g.id, clause=o.clause, player=o.player,
                       obligation=o.id, kind=o.kind, owed_ms=o.owed_ms, origin_game=o.origin_game)

        for o in old:
            if o.status == "pending":
                self.ledger[o.player].remove(o)
                if o.id not in new_ids:
                    out.append(notice(nt.ObligationWithdrawn, o))
        for o in new:
            if o.id not in kept:
                self._by_team.setdefault(o.team, set()).add(o.player)
                self.ledger.setdefault(o.player, []).append(o)
                self.ledger[o.player].sort(key=lambda x: x.order)
                if o.id not in old_ids:
                    out.append(notice(nt.ObligationCreated, o))
        # What this game serves: served once it has ended.
        for c in g.carried:
            for o in self.ledger.get(c.player, ()):
                if o.id == c.id:
                    status = "served" if g.status == "ended" else "serving"
                    if status == "served" and o.status != "served":
                        out.append(notice(nt.ObligationServed, o))
                    o.status = status  # type: ignore[assignment]
        return out

    def _find_obligation(self, oid: str) -> lg.Obligation:
        for obs in self.ledger.values():
            for o in obs:
                if o.id == oid:
                    return o
        raise Refused("unknown_obligation", f"no obligation {oid!r} is owed", "R16")

    def _committee_increase(self, e: ev.CommitteeIncrease) -> list[Any]:
        rec = self.games.get(e.origin_game)
        if rec is None or rec.game.status != "ended":
            raise Refused("game_not_over", f"game {e.origin_game!r} has not ended", "R6")
        g = rec.game
        p = g.players.get(e.player)
        if p is None:
            raise Refused("unknown_player", f"{e.player!r} did not play in {g.id!r}", "A3")
        if e.games == 0 and e.sit_out_ms == 0:
            raise Refused("nothing_to_add", "an increase adds games or a sit-out", "R6")
        any_team = rec.any_team if rec.any_team is not None else self._any_team(g)
        base = dict(player=p.id, origin_game=g.id, origin_event=g.event,
                    origin_class=self._event_class(g.event), handicap=g.handicap,
                    team=g.team(p.side).team, any_team=any_team[p.side], postgame=True,
                    by=e.by, reason=e.reason, cause=e.id, clause="R6")
        turn = self._sources.setdefault(e.id, len(self._sources)) * 1000
        added = [lg.Obligation(id=f"{e.id}:{p.id}:suspension:{n}", kind="suspension", owed_ms=0,
                               severity=lg.FULL, order=turn + n, **base)  # type: ignore[arg-type]
                 for n in range(e.games)]
        if e.sit_out_ms:
            added.append(lg.Obligation(id=f"{e.id}:{p.id}:sit_out", kind="sit_out",
                                       owed_ms=e.sit_out_ms, severity=e.sit_out_ms,
                                       order=turn + 999, **base))  # type: ignore[arg-type]
        self.ledger.setdefault(p.id, []).extend(added)
        self._by_team.setdefault(added[0].team, set()).add(p.id)
        self.owner[e.id] = None
        return [nt.ObligationCreated(cause=e.id, at=e.at, game=g.id, clause="R6", player=o.player,
                                     obligation=o.id, kind=o.kind, owed_ms=o.owed_ms,
                                     origin_game=o.origin_game) for o in added]

    def _pending_for_committee(self, e: ev.CommitteeRescind | ev.CommitteeDecrease) -> lg.Obligation:
        o = self._find_obligation(e.obligation)
        if o.status != "pending":
            raise Refused("record_closed", f"game {o.applied_in!r} has already begun serving "
                          f"{o.id!r}", "R16")
        return o

    def _committee_rescind(self, e: ev.CommitteeRescind) -> list[Any]:
        o = self._pending_for_committee(e)
        self.ledger[o.player].remove(o)
        self.decisions[o.id] = ("rescind", 0)
        self.owner[e.id] = None
        return [nt.ObligationWithdrawn(cause=e.id, at=e.at, game=o.origin_game, clause=o.clause,
                                       player=o.player, obligation=o.id, kind=o.kind,
                                       owed_ms=o.owed_ms, origin_game=o.origin_game)]

    def _committee_decrease(self, e: ev.CommitteeDecrease) -> list[Any]:
        o = self._pending_for_committee(e)
        if o.kind == "yellow_status" or (o.kind == "suspension" and o.owed_ms == 0):
            raise Refused("not_decreasable", f"{o.id!r} owes no play time to decrease; "
                          "the committee rescinds it instead", "R6")
        if e.owed_ms >= o.owed_ms or (o.kind == "sit_out" and e.owed_ms == 0):
            raise Refused("not_a_decrease", f"{o.id!r} owes {o.owed_ms} ms of play: a decrease "
                          "owes less (a sit-out, more than none)", "R6")
        self.decisions[o.id] = ("decrease", e.owed_ms)
        self._decided(o)
        self.owner[e.id] = None
        return [nt.ObligationUpdated(cause=e.id, at=e.at, game=o.origin_game, clause=o.clause,
                                     player=o.player, obligation=o.id, kind=o.kind,
                                     owed_ms=o.owed_ms, origin_game=o.origin_game,
                                     any_team=o.any_team)]

    def _rejudge_r15(self, e: ev._Event) -> list[Any]:
        """R15 after an event completes or a team is eliminated: a team left in no
        uncompleted event of equal or higher handicap serves what it still owes with
        any team. Games already played never change."""
        for rec in self.games.values():
            if rec.any_team is not None:
                g = rec.game
                for side in ("home", "away"):
                    if not rec.any_team[side] and self._no_further_event(g.team(side).team,
                                                                          g.handicap):
                        rec.any_team[side] = True
        out: list[Any] = []
        for obs in self.ledger.values():
            for o in obs:
                if o.status == "pending" and not o.any_team and self._no_further_event(o.team, o.handicap):
                    o.any_team = True
                    out.append(nt.ObligationUpdated(
                        cause=e.id, at=e.at, game=o.origin_game, clause="R15", player=o.player,
                        obligation=o.id, kind=o.kind, owed_ms=o.owed_ms, origin_game=o.origin_game,
                        any_team=True))
        return out

    def _event_setup(self, e: ev.EventSetup) -> list[Any]:
        if e.event in self.tournaments:
            raise Refused("duplicate_event", f"event {e.event!r} is already set up", "L1")
        self.tournaments[e.event] = Tournament(e.event, e.cls, e.handicap, list(e.teams), e.completed,
                                               [], e.rules)
        self.owner[e.id] = None
        return []

    def _tournament(self, event: str) -> Tournament:
        t = self.tournaments.get(event)
        if t is None:
            raise Refused("unknown_event", f"no event {event!r} has been set up", "L1")
        return t

    def _event_complete(self, e: ev.EventComplete) -> list[Any]:
        t = self._tournament(e.event)
        t.completed = True
        self.owner[e.id] = None
        return self._rejudge_r15(e)

    def _team_eliminated(self, e: ev.TeamEliminated) -> list[Any]:
        t = self._tournament(e.event)
        if e.team not in t.teams:
            raise Refused("unknown_team", f"team {e.team!r} is not entered in event {e.event!r}", "R15")
        if e.team in t.eliminated:
            raise Refused("already_eliminated", f"team {e.team!r} is already out of {e.event!r}", "R15")
        t.eliminated.append(e.team)
        self.owner[e.id] = None
        return self._rejudge_r15(e)

    #: The events that are not a game's, and what applies each.
    _OTHER: ClassVar[dict[type, Callable[[Engine, Any], list[Any]]]] = {
        ev.Void: _void,
        ev.GameSetup: _game_setup,
        ev.EventSetup: _event_setup,
        ev.EventComplete: _event_complete,
        ev.TeamEliminated: _team_eliminated,
        ev.CommitteeIncrease: _committee_increase,
        ev.CommitteeRescind: _committee_rescind,
        ev.CommitteeDecrease: _committee_decrease,
    }
