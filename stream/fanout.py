"""Fan-out to viewers: encode once, a bounded queue per viewer, nobody waits for anybody.

Like websockets' ``broadcast()``: ``publish`` encodes nothing (the hub
encoded the update once) and never awaits; it drops a reference to the
frame into each viewer's bounded queue. Each viewer has one writer task that
sends from its queue. A viewer whose queue is full is not waited for: its
queue is cleared and it is sent a fresh snapshot instead (``reason:
"slow"``). A viewer that can't take a frame within ``send_timeout`` is
closed. Deltas at or below the last sequence a viewer was sent are skipped,
so a snapshot followed by deltas never repeats anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from aiohttp import WSMsgType, web

from .hub import Frames, Hub
from .metrics import Metrics
from .protocol import Format

log = logging.getLogger("arena_stream.fanout")

_RESYNC = "resync"
_FRAME = "frame"
_CLOSE = "close"


class Watcher:
    __slots__ = ("arenas", "fmt", "games", "queue", "sent", "task", "ws")

    def __init__(self, ws: web.WebSocketResponse, fmt: Format, maxsize: int) -> None:
        self.ws = ws
        self.fmt = fmt
        # (kind, game, seq, frames): bounded, so a stalled socket can't hold memory.
        self.queue: asyncio.Queue[tuple[str, str, int, Frames | None]] = asyncio.Queue(maxsize)
        self.games: set[str] = set()
        self.arenas: set[str] = set()
        self.sent: dict[str, int] = {}
        self.task: asyncio.Task[None] | None = None


class Fanout:
    def __init__(self, hub: Hub, metrics: Metrics, *, send_timeout: float) -> None:
        self.hub = hub
        self.metrics = metrics
        self.send_timeout = send_timeout
        self.topics: dict[str, set[Watcher]] = {}
        self.arena_topics: dict[str, set[Watcher]] = {}
        self.watchers: set[Watcher] = set()

    # -------------------------------------------------------------- viewers

    def start(self, w: Watcher) -> None:
        self.watchers.add(w)
        w.task = asyncio.create_task(self._write(w), name="viewer-writer")

    async def stop(self, w: Watcher) -> None:
        self.watchers.discard(w)
        for g in w.games:
            self.topics.get(g, set()).discard(w)
        for a in w.arenas:
            self.arena_topics.get(a, set()).discard(w)
        if w.task is not None:
            w.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await w.task

    def follow(self, w: Watcher, game: str, catch_up: list[Frames] | None, seq: int,
               snapshot: Frames | None) -> None:
        """Add ``w`` to ``game``'s topic and queue what it needs first, with no
        await in between, so nothing published meanwhile is missed or repeated."""
        self.topics.setdefault(game, set()).add(w)
        w.games.add(game)
        w.sent[game] = seq  # ``seq``: the game's latest, which the snapshot or catch-up reaches
        for frames in [snapshot] if snapshot is not None else catch_up or []:
            self._put(w, (_FRAME, game, -1, frames))

    def follow_arena(self, w: Watcher, arena: str) -> None:
        self.arena_topics.setdefault(arena, set()).add(w)
        w.arenas.add(arena)

    # ------------------------------------------------------------ publishing

    def publish(self, game: str, frames: Frames, seq: int) -> None:
        """Queue one update for every viewer of ``game``; never waits."""
        self.metrics.broadcasts.inc()
        for w in tuple(self.topics.get(game, ())):
            self._put(w, (_FRAME, game, seq, frames))

    def new_game(self, game: str, arena: str) -> None:
        """A game was set up: viewers of its arena follow it from its first frame."""
        for w in tuple(self.arena_topics.get(arena, ())):
            if game not in w.games:
                self.follow(w, game, None, 0, self.hub.snapshot(game))

    def send_one(self, w: Watcher, frames: Frames) -> None:
        """A reply to one viewer (a pong, an error), in order with its updates."""
        self._put(w, (_FRAME, "", -1, frames))

    def everyone(self, frames: Frames) -> None:
        for w in tuple(self.watchers):
            self._put(w, (_FRAME, "", 0, frames))

    def _put(self, w: Watcher, item: tuple[str, str, int, Frames | None]) -> None:
        try:
            w.queue.put_nowait(item)
        except asyncio.QueueFull:
            self._overflow(w)

    def _overflow(self, w: Watcher) -> None:
        """A slow viewer: forget its backlog; it gets a fresh snapshot of each game."""
        self.metrics.queue_drops.inc()
        while True:
            try:
                w.queue.get_nowait()
            except asyncio.QueueEmpty:
                break
        for g in w.games:
            if w.queue.full():
                break
            w.queue.put_nowait((_RESYNC, g, 0, None))

    # --------------------------------------------------------------- writing

    async def _write(self, w: Watcher) -> None:
        binary = w.fmt == "msgpack"
        opcode = WSMsgType.BINARY if binary else WSMsgType.TEXT
        try:
            while True:
                kind, game, seq, frames = await w.queue.get()
                if kind == _RESYNC:
                    frames = self.hub.snapshot(game, reset=True, reason="slow")
                    w.sent[game] = self.hub.feeds[game].seq
                elif seq > 0:  # a live delta: skip what a snapshot or catch-up already covered
                    if seq <= w.sent.get(game, 0):
                        continue
                    w.sent[game] = seq
                assert frames is not None
                data = frames.msgpack() if binary else frames.json
                async with asyncio.timeout(self.send_timeout):
                    await w.ws.send_frame(data, opcode)
        except TimeoutError:
            self.metrics.viewer_drops.inc()
            log.info("viewer too slow; closing")
            await _close(w.ws)
        except (ConnectionResetError, RuntimeError):
            await _close(w.ws)


async def _close(ws: web.WebSocketResponse) -> None:
    with contextlib.suppress(Exception):
        await ws.close(code=1013, message=b"too slow")


