"""What viewers are sent: per game, the committed view, every delta in ``seq``
order, the latest notices, and the snapshot a display joining late starts from.

An event is shown only once it is committed, strictly in ``seq`` order
(``Feeds.show``), and its delta is made then, once: the event's notices and the
patch from the view last shown to the view its fold left (``Pending``). So a
viewer's patches chain through committed events alone, and an event taken back
before its commit leaves nothing to undo here. After a restart
the deltas before it are gone from memory; they are a function of the log, so
``ensure_history`` folds the game again to serve a viewer who resumes from
further back.

Every update is encoded once for every viewer (``Frames``): JSON now; MessagePack,
and the whole WebSocket frame of each, on first need (``fanout.wire``).

Each game's ``roster`` frame (who its displays name: ``team.registered`` and
``player.registered``) is kept encoded too, made when first needed, and made
again when a committed registration of one of its teams or players changes it
(``Feeds.registered``) or a reload folds another one (``Feeds.reset``): only a
roster that differs from the one viewers hold is published (``Sink.publish_roster``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from ...rules import codec
from ...rules import events as ev
from ...rules.engine import Engine
from ...rules.notices import Alert, Notice
from ...rules.text import render
from ...rules.view import GameView, diff_builtins
from ...store import Log, Record
from ..wire import protocol as pr

RECENT = 12        # notices a snapshot repeats for a display that joins late
LOADED: Any = object()  # GameFeed.base of a game as loaded: its view, as builtins when first needed


@dataclass(slots=True)
class Frames:
    """One update, encoded once for every viewer: JSON now; MessagePack, and the whole
    WebSocket frame of each, made by the fan-out on first need (``fanout.wire``)."""

    msg: Any
    json: bytes
    wire_json: bytes | None = None
    wire_msgpack: bytes | None = None
    # A delta's notices about other games (``notices`` frames, by game): shown with it.
    aside: tuple[tuple[str, Frames], ...] = ()

    @classmethod
    def of(cls, msg: Any) -> Frames:
        return cls(msg, pr.json_out.encode(msg))


@dataclass(slots=True)
class Pending:
    """A committed (or committing) event and what viewers will be shown of it: its
    notices, and the game's view after it, from which ``show`` makes its delta."""

    record: Record
    ack: pr.Ack
    notices: list[Notice]
    view: GameView | None
    generation: int = 0            # the fold it was computed on (see Hub._load)


@dataclass(slots=True)
class GameFeed:
    """What viewers of one game can be sent: the committed view and every delta."""

    seq: int = 0
    view: GameView | None = None
    base: Any = None               # ``view`` as builtins: the next patch's base
                                   # (LOADED: the loaded view's, made when first needed)
    deltas: list[Frames] = field(default_factory=list)   # deltas[i] has seq i + 1 ...
    first_seq: int = 1                                    # ... offset by the first one held
    complete: bool = True                                 # False after a restart until rebuilt
    snapshot: Frames | None = None
    recent: deque[Notice] = field(default_factory=lambda: deque(maxlen=RECENT))
    held: dict[int, Pending] = field(default_factory=dict)  # committed out of seq order: waiting
    roster: Frames | None = None   # the ``roster`` frame viewers hold (None: not made yet)


class Sink(Protocol):
    """Where shown updates go: this node's viewers (``fanout.Fanout`` is the one the service
    builds). Every frame it is handed is already encoded; it only sends."""

    def publish(self, game: str, frames: Frames) -> None:
        """A game's next delta, in ``seq`` order."""

    def new_game(self, game: str, arena: str, event: str, snapshot: Frames, roster: Frames) -> None:
        """A game of ``event`` was set up in ``arena``: the viewers of its arena and of its
        event follow it from this snapshot."""

    def publish_roster(self, game: str, frames: Frames) -> None:
        """A game's roster changed."""

    def publish_notices(self, game: str, frames: Frames) -> None:
        """Notices about a game raised by another game's event (or of no game)."""


