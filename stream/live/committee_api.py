"""The tournament committee's HTTP routes, and the token rules the HTTP API shares.

A ``committee`` token (docs/protocol.md, "Tokens and roles") runs one tournament
event: it sets it up, corrects and reads it, and mints, lists and revokes the
device tokens of its games. Every route here takes an admin or a committee token
(``Authorization: Bearer``):

    POST /api/pairings                  a device token for one game and role, as a link and a QR code
    GET  /api/tokens?game=G             the tokens issued (never the tokens themselves): revoked, connected
    GET  /api/games/{game}/preview      what a game set up and not yet begun will take when it begins
    GET  /api/events                    the tournament events
    GET  /api/events/{event}/reports.csv   every game report of the event, one CSV (a game column first)
    GET  /api/events/{event}/log        the event's records, JSON Lines
    GET  /api/events/{event}/decisions  every committee decision of the event, oldest first (audit.py)
    GET  /api/events/{event}/decisions.csv   the same, as CSV

A committee token reads and changes its own event only (docs/security.md has the whole
table): another event's preview, reports, log or decisions is 403 ``out_of_scope``, as is
``POST /api/games/preview`` of a game of another event or naming a team entered only in
other events (``preview_refusal``, which ``app.preview_game`` asks first).

``app.py`` uses ``staff`` for every route that takes an admin or a committee token,
``mint`` for every token it issues (each is recorded in the store), ``revoke_refusal``
before a revocation, and ``event_records`` for a committee's whole log.
"""

from __future__ import annotations

import io
import logging
import re
import secrets
import time
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import quote

import msgspec
import segno
from aiohttp import web

from ..errors import AuthError, Refused
from ..rules.engine import Engine
from ..store import Record
from . import api_types, audit, auth, report, report_csv
from .hub import now_ms
from .service import Service

log = logging.getLogger("arena_stream.committee")
_json = msgspec.json.Encoder()
_claims = msgspec.json.Decoder(auth.Claims)
_fields = msgspec.json.Decoder(dict[str, Any])

#: The page each role pairs with: a display token is for a scoreboard, not for /ws/device.
PAIR_PAGES = {"umpire": "/handheld", "referee": "/handheld", "timekeeper": "/handheld",
              "display": "/scoreboard"}


def _send(doc: msgspec.Struct | Sequence[msgspec.Struct], status: int = 200) -> web.Response:
    return web.Response(status=status, body=_json.encode(doc), content_type="application/json")


def _problem(status: int, code: str, detail: str,
             clause: str | msgspec.UnsetType | None = msgspec.UNSET) -> web.Response:
    return _send(api_types.Problem(code=code, detail=detail, clause=clause), status)


