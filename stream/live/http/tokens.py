"""Tokens: issued (``POST /api/tokens``, or for one device of a game as a link and a QR code,
``POST /api/pairings``), listed (never a token itself) and revoked. Each takes an admin or a
committee token; what it may issue, list and revoke is ``committee_api``'s (``mint``,
``holds``, ``revoke_refusal``), and every token issued is recorded in the store first."""

from __future__ import annotations

import io
import logging
import secrets
from urllib.parse import quote

import msgspec
import segno
from aiohttp import web

from ..ops.wallclock import now_ms
from ..service import Service
from ..wire import api_types, auth
from . import committee_api
from .ops import RETRY_AFTER, TOO_LARGE, UNKNOWN_GAME, admin_responses, json_doc, list_of, op, scoped
from .responses import problem, send
from .route import get, post
from .submit import struct_body

log = logging.getLogger("arena_stream.app")
_claims = msgspec.json.Decoder(auth.Claims)

#: The page each role pairs with: a display token is for a scoreboard, not for /ws/device.
PAIR_PAGES = {"umpire": "/handheld", "referee": "/handheld", "timekeeper": "/handheld",
              "display": "/scoreboard"}


async def post_token(request: web.Request) -> web.Response:
    """Issue a token within the issuer's scope (``committee_api.mint``: a committee token, device
    tokens for its event's games only; a scoped admin token, within its scope), recorded."""
    svc = request.app[Service.KEY]
    claims = committee_api.staff(request)
    req = await struct_body(request, api_types.TokenRequest)
    if isinstance(req, web.Response):
        return req
    minted = await committee_api.mint(svc, claims, role=req.role, device=req.device, official=req.official,
                                      game=req.game, arena=req.arena, event=req.event, ttl_s=req.ttl_s)
    if isinstance(minted, web.Response):
        return minted
    return send(api_types.TokenIssued(token=minted[0], claims=minted[1]), 201)


async def list_tokens(request: web.Request) -> web.Response:
    """The tokens issued (optionally of one ``game``), oldest first; a committee token sees
    those of its event's games, a scoped admin token those within its scope (``holds``)."""
    svc = request.app[Service.KEY]
    issuer = committee_api.staff(request)
    game = request.query.get("game")
    engine = svc.hub.engine
    if game is not None and not committee_api.game_held(engine, issuer, game):
        return problem(403, "out_of_scope", f"game {game!r} is not one of event {issuer.event!r}"
                       if issuer.role == "committee" else f"game {game!r} is outside this token's scope")
    revoked = await svc.hub.store.revoked() | svc.revoked
    rows: list[api_types.TokenInfo] = []
    for rec in await svc.hub.store.tokens():
        claims = _claims.decode(rec.claims)
        if (game is None or claims.game == game) and committee_api.holds(engine, issuer, claims):
            rows.append(api_types.TokenInfo(claims=claims, at=rec.at, by=rec.by,
                                            revoked=claims.jti in revoked,
                                            connected=committee_api.connected(svc, claims.jti)))
    return send(rows)


async def pairing(request: web.Request) -> web.Response:
    """A device token for one game and role, with the page that pairs with it: the token in
    the URL's fragment (never sent to a server) and the URL as a QR code."""
    svc = request.app[Service.KEY]
    issuer = committee_api.staff(request)
    req = await struct_body(request, api_types.PairingRequest)
    if isinstance(req, web.Response):
        return req
    if svc.hub.engine.arena_of(req.game) is None:
        return problem(404, "unknown_game", f"no game {req.game!r} has been set up")
    device = req.device or f"{req.role}-{secrets.token_hex(4)}"
    minted = await committee_api.mint(svc, issuer, role=req.role, device=device, official=req.official,
                                      game=req.game, ttl_s=req.ttl_s)
    if isinstance(minted, web.Response):
        return minted
    token, claims = minted
    url = f"{svc.config.base_url}{PAIR_PAGES[req.role]}?game={quote(req.game, safe='')}#pair={token}"
    buf = io.BytesIO()
    segno.make(url, error="m", micro=False).save(
        buf, kind="svg", scale=4, border=4, dark="#000", light="#fff", xmldecl=False,
        svgclass="pairing-qr", title=f"{req.role} · {req.game}")
    return send(api_types.Pairing(token=token, claims=claims, url=url,
                                  qr_svg=buf.getvalue().decode()), 201)


