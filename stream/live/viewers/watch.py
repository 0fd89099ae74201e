"""``/ws/watch``: scoreboards, overlays and every other viewer (docs/protocol-viewer.md).

A viewer subscribes to a game, an arena or a tournament event, in a ``subscribe`` frame
or in the URL (``/ws/watch?game=G&since=N&epoch=E``; these carry no secret). It
gets a ``snapshot``, or, when it resumes with the ``seq`` and ``epoch`` it last
saw, exactly the deltas it missed; then every delta as it is committed, and
a ``heartbeat`` every few seconds. ``?format=msgpack`` switches every frame
to MessagePack (binary frames) of the same schema.

A game subscription with ``graphics: true`` (``?graphics=1``) also follows the game's
broadcast graphics (``graphics`` frames); a socket authenticated with a token that may
control them sends ``graphics`` commands (``graphics.py``, docs/protocol-viewer.md).

``WatchSession`` is one viewer's side of all this, whatever carries its socket: the
task-free endpoint (``viewer_socket.py``, every fresh connection) and aiohttp's
(``watch_ws``, an upgrade on a connection that served HTTP before) feed it the
viewer's messages, and it answers through the fan-out, in order with the updates.
It holds no task of its own, except while a subscription waits on the log (a resume whose
deltas the store rebuilds, or which waits for this node to catch up; with several nodes, a
game this node has not read yet), and no timer but the unauthenticated socket's deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections import deque
from collections.abc import Mapping
from typing import Any, Protocol

import msgspec
from aiohttp import WSMsgType, web

from ...errors import AuthError, NotStored, ProtocolError
from ...tasks import stop
from ..broadcast.fanout import Watcher, wire
from ..broadcast.graphics import may_control
from ..broadcast.pings import heard
from ..hub.feeds import Frames
from ..hub.races import CATCH_UP_S
from ..ops.wallclock import now_ms
from ..service import Service
from ..wire import auth
from ..wire import protocol as pr

log = logging.getLogger("arena_stream.watch")

#: How often a resume refused because the store is down is logged, at most (with a count).
STORE_DOWN_LOG_S = 30.0
#: Messages a viewer may send while its resume waits for the store; more is a flood (1008).
WAITING_MAX = 16


class _StoreDownLog:
    """One log line for the first resume refused while the store is down, then at most one
    every ``STORE_DOWN_LOG_S``, counting those in between: an outage can meet a storm of
    resuming viewers."""

    def __init__(self) -> None:
        self.last = -STORE_DOWN_LOG_S
        self.since_last = 0

    def __call__(self, game: str, reason: str) -> None:
        self.since_last += 1
        now = time.monotonic()
        if now - self.last >= STORE_DOWN_LOG_S:
            log.warning("resume refused: the store can't be read to rebuild the deltas or reach the "
                        "viewer's seq; closed 1001",
                        extra={"game": game, "reason": reason, "refused": self.since_last})
            self.last, self.since_last = now, 0


#: One per service (several can live in one process): its own outage, its own count.
_store_down: weakref.WeakKeyDictionary[Service, _StoreDownLog] = weakref.WeakKeyDictionary()


class Closer(Protocol):
    """How a session closes its viewer's socket: at once, without waiting for the peer."""

    def close_soon(self, code: int, reason: bytes) -> None: ...


def _out_of_scope(svc: Service, sub: pr.Subscribe, claims: auth.Claims | None) -> pr.Error | None:
    """A scoped display token watches only its game or arena, never a whole event."""
    if sub.arena is None and sub.event is not None:
        return may_watch_event(svc, sub.event, claims)
    if claims is None:
        return None
    arena = sub.arena
    if sub.game is not None and svc.hub.engine.has_game(sub.game):
        arena = svc.hub.engine.arena_of(sub.game)
    try:
        auth.check_scope(claims, sub.game if sub.arena is None else None, arena)
    except AuthError as err:
        return pr.Error(code=err.code, detail=err.detail)
    return None


def may_watch_event(svc: Service, event: str, claims: auth.Claims | None) -> pr.Error | None:
    """Whether this viewer may follow every game of ``event``: anyone who may watch
    (without a token under public viewing, or with any token) but a token scoped to one
    game or arena. The one place where who may watch an event is decided (an event of
    restricted viewing would be read here, from ``svc.hub.engine``)."""
    if claims is not None:
        try:
            auth.check_event_scope(claims, event)
        except AuthError as err:
            return pr.Error(code=err.code, detail=err.detail)
    return None


#: How long a resume from a ``seq`` this node has not shown yet waits for it (a viewer that
#: moved from a node a few events ahead) before the documented reset; and how far ahead it
#: may be (a game makes a few hundred events an hour: a node further behind than this is not
#: catching up within seconds, and a ``since`` beyond it is no other node's).
AHEAD_WAIT_S = 4.0
AHEAD_MAX = 1_000


