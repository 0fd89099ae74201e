"""``/ws/watch``: scoreboards, overlays and every other viewer (docs/protocol.md).

A viewer subscribes to a game or an arena, in a ``subscribe`` frame or in
the URL (``/ws/watch?game=G&since=N&epoch=E``; these carry no secret). It
gets a ``snapshot``, or, when it resumes with the ``seq`` and ``epoch`` it last
saw, exactly the deltas it missed; then every delta as it is committed, and
a ``heartbeat`` every few seconds. ``?format=msgpack`` switches every frame
to MessagePack (binary frames) of the same schema.

A game subscription with ``graphics: true`` (``?graphics=1``) also follows the game's
broadcast graphics (``graphics`` frames); a socket authenticated with a token that may
control them sends ``graphics`` commands (``graphics.py``, docs/protocol.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import msgspec
from aiohttp import WSMsgType, web

from ..errors import AuthError, NotStored, ProtocolError
from . import auth
from . import protocol as pr
from .fanout import Watcher
from .feeds import Frames
from .graphics import may_control
from .pings import heard
from .service import Service
from .wallclock import now_ms

log = logging.getLogger("arena_stream.watch")

#: How often a resume refused because the store is down is logged, at most (with a count).
STORE_DOWN_LOG_S = 30.0


class _StoreDownLog:
    """One log line for the first resume refused while the store is down, then at most one
    every ``STORE_DOWN_LOG_S``, counting those in between: an outage can meet a storm of
    resuming viewers."""

    def __init__(self) -> None:
        self.last = -STORE_DOWN_LOG_S
        self.since_last = 0

    def __call__(self, game: str, err: NotStored) -> None:
        self.since_last += 1
        now = time.monotonic()
        if now - self.last >= STORE_DOWN_LOG_S:
            log.warning("resume refused: the store can't be read to rebuild the deltas; closed 1001",
                        extra={"game": game, "reason": err.detail, "refused": self.since_last})
            self.last, self.since_last = now, 0


_store_down = _StoreDownLog()


async def subscribe(svc: Service, w: Watcher, sub: pr.Subscribe,
                    claims: auth.Claims | None = None) -> pr.Error | None:
    if claims is not None:  # a scoped display token watches only its game or arena
        arena = sub.arena
        if sub.game is not None and svc.hub.engine.has_game(sub.game):
            arena = svc.hub.engine.arena_of(sub.game)
        try:
            auth.check_scope(claims, sub.game if sub.arena is None else None, arena)
        except AuthError as err:
            return pr.Error(code=err.code, detail=err.detail)
    if sub.arena is not None:
        svc.fanout.follow_arena(w, sub.arena)
        engine = svc.hub.engine
        for gid in engine.game_ids():
            if engine.arena_of(gid) == sub.arena and gid in svc.hub.feeds and gid not in w.games:
                svc.fanout.follow(w, gid, None, svc.hub.feeds[gid].seq, svc.hub.feeds.snapshot(gid))
        return None
    game = sub.game
    if game is None:
        return pr.Error(code="invalid_frame", detail="subscribe needs a game or an arena")
    if game not in svc.hub.feeds:
        return pr.Error(code="unknown_game", detail=f"no game {game!r} has been set up")
    if game in w.games:
        if sub.graphics:   # followed already: its graphics too, from now on
            svc.fanout.follow_graphics(w, game)
        return None
    if sub.since is not None and sub.epoch == svc.hub.store.epoch:
        try:
            await svc.hub.feeds.ensure_history(game, sub.since)
        except NotStored as err:
            # The deltas are in the log, which can't be read now (Redis down): the viewer
            # reconnects with backoff and resumes, exactly, once it can (docs/protocol.md).
            _store_down(game, err)
            await w.ws.close(code=pr.CloseCode.GOING_AWAY, message=b"store unavailable")
            return None
        # From here to follow() nothing awaits: no delta can slip in between.
        catch_up = svc.hub.feeds.since(game, sub.since)
        feed = svc.hub.feeds[game]
        if catch_up is not None:
            svc.fanout.follow(w, game, catch_up, feed.seq, None)
            svc.fanout.send_one(w, Frames.of(svc.presence(game)))
            if sub.graphics:
                svc.fanout.follow_graphics(w, game)
            return None
        reason: str | None = "resume_unavailable"
    else:
        reason = None if sub.since is None else "resume_unavailable"
    feed = svc.hub.feeds[game]
    snap = svc.hub.feeds.snapshot(game, reset=reason is not None, reason=reason)
    svc.fanout.follow(w, game, None, feed.seq, snap)
    svc.fanout.send_one(w, Frames.of(svc.presence(game)))
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


def _query_subscription(request: web.Request) -> pr.Subscribe | pr.Error | None:
    """A subscription in the URL (it carries no secret), checked like a frame."""
    q = request.query
    if "game" not in q and "arena" not in q:
        return None
    try:
        raw: dict[str, object] = {k: q[k] for k in ("game", "arena", "epoch") if k in q}
        if q.get("graphics", "") in ("1", "true"):
            raw["graphics"] = True
        since = q.get("since", "")
        if since.isascii() and since.isdigit():  # anything else: no resume, a fresh snapshot
            raw["since"] = int(since) if len(since) <= 18 else 2**62  # far beyond: can't resume
        return msgspec.convert({"type": "subscribe", **raw}, pr.Subscribe)
    except (msgspec.ValidationError, ValueError) as err:
        return pr.Error(code="invalid_frame", detail=f"the subscription in the URL: {err}")


async def watch_ws(request: web.Request) -> web.StreamResponse:
    svc: Service = request.app[Service.KEY]
    refusal = svc.admit(request, "watch")
    if refusal is not None:
        return refusal
    fmt: pr.Format = "msgpack" if request.query.get("format") == "msgpack" else "json"
    # No compression for viewers: the fan-out writes the same prebuilt frame to every socket.
    # 8 KiB (a 4096-character token fits in an auth frame); aiohttp refuses max_msg_size bytes or more.
    # Pings go from one timer for every viewer (pings.py), not from aiohttp's per-socket heartbeat:
    # so a ping's answer comes to this loop (autoping off), and a viewer's ping is answered here.
    ws = web.WebSocketResponse(max_msg_size=8192 + 1, compress=False, decode_text=False,
                               autoping=False, heartbeat=None)
    await ws.prepare(request)
    svc.sockets.add(ws)
    svc.open_sockets += 1
    svc.metrics.connections.labels("watch").inc()
    w = Watcher(ws, fmt, svc.config.watcher_queue, request.transport)
    svc.fanout.start(w)
    svc.pings.add(w)
    decoder = pr.watch_in_msgpack if fmt == "msgpack" else pr.watch_in_json
    authed = svc.config.public_watch
    junk = svc.junk_bucket()
    claims: auth.Claims | None = None

    async def close_unless_authed() -> None:
        await asyncio.sleep(svc.config.auth_timeout)
        await ws.close(code=pr.CloseCode.AUTH, message=b"authenticate")

    # Held here and cancelled on the way out: no task outlives the socket.
    deadline = None if authed else asyncio.create_task(close_unless_authed(), name="watch-auth-deadline")
    try:
        first = _query_subscription(request)
        if isinstance(first, pr.Error):
            await _reply(svc, w, first)
            first = None
        if first is not None and authed:
            await _reply(svc, w, await subscribe(svc, w, first))
        async for msg in ws:
            heard(w)
            if msg.type is WSMsgType.PING:
                await ws.pong(msg.data)
                continue
            if msg.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
                continue
            try:
                frame = decoder.decode(msg.data)
            except (msgspec.DecodeError, RecursionError) as err:
                if not junk.take():  # a flood of junk is closed, not answered frame by frame
                    await ws.close(code=pr.CloseCode.POLICY, message=b"too many invalid frames")
                    break
                await _reply(svc, w, pr.Error(code="invalid_frame", detail=str(err)[:200]))
                continue
            if isinstance(frame, pr.Auth):
                try:
                    claims = svc.verify(frame.token)
                except AuthError as err:
                    # Straight to the socket, not the queue: the close must not overtake it.
                    await ws.send_frame(pr.json_out.encode(pr.Error(code=err.code, detail=err.detail)),
                                        WSMsgType.TEXT)
                    await ws.close(code=pr.CloseCode.AUTH, message=err.code.encode())
                    break
                authed = True
                if deadline is not None:
                    deadline.cancel()
                svc.track(claims.jti, ws)
                if first is not None:
                    await _reply(svc, w, await subscribe(svc, w, first, claims))
            elif isinstance(frame, pr.Ping):
                await _reply(svc, w, pr.ServerPong(server_time=now_ms(), device_time=frame.device_time))
            elif isinstance(frame, pr.Graphics):
                await _reply(svc, w, graphics_command(svc, w, frame, claims))
            elif not authed:
                await _reply(svc, w, pr.Error(code="auth_required", detail="send an auth frame first"))
            else:
                await _reply(svc, w, await subscribe(svc, w, frame, claims))
    finally:
        if deadline is not None:
            deadline.cancel()
        await svc.fanout.stop(w)
        svc.open_sockets -= 1
        svc.metrics.connections.labels("watch").dec()
        with contextlib.suppress(Exception):
            await ws.close()
        # Closed with bytes unsent (the close frame, say): the peer may yet take them, but one that
        # stopped reading never will, and the transport would hold its socket for it for ever.
        t = request.transport
        if t is not None and t.get_write_buffer_size():
            asyncio.get_running_loop().call_later(svc.config.send_timeout, t.abort)
    return ws


async def _reply(svc: Service, w: Watcher, msg: Any) -> None:
    if msg is None:
        return
    svc.fanout.send_one(w, Frames.of(msg))