async def revoke_token(request: web.Request) -> web.Response:
    svc = request.app[Service.KEY]
    claims = committee_api.staff(request)
    req = await struct_body(request, api_types.RevokeRequest)
    if isinstance(req, web.Response):
        return req
    refusal = await committee_api.revoke_refusal(svc, claims, req.jti)  # a committee: its games' only
    if refusal is not None:
        return refusal
    await svc.hub.store.revoke(req.jti, now_ms(), claims.sub, req.reason)
    closed = await svc.revoke(req.jti)
    log.info("token revoked", extra={"by": claims.sub, "jti": req.jti, "closed": closed})
    return send(api_types.Revoked(revoked=req.jti, sockets_closed=closed))


_NOT_STORED = json_doc("Problem", "`not_stored`: the store could not record the token (none is given)",
                       **RETRY_AFTER)

ROUTES = (
    post("/api/tokens", post_token, op(
        "issueToken", "Issue a device token", "admin",
        {**admin_responses(**{
            "201": json_doc("TokenIssued", "the token (send it only in an `auth` frame or an "
                                           "`Authorization` header) and its claims (`jti` revokes it)"),
            "400": json_doc("Problem", "`invalid_field` (the body), or `unscoped`: a token for any "
                                       "role but admin and committee needs a `game` or an `arena`, a "
                                       "committee token an `event` (and only it)"),
            "413": TOO_LARGE,
            "503": _NOT_STORED}),
         "403": scoped("`out_of_scope`: a _scoped admin token asking for a token outside its own "
                       "scope or for a committee token, a committee token for one not _scoped to a "
                       "game of its event; `forbidden`: a committee token asking for an admin or "
                       "committee token")}, body="TokenRequest",
        description="The token is recorded (its claims, when, by whom; never the token): "
                    "`GET /api/tokens`. While the store can't record it, none is given: 503 "
                    "`not_stored`."), who="staff"),
    get("/api/tokens", list_tokens, {**op(
        "listTokens", "The tokens issued, never a token itself", "admin",
        {**admin_responses(**{"200": list_of("TokenInfo", "oldest first; `connected`: the sockets "
                                                          "each has open on this node now")}),
         "403": scoped("`out_of_scope`: a committee token asking for another event's game")},
        description="A committee token lists those of its event's games."),
        "parameters": [{"name": "game", "in": "query", "required": False,
                        "description": "only the tokens _scoped to this game",
                        "schema": {"type": "string"}}]}, who="staff"),
    post("/api/pairings", pairing, op(
        "pairDevice", "A device token for one game and role, as a link and a QR code", "admin",
        {**admin_responses(**{
            "201": json_doc("Pairing", "`url` opens the handheld (a display's: the scoreboard) for the "
                                       "game with the token in its `#pair=` fragment, which browsers never "
                                       "send; `qr_svg` is an SVG QR code of exactly `url`"),
            "400": json_doc("Problem", "`invalid_field`: the body (a role other than umpire, referee, "
                                       "timekeeper or display)"),
            "404": UNKNOWN_GAME, "413": TOO_LARGE,
            "503": _NOT_STORED}),
         "403": scoped("`out_of_scope`: a game outside the token's scope (a committee token's: "
                       "outside its event)")}, body="PairingRequest",
        description="Recorded like any token issued (`GET /api/tokens`); revoked by its `jti`."),
        who="staff"),
    post("/api/tokens/revoke", revoke_token, op(
        "revokeToken", "Revoke a token by its `jti`", "admin",
        {**admin_responses(**{
            "200": json_doc("Revoked", "revoked: refused at its next authentication"),
            "400": json_doc("Problem", "`invalid_field`"), "413": TOO_LARGE}),
         "403": scoped("`out_of_scope`: a committee token revoking a token that is not one issued "
                       "for a game of its event")}, body="RevokeRequest"), who="staff"),
)
