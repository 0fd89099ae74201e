"""The fold: events in, state and notices out.

``Engine`` holds every game and tournament event of one log. Feed it events
one at a time, as the live service does, or a whole log, as ``replay`` does;
both take the same path, so they give the same state and the same notices. What it
answers, changing nothing (a game's view, the state and its hash, the next deadline), is
``face.Face``'s: ``Engine`` is one.

How an event is applied
-----------------------
* Its id must be new (``duplicate_id``), and a game event's game must exist.
* An event at or after its game's time cursor is applied in place: first the
  deadlines that fell due since the cursor (``box.eligible``, ``sub.eligible``,
  an expired mount window), then the event's own transition, by
  ``game.apply`` (the same one a game folded again takes).
* An event *earlier* than the cursor is late: it is inserted in time order
  and the game is folded again from its setup. Its own notices are emitted,
  then a ``correction`` listing every display field that changed.
* A ``void`` of a goal disallows it (its points come off, its stoppage
  stands); any other ``void``, or one ``entered_in_error``, removes its
  target. Either way the game is folded again the same way. An accepted
  event that a correction makes impossible is set aside, and an ``alert``
  says so.
* A game takes its players' obligations from earlier games when it begins
  (an event whose row of ``game.TRANSITIONS`` ``opens`` it); ``event.complete``,
  ``team.eliminated`` and the committee's decisions change pending obligations only.
* A refusal raises ``Refused`` from ``apply`` (``feed`` turns it into a
  ``rejected`` notice); nothing of the event is kept.

Time passes only through events' ``at``. When ``next_deadline()`` comes round
the live shell logs a ``tick`` for that game (``stream/live/hub/timer.py``), so a
replay of the log meets the same deadlines; ``advance(at)`` lets time pass
with no event, for a fold with no log behind it (the rule tests). The cursor
is not part of the state: two engines fed the same events and advanced alike
are equal.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import Any, ClassVar

import msgspec

from ..errors import Refused
from . import deadlines as dl
from . import events as ev
from . import game as gm
from . import ledger as lg
from . import notices as nt
from .book import Book, Derived
from .face import EngineState
from .records import CHECKPOINT_EVERY, EngineImage, GameRecord, Savepoint, refold
from .rosters import Registry
from .schedule import Schedules
from .season import Season
from .state import Game
from .tournaments import Tournaments
from .view import diff, game_view

__all__ = ["CHECKPOINT_EVERY", "Engine", "EngineState", "GameRecord", "Savepoint"]

_pack = msgspec.msgpack.Encoder()
_unpack_game = msgspec.msgpack.Decoder(Game)

_OBLIGATION_NOTICES = (nt.ObligationCreated, nt.ObligationApplied, nt.ObligationServed,
                       nt.ObligationWithdrawn, nt.ObligationUpdated)


def _alert_key(n: nt.Alert) -> tuple[object, ...]:
    return (n.cause, n.code, n.player, n.subject, n.other, n.reason)


class Engine(Season):
    def __init__(self) -> None:
        self.games: dict[str, GameRecord] = {}
        self.tournaments = Tournaments()
        self.book = Book()               # the carry-over ledger
        self.registry = Registry()       # who the displays name (L2)
        self.schedules = Schedules()     # the order of play: start times and officials by name
        self.draws: dict[str, ev.DrawMade] = {}  # each event's draw, as last made (L3)
        # Every accepted event id -> the game it belongs to (None: not a game's).
        self.owner: dict[str, str | None] = {}
        self.voids: set[str] = set()     # ids of accepted voids
        self.voided: set[str] = set()    # ids they removed
        # Each void applied, in order, as (its target's game, its id, its target, whether it
        # only disallowed a goal): what a rollback of that game takes back with it.
        self.void_journal: list[tuple[str, str, str, bool]] = []
        # A fork (``fork_game``): what its one game took at each begin, taken again there.
        self._takes: list[list[lg.Obligation]] | None = None
        # Events that may have changed more than their own game (the ledger, a tournament,
        # the game a void's refold begins or un-begins): a savepoint from before one of them
        # is not taken back.
        self.wide_changes = 0
        # At least the latest moment any game began (derived from the games, never less): an
        # obligation whose origin ended after it has no game begun since to be told in.
        self.begun_by = 0

    # ------------------------------------------------------------------ input

    def feed(self, e: ev.Event) -> list[nt.Notice]:
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

    def apply(self, e: ev.Event) -> list[nt.Notice]:
        """Apply ``e`` and return its notices, or raise ``Refused`` and change nothing."""
        owner = self.owner
        eid = e.id
        if eid in owner:
            raise Refused("duplicate_id", f"event id {eid!r} is already in the log", "L1")
        if type(e) not in gm.TRANSITIONS:  # not a game's event (a void: of its target's game)
            t = type(e)
            # A void changes its target's game (its refold says if it changes more) and the
            # engine's record of voids, which a rollback of that game takes back too.
            self.wide_changes += t is not ev.GameSetup and t is not ev.Void
            out = self._OTHER[t](self, e)  # raises before any change
            owner.setdefault(eid, None)
            return out
        if type(e) is ev.GameHandicap:
            e = self._filled(e)  # its goals, worked out where it asks (A5)
        gid: str = e.game  # type: ignore[union-attr,assignment]  # every row of the table is a game's event
        rec = self.games.get(gid)
        if rec is None:
            raise Refused("unknown_game", f"no game {gid!r} has been set up", "L1")
        at = e.at
        if at < rec.now:
            out = self._late(rec, e)
        else:
            g = rec.game
            out = [n for _, n in dl.deadlines(g, rec.now, at)] if g.pending and g.status != "ended" else []
            row = gm.transition(g, e)  # a phase that doesn't accept it: refused before any change
            opening = row.begins(g)
            if opening or row.ledger:
                self._apply_with_ledger(rec, e, opening, row.ledger, out)
            else:
                gm.apply(g, e, out)  # raises before any change
            events = rec.events
            events.append(e)
            if not len(events) % CHECKPOINT_EVERY:
                rec.checkpoints.append(_pack.encode(rec.game))
            rec.now = at
        owner[eid] = gid
        return out

    def _apply_with_ledger(self, rec: GameRecord, e: ev.Event, opening: bool, ledger: bool,
                           out: list[nt.Notice]) -> None:
        """An event that begins a game (it takes obligations) or ends one (it creates
        them): the game and the ledger change together, or neither does."""
        g = rec.game
        before = _pack.encode(g)
        self.wide_changes += 1
        try:
            taken: list[lg.Obligation] = []
            if opening:
                taken = self._plan(rec)
                out.extend(self.book.applied_notices(g, e.id, e.at, taken))
            gm.apply(g, e, out, taken)
            derived = self._check(rec, g, e.at) if ledger else None
        except Refused:
            rec.game = _unpack_game.decode(before)
            raise
        if g.began_at is not None and g.began_at > self.begun_by:
            self.begun_by = g.began_at
        if opening:
            self._began(rec, taken)
        if derived is not None:
            committed = self.book.commit(g, derived, e.at)
            out.extend(committed)
            out.extend(self._begun_without(committed, e.id, e.at))

    # ------------------------------------------------------------------- time

    def advance(self, at: int) -> list[nt.Notice]:
        """Let time pass to ``at`` with no event: the deadlines that fall due. Nothing of it
        is logged, so the live shell never calls it: it logs a ``tick`` instead."""
        out: list[nt.Notice] = []
        for rec in self.games.values():
            if rec.now < at:
                if rec.game.status != "ended":
                    out.extend(n for _, n in dl.deadlines(rec.game, rec.now, at))
                rec.now = at
        out.sort(key=lambda n: n.at)
        return out

    # ------------------------------------------------------------ one game alone

    def fork_game(self, game: str, *, as_it_stands: bool = False) -> Engine:
        """A new engine holding only ``game`` just after its setup: fed the game's logged
        events again in log order, it reproduces their notices, each begin taking what the
        game took there. ``as_it_stands``: every begin takes what the game serves now (a
        fold of its standing events alone, in time order, as the game report makes)."""
        rec = self._record(game)
        fork = Engine()
        fork.games[game] = GameRecord(_unpack_game.decode(rec.checkpoints[0]), rec.opened_at,
                                      rec.setup_notices)
        # No other game, no ledger: what the game took is taken again where it began.
        fork._takes = ([[msgspec.structs.replace(o, status="pending", applied_in=None)
                         for o in self.book.taken_by(rec.game)]] if as_it_stands else list(rec.took))
        return fork

    def only_its_game(self, e: ev.Event) -> bool:
        """Whether applying ``e`` now changes its own game alone (``game.only_its_game``), so
        that it commutes with other games' events. A void is its target's game's: alone when
        that game is under way and the target neither began it nor ends it (its refold then
        leaves the game live and the ledger as it is, L1)."""
        if isinstance(e, ev.Void):
            gid = self.owner.get(e.target)
            rec = None if gid is None or e.target in self.voids else self.games.get(gid)
            if rec is None or rec.game.status != "live" or e.game not in (None, gid):
                return False
            target = next((x for x in reversed(rec.events) if x.id == e.target), None)
            row = None if target is None else gm.TRANSITIONS.get(type(target))
            return row is not None and not row.opens and not row.ledger
        game = getattr(e, "game", None)
        return gm.only_its_game(self.status_of(game) if isinstance(game, str) else None, e)

    def savepoint(self, game: str) -> Savepoint | None:
        """``game`` as it stands now, to take back what is applied to it next (None: no such game)."""
        rec = self.games.get(game)
        return None if rec is None else Savepoint(game, rec, self.wide_changes, len(self.void_journal))

    def rollback(self, sp: Savepoint) -> bool:
        """Take back every event applied to ``sp``'s game since ``sp`` (its voids included);
        False (nothing changed) if an event since may have changed more than its own game."""
        if ok := sp.changes == self.wide_changes:
            sp.restore(self.games[sp.gid], self.owner)
            journal = self.void_journal
            later, kept = journal[sp.journal:], []
            for gid, vid, target, disallowed in reversed(later):
                if gid != sp.gid:
                    kept.append((gid, vid, target, disallowed))
                    continue
                self.voids.discard(vid)
                self.owner.pop(vid, None)
                if not disallowed:
                    self.voided.discard(target)
                    if sp.holds(target):  # (a target applied since is taken back with it)
                        self.owner[target] = gid
            journal[sp.journal:] = reversed(kept)
        return ok

    # ------------------------------------------------------------ the image

    def image(self) -> EngineImage:
        """Everything the engine holds, to cache the fold (``from_image`` restores it)."""
        b = self.book
        return EngineImage(games={gid: r.image() for gid, r in self.games.items()},
                           tournaments=self.tournaments.by_id, owner=self.owner, ledger=b.ledger,
                           sources=b.sources, voids=sorted(self.voids), voided=sorted(self.voided),
                           decisions=b.decisions, withdrawn=b.withdrawn, decreases=b.decreases,
                           rescinds=b.rescinds,
                           teams=self.registry.teams.by_id,
                           players=self.registry.players.by_id,
                           schedules=self.schedules.by_game, draws=self.draws)

    @classmethod
    def from_image(cls, image: EngineImage) -> Engine:
        engine = cls()
        engine.games = {gid: GameRecord.from_image(g) for gid, g in image.games.items()}
        engine.tournaments = Tournaments(image.tournaments)
        engine.owner = image.owner
        engine.book = Book(image.ledger, image.sources, image.decisions, image.withdrawn, image.decreases,
                           image.rescinds)
        engine.voids, engine.voided = set(image.voids), set(image.voided)
        engine.registry = Registry(image.teams, image.players)
        engine.schedules = Schedules(image.schedules)
        engine.draws = image.draws
        engine.begun_by = max((r.game.began_at or 0 for r in engine.games.values()), default=0)
        return engine

    # -------------------------------------------------------------- internals

    def _plan(self, rec: GameRecord) -> list[lg.Obligation]:
        """What the game takes if it begins now: the ledger's plan; a fork's, what the game
        took at this begin of the log (its last, past the ones logged)."""
        takes = self._takes
        if takes is None:
            return self.book.plan(rec.game, self._info(rec.game))
        if not takes:
            return []
        return [msgspec.structs.replace(o) for o in takes[min(len(rec.took), len(takes) - 1)]]

    def _began(self, rec: GameRecord, taken: list[lg.Obligation]) -> None:
        """The game has begun, taking ``taken``: recorded as taken (before it is marked), and
        served by the game from now. A fork's ledger holds what its game took last."""
        rec.took.append([msgspec.structs.replace(o) for o in taken])
        gid = rec.game.id
        if self._takes is not None:
            ledger = self.book.ledger
            for p in list(ledger):
                ledger[p] = [o for o in ledger[p] if o.origin_game == gid]
            for o in taken:
                ledger.setdefault(o.player, []).append(o)
            self.book.reindex()
        self.book.mark(taken, gid)

    def _check(self, rec: GameRecord, g: Game, at: int) -> Derived:
        """What the game's end implies for the ledger (R15 judged when it first ends)."""
        if g.status == "ended" and rec.any_team is None:
            rec.any_team = self.tournaments.any_team(g)
        return self.book.check(g, rec.any_team or {}, self.tournaments.event_class(g.event), at)

    def _begun_without(self, committed: list[nt.Notice], cause: str, at: int) -> list[nt.Alert]:
        """A suspension or sit-out created now whose game (the player's next qualifying game
        after its origin ended) has already begun without him serving it: a late post-game
        card, or a correction of an ended game that reached the log late. Nothing is taken
        back from a game under way (A25); it waits for his following qualifying game, and
        the officials of the game he should have sat out are told at once, in that game."""
        out: list[nt.Alert] = []
        for n in committed:
            if not isinstance(n, nt.ObligationCreated) or n.kind == "yellow_status":
                continue
            o = next(x for x in self.book.ledger[n.player] if x.id == n.obligation)
            found = self._next_begun(o)
            if found is not None:
                g, side = found
                out.append(nt.Alert(cause=cause, at=at, game=g.id, clause=o.clause, code="next_game_begun",
                                    player=o.player, side=side, subject=o.cause, origin_game=o.origin_game,
                                    owed_ms=o.owed_ms, reason=o.kind, detail=g.status))
        return out

    def _next_begun(self, o: lg.Obligation) -> tuple[Game, ev.Side] | None:
        """The first game begun since ``o``'s origin game ended that qualifies to serve it
        (R16: his if he is listed; his team's, listed or not, for a same-team one, R13)."""
        origin = self.games[o.origin_game].game
        ended = origin.ended_at if origin.ended_at is not None else 0
        if ended > self.begun_by:
            return None  # no game has begun since it ended: the usual case, at a game's end
        best: tuple[int, str, Game, ev.Side] | None = None
        for gid, rec in self.games.items():
            g = rec.game
            if gid == o.origin_game or g.began_at is None or g.began_at < ended:
                continue
            p = g.players.get(o.player)
            if p is not None:
                side, team = p.side, g.team(p.side).team
            elif not o.any_team and o.team in (g.home.team, g.away.team):
                side, team = ("home" if g.home.team == o.team else "away"), o.team
            else:
                continue
            if lg.qualifies(o, self._info(g), team) and (best is None or (g.began_at, gid) < best[:2]):
                best = (g.began_at, gid, g, side)
        return None if best is None else (best[2], best[3])

    # ---------------------------------------------------------- corrections

    def _commit_refold(self, rec: GameRecord, events: list[ev.EventBase], start: int, target: str,
                       reason: str, at: int, cause: str
                       ) -> tuple[dict[str, list[nt.Notice]], list[nt.Notice]]:
        """Fold again and keep the result: (notices by cause, the correction and the
        alerts for any accepted event it sets aside), or ``Refused`` with nothing changed."""
        before = game_view(rec.game, rec.now)
        was_scheduled = rec.game.status == "scheduled"
        # Begun already: what it took. Not yet: what it takes if the correction begins it.
        book = self.book
        taken = self._plan(rec) if was_scheduled else book.taken_by(rec.game)
        g, by_cause, refused, checkpoints = refold(rec, events, start, taken)
        if target in refused:
            raise refused[target]
        # The alerts of the events after the target in this fold; what the fold said
        # before is read only if there are some.
        tail = [(x, n) for x in events[start:] if x.id != target
                for n in by_cause.get(x.id, ()) if isinstance(n, nt.Alert)]
        old_by_cause = refold(rec, rec.events, start, taken)[1] if tail else {}
        ledger = None
        if g.status == "ended" or rec.game.status == "ended":
            ledger = self._check(rec, g, at)  # raises record_closed before any change
        changes = [nt.Change(k, a, b) for k, a, b in diff(before, game_view(g, rec.now))]
        self.wide_changes += ledger is not None or was_scheduled != (g.status == "scheduled")
        changes.extend(nt.Change(f"events.{x}.applied", True, False) for x in refused)
        rec.game = g
        rec.events = events
        rec.checkpoints = checkpoints
        if g.began_at is not None and g.began_at > self.begun_by:
            self.begun_by = g.began_at
        if was_scheduled != (g.status == "scheduled"):
            # The correction begins the game, or takes back the only event that began it.
            if was_scheduled:
                self._began(rec, taken)
                by_cause.setdefault(target, [])[:0] = self.book.applied_notices(g, target, at, taken)
            else:
                self.book.mark(taken, None)
        begun: list[nt.Alert] = []
        if ledger is not None:
            committed = self.book.commit(g, ledger, at)
            by_cause.setdefault(target, []).extend(committed)
            begun = self._begun_without(committed, cause, at)
        corr = nt.Correction(cause=cause, at=at, game=g.id, clause="L1", target=target,
                             reason=reason, changes=changes)  # type: ignore[arg-type]
        kinds = {x.id: ev.event_type(x) for x in events if x.id in refused}
        alerts = [nt.Alert(cause=cause, at=at, game=g.id, clause=r.clause, code="set_aside",
                           subject=x, reason=r.code, detail=f"{kinds[x]} {x}: {r.detail}")
                  for x, r in refused.items()]
        # An event that still stands but now breaks a rule (a scorer no longer on the
        # field): the alert its fold raises now and did not before, told now.
        old_alerts = {_alert_key(n) for ns in old_by_cause.values() for n in ns if isinstance(n, nt.Alert)}
        alerts.extend(msgspec.structs.replace(n, cause=cause, at=at, subject=n.subject or x.id)
                      for x, n in tail if _alert_key(n) not in old_alerts)
        return by_cause, [corr, *alerts, *begun]

    def _late(self, rec: GameRecord, e: ev.EventBase) -> list[nt.Notice]:
        i = bisect_right(rec.events, e.at, key=lambda x: x.at)
        events = [*rec.events[:i], e, *rec.events[i:]]
        by_cause, tail = self._commit_refold(rec, events, i, e.id, "late", e.at, e.id)
        return [*by_cause.get(e.id, []), *tail]

    def _void(self, e: ev.Void) -> list[nt.Notice]:
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
        kept: list[ev.EventBase] = []
        if isinstance(x, ev.Goal) and not e.entered_in_error:
            if x.disallowed:
                raise Refused("already_voided", f"goal {e.target!r} is already disallowed; "
                              "void it entered_in_error to remove it entirely", "L1")
            # A disallowed goal still stopped play: the release it caused stands (A28).
            kept = [msgspec.structs.replace(x, disallowed=True)]
        disallow = bool(kept)
        events = [*rec.events[:i], *kept, *rec.events[i + 1:]]
        due: list[nt.Notice] = []
        now = rec.now
        if e.at > rec.now:
            if rec.game.status != "ended":
                due = [n for _, n in dl.deadlines(rec.game, rec.now, e.at)]
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
        self.void_journal.append((gid, e.id, e.target, disallow))
        ledger = [msgspec.structs.replace(n, cause=e.id) for n in by_cause.get(e.target, ())
                  if isinstance(n, _OBLIGATION_NOTICES)]
        return [*due, *ledger, *tail]

    #: The events that are not a game's, and what applies each: a void here, the rest
    #: as ``Season`` applies them.
    _OTHER: ClassVar[dict[type, Callable[[Engine, Any], list[nt.Notice]]]] = {ev.Void: _void, **Season.TABLE}
