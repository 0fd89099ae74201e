"""The service's own routes: the index page, the probes, the metrics, and the two WebSockets
(``ingest.device_ws``, ``watch.watch_ws``; their protocols are in ``/asyncapi.json``)."""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ...rules.text import half
from ...rules.view import GameView
from ..devices.ingest import device_ws
from ..service import Service
from ..viewers.watch import watch_ws
from ..wire import api_types
from .ops import html, json_doc, op, text, ws_upgrade
from .responses import send
from .route import get


def on_handicap(view: GameView) -> str:
    """The goals on handicap a game's score includes (A5), said after it: " · incl. 1½ on
    handicap (g1-home)"; nothing for a game without them."""
    h = view.goals_on_handicap
    given = [(t.team, g) for t, g in ((view.teams.home, h.home), (view.teams.away, h.away)) if g] if h else []
    return "".join(f" · incl. {half(g)} on handicap ({escape(team)})" for team, g in given)


async def index(request: web.Request) -> web.Response:
    svc = request.app[Service.KEY]
    hub = svc.hub
    watch = "ws" + svc.config.base_url.removeprefix("http")
    e = escape
    rows = "".join(f'<li><code>{e(gid)}</code>: {e(f.view.teams.home.team)} {half(f.view.score.home)} – '
                   f'{half(f.view.score.away)} {e(f.view.teams.away.team)} ({e(f.view.status)})'
                   f'{on_handicap(f.view)} · '
                   f'<a href="/games/{quote(gid)}/report">report</a> · '
                   f'<a href="/scoreboard?game={quote(gid)}">scoreboard</a> · '
                   f'<a href="/overlay?game={quote(gid)}">overlay</a> '
                   f'(<a href="/overlay/control?game={quote(gid)}">control</a>)</li>'
                   for gid, f in hub.feeds.items() if f.view is not None)
    page = (f"<!doctype html><meta charset=utf-8><title>Arena Stream</title>"
            f"<h1>Arena Stream</h1><ul>{rows or '<li>no games yet</li>'}</ul>"
            f"<p>The tournament committee: <a href=/committee>console</a></p>"
            f"<p>Watch: <code>{e(watch)}/ws/watch?game=GAME</code> · "
            f"API: <a href=/openapi.json>OpenAPI</a> · "
            f"WebSockets: <a href=/asyncapi.json>AsyncAPI</a></p>")
    return web.Response(text=page, content_type="text/html")


async def healthz(request: web.Request) -> web.Response:
    return send(api_types.Health(ok=True))


async def readyz(request: web.Request) -> web.Response:
    """Ready once the log is loaded, while it is not being reloaded, while the store takes
    writes and while every task the node serves with runs (``reason``: why not: the store's
    hold says what the operator can do; a stopped task, which one and its error)."""
    svc = request.app[Service.KEY]
    hub = svc.hub
    hold = hub.store.hold
    reason = (svc.stopped if svc.stopped is not None else hold.reason if hold is not None
              else "loading the log" if not hub.ready else "reloading the log" if hub.recovering else None)
    return send(api_types.Ready(ready=reason is None, reason=reason), 200 if reason is None else 503)


async def metrics(request: web.Request) -> web.Response:
    svc = request.app[Service.KEY]
    return web.Response(body=generate_latest(svc.metrics.registry),
                        headers={"Content-Type": CONTENT_TYPE_LATEST})


ROUTES = (
    get("/", index, op("index", "A human index page: the games, and links to the API documents",
                       "docs", {"200": html("the index")})),
    get("/healthz", healthz, op("healthz", "Liveness", "health", {"200": json_doc("Health", "alive")})),
    get("/readyz", readyz, op("readyz", "Readiness: the log is loaded, not being reloaded, and the store "
                              "takes writes", "health",
                              {"200": json_doc("Ready", "ready"),
                               "503": json_doc("Ready", "loading or reloading the log, or the store takes no "
                                                        "writes (`reason` says why and what to do)")})),
    get("/metrics", metrics, op("metrics", "Prometheus metrics", "health",
                                {"200": text("Prometheus text exposition format")})),
    get("/ws/device", device_ws, ws_upgrade("device", "officials' handhelds")),
    get("/ws/watch", watch_ws, ws_upgrade("watch", "scoreboards, overlays, viewers")),
)