def _must_wait(svc: Service, w: Watcher, sub: pr.Subscribe) -> bool:
    """A game subscription that can't be answered at once: with several nodes, a game this
    node does not know (set up through another node, its set-up maybe not read here yet:
    ``unknown_game`` only once this node has read the whole log); or a resume, of a game the
    viewer does not follow yet, from further back than this node holds (the store must
    rebuild the deltas), or from further on than this node has shown (it waits for this node
    to catch up)."""
    game = sub.game
    if game is None or game in w.games:
        return False
    if sub.arena is not None or sub.event is not None:   # (they win over ``game``)
        return False
    feeds = svc.hub.feeds
    if game not in feeds:
        return svc.hub.following
    return (sub.since is not None and sub.epoch == svc.hub.store.epoch
            and (feeds.needs_history(game, sub.since) or _ahead(feeds[game].seq, sub.since)))


def _ahead(shown: int, since: int) -> bool:
    return shown < since <= shown + AHEAD_MAX


def subscribe(svc: Service, w: Watcher, sub: pr.Subscribe,
              claims: auth.Claims | None = None) -> pr.Error | None:
    """Follow a game, an arena or an event, or resume a game, at once: nothing awaits from
    the check to ``follow()``, so no delta can slip in between. (A resume from further back than this
    node holds waits for ``Feeds.ensure_history`` first, and one from further on than it has
    shown for ``Feeds.reached``: ``WatchSession``.)"""
    if (refused := _out_of_scope(svc, sub, claims)) is not None:
        return refused
    engine, feeds = svc.hub.engine, svc.hub.feeds
    if sub.arena is None and sub.event is not None and claims is None and engine.private(sub.event):
        return None   # as an event never set up: nothing comes (docs/public.md, "What is public")
    if sub.arena is not None or sub.event is not None:
        if sub.arena is not None:
            svc.fanout.follow_arena(w, sub.arena)
            games = [gid for gid in engine.game_ids() if engine.arena_of(gid) == sub.arena]
        else:
            assert sub.event is not None
            svc.fanout.follow_event(w, sub.event)
            games = engine.games_of_event(sub.event)
        for gid in games:   # those it follows already (a resume, say) go on as they are
            if gid in feeds and gid not in w.games:
                svc.fanout.follow(w, gid, None, feeds[gid].seq, feeds.snapshot(gid), feeds.roster(gid))
        return None
    game = sub.game
    if game is None:
        return pr.Error(code="invalid_frame", detail="subscribe needs a game, an arena or an event")
    if game not in svc.hub.feeds:
        return pr.Error(code="unknown_game", detail=f"no game {game!r} has been set up")
    if game in w.games:
        if sub.graphics:   # followed already: its graphics too, from now on
            svc.fanout.follow_graphics(w, game)
        return None
    feed = svc.hub.feeds[game]
    reason: str | None = None
    if sub.since is not None:
        catch_up = svc.hub.feeds.since(game, sub.since) if sub.epoch == svc.hub.store.epoch else None
        if catch_up is not None:
            svc.fanout.follow(w, game, catch_up, feed.seq, None, svc.hub.feeds.roster(game))
            svc.fanout.send_one(w, svc.presence_frames(game))
            if sub.graphics:
                svc.fanout.follow_graphics(w, game)
            return None
        reason = "resume_unavailable"
    snap = svc.hub.feeds.snapshot(game, reset=reason is not None, reason=reason)
    svc.fanout.follow(w, game, None, feed.seq, snap, svc.hub.feeds.roster(game))
    svc.fanout.send_one(w, svc.presence_frames(game))
    if sub.graphics:
        svc.fanout.follow_graphics(w, game)
    return None


def graphics_command(svc: Service, w: Watcher, cmd: pr.Graphics, claims: auth.Claims | None,
                     ) -> pr.Error | None:
    """An operator's command for a game's broadcast graphics: the new state goes to every
    viewer of them (and to the sender, if it is not one); a refusal, to the sender only."""
    if cmd.game not in svc.hub.feeds:
        return pr.Error(code="unknown_game", detail=f"no game {cmd.game!r} has been set up", id=cmd.id)
    try:
        may_control(svc.hub.engine, claims, cmd.game)
        assert claims is not None
        frames = svc.fanout.graphics.execute(svc.hub.feeds, cmd, claims.sub, now_ms())
    except (AuthError, ProtocolError) as err:
        return pr.Error(code=err.code, detail=err.detail, id=cmd.id)
    svc.fanout.publish_graphics(cmd.game, frames)
    if cmd.game not in w.graphics:
        svc.fanout.send_one(w, frames)
    return None


