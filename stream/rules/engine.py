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

import hashlib
from bisect import bisect_right
from typing import TYPE_CHECKING, Any

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
                       nt.ObligationWithdrawn)


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
        # A game restored from a snapshot (stream/snapshot.py) holds its events packed,
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


class EngineState(msgspec.Struct):
    """The whole state as one document (``arena-stream replay --state``)."""

    events: dict[str, Tournament]
    games: dict[str, GameView]
    ledger: dict[str, list[lg.Obligation]]


class Engine:
    def __init__(self, settings: gm.Settings | None = None) -> None:
        self.settings = settings or gm.Settings()
        self.games: dict[str, GameRecord] = {}
        self.tournaments: dict[str, Tournament] = {}
        # Every accepted event id -> the game it belongs to (None: not a game's).
        self.owner: dict[str, str | None] = {}
        self.ledger: dict[str, list[lg.Obligation]] = {}   # player -> obligations, in serving order
        self._sources: dict[str, int] = {}   # a game (when it first ended) or an increase -> its turn
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
                if t is ev.ClockStart and g.status == "scheduled":
                    # Obligations that arose after this game was set up are taken at
                    # its start: a game set up in advance is still the player's next.
                    plan = lg.plan(self.ledger, g, self._info(g))  # may refuse: substitute first
                    row.handler(g, e, self.settings, out)
                    out.extend(self._take(g, e, plan.taken))
                elif t in _LEDGER_TYPES:
                    before = msgspec.msgpack.encode(g)
                    row.handler(g, e, self.settings, out)  # raises before any change
                    try:
                        out.extend(self._ledger_commit(g, *self._ledger_check(rec, g, e.at)))
                    except Refused:
                        rec.game = g = _unpack_game.decode(before)
                        raise
                else:
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
        if t is ev.CommitteeIncrease:
            return self._committee_increase(e)  # type: ignore[arg-type]
        raise Refused("unknown_type", f"no transition for {t.__name__}", "L1")  # pragma: no cover

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

    def obligations(self, player: str) -> list[lg.Obligation]:
        return list(self.ledger.get(player, ()))

    def preview_setup(self, e: ev.GameSetup) -> list[lg.Obligation]:
        """The obligations this game would take if set up now, or ``Refused``
        (with the clause) if its lineup breaks one. Changes nothing."""
        g = gm.new_game(e)
        return list(lg.plan(self.ledger, g, self._info(g)).taken)

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
            first_start = type(x) is ev.ClockStart and g.status == "scheduled"
            try:
                gm.apply(g, x, self.settings, out)
            except Refused as r:
                refused[x.id] = r
                first_start = False
            if first_start:  # what this game took at its start, taken again
                taken = {c.id for c in g.carried}
                again = [o for pid in g.players for o in self.ledger.get(pid, ())
                         if o.applied_in == g.id and o.id not in taken]
                lg.apply_plan(lg.Plan(again), g)
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
        ledger = None
        if g.status == "ended" or rec.game.status == "ended":
            ledger = self._ledger_check(rec, g, at)  # raises record_closed before any change
        changes = [nt.Change(k, a, b) for k, a, b in diff(before, game_view(g, rec.now))]
        changes.extend(nt.Change(f"events.{x}.applied", True, False) for x in refused)
        rec.game = g
        rec.events = events
        rec.checkpoints = checkpoints
        if ledger is not None:
            by_cause.setdefault(target, []).extend(self._ledger_commit(g, *ledger))
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
        by_cause, corr = self._commit_refold(rec, events, i, e.target, "void", e.at)
        del self.owner[e.target]
        self.voided.add(e.target)
        self.voids.add(e.id)
        self.owner[e.id] = gid
        ledger = [msgspec.structs.replace(n, cause=e.id) for n in by_cause.get(e.target, ())
                  if isinstance(n, _OBLIGATION_NOTICES)]
        return [*due, *ledger, msgspec.structs.replace(corr, cause=e.id)]

    def _game_setup(self, e: ev.GameSetup) -> list[Any]:
        if e.game in self.games:
            raise Refused("duplicate_game", f"game {e.game!r} is already set up", "L1")
        g = gm.new_game(e)
        plan = lg.plan(self.ledger, g, self._info(g))  # refuses a lineup that breaks an obligation
        out: list[Any] = [nt.GameReady(cause=e.id, at=e.at, game=e.game, clause="A3",
                                       home=e.teams.home.team, away=e.teams.away.team)]
        out.extend(self._take(g, e, plan.taken))
        self.games[e.game] = GameRecord(g, e.at, out)
        self.owner[e.id] = None
        return out

    # ---------------------------------------------------------------- ledger

    def _info(self, g: Game) -> lg.GameInfo:
        return lg.GameInfo(g.id, g.handicap, g.kind, self._event_class(g.event))

    def _take(self, g: Game, e: ev._Event, taken: list[lg.Obligation]) -> list[Any]:
        """Start ``g`` serving ``taken``; their notices."""
        lg.apply_plan(lg.Plan(taken), g)
        out: list[Any] = []
        for ob in taken:
            p = g.players[ob.player]
            out.append(nt.ObligationApplied(cause=e.id, at=e.at, game=g.id, clause=ob.clause,
                                            player=ob.player, obligation=ob.id, kind=ob.kind,
                                            owed_ms=ob.owed_ms, origin_game=ob.origin_game))
            if ob.kind == "sit_out":
                out.append(nt.BoxEnter(cause=e.id, at=e.at, game=g.id, clause=ob.clause, player=p.id,
                                       side=p.side, owed_ms=ob.owed_ms, kind="carried"))
        return out

    def _event_class(self, event: str) -> str:
        t = self.tournaments.get(event)
        return t.cls if t is not None else "club"

    def _any_team(self, g: Game) -> dict[str, bool]:
        """R15: a side whose team is entered in no uncompleted event of equal or
        higher handicap serves its obligations with any team."""
        out: dict[str, bool] = {}
        for side in ("home", "away"):
            team = g.team(side).team
            out[side] = not any(not t.completed and t.handicap >= g.handicap and team in t.teams
                                for t in self.tournaments.values())
        return out

    def _ledger_check(self, rec: GameRecord, g: Game, at: int
                      ) -> tuple[list[lg.Obligation], list[lg.Obligation], int]:
        """The game's obligations as its state now implies, and the ones it had.
        Refuses (``record_closed``) a change to one a later game has already taken."""
        old = [o for pid in g.players for o in self.ledger.get(pid, ())
               if o.origin_game == g.id and o.by is None]
        new: list[lg.Obligation] = []
        if g.status == "ended":
            if rec.any_team is None:
                rec.any_team = self._any_team(g)
            play_end = play_at(g.clock, g.period_ms, g.ended_at or at)
            new = lg.derive(g, g.ended_by or g.id, play_end, self._event_class(g.event), rec.any_team)
            turn = self._sources.setdefault(g.id, len(self._sources))
            for i, o in enumerate(new):
                o.order = turn * 1000 + i
        fresh = {o.id: o for o in new}
        for o in old:
            if o.status != "pending":
                n = fresh.get(o.id)
                if n is None or (n.kind, n.owed_ms) != (o.kind, o.owed_ms):
                    raise Refused("record_closed", f"game {o.applied_in!r} has already applied "
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
        self.owner[e.id] = None
        return [nt.ObligationCreated(cause=e.id, at=e.at, game=g.id, clause="R6", player=o.player,
                                     obligation=o.id, kind=o.kind, owed_ms=o.owed_ms,
                                     origin_game=o.origin_game) for o in added]

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