class Feeds(dict[str, GameFeed]):
    """Every game's feed, by game id; and where shown updates go (``sink``)."""

    def __init__(self, store: Log, engine: Callable[[], Engine], sink: Sink) -> None:
        super().__init__()
        self._store = store
        self._engine = engine              # the current fold (a reload replaces it)
        self._sink = sink
        self.published: dict[str, int] = {}  # the last seq shown to this node's viewers
        self._loaded = False                 # reset() has run: publication has a start
        self.generation = 0                  # the fold shown (``Hub.generation``, given by reset)
        # Games someone waits on to move (``reached``): set, and dropped, when they do.
        self._moved: dict[str, asyncio.Event] = {}

    def reset(self, engine: Engine, seqs: dict[str, int], generation: int) -> None:
        """After a load: every game as the fold left it; deltas before it are not held.
        What was committed on an earlier fold (``Pending.generation``) is not shown: this
        fold, or the follower reading on from it, shows it.

        What was published is kept across loads (``published``). The first load is where
        this node's publication starts: nobody watches yet, and a viewer starts from it (a
        snapshot, or the deltas ``ensure_history`` folds again), so all it folded counts as
        published. After a later load (``Hub.recover``), ``publish_missed`` publishes what
        it folded beyond that, a game this node had not seen from its first ``seq``."""
        self.generation = generation
        self._wake()
        first = not self._loaded
        self._loaded = True
        held = {gid: feed.roster for gid, feed in self.items() if feed.roster is not None}
        self.clear()
        for gid in engine.game_ids():
            seq = seqs.get(gid, 0)
            self[gid] = GameFeed(seq=seq, view=engine.view(gid), base=LOADED, first_seq=seq + 1,
                                 complete=False)
            self.published.setdefault(gid, seq if first else 0)
        for gid, before in held.items():  # the rosters viewers hold, as the log has them now
            if gid in self:
                self._changed(gid, before)

    # ------------------------------------------------------------- updates

    def show(self, p: Pending) -> None:
        """Show a committed event, strictly in seq order: its delta (the event's notices and
        the patch from the view last shown to the view after it) is made here, once, and
        handed to the sink. This node's own commits and the follower's records of other
        nodes' may complete out of order: one that comes early is held until the ones
        before it are shown; one whose fold was replaced meanwhile is that fold's to show."""
        if p.generation != self.generation:
            return
        game = p.record.game
        if game is None:
            self.outside(codec.decode_event(p.record.body), p.notices)
            return
        if p.view is None or p.record.seq is None:
            return
        feed = self.setdefault(game, GameFeed())
        if p.record.seq <= feed.seq:
            return
        if p.record.seq > feed.seq + 1:
            feed.held[p.record.seq] = p
            return
        while True:
            assert p.view is not None
            seq = p.record.seq or 0
            delta = _delta(game, seq, p.notices, p.view, feed)
            feed.seq, feed.view, feed.snapshot = seq, p.view, None
            feed.deltas.append(delta)
            feed.recent.extend(delta.msg.notices)
            if self.published.get(game, 0) < seq:
                self.published[game] = seq
                self._sink.publish(game, delta)
                for other, frames in delta.aside:
                    self._aside(other, frames)
            if seq == 1:
                self._new_game(game)
            nxt = feed.held.pop(seq + 1, None)
            if nxt is None:
                self._wake(game)
                return
            p = nxt

    async def publish_missed(self) -> None:
        """After a reload, viewers get the deltas of events this node had not yet shown
        them (written by another node meanwhile, or its own whose commit it did not see
        land), so they see no gap; a game new to this node, every delta from its first."""
        for gid in list(self):
            feed = self[gid]
            shown = self.published.get(gid, 0)
            if shown >= feed.seq:
                continue
            await self.ensure_history(gid, shown)
            missed = self.since(gid, shown)
            if missed is None or self.get(gid) is not feed:
                raise RuntimeError(f"the deltas of {gid} after {shown} could not be rebuilt")
            for frames in missed:
                self.published[gid] = frames.msg.seq
                self._sink.publish(gid, frames)
            if shown == 0:
                self._new_game(gid)

    def _new_game(self, game: str) -> None:
        """A game's first event was shown: its arena's and its event's viewers follow it from here."""
        engine = self._engine()
        arena, event = engine.arena_of(game), engine.event_of(game)
        if arena is not None and event is not None:
            self._sink.new_game(game, arena, event, self.snapshot(game), self.roster(game))

    async def reached(self, game: str, seq: int, within: float) -> bool:
        """Wait, at most ``within`` seconds, until this node has shown ``game`` up to ``seq``
        (a viewer resuming here from a node that was ahead). True if it has."""
        try:
            async with asyncio.timeout(within):
                while (feed := self.get(game)) is not None and feed.seq < seq:
                    await self._moved.setdefault(game, asyncio.Event()).wait()
        except TimeoutError:
            return False
        return game in self

    def _wake(self, game: str | None = None) -> None:
        """``game`` moved (None: every game was loaded again): its waiters look again."""
        moved = [self._moved.pop(game, None)] if game is not None else list(self._moved.values())
        if game is None:
            self._moved.clear()
        for event in moved:
            if event is not None:
                event.set()

    def shown(self) -> dict[str, int]:
        """Each game's latest ``seq`` handed to its viewers, in order: what a heartbeat may
        vouch for. After a reload the fold may be ahead of it until the deltas it folded
        are published (``publish_missed``); a heartbeat that counted those would send every
        viewer to resume for nothing."""
        published = self.published
        return {g: min(feed.seq, published.get(g, 0)) for g, feed in self.items()}

    def _aside(self, game: str, frames: Frames) -> None:
        """Notices about ``game`` that another game's event raised: into its ``recent`` (so a
        display that joins later still reads them) and to its viewers as they are."""
        feed = self.get(game)
        if feed is None:
            return
        feed.recent.extend(frames.msg.notices)
        feed.snapshot = None
        self._sink.publish_notices(game, frames)

    def outside(self, e: ev.Event, notices: list[Notice]) -> None:
        """A committed event of no game (this node's, or another node's through the follower):
        the rosters a registration changes, and the notices it raised about a game (a
        committee's rescind, decrease or increase of an obligation from that game; R15's
        ``obligation.updated`` after an event completes or a team is eliminated) to that game's
        viewers as a ``notices`` frame, so that a committee's console sees its ledger change.
        They are not kept in the game's ``recent``: they are about its record, not its play;
        an alert to a game (a rescind's ``no_longer_owed``, which answers an alert of its
        set-up) is, like one that another game's event raised (``_aside``)."""
        self.registered(e)
        about: dict[str, list[Notice]] = {}
        alerts: dict[str, list[Notice]] = {}
        for n in notices:
            if n.game is not None and n.game in self:
                (alerts if isinstance(n, Alert) else about).setdefault(n.game, []).append(n)
        for game, ns in about.items():
            self._sink.publish_notices(game, Frames.of(pr.Notices(game=game, notices=ns)))
        for game, ns in alerts.items():
            self._aside(game, Frames.of(pr.Notices(game=game, notices=ns)))

    def registered(self, e: ev.Event) -> None:
        """A committed event of no game: if it registers a team or a player, names the
        tournament event of games set up before it, or schedules a game, the viewers of every
        game whose roster it changes get the new roster (this node's commits, and other
        nodes' through the follower)."""
        if isinstance(e, ev.TeamRegistered):
            games = self._engine().rosters_of(e.team)
        elif isinstance(e, ev.PlayerRegistered):
            games = self._engine().rosters_of(e.player)
        elif isinstance(e, ev.EventSetup):
            games = self._engine().games_of_event(e.event)
        elif isinstance(e, ev.GameScheduled):
            games = [e.game]
        else:
            return
        for gid in games:
            feed = self.get(gid)
            if feed is not None and feed.roster is not None:  # (else made when first needed)
                self._changed(gid, feed.roster)

    def _changed(self, game: str, before: Frames) -> None:
        """Make ``game``'s roster again; publish it if it differs from ``before``."""
        frames = self[game].roster = self._roster(game)
        if frames.json != before.json:
            self._sink.publish_roster(game, frames)

    def _roster(self, game: str) -> Frames:
        r = self._engine().roster(game)
        return Frames.of(pr.RosterFrame(game=game, home=r.home, away=r.away, players=r.players,
                                        event_name=r.event_name, kits=r.kits, schedule=r.schedule))

    # ------------------------------------------------------------- viewers

    def roster(self, game: str) -> Frames:
        """The game's ``roster`` frame, sent after every snapshot and catch-up."""
        feed = self[game]
        if feed.roster is None:
            feed.roster = self._roster(game)
        return feed.roster

    def snapshot(self, game: str, *, reset: bool = False, reason: str | None = None) -> Frames:
        feed = self[game]
        if not reset and feed.snapshot is not None:
            return feed.snapshot
        assert feed.view is not None
        frames = Frames.of(pr.Snapshot(game=game, seq=feed.seq, epoch=self._store.epoch,
                                       view=feed.view, reset=reset, reason=reason,
                                       recent=list(feed.recent)))
        if not reset:
            feed.snapshot = frames
        return frames

    def since(self, game: str, seq: int) -> list[Frames] | None:
        """The deltas after ``seq``, or None if they can't be served exactly."""
        feed = self[game]
        if seq > feed.seq or (seq + 1 < feed.first_seq and seq != feed.seq):
            return None
        return feed.deltas[seq + 1 - feed.first_seq:] if seq < feed.seq else []

    def needs_history(self, game: str, seq: int) -> bool:
        """Whether the deltas after ``seq`` go back further than this process holds."""
        feed = self[game]
        return seq < feed.seq and seq + 1 < feed.first_seq

    async def ensure_history(self, game: str, seq: int) -> None:
        """Make the deltas after ``seq`` available, folding the game's log again if this
        process hasn't seen them (after a restart): deltas are a function of the log."""
        while True:
            feed = self[game]
            if not self.needs_history(game, seq):
                return
            held_from = feed.first_seq
            records = [r for r in await self._store.game_records(game)
                       if r.seq is not None and r.seq < held_from]
            if self.get(game) is feed:
                break
            # Loaded again meanwhile (Hub.recover): the new feed is the one to rebuild.
        if feed.first_seq != held_from or feed.complete:
            return  # rebuilt meanwhile
        engine = self._engine()
        fork, along = engine.fork_game(game), engine.names_along(game)
        deltas: list[Frames] = []
        before = GameFeed()
        for r in records:
            e = codec.decode_event(r.body)
            out = fork.setup_notices(game) if isinstance(e, ev.GameSetup) else fork.feed(e)
            names = along.at(e.id)  # the names its viewers read then
            deltas.append(_delta(game, r.seq or 0, [render(n, names) for n in out], fork.view(game), before))
        feed.deltas = deltas + feed.deltas
        feed.first_seq = 1
        feed.complete = True


def _delta(game: str, seq: int, notices: list[Notice], view: GameView, feed: GameFeed) -> Frames:
    after = msgspec.to_builtins(view)
    before = msgspec.to_builtins(feed.view) if feed.base is LOADED else feed.base
    changes = [("", None, after)] if before is None else diff_builtins(before, after)
    feed.base = after
    # A notice about another game (an alert that this event suspends a player from a game
    # already begun) goes to that game's viewers; the delta keeps its own game's, so that a
    # delta rebuilt from this game's events alone (``Engine.fork_game``) is the same bytes.
    own: list[Notice] = []
    aside: dict[str, list[Notice]] = {}
    for n in notices:
        if n.game is None or n.game == game:
            own.append(n)
        else:
            aside.setdefault(n.game, []).append(n)
    frames = Frames.of(pr.Delta(game=game, seq=seq, notices=own,
                                patch=[pr.Patch(p, v) for p, _, v in changes]))
    if aside:
        frames.aside = tuple((g, Frames.of(pr.Notices(game=g, notices=ns))) for g, ns in aside.items())
    return frames
