"""Fan-out to viewers: encode once, write at once, and nobody waits for anybody.

Like websockets' ``broadcast()``: the hub encodes an update once, and
``Frames.wire`` builds the whole WebSocket frame once (server frames are
unmasked, so every viewer gets the same bytes). ``publish`` writes those bytes
straight to each viewer's transport while its write buffer is under the
high-water mark, a chunk of viewers per turn of the event loop, so an ack or a
new event never waits behind a whole fan-out.

A viewer whose socket falls behind gets a bounded backlog, fed as its buffer
empties: by the socket's own ``resume_writing`` on the task-free endpoint
(``viewer_socket.py``: no task, no timer polling), by one drain task on
aiohttp's. When the backlog is full it is cleared
and the viewer is sent a fresh snapshot instead (``reason: "slow"``); a viewer
that can't take a frame within ``send_timeout`` is closed (1013). Deltas at or
below the last sequence a viewer was sent are skipped, so a snapshot followed
by deltas never repeats anything. An idle viewer costs no task and no queue.

Every snapshot of a game a viewer is sent (or the deltas of a resume) is
followed by the game's ``roster`` frame; a roster that changes is published
like a delta, whole (the newest replaces any other).

A viewer that subscribed to a game's broadcast graphics (``graphics: true``) also gets its
``graphics`` state (``graphics.Board``, encoded once) after that, then each new one as an
operator's command changes it, through the same bounded writes; a fresh snapshot (slow,
reset) is followed by it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
from collections import deque
from collections.abc import Callable
from typing import Protocol

from ..hub.feeds import Feeds, Frames
from ..ops.metrics import Metrics
from ..wire.protocol import CloseCode, Format, msgpack_out
from .graphics import Board

log = logging.getLogger("arena_stream.fanout")

_RESYNC = "resync"
_FRAME = "frame"
CHUNK = 64  # viewers written per turn of the event loop

Item = tuple[str, str, int, Frames | None]


class Socket(Protocol):
    """A viewer's WebSocket, as the service closes it: aiohttp's, or the task-free one."""

    @property
    def closed(self) -> bool: ...

    async def close(self, *, code: int = ..., message: bytes = ...) -> bool: ...


class Watcher:
    __slots__ = ("arenas", "backlog", "binary", "evented", "events", "games", "graphics", "high", "maxsize",
                 "pinged", "sent", "task", "transport", "ws")

    def __init__(self, ws: Socket, fmt: Format, maxsize: int,
                 transport: asyncio.Transport | None = None, *, evented: bool = False) -> None:
        self.ws = ws
        # Its socket calls ``Fanout.drain`` when it can take more (resume_writing): no drain task.
        self.evented = evented
        self.maxsize = maxsize
        self.transport = transport
        self.binary = fmt == "msgpack"   # MessagePack frames, else JSON
        # The buffer size past which the viewer is behind: the transport's high-water mark.
        self.high = transport.get_write_buffer_limits()[1] if transport is not None else 0
        self.backlog: deque[Item] | None = None
        self.games: set[str] = set()
        self.arenas: set[str] = set()
        self.events: set[str] = set()     # the tournament events whose every game it follows
        self.graphics: set[str] = set()   # the games whose broadcast graphics it follows
        self.sent: dict[str, int] = {}
        self.task: asyncio.Task[None] | None = None
        self.pinged: float | None = None  # when its unanswered ping went (pings.py)


class Departures:
    """What is left to do for viewers that left, ``CHUNK`` at a time, each chunk a turn of
    the loop: when thousands leave at once (the end of a game, a network blip), the loop
    still turns every few milliseconds. What must happen at once does (the transport is
    taken from the watcher: nothing more is written to it); the rest is bookkeeping."""

    CHUNK = 256

    def __init__(self) -> None:
        self.queue: deque[Callable[[], object]] = deque()
        self.scheduled = False

    def add(self, job: Callable[[], object]) -> None:
        self.queue.append(job)
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_running_loop().call_soon(self.run)

    def run(self) -> None:
        queue = self.queue
        try:
            for _ in range(min(self.CHUNK, len(queue))):
                queue.popleft()()
        finally:  # a job that fails must not leave the rest queued for ever
            if queue:
                asyncio.get_running_loop().call_soon(self.run)
            else:
                self.scheduled = False


class Fanout:
    """This node's viewers, and what each is sent (the ``Sink`` of ``feeds.Feeds``)."""

    def __init__(self, feeds: Callable[[], Feeds], metrics: Metrics, *, send_timeout: float) -> None:
        self._feeds = feeds  # where a viewer who fell behind gets a fresh snapshot (the hub's, built after)
        self.metrics = metrics
        self.send_timeout = send_timeout
        self.topics: dict[str, set[Watcher]] = {}
        self.arena_topics: dict[str, set[Watcher]] = {}
        self.event_topics: dict[str, set[Watcher]] = {}
        self.graphics_topics: dict[str, set[Watcher]] = {}
        self.graphics = Board()   # each game's broadcast graphics, on this node
        self.watchers: set[Watcher] = set()
        self._pending: deque[tuple[tuple[Watcher, ...], int, Item]] = deque()
        self._pumping = False
        self.departures = Departures()

    # -------------------------------------------------------------- viewers

    def start(self, w: Watcher) -> None:
        self.watchers.add(w)

    def leave(self, w: Watcher) -> asyncio.Task[None] | None:
        """``w`` is sent nothing more. Its drain task, if it has one, is cancelled and handed
        back: the caller awaits its end."""
        self.watchers.discard(w)
        for g in w.games:
            self.topics.get(g, set()).discard(w)
        for topics, names in ((self.arena_topics, w.arenas), (self.event_topics, w.events)):
            for name in names:   # any name may be followed: one no viewer follows is forgotten
                followers = topics.get(name)
                if followers is not None:
                    followers.discard(w)
                    if not followers:
                        del topics[name]
        for g in w.graphics:
            self.graphics_topics.get(g, set()).discard(w)
        w.backlog = None
        task = w.task
        if task is not None:
            task.cancel()
        return task

    def follow(self, w: Watcher, game: str, catch_up: list[Frames] | None, seq: int,
               snapshot: Frames | None, roster: Frames) -> None:
        """Add ``w`` to ``game``'s topic and send what it needs first (the snapshot or the
        catch-up, then the roster), with no await in between, so nothing published meanwhile
        is missed or repeated."""
        self.topics.setdefault(game, set()).add(w)
        w.games.add(game)
        w.sent[game] = seq  # ``seq``: the game's latest, which the snapshot or catch-up reaches
        for frames in [snapshot] if snapshot is not None else catch_up or []:
            self._put(w, (_FRAME, game, -1, frames))
        self._put(w, (_FRAME, game, -1, roster))

    def follow_graphics(self, w: Watcher, game: str) -> None:
        """Add ``w`` to the viewers of ``game``'s graphics and send it the state now."""
        if game in w.graphics:
            return
        self.graphics_topics.setdefault(game, set()).add(w)
        w.graphics.add(game)
        self._put(w, (_FRAME, game, -1, self.graphics.frames(game)))

    def publish_graphics(self, game: str, frames: Frames) -> None:
        """A game's graphics changed: every viewer of them gets the new state, whole."""
        self._fan(tuple(self.graphics_topics.get(game, ())), (_FRAME, game, -1, frames))

    def follow_arena(self, w: Watcher, arena: str) -> None:
        self.arena_topics.setdefault(arena, set()).add(w)
        w.arenas.add(arena)

    def follow_event(self, w: Watcher, event: str) -> None:
        self.event_topics.setdefault(event, set()).add(w)
        w.events.add(event)

    # ------------------------------------------------------------ publishing

    def publish(self, game: str, frames: Frames) -> None:
        """Write to every viewer, CHUNK viewers per turn of the event loop, so that an ack
        (or anything else) never waits behind a whole fan-out."""
        self.metrics.broadcasts.inc()
        self._fan(tuple(self.topics.get(game, ())), (_FRAME, game, frames.msg.seq, frames))

    def publish_roster(self, game: str, frames: Frames) -> None:
        """A game's roster changed: every viewer of it gets the new one."""
        self._fan(tuple(self.topics.get(game, ())), (_FRAME, game, -1, frames))

    def publish_notices(self, game: str, frames: Frames) -> None:
        """Notices about ``game`` raised by another game's event: every viewer of it gets them."""
        self._fan(tuple(self.topics.get(game, ())), (_FRAME, game, -1, frames))

    def _fan(self, targets: tuple[Watcher, ...], item: Item) -> None:
        self._pending.append((targets, 0, item))
        if not self._pumping:
            self._pumping = True
            asyncio.get_running_loop().call_soon(self._pump)

    def _pump(self) -> None:
        if not self._pending:
            self._pumping = False
            return
        targets, start, item = self._pending[0]
        end = min(len(targets), start + CHUNK)
        for w in targets[start:end]:
            self._put(w, item)
        if end == len(targets):
            self._pending.popleft()
        else:
            self._pending[0] = (targets, end, item)
        if self._pending:
            asyncio.get_running_loop().call_soon(self._pump)
        else:
            self._pumping = False

    def new_game(self, game: str, arena: str, event: str, snapshot: Frames, roster: Frames) -> None:
        """A game was set up: viewers of its arena or of its event follow it from its first
        frame (a viewer of both, once)."""
        for w in (*self.arena_topics.get(arena, ()), *self.event_topics.get(event, ())):
            if game not in w.games:
                self.follow(w, game, None, 0, snapshot, roster)

    def send_one(self, w: Watcher, frames: Frames) -> None:
        """A reply to one viewer (a pong, an error, presence), in order with its updates."""
        self._put(w, (_FRAME, "", -1, frames))

    def everyone(self, frames: Frames) -> None:
        self._fan(tuple(self.watchers), (_FRAME, "", 0, frames))

    # --------------------------------------------------------------- writing

    def _put(self, w: Watcher, item: Item) -> None:
        """Write now if the socket keeps up; else keep it in the viewer's bounded backlog."""
        t = w.transport
        if t is None or t.is_closing():
            return
        if w.backlog is None and t.get_write_buffer_size() <= w.high:
            self._send(w, t, item)
            return
        if w.backlog is None:
            w.backlog = deque()
        if len(w.backlog) >= w.maxsize:
            self._overflow(w)
        else:
            w.backlog.append(item)
        if w.task is None and not w.evented:
            w.task = asyncio.create_task(self._drain(w, t), name="viewer-drain")

    def drain(self, w: Watcher) -> None:
        """``w``'s socket can take more (``resume_writing``): send from its backlog until the
        backlog is empty or the buffer is past the high-water mark again (the socket is then
        paused, and calls this again when it resumes)."""
        t = w.transport
        while w.backlog and t is not None and not t.is_closing():
            if t.get_write_buffer_size() > w.high:
                return
            self._send(w, t, w.backlog.popleft())
        w.backlog = None

    def _send(self, w: Watcher, t: asyncio.Transport, item: Item) -> None:
        kind, game, seq, frames = item
        if kind == _RESYNC:
            feeds = self._feeds()
            snapshot = feeds.snapshot(game, reset=True, reason="slow")
            w.sent[game] = feeds[game].seq
            t.write(wire(snapshot, w.binary))
            frames = feeds.roster(game)
            if game in w.graphics:   # its backlog, graphics included, was dropped
                t.write(wire(frames, w.binary))
                frames = self.graphics.frames(game)
        elif seq > 0:
            if seq <= w.sent.get(game, 0):
                return
            w.sent[game] = seq
        assert frames is not None
        t.write(wire(frames, w.binary))

    def _overflow(self, w: Watcher) -> None:
        """A slow viewer: forget its backlog; it gets a fresh snapshot of each game."""
        self.metrics.queue_drops.inc()
        assert w.backlog is not None
        w.backlog.clear()
        for g in w.games:
            w.backlog.append((_RESYNC, g, 0, None))

    async def _drain(self, w: Watcher, t: asyncio.Transport) -> None:
        """Feed a viewer that fell behind as its buffer empties; close it if it stalls."""
        try:
            loop = asyncio.get_running_loop()
            while w.backlog:
                started = loop.time()
                while t.get_write_buffer_size() > w.high:
                    stuck = loop.time() - started
                    if stuck >= self.send_timeout or t.is_closing():
                        self.metrics.viewer_drops.inc()
                        await _close(w.ws, t, self.send_timeout)
                        return
                    # A viewer a moment behind (its socket busy, its device busy) is looked
                    # at again within milliseconds; one stuck for a second, four times a
                    # second: a thousand stalled viewers must not spin the loop.
                    await asyncio.sleep(0.002 if stuck < 0.05 else 0.01 if stuck < 1.0 else 0.25)
                self.drain(w)   # up to the high-water mark, or all of it
        finally:
            w.task = None


