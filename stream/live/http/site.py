"""The service's own routes: the probes, the metrics, and the two WebSockets
(``ingest.device_ws``, ``watch.watch_ws``; their protocols are in ``/asyncapi.json``)."""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ..devices.ingest import device_ws
from ..service import Service
from ..viewers.watch import watch_ws
from ..wire import api_types
from .ops import json_doc, op, text, ws_upgrade
from .responses import send
from .route import get


async def healthz(request: web.Request) -> web.Response:
    return send(api_types.Health(ok=True))


async def readyz(request: web.Request) -> web.Response:
    """Ready once the log is loaded, while it is not being reloaded and while every task the
    node serves with runs (``reason``: why not; a stopped task, which one and its error). On
    etcd, ``store`` says which member the node talks to, the leader and the commit time."""
    svc = request.app[Service.KEY]
    hub = svc.hub
    reason = (svc.stopped if svc.stopped is not None else "loading the log" if not hub.ready
              else "reloading the log" if hub.recovering else None)
    return send(api_types.Ready(ready=reason is None, reason=reason, store=hub.store.status()),
                200 if reason is None else 503)


async def metrics(request: web.Request) -> web.Response:
    svc = request.app[Service.KEY]
    return web.Response(body=generate_latest(svc.metrics.registry),
                        headers={"Content-Type": CONTENT_TYPE_LATEST})


ROUTES = (
    get("/healthz", healthz, op("healthz", "Liveness", "health", {"200": json_doc("Health", "alive")})),
    get("/readyz", readyz, op("readyz", "Readiness: the log is loaded and not being reloaded, and every "
                              "task the node serves with runs", "health",
                              {"200": json_doc("Ready", "ready"),
                               "503": json_doc("Ready", "loading or reloading the log, or a task of the "
                                                        "node stopped (`reason` says which)")})),
    get("/metrics", metrics, op("metrics", "Prometheus metrics", "health",
                                {"200": text("Prometheus text exposition format")})),
    get("/ws/device", device_ws, ws_upgrade("device", "officials' handhelds")),
    get("/ws/watch", watch_ws, ws_upgrade("watch", "scoreboards, overlays, viewers")),
)
