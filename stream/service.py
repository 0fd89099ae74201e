"""The running service: configuration, secret, hub, fan-out, metrics and limits,
shared by the WebSocket handlers and the HTTP API."""

from __future__ import annotations

import time
import weakref
from collections import Counter

from aiohttp import web

from . import auth
from .config import Config
from .fanout import Fanout
from .hub import Hub
from .metrics import Metrics


class Service:
    KEY: web.AppKey[Service] = web.AppKey("service")

    def __init__(self, config: Config, secret: bytes, hub: Hub) -> None:
        self.config = config
        self.secret = secret
        self.hub = hub
        self.metrics = Metrics()
        self.fanout = Fanout(hub, self.metrics, send_timeout=config.send_timeout)
        self.revoked: set[str] = set()
        self.open_sockets = 0
        self.sockets: weakref.WeakSet[web.WebSocketResponse] = weakref.WeakSet()
        self.device_sockets: Counter[str] = Counter()
        self.metrics.commits.set_function(lambda: getattr(hub.store, "commits", 0))
        self.metrics.committed.set_function(lambda: getattr(hub.store, "committed_records", 0))

    # ----------------------------------------------------------------- tokens

    def verify(self, token: str) -> auth.Claims:
        return auth.verify(self.secret, token, now_s=time.time(), revoked=self.revoked)

    def issue(self, **kw: object) -> tuple[str, auth.Claims]:
        return auth.issue(self.secret, **kw)  # type: ignore[arg-type]

    # ----------------------------------------------------------------- limits

    def origin_allowed(self, request: web.Request) -> bool:
        """Browsers send Origin; it must be this service or one the operator listed.
        Tools that send none (handheld apps, scripts) are not browsers."""
        origin = request.headers.get("Origin")
        if origin is None:
            return True
        own = f"{request.scheme}://{request.host}"
        return origin == own or origin in self.config.origins

    def admit(self, request: web.Request, kind: str) -> web.Response | None:
        """None to go ahead; otherwise the HTTP refusal of the upgrade."""
        if not self.origin_allowed(request):
            return web.Response(status=403, text="origin not allowed\n")
        if self.open_sockets >= self.config.max_connections:
            return web.Response(status=503, text="too many connections\n",
                                headers={"Retry-After": "5"})
        if not self.hub.ready:
            return web.Response(status=503, text="loading\n", headers={"Retry-After": "1"})
        return None

    def device_opened(self, sub: str) -> bool:
        if self.device_sockets[sub] >= self.config.max_device_connections:
            return False
        self.device_sockets[sub] += 1
        return True

    def device_closed(self, sub: str) -> None:
        self.device_sockets[sub] -= 1
        if self.device_sockets[sub] <= 0:
            del self.device_sockets[sub]
