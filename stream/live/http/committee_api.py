"""The token rules the HTTP API shares: who may call a staff route, and within what.

A ``committee`` token (docs/protocol.md, "Tokens and roles") runs one tournament
event: it sets it up, corrects and reads it, and mints, lists and revokes the
device tokens of its games. A committee token reads and changes its own event only
(docs/security.md has the whole table): another event's preview, reports, log or
decisions is 403 ``out_of_scope``, as is ``POST /api/games/preview`` of a game of
another event or naming a team entered only in other events (``preview_refusal``).

A route that takes an admin or a committee token says so in its table (``who``), which
puts ``check`` before its handler. The handlers (``http/``) read its claims with
``staff``, use ``mint`` for every token they issue (each is recorded in the store),
``revoke_refusal`` before a revocation, ``holds`` and ``game_held`` to list tokens,
and ``event_records`` for an event's records (a committee's whole log).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

import msgspec
from aiohttp import web

from ...errors import AuthError
from ...rules.engine import Engine
from ...store import Record
from ..ops.wallclock import now_ms
from ..service import Service
from ..wire import auth
from .responses import problem

log = logging.getLogger("arena_stream.committee")
_json = msgspec.json.Encoder()
_claims = msgspec.json.Decoder(auth.Claims)
_fields = msgspec.json.Decoder(dict[str, Any])

# ------------------------------------------------------------------ tokens


_CLAIMS: web.RequestKey[auth.Claims] = web.RequestKey("claims", auth.Claims)


def staff(request: web.Request) -> auth.Claims:
    """The claims of the request's token, as its route checked them before its handler ran
    (``check``, for a route whose ``who`` is ``staff`` or ``admin``: http/route.py)."""
    return request[_CLAIMS]


def check(request: web.Request, *, admin_only: bool = False) -> auth.Claims:
    """The claims of the request's admin token (or committee token, unless ``admin_only``),
    kept for ``staff``; else HTTP 401 (no valid token) or 403 (another role), with a
    plain-text body."""
    svc = request.app[Service.KEY]
    header = request.headers.get("Authorization", "")
    if not header.startswith("Bearer "):
        raise web.HTTPUnauthorized(text="Authorization: Bearer <admin or committee token> required\n")
    try:
        claims = svc.verify(header.removeprefix("Bearer ").strip())
    except AuthError as err:
        raise web.HTTPUnauthorized(text=f"{err.code}: {err.detail}\n") from None
    if claims.role == "admin" or (claims.role == "committee" and not admin_only):
        request[_CLAIMS] = claims
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
    return problem(403, "out_of_scope", f"this committee token is for event {claims.event!r}, "
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
        return problem(403, "out_of_scope", f"game {game!r} is of event {owner!r}: this committee token "
                                             f"(event {claims.event!r}) previews its own event's games only")
    try:
        auth.authorize(engine, claims, "game.setup", body)  # a set-up's checks only: no game, no rules
    except AuthError as err:
        return problem(403, err.code, err.detail)
    return None


def _mint_refusal(svc: Service, issuer: auth.Claims, role: str, game: str | None,
                  arena: str | None) -> web.Response | None:
    """Why ``issuer`` may not mint this token (a 403 ``Problem``), or None. A scoped admin token
    mints only tokens within its own scope, and no committee token; a committee token mints only
    device tokens, each scoped to one game of its event."""
    if issuer.role == "committee":
        if role not in auth.COMMITTEE_MINTS:
            return problem(403, "forbidden", f"a committee token may not issue a {role} token: only "
                                              "umpire, referee, timekeeper and display tokens")
        if arena is not None or game is None or not of_event(svc.hub.engine, issuer, game):
            return problem(403, "out_of_scope", f"a committee token issues tokens for one game of "
                                                 f"event {issuer.event!r} only")
        return None
    if role == "committee" and (issuer.game is not None or issuer.arena is not None):
        return problem(403, "out_of_scope", "a committee token is issued by an unscoped admin token")
    if issuer.game is not None and game != issuer.game:
        return problem(403, "out_of_scope", "a scoped admin token issues tokens within its scope only")
    if issuer.arena is not None and arena != issuer.arena and not (
            game is not None and svc.hub.engine.arena_of(game) == issuer.arena):
        return problem(403, "out_of_scope", "a scoped admin token issues tokens within its scope only")
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
        return problem(400, err.code, err.detail)
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


def game_held(engine: Engine, issuer: auth.Claims, game: str) -> bool:
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
        return problem(403, "out_of_scope", f"no token of a game of event {issuer.event!r} has this jti")
    return problem(403, "out_of_scope", "no token issued within this admin token's scope has this jti")


def connected(svc: Service, jti: str) -> int:
    """The sockets the token has open on this node now."""
    return sum(1 for ws in svc.by_jti.get(jti, ()) if not ws.closed)


# ------------------------------------------------------------------ an event's records


def record_events(engine: Engine, record: Record) -> frozenset[str] | bool:
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
    return [r for r in records if (e := record_events(engine, r)) is True or (e and event in e)]