def query_subscription(query: Mapping[str, str]) -> pr.Subscribe | pr.Error | None:
    """A subscription in the URL (it carries no secret), checked like a frame."""
    if "game" not in query and "arena" not in query and "event" not in query:
        return None
    try:
        raw: dict[str, object] = {k: query[k] for k in ("game", "arena", "event", "epoch") if k in query}
        if query.get("graphics", "") in ("1", "true"):
            raw["graphics"] = True
        since = query.get("since", "")
        if since.isascii() and since.isdigit():  # anything else: no resume, a fresh snapshot
            raw["since"] = int(since) if len(since) <= 18 else 2**62  # far beyond: can't resume
        return msgspec.convert({"type": "subscribe", **raw}, pr.Subscribe)
    except (msgspec.ValidationError, ValueError) as err:
        return pr.Error(code="invalid_frame", detail=f"the subscription in the URL: {err}")


class WatchSession:
    """One viewer: its authentication, its subscriptions and its answers, fed message by
    message. Messages are handled in the order they came; while a resume waits for the
    store (the only wait there is), the next ones wait behind it."""

    __slots__ = ("authed", "claims", "closer", "deadline", "decoder", "first", "junk", "svc",
                 "task", "w", "waiting")

    def __init__(self, svc: Service, w: Watcher, closer: Closer,
                 query: Mapping[str, str]) -> None:
        self.svc = svc
        self.w = w
        self.closer = closer
        self.decoder = pr.watch_in_msgpack if w.binary else pr.watch_in_json
        self.authed = svc.config.public_watch
        self.claims: auth.Claims | None = None
        self.junk = svc.junk_bucket()
        self.task: asyncio.Task[None] | None = None
        self.waiting: deque[bytes] | None = None
        self.deadline: asyncio.TimerHandle | None = None
        first = query_subscription(query)
        self.first = first if isinstance(first, pr.Subscribe) else None
        if isinstance(first, pr.Error):
            self._reply(first)
        if not self.authed:
            self.deadline = asyncio.get_running_loop().call_later(
                svc.config.auth_timeout, closer.close_soon, pr.CloseCode.AUTH, b"authenticate")
        elif self.first is not None:
            self._subscribe(self.first)

    def message(self, data: bytes) -> None:
        """A text or binary message from the viewer (its socket has called ``heard``)."""
        if self.waiting is not None:
            if len(self.waiting) >= WAITING_MAX:
                self.closer.close_soon(pr.CloseCode.POLICY, b"too many frames")
                return
            self.waiting.append(data)
            return
        self._handle(data)

    def close(self) -> None:
        """The socket is gone: nothing of this viewer's is left running, or held by its token."""
        if self.claims is not None:
            self.svc.untrack(self.claims.jti, self.w.ws)
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None
        if self.task is not None:
            self.task.cancel()
        self.waiting = None

    # ------------------------------------------------------------------ inside

    def _handle(self, data: bytes) -> None:
        svc = self.svc
        try:
            frame = self.decoder.decode(data)
        except (msgspec.DecodeError, RecursionError) as err:
            if not self.junk.take():  # a flood of junk is closed, not answered frame by frame
                self.closer.close_soon(pr.CloseCode.POLICY, b"too many invalid frames")
                return
            self._reply(pr.Error(code="invalid_frame", detail=str(err)[:200]))
            return
        if isinstance(frame, pr.Auth):
            try:
                claims = svc.verify(frame.token)
            except AuthError as err:
                # Straight to the socket, not behind a backlog: the close must not overtake it.
                t = self.w.transport
                if t is not None and not t.is_closing():
                    t.write(wire(Frames.of(pr.Error(code=err.code, detail=err.detail)), self.w.binary))
                self.closer.close_soon(pr.CloseCode.AUTH, err.code.encode())
                return
            self.authed = True
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None
            if self.claims is not None:  # a second auth frame: the socket is the new token's
                svc.untrack(self.claims.jti, self.w.ws)
            self.claims = claims
            svc.track(claims.jti, self.w.ws)
            if self.first is not None:
                self._subscribe(self.first)
        elif isinstance(frame, pr.Ping):
            self._reply(pr.ServerPong(server_time=now_ms(), device_time=frame.device_time))
        elif isinstance(frame, pr.Graphics):
            self._reply(graphics_command(svc, self.w, frame, self.claims))
        elif not self.authed:
            self._reply(pr.Error(code="auth_required", detail="send an auth frame first"))
        else:
            self._subscribe(frame)

    def _subscribe(self, sub: pr.Subscribe) -> None:
        # The token's scope first: a resume out of it reads nothing from the store.
        if (refused := _out_of_scope(self.svc, sub, self.claims)) is not None:
            self._reply(refused)
            return
        if not _must_wait(self.svc, self.w, sub):
            self._reply(subscribe(self.svc, self.w, sub, self.claims))
            return
        self.waiting = deque()
        self.task = asyncio.create_task(self._resume(sub), name="watch-resume")

    def _store_unavailable(self, game: str, reason: str) -> None:
        """What the viewer's resume needs is in the log, which can't be read now (the store down,
        no majority of its members up): it reconnects with backoff and resumes, exactly, once it can
        (docs/protocol-viewer.md, "Resume")."""
        _store_down.setdefault(self.svc, _StoreDownLog())(game, reason)
        self.closer.close_soon(pr.CloseCode.GOING_AWAY, b"store unavailable")

    async def _resume(self, sub: pr.Subscribe) -> None:
        """Wait (bounded) for this node to read the log to its end if it does not know the
        game, for it to show what the viewer has, or rebuild the deltas it missed from the
        log; then subscribe, then handle what it sent meanwhile."""
        assert sub.game is not None
        hub = self.svc.hub
        feeds = hub.feeds
        try:
            if sub.game not in feeds and not await hub.level_with_log(CATCH_UP_S):
                # Set up through another node, maybe, and not read here yet: the game is
                # unknown only if it is not in the whole log, which this node can't read to
                # its end just now. The viewer comes back, as below.
                self._store_unavailable(sub.game, "this node can't read the log to its end")
                return
            since = sub.since
            if since is not None and sub.epoch == hub.store.epoch and sub.game in feeds:
                if (_ahead(feeds[sub.game].seq, since)
                        and not await feeds.reached(sub.game, since, AHEAD_WAIT_S)
                        and not hub.races.readable):
                    # Still behind, and this node can't read the log to catch up (a failover):
                    # the viewer comes back, as below, rather than step back to what this node
                    # has. (Still behind a log it can read: the reset, in ``subscribe``.)
                    self._store_unavailable(sub.game,
                                            "this node can't read the log to reach the viewer's seq")
                    return
                if sub.game in feeds:   # (still: the log may have been folded again meanwhile)
                    await feeds.ensure_history(sub.game, since)
        except NotStored as err:
            self._store_unavailable(sub.game, err.detail)
            return
        finally:
            self.task = None
        self._reply(subscribe(self.svc, self.w, sub, self.claims))
        waiting, self.waiting = self.waiting, None
        while waiting:
            self.message(waiting.popleft())

    def _reply(self, msg: Any) -> None:
        if msg is not None:
            self.svc.fanout.send_one(self.w, Frames.of(msg))


