"""The aiohttp application: both WebSocket protocols and the HTTP API on one port.

The routes are the route table's (``schemas.ROUTES``: one table per resource in
``http/``), each with its OpenAPI operation (``/openapi.json``; docs/protocol-http.md).
"""

from __future__ import annotations

import contextlib

from aiohttp import web

from ..store import Store
from . import lifecycle
from .http import headers, route
from .http.documents import schemas
from .http.responses import store_unavailable
from .lifecycle import make_store as make_store
from .ops import logs
from .ops.config import Config, load_secret
from .service import Service
from .wire import protocol as pr


def build_app(config: Config, *, store: Store | None = None, secret: bytes | None = None) -> web.Application:
    logs.quiet_bad_requests()
    secret = secret if secret is not None else load_secret(config.data_dir)
    svc = Service(config, secret, store or make_store(config))

    app = headers.secure(web.Application(client_max_size=256 * 1024, middlewares=[store_unavailable]))
    app[Service.KEY] = svc
    route.register(app, schemas.ROUTES)
    app.cleanup_ctx.append(lifecycle.run)
    app.on_shutdown.append(_going_away)
    return app


async def _going_away(app: web.Application) -> None:
    """Close every socket with 1001 so that devices and viewers reconnect at once."""
    for ws in list(app[Service.KEY].sockets):
        with contextlib.suppress(Exception):
            await ws.close(code=pr.CloseCode.GOING_AWAY, message=b"server going away")