def filename(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


# ------------------------------------------------------------------ tokens


def staff(request: web.Request, *, admin_only: bool = False) -> auth.Claims:
    """The claims of the request's admin token (or committee token, unless ``admin_only``);
    else HTTP 401 (no valid token) or 403 (another role), with a plain-text body."""
    svc = request.app[Service.KEY]
    header = request.headers.get("Authorization", "")
    if not header.startswith("Bearer "):
        raise web.HTTPUnauthorized(text="Authorization: Bearer <admin or committee token> required\n")
    try:
        claims = svc.verify(header.removeprefix("Bearer ").strip())
    except AuthError as err:
        raise web.HTTPUnauthorized(text=f"{err.code}: {err.detail}\n") from None
    if claims.role == "admin" or (claims.role == "committee" and not admin_only):
        return claims
    raise web.HTTPForbidden(text="this needs an admin token\n" if admin_only
                            else "this needs an admin or a committee token\n")


def of_event(engine: Engine, claims: auth.Claims, game: str | None) -> bool:
    """Whether a committee token's event holds ``game`` (an admin token: always)."""
    if claims.role != "committee":
        return True
    return game is not None and claims.event is not None and engine.event_of(game) == claims.event


def event_refusal(claims: auth.Claims, event: str) -> web.Response | None:
    """A committee token reads and imports into its own event only (a 403 ``Problem``
    ``out_of_scope`` otherwise); an admin token, every event."""
    if claims.role != "committee" or claims.event == event:
        return None
    return _problem(403, "out_of_scope", f"this committee token is for event {claims.event!r}, "
                                         f"not {event!r}")


def preview_refusal(engine: Engine, claims: auth.Claims, body: object) -> web.Response | None:
    """``POST /api/games/preview`` by a committee token: the set-up it previews must be one the
    token could send (its event's game, naming no team entered only in another event: as
    ``auth.authorize`` holds a ``game.setup``), and its ``game`` no game of another event."""
    if claims.role != "committee" or not isinstance(body, dict):
        return None
    game = body.get("game")
    owner = engine.event_of(game) if isinstance(game, str) else None
    if owner is not None and owner != claims.event:
        return _problem(403, "out_of_scope", f"game {game!r} is of event {owner!r}: this committee token "
                                             f"(event {claims.event!r}) previews its own event's games only")
    try:
        auth.authorize(engine, claims, "game.setup", body)  # a set-up's checks only: no game, no rules
    except AuthError as err:
        return _problem(403, err.code, err.detail)
    return None


def _mint_refusal(svc: Service, issuer: auth.Claims, role: str, game: str | None,
                  arena: str | None) -> web.Response | None:
    """Why ``issuer`` may not mint this token (a 403 ``Problem``), or None. A scoped admin token
    mints only tokens within its own scope, and no committee token; a committee token mints only
    device tokens, each scoped to one game of its event."""
    if issuer.role == "committee":
        if role not in auth.COMMITTEE_MINTS:
            return _problem(403, "forbidden", f"a committee token may not issue a {role} token: only "
                                              "umpire, referee, timekeeper and display tokens")
        if arena is not None or game is None or not of_event(svc.hub.engine, issuer, game):
            return _problem(403, "out_of_scope", f"a committee token issues tokens for one game of "
                                                 f"event {issuer.event!r} only")
        return None
    if role == "committee" and (issuer.game is not None or issuer.arena is not None):
        return _problem(403, "out_of_scope", "a committee token is issued by an unscoped admin token")
    if issuer.game is not None and game != issuer.game:
        return _problem(403, "out_of_scope", "a scoped admin token issues tokens within its scope only")
    if issuer.arena is not None and arena != issuer.arena and not (
            game is not None and svc.hub.engine.arena_of(game) == issuer.arena):
        return _problem(403, "out_of_scope", "a scoped admin token issues tokens within its scope only")
    return None


async def mint(svc: Service, issuer: auth.Claims, *, role: str, device: str, official: str = "",
               game: str | None = None, arena: str | None = None, event: str | None = None,
               ttl_s: int) -> tuple[str, auth.Claims] | web.Response:
    """Issue a token if ``issuer`` may, and record it (its claims, when, by whom) before the
    token is handed out; else the refusal (403 ``out_of_scope``/``forbidden``, 400 ``unscoped``)."""
    refusal = _mint_refusal(svc, issuer, role, game, arena)
    if refusal is not None:
        return refusal
    try:
        token, issued = svc.issue(sub=device, role=role, official=official, game=game, arena=arena,
                                  event=event, exp=int(time.time()) + ttl_s)
    except AuthError as err:
        return _problem(400, err.code, err.detail)
    await svc.hub.store.record_token(_json.encode(issued), now_ms(), issuer.sub)
    log.info("token issued", extra={"by": issuer.sub, "device": device, "role": role,
                                    "jti": issued.jti, "fingerprint": auth.fingerprint(token)})
    return token, issued


def _unscoped(claims: auth.Claims) -> bool:
    return claims.role == "admin" and claims.game is None and claims.arena is None


def holds(engine: Engine, issuer: auth.Claims, token: auth.Claims) -> bool:
    """Whether a token issued is within ``issuer``'s scope, to list or revoke: an unscoped admin
    token's, every one; a committee token's, those of its event's games; a scoped admin token's,
    those of its game (or of its arena and its games)."""
    if _unscoped(issuer):
        return True
    if issuer.role == "committee":
        return of_event(engine, issuer, token.game)
    if issuer.game is not None:
        return token.game == issuer.game
    return token.arena == issuer.arena or (token.game is not None
                                           and engine.arena_of(token.game) == issuer.arena)


def _game_held(engine: Engine, issuer: auth.Claims, game: str) -> bool:
    """Whether ``game`` is within ``issuer``'s scope (an unscoped admin token's: every game)."""
    if issuer.role == "committee":
        return of_event(engine, issuer, game)
    return (issuer.game is None or issuer.game == game) and (
        issuer.arena is None or engine.arena_of(game) == issuer.arena)


async def revoke_refusal(svc: Service, issuer: auth.Claims, jti: str) -> web.Response | None:
    """A committee token revokes only tokens issued for its event's games, a scoped admin token
    only tokens issued within its scope (``holds``; a 403 otherwise, and for a jti the service
    has no record of). An unscoped admin token revokes any jti."""
    if _unscoped(issuer):
        return None
    for rec in await svc.hub.store.tokens():
        claims = _claims.decode(rec.claims)
        if claims.jti == jti and holds(svc.hub.engine, issuer, claims):
            return None
    if issuer.role == "committee":
        return _problem(403, "out_of_scope", f"no token of a game of event {issuer.event!r} has this jti")
    return _problem(403, "out_of_scope", "no token issued within this admin token's scope has this jti")


def connected(svc: Service, jti: str) -> int:
    """The sockets the token has open on this node now."""
    return sum(1 for ws in svc.by_jti.get(jti, ()) if not ws.closed)


# ------------------------------------------------------------------ an event's records


def _record_events(engine: Engine, record: Record) -> frozenset[str] | bool:
    """The tournament events a record belongs to; ``True`` for one every event shares (a
    registration of a team or player of no event now)."""
    if record.game is not None:
        return frozenset({e}) if (e := engine.event_of(record.game)) is not None else False
    try:
        fields = _fields.decode(record.body)
    except msgspec.DecodeError:
        return False
    kind, named = fields.get("type"), fields.get("event")
    if kind in ("team.registered", "player.registered"):
        key = fields.get("team" if kind == "team.registered" else "player")
        now = ((engine.team_events(key) if kind == "team.registered" else engine.player_events(key))
               if isinstance(key, str) else frozenset())
        now |= {named} if isinstance(named, str) else set()
        return now or True
    if isinstance(named, str):
        return frozenset({named})
    if isinstance(oid := fields.get("obligation"), str):
        event = engine.obligation_event(oid)
    elif isinstance(origin := fields.get("origin_game"), str):
        event = engine.event_of(origin)
    elif isinstance(game := fields.get("game"), str):   # a game's schedule (game.scheduled)
        event = engine.event_of(game)
    else:
        return False
    return frozenset({event}) if event is not None else False


def event_records(engine: Engine, records: Iterable[Record], event: str) -> list[Record]:
    """The records of ``event``: those of its games, its own game-less ones (set-up, completion,
    eliminations, committee decisions on obligations from its games, its games' schedules),
    the registrations of its teams and players (as they are now: a team or player of several
    events is in each one's), and the registrations of teams and players of no event."""
    return [r for r in records if (e := _record_events(engine, r)) is True or (e and event in e)]


def _jsonl(records: Iterable[Record]) -> bytes:
    return b"".join(r.body + b"\n" for r in records)


# ------------------------------------------------------------------ handlers


async def pairing(request: web.Request) -> web.Response:
    """A device token for one game and role, with the page that pairs with it: the token in
    the URL's fragment (never sent to a server) and the URL as a QR code."""
    svc = request.app[Service.KEY]
    issuer = staff(request)
    try:
        req = msgspec.json.decode(await request.read(), type=api_types.PairingRequest)
    except (msgspec.DecodeError, RecursionError) as err:
        return _problem(400, "invalid_field", str(err))
    if svc.hub.engine.arena_of(req.game) is None:
        return _problem(404, "unknown_game", f"no game {req.game!r} has been set up")
    device = req.device or f"{req.role}-{secrets.token_hex(4)}"
    minted = await mint(svc, issuer, role=req.role, device=device, official=req.official,
                        game=req.game, ttl_s=req.ttl_s)
    if isinstance(minted, web.Response):
        return minted
    token, claims = minted
    url = f"{svc.config.base_url}{PAIR_PAGES[req.role]}?game={quote(req.game, safe='')}#pair={token}"
    buf = io.BytesIO()
    segno.make(url, error="m", micro=False).save(
        buf, kind="svg", scale=4, border=4, dark="#000", light="#fff", xmldecl=False,
        svgclass="pairing-qr", title=f"{req.role} · {req.game}")
    return _send(api_types.Pairing(token=token, claims=claims, url=url,
                                   qr_svg=buf.getvalue().decode()), 201)


async def list_tokens(request: web.Request) -> web.Response:
    """The tokens issued (optionally of one ``game``), oldest first; a committee token sees
    those of its event's games, a scoped admin token those within its scope (``holds``)."""
    svc = request.app[Service.KEY]
    issuer = staff(request)
    game = request.query.get("game")
    engine = svc.hub.engine
    if game is not None and not _game_held(engine, issuer, game):
        return _problem(403, "out_of_scope", f"game {game!r} is not one of event {issuer.event!r}"
                        if issuer.role == "committee" else f"game {game!r} is outside this token's scope")
    revoked = await svc.hub.store.revoked() | svc.revoked
    rows: list[api_types.TokenInfo] = []
    for rec in await svc.hub.store.tokens():
        claims = _claims.decode(rec.claims)
        if (game is None or claims.game == game) and holds(engine, issuer, claims):
            rows.append(api_types.TokenInfo(claims=claims, at=rec.at, by=rec.by,
                                            revoked=claims.jti in revoked,
                                            connected=connected(svc, claims.jti)))
    return _send(rows)


async def game_preview(request: web.Request) -> web.Response:
    """What a game set up and not yet begun will take when it begins (its carried obligations);
    a committee token: a game of its event only."""
    claims = staff(request)
    hub = request.app[Service.KEY].hub
    gid = request.match_info["game"]
    feed = hub.feeds.get(gid)
    if feed is None or feed.view is None:
        return _problem(404, "unknown_game", "no such game")
    if not of_event(hub.engine, claims, gid):
        return _problem(403, "out_of_scope", f"game {gid!r} is not one of event {claims.event!r}: a "
                                             "committee previews its own event's games only")
    try:
        applies = hub.engine.preview_game(gid)
    except Refused as err:
        return _problem(409, err.code, err.detail, clause=err.clause)
    return _send(api_types.GamePreview(game=gid, applies=applies))


async def events(request: web.Request) -> web.Response:
    """Every tournament event: class, handicap, teams, completed, eliminated, rules."""
    staff(request)
    return _send(request.app[Service.KEY].hub.engine.tournaments_all())


def _event_games(request: web.Request) -> tuple[str, list[str]] | web.Response:
    """The path's event and its games (in set-up order), for a token that may read it: an admin
    or committee token (``staff``), a committee token's own event only (403 ``out_of_scope``);
    404 ``unknown_event`` for an event never set up that no game names."""
    claims = staff(request)
    hub = request.app[Service.KEY].hub
    event = request.match_info["event"]
    games = [g for g, feed in hub.feeds.items()
             if feed.view is not None and hub.engine.event_of(g) == event]
    if not games and hub.engine.tournament(event) is None:
        return _problem(404, "unknown_event", f"no event {event!r} has been set up, and no game names it")
    if (refusal := event_refusal(claims, event)) is not None:
        return refusal
    return event, games


async def event_reports_csv(request: web.Request) -> web.Response:
    """Every game report of the event as one CSV: the game's id first, then the columns of
    ``GET /games/{game}/report.csv``; the games in the order they were set up. A committee
    token: its own event's only."""
    hub = request.app[Service.KEY].hub
    found = _event_games(request)
    if isinstance(found, web.Response):
        return found
    event, games = found
    buf = io.StringIO()
    out = report_csv.SafeWriter(buf)
    out.writerow(["game", *report_csv.ENTRY_COLUMNS])
    for gid in games:
        out.writerows([gid, *row] for row in report_csv.rows(await report.build(hub, gid)))
    return web.Response(text=buf.getvalue(), content_type="text/csv", charset="utf-8", headers={
        "Content-Disposition": f'attachment; filename="{filename(event)}-reports.csv"'})


async def event_log(request: web.Request) -> web.Response:
    """The event's records as JSON Lines, in log order (``event_records``). A committee token:
    its own event's only."""
    hub = request.app[Service.KEY].hub
    found = _event_games(request)
    if isinstance(found, web.Response):
        return found
    event, _ = found
    body = _jsonl(event_records(hub.engine, await hub.store.records(), event))
    return web.Response(body=body, content_type="application/x-ndjson", headers={
        "Content-Disposition": f'attachment; filename="{filename(event)}.jsonl"'})


async def _decisions(request: web.Request) -> list[api_types.CommitteeDecision] | web.Response:
    hub = request.app[Service.KEY].hub
    found = _event_games(request)
    if isinstance(found, web.Response):
        return found
    event, _ = found
    return audit.of_records(hub.engine, event_records(hub.engine, await hub.store.records(), event))


async def decisions(request: web.Request) -> web.Response:
    """Every committee decision of the event, oldest first. A committee token: its own event's."""
    rows = await _decisions(request)
    if isinstance(rows, web.Response):
        return rows
    return _send(rows)


async def decisions_csv(request: web.Request) -> web.Response:
    """The same as CSV (``COLUMNS``), every cell neutralised as every CSV of the service is."""
    rows = await _decisions(request)
    if isinstance(rows, web.Response):
        return rows
    buf = io.StringIO()
    out = report_csv.SafeWriter(buf)
    out.writerow(audit.COLUMNS)
    for d in rows:
        doc = msgspec.structs.asdict(d)
        out.writerow([*("" if doc[c] is None else doc[c] for c in audit.COLUMNS[:-2]), d.text.en, d.text.es])
    event = request.match_info["event"]
    return web.Response(text=buf.getvalue(), content_type="text/csv", charset="utf-8", headers={
        "Content-Disposition": f'attachment; filename="{filename(event)}-decisions.csv"'})


def add_routes(app: web.Application) -> None:
    """Add this module's routes to the service's application."""
    app.add_routes([
        web.post("/api/pairings", pairing),
        web.get("/api/tokens", list_tokens),
        web.get("/api/games/{game}/preview", game_preview),
        web.get("/api/events", events),
        web.get("/api/events/{event}/reports.csv", event_reports_csv),
        web.get("/api/events/{event}/log", event_log),
        web.get("/api/events/{event}/decisions", decisions),
        web.get("/api/events/{event}/decisions.csv", decisions_csv),
    ])