class _AiohttpCloser:
    """``close_soon`` for an aiohttp socket: its close runs in a task the handler awaits
    on its way out."""

    __slots__ = ("task", "ws")

    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.ws = ws
        self.task: asyncio.Task[bool] | None = None

    def close_soon(self, code: int, reason: bytes) -> None:
        if self.task is None:
            self.task = asyncio.create_task(self.ws.close(code=code, message=reason), name="watch-close")


async def watch_ws(request: web.Request) -> web.StreamResponse:
    """``/ws/watch`` upgraded by aiohttp: on a connection that served HTTP before (a client
    that keeps its connections alive). A fresh connection is the task-free endpoint's."""
    svc: Service = request.app[Service.KEY]
    refusal = svc.admit(request)
    if refusal is not None:
        return refusal
    fmt: pr.Format = "msgpack" if request.query.get("format") == "msgpack" else "json"
    # No compression for viewers: the fan-out writes the same prebuilt frame to every socket.
    # 8 KiB (a 4096-character token fits in an auth frame); aiohttp refuses max_msg_size bytes or more.
    # Pings go from one timer for every viewer (pings.py), not from aiohttp's per-socket heartbeat:
    # so a ping's answer comes to this loop (autoping off), and a viewer's ping is answered here.
    ws = web.WebSocketResponse(max_msg_size=pr.WATCH_MAX_FRAME + 1, compress=False, decode_text=False,
                               autoping=False, heartbeat=None)
    await ws.prepare(request)
    w = Watcher(ws, fmt, svc.config.watcher_queue, request.transport)
    svc.viewer_opened(w)
    closer = _AiohttpCloser(ws)
    session = WatchSession(svc, w, closer, request.query)
    try:
        async for msg in ws:
            heard(w)
            if msg.type is WSMsgType.PING:
                await ws.pong(msg.data)
            elif msg.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                session.message(msg.data)
            if closer.task is not None:
                break
    finally:
        session.close()
        await stop([session.task, svc.viewer_closed(w)])   # its resume, and its drain
        if closer.task is not None:
            with contextlib.suppress(Exception):
                await closer.task
        with contextlib.suppress(Exception):
            await ws.close()
        # Closed with bytes unsent (the close frame, say): the peer may yet take them, but one that
        # stopped reading never will, and the transport would hold its socket for it for ever.
        t = request.transport
        if t is not None and t.get_write_buffer_size():
            asyncio.get_running_loop().call_later(svc.config.send_timeout, t.abort)
    return ws
