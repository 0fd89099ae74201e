"""What the fold keeps per game, and the image of the whole fold.

``GameRecord`` is one game's state, its accepted events in time order, its
checkpoints and its time cursor; ``refold`` folds a game again from a
checkpoint (a late event or a void); a ``Savepoint`` takes a game's latest events
back. ``EngineImage`` is everything the engine
holds, as one msgspec Struct: the live shell caches it (``stream/live/hub/snapshot.py``)
so that a restart folds only the log's tail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from ..errors import Refused
from . import deadlines as dl
from . import events as ev
from . import game as gm
from . import ledger as lg
from . import notices as nt
from .notices import Notice
from .rosters import PlayerEntry, TeamEntry
from .schedule import ScheduleEntry
from .state import Game
from .tournaments import Tournament

CHECKPOINT_EVERY = 32

_pack = msgspec.msgpack.Encoder()
_unpack_events = msgspec.msgpack.Decoder(list[ev.Event])
_unpack_game = msgspec.msgpack.Decoder(Game)


class GameRecord:
    """One game: its state, its accepted events in time order, and its cursor.

    ``checkpoints[k]`` is the state after the first ``k * CHECKPOINT_EVERY``
    events (``checkpoints[0]`` is the state just after setup), so that a late
    event or a void folds again only the events after the last checkpoint
    before it.
    """

    __slots__ = ("any_team", "checkpoints", "events", "game", "now", "opened_at", "packed",
                 "setup_notices", "took")

    def __init__(self, game: Game, at: int, setup_notices: list[Notice] | None = None) -> None:
        self.game = game
        # R15, judged when the game first ends (and again when its teams' events complete):
        # per side, may its obligations be served with any team?
        self.any_team: dict[str, bool] | None = None
        self.setup_notices: list[Notice] = setup_notices or []
        self.events: list[ev.EventBase] = []
        # The time cursor starts before everything: a game's events may be stamped
        # before its set-up (a scoresheet entered afterwards, a device's own clock),
        # and are then simply in order, not late.
        self.now = 0
        self.opened_at = at
        self.checkpoints: list[bytes] = [_pack.encode(game)]
        # A game restored from an image holds its events packed, with ``events`` unset,
        # until something first reads them: most games of a long log are never touched
        # again. ``packed`` is None whenever ``events`` is set.
        self.packed: bytes | None = None
        # What the game took each time it began, in log order, as it took it (a void of the
        # event that began it may undo a begin, and the ledger may have changed by the next):
        # a fold of this game alone (``Engine.fork_game``) takes the same at the same begins.
        self.took: list[list[lg.Obligation]] = []

    if not TYPE_CHECKING:
        def __getattr__(self, name: str) -> Any:  # only for an attribute that is unset
            if name == "events" and self.packed is not None:
                self.events = _unpack_events.decode(self.packed)
                self.packed = None
                return self.events
            raise AttributeError(f"'GameRecord' object has no attribute {name!r}")

    def image(self) -> GameImage:
        events = _pack.encode(self.events) if self.packed is None else self.packed
        return GameImage(self.game, self.now, self.opened_at, self.any_team, self.setup_notices, events,
                         self.checkpoints, self.took)

    @classmethod
    def from_image(cls, g: GameImage) -> GameRecord:
        rec = cls.__new__(cls)
        rec.game, rec.now, rec.opened_at, rec.any_team = g.game, g.now, g.opened_at, g.any_team
        rec.setup_notices, rec.packed, rec.checkpoints = g.setup_notices, g.events, g.checkpoints
        rec.took = g.took
        return rec


def refold(rec: GameRecord, events: list[ev.EventBase], start: int, taken: list[lg.Obligation]
            ) -> tuple[Game, dict[str, list[nt.Notice]], dict[str, Refused], list[bytes]]:
    """Fold a game again from the last checkpoint at or before index ``start``
    (``events[:start]`` must be unchanged), the game taking ``taken`` where it
    begins: (state, notices by cause, refusals by id, checkpoints)."""
    k = min(start // CHECKPOINT_EVERY, len(rec.checkpoints) - 1)
    checkpoints = rec.checkpoints[: k + 1]
    g = _unpack_game.decode(checkpoints[k])
    by_cause: dict[str, list[nt.Notice]] = {}
    refused: dict[str, Refused] = {}
    i = k * CHECKPOINT_EVERY
    cursor = events[i - 1].at if i else 0
    for x in events[i:]:
        out: list[nt.Notice] = [] if g.status == "ended" else [n for _, n in dl.deadlines(g, cursor, x.at)]
        try:
            # What this game takes when it begins, taken where it now begins.
            gm.apply(g, x, out, taken)
        except Refused as r:
            refused[x.id] = r
        cursor = max(cursor, x.at)
        for n in out:
            by_cause.setdefault(n.cause, []).append(n)
        i += 1
        if i % CHECKPOINT_EVERY == 0:
            checkpoints.append(_pack.encode(g))
    if g.status != "ended":
        for _, n in dl.deadlines(g, cursor, rec.now):
            by_cause.setdefault(n.cause, []).append(n)
    return g, by_cause, refused, checkpoints


class Savepoint:
    """One game's record as it stood before an event (``Engine.savepoint``), so that
    the events applied to the game since can be taken back whole (``Engine.rollback``):
    the live shell does so for events another node's log entries displaced."""

    __slots__ = ("changes", "checkpoints", "events", "game", "gid", "journal", "now")

    def __init__(self, gid: str, rec: GameRecord, changes: int, journal: int) -> None:
        self.gid = gid
        self.journal = journal            # the engine's voids so far (``Engine.void_journal``)
        self.game = _pack.encode(rec.game)
        self.events = list(rec.events)
        self.checkpoints = list(rec.checkpoints)
        self.now = rec.now
        self.changes = changes            # the engine's ledger changes when it was taken

    def holds(self, event_id: str) -> bool:
        """Whether the game held ``event_id`` at the savepoint."""
        return any(x.id == event_id for x in self.events)

    def restore(self, rec: GameRecord, owner: dict[str, str | None]) -> None:
        """Put ``rec`` back as it was; the events taken back leave ``owner``."""
        kept = {x.id for x in self.events}
        for x in rec.events:
            if x.id not in kept:
                owner.pop(x.id, None)
        rec.game = _unpack_game.decode(self.game)
        rec.events, rec.checkpoints, rec.now = list(self.events), list(self.checkpoints), self.now


class GameImage(msgspec.Struct, array_like=True, gc=False):
    """One ``GameRecord``."""

    game: Game
    now: int
    opened_at: int
    any_team: dict[str, bool] | None
    setup_notices: list[Notice]
    events: bytes                  # list[Event], packed: unpacked when first read
    checkpoints: list[bytes]
    took: list[list[lg.Obligation]] = []


class EngineImage(msgspec.Struct, array_like=True, gc=False):
    """Everything the engine holds (``Engine.image``, ``Engine.from_image``)."""

    games: dict[str, GameImage]
    tournaments: dict[str, Tournament]
    owner: dict[str, str | None]
    ledger: dict[str, list[lg.Obligation]]
    sources: dict[str, int]
    voids: list[str]
    voided: list[str]
    decisions: dict[str, tuple[str, int]]
    teams: dict[str, list[TeamEntry]] = {}
    players: dict[str, list[PlayerEntry]] = {}
    withdrawn: dict[str, str] = {}
    decreases: dict[str, lg.Decrease] = {}
    rescinds: dict[str, lg.Decision] = {}
    schedules: dict[str, list[ScheduleEntry]] = {}
    draws: dict[str, ev.DrawMade] = {}
