"""The aiohttp application: both WebSocket protocols and the HTTP API on one port.

The routes are listed in ``api_types`` (and docs/protocol-http.md, OpenAPI at ``/openapi.json``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.resources
import logging
import re
import secrets
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

import msgspec
from aiohttp import web
from aiohttp.typedefs import Handler
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ..errors import MalformedEvent, NotStored, Refused
from ..rules import codec
from ..rules.events import GameSetup
from ..store import Store
from . import (
    api_types,
    auth,
    committee_api,
    draw_api,
    headers,
    lifecycle,
    logs,
    report,
    report_csv,
    report_html,
    rosters_api,
    schemas,
)
from . import protocol as pr
from .config import Config, load_secret
from .hub import now_ms
from .ingest import device_ws, submit_fields
from .lifecycle import make_store as make_store
from .service import Service
from .watch import watch_ws

log = logging.getLogger("arena_stream.app")
_json = msgspec.json.Encoder()
_body = msgspec.json.Decoder(dict[str, Any])


def _filename(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def _send(doc: msgspec.Struct | Sequence[msgspec.Struct], status: int = 200,
          headers: dict[str, str] | None = None) -> web.Response:
    """A JSON response: a shape of ``api_types`` (or of the protocol), or a list of them, encoded once."""
    return web.Response(status=status, body=_json.encode(doc), content_type="application/json",
                        headers=headers)


def _problem(status: int, code: str, detail: str,
             clause: str | msgspec.UnsetType | None = msgspec.UNSET) -> web.Response:
    return _send(api_types.Problem(code=code, detail=detail, clause=clause), status)


def _staff(request: web.Request) -> auth.Claims:
    """An admin or a committee token's claims; else 401/403 (``committee_api.staff``). What a
    committee token may write is ``auth.authorize``'s (in ``submit_fields``)."""
    return committee_api.staff(request)


async def _json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = _body.decode(await request.read())
    except (msgspec.DecodeError, RecursionError) as err:
        raise web.HTTPBadRequest(text=f"the body is not a JSON object: {err}\n") from None
    return body


async def _submit(request: web.Request, etype: str, fields: dict[str, Any]) -> web.Response:
    svc = request.app[Service.KEY]
    claims = _staff(request)
    fields = {**fields, "type": etype}
    fields.setdefault("id", f"api-{secrets.token_hex(6)}")
    result = await submit_fields(svc, claims, fields, None)
    if isinstance(result, pr.Error):
        status = {"not_stored": 503, "unknown": 503, "forbidden": 403, "out_of_scope": 403,
                  "id_conflict": 409}.get(result.code, 400 if result.clause is None else 409)
        return _send(result, status, {"Retry-After": "1"} if result.retry else None)
    return _send(result, 200 if result.duplicate else 201)


