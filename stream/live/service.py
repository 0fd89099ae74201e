"""The running service: configuration, secret, hub, fan-out, metrics and limits,
shared by the WebSocket handlers and the HTTP API."""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import Counter

from aiohttp import web

from ..store import Store
from .broadcast.fanout import Fanout, Socket, Watcher
from .broadcast.pings import Pings
from .hub.feeds import Frames
from .hub.hub import Hub
from .ops.config import Config
from .ops.metrics import Metrics, StoreCluster
from .wire import auth
from .wire import protocol as pr


class TokenBucket:
    """``rate`` events a second, ``burst`` at once."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, float(burst)
        self.tokens = float(burst)
        self.t = time.monotonic()

    def take(self) -> bool:
        t = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (t - self.t) * self.rate)
        self.t = t
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class Service:
    KEY: web.AppKey[Service] = web.AppKey("service")

    def __init__(self, config: Config, secret: bytes, store: Store) -> None:
        self.config = config
        self.secret = secret
        self.metrics = Metrics()
        # The fan-out is where the hub's feeds send what they show; it reads them back for a
        # viewer that fell behind.
        self.fanout = Fanout(lambda: self.hub.feeds, self.metrics, send_timeout=config.send_timeout)
        self.hub = hub = Hub(store, self.fanout)
        self.metrics.connections.labels("watch").set_function(lambda: len(self.fanout.watchers))
        # Every viewer pinged once per 3 heartbeats, closed if it leaves a ping unanswered 1.5.
        self.pings = Pings(self.metrics, interval=config.heartbeat * 3, timeout=config.heartbeat * 1.5,
                           grace=config.send_timeout)
        self.revoked: set[str] = set()
        self.open_sockets = 0
        # A task the node serves with (its log's follower, its deadline timer …) that ended
        # on its own: the node is not ready from then on, and says which (``GET /readyz``).
        self.stopped: str | None = None
        self.sockets: weakref.WeakSet[Socket] = weakref.WeakSet()
        self.buckets: dict[str, TokenBucket] = {}
        self._presence: dict[str, Frames] = {}   # presence_frames, by game
        # Connected officials' devices: socket -> (claims, since)
        self.devices_online: dict[web.WebSocketResponse, tuple[auth.Claims, int]] = {}
        # The sockets open with each token (by its jti): each leaves when it closes (``untrack``).
        self.by_jti: dict[str, set[Socket]] = {}
        self.device_sockets: Counter[str] = Counter()
        self.metrics.registry.register(StoreCluster(store.status))
        store.on_commit = self.metrics.commit_seconds.observe
        store.on_durable = self.metrics.durable_seconds.observe
        self.metrics.commits.set_function(lambda: hub.store.stats().commits)
        self.metrics.committed.set_function(lambda: hub.store.stats().records)
        self.metrics.races.labels(outcome="caught_up").set_function(lambda: hub.races.caught_up)
        self.metrics.races.labels(outcome="reloaded").set_function(lambda: hub.races.reloads)
        self.metrics.failed_writes.labels(outcome="taken_back").set_function(lambda: hub.races.settled)
        self.metrics.failed_writes.labels(outcome="reloaded").set_function(
            lambda: hub.races.settle_reloads)
        self.metrics.reloads.set_function(lambda: hub.reloads)

    # ----------------------------------------------------------------- tokens

    def verify(self, token: str) -> auth.Claims:
        return auth.verify(self.secret, token, now_s=time.time(), revoked=self.revoked)

    def issue(self, **kw: object) -> tuple[str, auth.Claims]:
        return auth.issue(self.secret, **kw)  # type: ignore[arg-type]

    # ----------------------------------------------------------------- limits

    def origin_allowed(self, origin: str | None, host: str | None) -> bool:
        """Browsers send Origin; it must be this service or one the operator listed.
        Tools that send none (handheld apps, scripts) are not browsers."""
        if origin is None:
            return True
        # This service's own pages, over http or (behind a TLS proxy) https: the
        # host must match, so a page from another site still can't open a socket.
        own = (f"http://{host}", f"https://{host}")
        return origin in own or origin in self.config.origins or origin == self.config.public_url

    def refusal(self, origin: str | None, host: str | None) -> tuple[int, str, dict[str, str]] | None:
        """None to go ahead with an upgrade; otherwise its HTTP refusal: status, text, headers."""
        if not self.origin_allowed(origin, host):
            return 403, "origin not allowed\n", {}
        if self.open_sockets >= self.config.max_connections:
            return 503, "too many connections\n", {"Retry-After": "5"}
        if not self.hub.ready:
            return 503, "loading\n", {"Retry-After": "1"}
        return None

    def admit(self, request: web.Request) -> web.Response | None:
        """None to go ahead with aiohttp's upgrade; otherwise its HTTP refusal."""
        refused = self.refusal(request.headers.get("Origin"), request.host)
        if refused is None:
            return None
        status, text, headers = refused
        return web.Response(status=status, text=text, headers=headers)

    # ----------------------------------------------------------------- viewers

    def viewer_opened(self, w: Watcher) -> None:
        """A viewer's socket is open: counted, in the fan-out, in the ping ring."""
        self.sockets.add(w.ws)
        self.open_sockets += 1
        self.fanout.start(w)
        self.pings.add(w)

    def viewer_closed(self, w: Watcher) -> asyncio.Task[None] | None:
        """A viewer's socket is closed: it is sent nothing more. Its drain task, cancelled, is
        handed back for the caller to await (``Fanout.leave``)."""
        self.open_sockets -= 1
        return self.fanout.leave(w)

    def junk_bucket(self) -> TokenBucket:
        """A socket's allowance of invalid frames: each gets its typed error, but a
        socket that keeps sending them is closed (1008) rather than answered forever."""
        return TokenBucket(self.config.invalid_rate, self.config.invalid_burst)

    def bucket(self, device: str) -> TokenBucket:
        """The device's rate limit, shared by all its sockets."""
        b = self.buckets.get(device)
        if b is None:
            b = self.buckets[device] = TokenBucket(self.config.device_rate, self.config.device_burst)
        return b

    def track(self, jti: str, ws: Socket) -> None:
        """A socket authenticated with the token ``jti``: revoking the token closes it."""
        self.by_jti.setdefault(jti, set()).add(ws)

    def untrack(self, jti: str, ws: Socket) -> None:
        """The socket is closed: it leaves its token's sockets (and a token with none, the registry)."""
        held = self.by_jti.get(jti)
        if held is not None:
            held.discard(ws)
            if not held:
                del self.by_jti[jti]

    async def revoke(self, jti: str) -> int:
        """Refuse the token from now on, and close the sockets it has open: how many."""
        self.revoked.add(jti)
        closed = 0
        for ws in list(self.by_jti.pop(jti, ())):
            if not ws.closed:
                await ws.close(code=pr.CloseCode.AUTH, message=b"revoked")
                closed += 1
        return closed

    def presence(self, game: str) -> pr.Presence:
        """Who is connected for ``game``: devices scoped to it or to its arena."""
        arena = self.hub.engine.arena_of(game)
        seen: dict[str, pr.ConnectedDevice] = {}
        for claims, since in self.devices_online.values():
            if claims.game == game or (claims.arena is not None and claims.arena == arena):
                seen.setdefault(claims.sub, pr.ConnectedDevice(
                    device=claims.sub, role=claims.role, official=claims.official, since=since))
        return pr.Presence(game=game, devices=sorted(seen.values(), key=lambda d: d.since))

    def presence_frames(self, game: str) -> Frames:
        """``presence(game)``, encoded once until a device comes or goes: every viewer that
        subscribes is sent it."""
        frames = self._presence.get(game)
        if frames is None:
            frames = self._presence[game] = Frames.of(self.presence(game))
        return frames

    def presence_changed(self, claims: auth.Claims) -> None:
        """Tell the viewers of every game this device is for."""
        self._presence.clear()
        engine = self.hub.engine
        games = [g for g in engine.game_ids()
                 if claims.game == g or (claims.arena is not None and claims.arena == engine.arena_of(g))]
        for g in games:
            frames = self.presence_frames(g)
            for w in tuple(self.fanout.topics.get(g, ())):
                self.fanout.send_one(w, frames)

    def device_opened(self, sub: str) -> bool:
        if self.device_sockets[sub] >= self.config.max_device_connections:
            return False
        self.device_sockets[sub] += 1
        return True

    def device_closed(self, sub: str) -> None:
        self.device_sockets[sub] -= 1
        if self.device_sockets[sub] <= 0:
            del self.device_sockets[sub]