async def _close(ws: Socket, t: asyncio.Transport, grace: float) -> None:
    """Close with 1013. A peer that takes nothing can't take the close frame either (the close
    would wait for it for ever, and hold the socket and its buffers): after ``grace``, cut it."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(grace):
            await ws.close(code=CloseCode.TOO_SLOW, message=b"too slow")
    if t.get_write_buffer_size():
        t.abort()


def wire(frames: Frames, binary: bool) -> bytes:
    """An update's whole WebSocket frame, made once for every viewer: server frames are
    unmasked, so every viewer gets the same bytes (RFC 6455 §5.2; no compression on
    viewer sockets). Its header is written here (``ws_frame``), byte for byte what
    websockets' own ``Frame.serialize`` makes (a test holds them equal), which costs
    about 10,000 instructions more per update; framing each viewer's copy through its
    ``ServerProtocol`` would cost 1.9 µs per delivered frame (docs/performance.md)."""
    if binary:
        if frames.wire_msgpack is None:
            frames.wire_msgpack = ws_frame(0x82, msgpack_out.encode(frames.msg))
        return frames.wire_msgpack
    if frames.wire_json is None:
        frames.wire_json = ws_frame(0x81, frames.json)
    return frames.wire_json


def ws_frame(first: int, payload: bytes) -> bytes:
    """A final, unmasked frame: ``first`` (FIN and the opcode), the length, the payload."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", first, n)
    elif n < 65536:
        head = struct.pack("!BBH", first, 126, n)
    else:
        head = struct.pack("!BBQ", first, 127, n)
    return head + payload