@web.middleware
async def store_unavailable(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A store that can't answer (Redis down, or back a moment ago) makes any HTTP route a
    503 a client can act on, never a 500 with a traceback: a ``Problem`` with the store's
    code (``not_stored``; ``unknown`` for a write it can't tell landed) and Retry-After."""
    try:
        return await handler(request)
    except NotStored as err:
        if request.path.startswith("/ws/"):  # upgraded already: no HTTP answer to give
            raise
        return _send(api_types.Problem(code=err.code, detail=err.detail), 503, {"Retry-After": "1"})


# ------------------------------------------------------------------ handlers


async def healthz(request: web.Request) -> web.Response:
    return _send(api_types.Health(ok=True))


async def readyz(request: web.Request) -> web.Response:
    """Ready once the log is loaded, while it is not being reloaded, and while the store takes
    writes (``reason``: why not: the store's hold says what the operator can do)."""
    hub = request.app[Service.KEY].hub
    hold = hub.store.hold
    reason = (hold.reason if hold is not None else "loading the log" if not hub.ready
              else "reloading the log" if hub.recovering else None)
    return _send(api_types.Ready(ready=reason is None, reason=reason), 200 if reason is None else 503)


async def metrics(request: web.Request) -> web.Response:
    svc = request.app[Service.KEY]
    return web.Response(body=generate_latest(svc.metrics.registry),
                        headers={"Content-Type": CONTENT_TYPE_LATEST})


async def games(request: web.Request) -> web.Response:
    hub = request.app[Service.KEY].hub
    return _send([api_types.GameSummary(game=gid, event=v.event, arena=v.arena, status=v.status,
                                        home=v.teams.home.team, away=v.teams.away.team, score=v.score,
                                        seq=feed.seq, roster=hub.engine.roster(gid), kind=v.kind)
                  for gid, feed in hub.feeds.items() if (v := feed.view) is not None])


async def game(request: web.Request) -> web.Response:
    hub = request.app[Service.KEY].hub
    gid = request.match_info["game"]
    feed = hub.feeds.get(gid)
    if feed is None or feed.view is None:  # (no view yet: its set-up is still being committed)
        return _problem(404, "unknown_game", "no such game")
    return _send(api_types.GameDocument(seq=feed.seq, epoch=hub.store.epoch, view=feed.view,
                                        roster=hub.engine.roster(gid)))


async def game_log(request: web.Request) -> web.StreamResponse:
    hub = request.app[Service.KEY].hub
    gid = request.match_info["game"]
    if gid not in hub.feeds:
        return _problem(404, "unknown_game", "no such game")
    records = [r for r in await hub.store.game_records(gid) if r.seq is not None]
    body = b"".join(r.body + b"\n" for r in records)
    return web.Response(body=body, content_type="application/x-ndjson",
                        headers={"Content-Disposition": f'attachment; filename="{_filename(gid)}.jsonl"'})


async def whole_log(request: web.Request) -> web.Response:
    claims = _staff(request)
    hub = request.app[Service.KEY].hub
    records = await hub.store.records()
    if claims.role == "committee" and claims.event is not None:  # its event's records only
        records = committee_api.event_records(hub.engine, records, claims.event)
    body = b"".join(r.body + b"\n" for r in records)
    return web.Response(body=body, content_type="application/x-ndjson")


async def state_digest(request: web.Request) -> web.Response:
    _staff(request)
    engine = request.app[Service.KEY].hub.engine
    return _send(api_types.StateDigest(sha256=engine.state_hash(), events=engine.event_count(),
                                       games=len(engine.game_ids())))


async def post_event(request: web.Request) -> web.Response:
    _staff(request)  # the token first: an anonymous caller learns nothing from the body
    return await _submit(request, "event.setup", await _json_body(request))


def _derived_id(kind: str, *parts: str) -> str:
    """The id of an event a route can only mean once (an event completes once, a team
    is eliminated once): a repeated call is the same event, acked as a duplicate. A
    device id is at most 64 characters: a longer one is shortened by a digest."""
    plain = "-".join((kind, *parts))
    if len(plain) <= 64:
        return plain
    digest = hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]
    return f"{kind}-{digest}"


async def complete_event(request: web.Request) -> web.Response:
    _staff(request)
    body = await _json_body(request) if request.can_read_body else {}
    event = request.match_info["event"]
    # One completion per event: a repeated call is the same event, acked as a duplicate.
    body.setdefault("id", _derived_id("complete", event))
    return await _submit(request, "event.complete", {**body, "event": event})


async def eliminate_team(request: web.Request) -> web.Response:
    """A team is out of the event (R15): what it still owes may then be served with any team."""
    _staff(request)
    body = await _json_body(request)
    event = request.match_info["event"]
    team = body.get("team")
    if isinstance(team, str):
        # One elimination per team and event: a repeated call is acked as a duplicate.
        body.setdefault("id", _derived_id("eliminate", event, team))
    return await _submit(request, "team.eliminated", {**body, "event": event})


async def post_game(request: web.Request) -> web.Response:
    _staff(request)
    return await _submit(request, "game.setup", await _json_body(request))


async def post_token(request: web.Request) -> web.Response:
    """Issue a token within the issuer's scope (``committee_api.mint``: a committee token, device
    tokens for its event's games only; a scoped admin token, within its scope), recorded."""
    svc = request.app[Service.KEY]
    claims = _staff(request)
    try:
        req = msgspec.json.decode(await request.read(), type=api_types.TokenRequest)
    except (msgspec.DecodeError, RecursionError) as err:
        return _problem(400, "invalid_field", str(err))
    minted = await committee_api.mint(svc, claims, role=req.role, device=req.device, official=req.official,
                                      game=req.game, arena=req.arena, event=req.event, ttl_s=req.ttl_s)
    if isinstance(minted, web.Response):
        return minted
    return _send(api_types.TokenIssued(token=minted[0], claims=minted[1]), 201)


async def revoke_token(request: web.Request) -> web.Response:
    svc = request.app[Service.KEY]
    claims = _staff(request)
    try:
        req = msgspec.json.decode(await request.read(), type=api_types.RevokeRequest)
    except (msgspec.DecodeError, RecursionError) as err:
        return _problem(400, "invalid_field", str(err))
    refusal = await committee_api.revoke_refusal(svc, claims, req.jti)  # a committee: its games' only
    if refusal is not None:
        return refusal
    await svc.hub.store.revoke(req.jti, now_ms(), claims.sub, req.reason)
    closed = await svc.revoke(req.jti)
    log.info("token revoked", extra={"by": claims.sub, "jti": req.jti, "closed": closed})
    return _send(api_types.Revoked(revoked=req.jti, sockets_closed=closed))


async def accept_store(request: web.Request) -> web.Response:
    """The operator takes the history the store holds as the log (docs/reliability.md): a new
    epoch; this node reloads it and every viewer gets a fresh snapshot; the others follow."""
    svc = request.app[Service.KEY]
    claims = committee_api.staff(request, admin_only=True)
    if claims.game is not None or claims.arena is not None:
        return _problem(403, "out_of_scope", "accepting the store's history needs an unscoped admin token")
    try:
        req = msgspec.json.decode(await request.read(), type=api_types.AcceptRequest)
    except (msgspec.DecodeError, RecursionError) as err:
        return _problem(400, "invalid_field", str(err))
    hold = svc.hub.store.hold
    if hold is None or hold.kind != "diverged":
        return _problem(409, "not_diverged", "the store's history is not in question: nothing to accept"
                        + ("" if hold is None else f" (it takes no writes because {hold.reason})"))
    done = await svc.hub.store.accept(claims.sub, req.reason)
    await asyncio.gather(*svc.reloads)  # this node has reloaded it and reset its viewers
    log.warning("store history accepted", extra={"by": claims.sub, "epoch": done.epoch,
                                                  "previous": done.previous, "reason": req.reason})
    return _send(api_types.StoreAccepted(**msgspec.structs.asdict(done), games=len(svc.hub.feeds)))


async def openapi_doc(request: web.Request) -> web.Response:
    return web.Response(body=schemas.openapi_json(), content_type="application/json")


async def asyncapi_doc(request: web.Request) -> web.Response:
    return web.Response(body=schemas.asyncapi_json(), content_type="application/json")


async def player_obligations(request: web.Request) -> web.Response:
    """What a player owes, where it may be served, and what was served where."""
    hub = request.app[Service.KEY].hub
    player = request.match_info["player"]
    return _send(api_types.PlayerObligations(player=player, obligations=hub.engine.obligations(player)))


async def obligations(request: web.Request) -> web.Response:
    """Every obligation, optionally by ``status`` (pending, serving, served): the history."""
    hub = request.app[Service.KEY].hub
    status = request.query.get("status")
    return _send(hub.engine.all_obligations(status=status))


async def preview_game(request: web.Request) -> web.Response:
    """The obligations a game would apply to its rosters if set up now (admin; a committee, for
    its own event's games: ``committee_api.preview_refusal``)."""
    claims = _staff(request)
    hub = request.app[Service.KEY].hub
    body = await _json_body(request)
    refusal = committee_api.preview_refusal(hub.engine, claims, body)
    if refusal is not None:
        return refusal
    body = {**body, "type": "game.setup", "id": body.get("id", "preview"), "at": now_ms()}
    try:
        event = codec.decode_event(_json.encode(body))
        if not isinstance(event, GameSetup):
            raise MalformedEvent("invalid_field", "a game.setup body is expected")
        taken = hub.engine.preview_setup(event)
    except (MalformedEvent, Refused) as err:
        return _problem(409 if isinstance(err, Refused) else 400, err.code, err.detail,
                        clause=err.clause if isinstance(err, Refused) else None)
    return _send(api_types.GamePreview(game=event.game, applies=taken))


async def schedule_game(request: web.Request) -> web.Response:
    """A game's place in the order of play: its start time and its officials, by name."""
    _staff(request)
    body = await _json_body(request)
    return await _submit(request, "game.scheduled", {**body, "game": request.match_info["game"]})


async def committee_increase(request: web.Request) -> web.Response:
    """The committee increases a penalty: logged with who and why (R6)."""
    _staff(request)
    return await _submit(request, "committee.increase", await _json_body(request))


async def committee_rescind(request: web.Request) -> web.Response:
    """The committee rescinds an obligation no game has begun to serve: logged with who and why."""
    _staff(request)
    return await _submit(request, "committee.rescind", await _json_body(request))


async def committee_decrease(request: web.Request) -> web.Response:
    """The committee lowers the play time an obligation owes: logged with who and why."""
    _staff(request)
    return await _submit(request, "committee.decrease", await _json_body(request))


async def _report(request: web.Request) -> report.Report | web.Response:
    hub = request.app[Service.KEY].hub
    gid = request.match_info["game"]
    if gid not in hub.feeds or hub.feeds[gid].view is None:
        return _problem(404, "unknown_game", "no such game")
    return await report.build(hub, gid)


async def game_report(request: web.Request) -> web.Response:
    """The game report (stream/live/report*.py): every card, penalty, box trip and release with its
    clause, the obligations the game created, a timeline of play time. Prints on A4. In Spanish
    with ``?lang=es``."""
    r = await _report(request)
    if isinstance(r, web.Response):
        return r
    lang = "es" if request.query.get("lang", "").lower().startswith("es") else "en"
    return web.Response(text=report_html.to_html(r, lang), content_type="text/html")


async def game_report_json(request: web.Request) -> web.Response:
    r = await _report(request)
    if isinstance(r, web.Response):
        return r
    return web.Response(body=report.to_json(r), content_type="application/json")


async def game_report_csv(request: web.Request) -> web.Response:
    r = await _report(request)
    if isinstance(r, web.Response):
        return r
    return web.Response(text=report_csv.to_csv(r), content_type="text/csv", charset="utf-8", headers={
        "Content-Disposition": f'attachment; filename="{_filename(r.game)}-report.csv"'})


async def index(request: web.Request) -> web.Response:
    svc = request.app[Service.KEY]
    hub = svc.hub
    watch = "ws" + svc.config.base_url.removeprefix("http")
    e = escape
    rows = "".join(f'<li><code>{e(gid)}</code>: {e(f.view.teams.home.team)} {f.view.score.home} – '
                   f'{f.view.score.away} {e(f.view.teams.away.team)} ({e(f.view.status)}) · '
                   f'<a href="/games/{quote(gid)}/report">report</a> · '
                   f'<a href="/scoreboard?game={quote(gid)}">scoreboard</a> · '
                   f'<a href="/overlay?game={quote(gid)}">overlay</a> '
                   f'(<a href="/overlay/control?game={quote(gid)}">control</a>)</li>'
                   for gid, f in hub.feeds.items() if f.view is not None)
    html = (f"<!doctype html><meta charset=utf-8><title>Arena Stream</title>"
            f"<h1>Arena Stream</h1><ul>{rows or '<li>no games yet</li>'}</ul>"
            f"<p>The tournament committee: <a href=/committee>console</a></p>"
            f"<p>Watch: <code>{e(watch)}/ws/watch?game=GAME</code> · "
            f"API: <a href=/openapi.json>OpenAPI</a> · "
            f"WebSockets: <a href=/asyncapi.json>AsyncAPI</a></p>")
    return web.Response(text=html, content_type="text/html")


# ------------------------------------------------------------------- app


def _clients() -> Path:
    """The browser clients' folder: the package ``stream.web`` (written in clients/web and
    shipped inside the package), found wherever the package is installed."""
    folder = importlib.resources.files("stream.web")
    assert isinstance(folder, Path), f"stream.web is not a folder on disk: {folder!r}"
    return folder


CLIENTS = _clients()


async def page(request: web.Request) -> web.StreamResponse:
    """The browser clients: one HTML page each, configured by URL parameters."""
    return web.FileResponse(CLIENTS / api_types.PAGES[request.path], headers={"Cache-Control": "no-cache"})


def build_app(config: Config, *, store: Store | None = None, secret: bytes | None = None) -> web.Application:
    logs.quiet_bad_requests()
    secret = secret if secret is not None else load_secret(config.data_dir)
    svc = Service(config, secret, store or make_store(config))
    hub = svc.hub
    hub.store.on_replaced = lifecycle.reload_when_replaced(svc)

    app = headers.secure(web.Application(client_max_size=256 * 1024, middlewares=[store_unavailable]))
    app[Service.KEY] = svc
    app.add_routes([
        web.get("/", index),
        web.get("/healthz", healthz),
        web.get("/readyz", readyz),
        web.get("/metrics", metrics),
        web.get("/ws/device", device_ws),
        web.get("/ws/watch", watch_ws),
        web.get("/api/games", games),
        web.get("/api/games/{game}", game),
        web.get("/api/games/{game}/log", game_log),
        web.get("/games/{game}/report", game_report),
        web.get("/games/{game}/report.json", game_report_json),
        web.get("/games/{game}/report.csv", game_report_csv),
        web.get("/api/log", whole_log),
        web.get("/api/state", state_digest),
        web.post("/api/events", post_event),
        web.post("/api/events/{event}/complete", complete_event),
        web.post("/api/events/{event}/eliminate", eliminate_team),
        web.post("/api/games", post_game),
        web.post("/api/tokens", post_token),
        web.get("/api/players/{player}/obligations", player_obligations),
        web.get("/api/obligations", obligations),
        web.post("/api/games/preview", preview_game),
        web.post("/api/games/{game}/schedule", schedule_game),
        web.post("/api/committee/increase", committee_increase),
        web.post("/api/committee/rescind", committee_rescind),
        web.post("/api/committee/decrease", committee_decrease),
        web.post("/api/tokens/revoke", revoke_token),
        web.post("/api/admin/store/accept", accept_store),
        web.get("/openapi.json", openapi_doc),
        web.get("/asyncapi.json", asyncapi_doc),
    ])
    rosters_api.add_routes(app)
    committee_api.add_routes(app)
    draw_api.add_routes(app)
    for route in api_types.PAGES:
        app.router.add_get(route, page)
    app.router.add_static("/clients/", CLIENTS, append_version=True)
    app.cleanup_ctx.append(lifecycle.run)
    app.on_shutdown.append(_going_away)
    return app


async def _going_away(app: web.Application) -> None:
    """Close every socket with 1001 so that devices and viewers reconnect at once."""
    for ws in list(app[Service.KEY].sockets):
        with contextlib.suppress(Exception):
            await ws.close(code=pr.CloseCode.GOING_AWAY, message=b"server going away")
