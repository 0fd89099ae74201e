"""The parts the OpenAPI _document (``openapi_doc.py``) is written with: a response of each
media type, an _op, the token each route needs, and the rosters' routes."""

from __future__ import annotations

from typing import Any

from .schema_gen import ref

_ADMIN: list[dict[str, list[str]]] = [{"bearerAuth": []}]


def _json(name: str, description: str, **headers: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description,
                           "content": {"application/json": {"schema": ref(name)}}}
    if headers:
        out["headers"] = headers
    return out


def _text(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/plain": {"schema": {"type": "string"}}}}


def _html(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


def _either(description: str, name: str) -> dict[str, Any]:
    """Some refusals come from aiohttp (plain text), some from the service (JSON)."""
    return {"description": description,
            "content": {"application/json": {"schema": ref(name)},
                        "text/plain": {"schema": {"type": "string"}}}}


_UNAUTHORIZED = _text("no `Authorization: Bearer <token>`, or a token that is forged, expired or revoked")
_NOT_ADMIN = _text("the token is valid but neither an admin nor a committee token")
_TOO_LARGE = _text("the body is larger than 256 KiB")
_NDJSON = {"type": "string", "description": "JSON Lines: one `LogEvent` per line, in log order"}


def _list(name: str, description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/json": {"schema": {"type": "array", "items": ref(name)}}}}


def _scoped(description: str) -> dict[str, Any]:
    """A 403 of a route a committee token calls within its event only."""
    return _either("neither an admin nor a committee token (text), or outside the token's scope "
                   f"(`Problem`: {description})", "Problem")


def _ndjson(description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/x-ndjson": {"schema": _NDJSON,
                                                 "x-item-schema": ref("LogEvent")}}}


def _submit_responses() -> dict[str, Any]:
    """What ``app._submit`` answers: an ``ack`` or an ``error`` frame, as on /ws/device."""
    retry_after = {"Retry-After": {"description": "seconds; send the same body again",
                                   "schema": {"type": "integer"}}}
    return {
        "201": _json("Ack", "committed to disk (`duplicate: false`)"),
        "200": _json("Ack", "a retry of an event already committed (same `id`, same body): "
                            "the first ack again, with `duplicate: true` and no notices"),
        "400": _either("malformed: the body is not a JSON object (text), or an event field is "
                       "missing or ill-typed (`Error`, `clause: null`: `invalid_field`, …)", "Error"),
        "401": _UNAUTHORIZED,
        "403": _either("not an admin token (text), or an admin token _scoped to a game or an arena "
                       "(`Error` `out_of_scope`; setting up needs an unscoped one) or a role that "
                       "may not send this (`forbidden`)", "Error"),
        "409": _json("Error", "refused: by the rules (`clause` names the clause: `duplicate_event`, "
                              "`unknown_event`, `unknown_player`, …) or `id_conflict` (this id was "
                              "used for a different body; the first one stands)"),
        "413": _TOO_LARGE,
        "503": _json("Error", "`not_stored` (nothing was committed) or `unknown` (the store lost its "
                              "connection after the write was sent: it may have been committed), "
                              "`retry: true`: send the same body again; dedup settles it",
                     **retry_after),
    }


def _op(op_id: str, summary: str, tag: str, responses: dict[str, Any], *, admin: bool = False,
        body: str | None = None, body_required: bool = True, description: str | None = None,
        params: list[str] | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {"operationId": op_id, "summary": summary, "tags": [tag]}
    if description:
        op["description"] = description
    if params:
        op["parameters"] = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}}
                            for p in params]
    if body is not None:
        op["requestBody"] = {"required": body_required,
                             "content": {"application/json": {"schema": ref(body)}}}
    op["responses"] = responses
    op["security"] = _ADMIN if admin else []
    return op


def _document(what: str) -> dict[str, Any]:
    return {"description": what, "content": {"application/json": {"schema": {"type": "object"}}}}


def _admin_responses(**more: Any) -> dict[str, Any]:
    return {"401": _UNAUTHORIZED, "403": _NOT_ADMIN, **more}


#: The page of the docs that describes each socket's protocol, with real frames.
_PROTOCOL_PAGES = {"device": "protocol-device.md", "watch": "protocol-viewer.md"}


def _ws_upgrade(kind: str, channel: str) -> dict[str, Any]:
    return {"get": {
        "operationId": f"{kind}Socket",
        "summary": f"The {kind} WebSocket ({channel}); its frames are in /asyncapi.json",
        "tags": ["websocket"],
        "description": "A WebSocket upgrade. The protocol on it is described by the AsyncAPI "
                       f"_document at `/asyncapi.json` and in docs/{_PROTOCOL_PAGES[kind]}.",
        "responses": {
            "101": {"description": "switching protocols"},
            "403": _text("a browser `Origin` that is neither this service nor an allowed one"),
            "503": _text("too many connections, or the service is still loading its log "
                         "(`Retry-After`)"),
        },
        "security": [],
    }}


def _roster_paths() -> dict[str, Any]:
    """The routes of ``rosters_api.py``: teams, players, logos and the CSV import."""
    unknown = {k: _json("Problem", f"`unknown_{k}`: never registered") for k in ("team", "player")}
    image = {"schema": {"type": "string", "format": "binary"}}
    return {
        "/api/teams": {
            "get": _op("listTeams", "Every team's current registration", "rosters", _admin_responses(**{
                "200": _list("TeamEntry", "by id")}), admin=True),
            "post": _op("registerTeam", "Register a team, or register it again (a `team.registered` event)",
                        "rosters", _submit_responses(), admin=True, body="TeamRegisteredRequest",
                        description="Send `revision` (the one edited; 0 for a new team): a registration "
                                    "made from an older one is refused `stale_registration` (409), with "
                                    "what changed since and the current values in `detail`.")},
        "/api/teams/{team}": {"get": _op(
            "getTeam", "A team's current registration and every revision", "rosters", _admin_responses(**{
                "200": _json("TeamDocument", "`current`, and `history` oldest first"),
                "404": unknown["team"]}), admin=True, params=["team"])},
        "/api/teams/{team}/logo": {"post": {**_op(
            "uploadLogo", "Store a team's logo", "rosters", _admin_responses(**{
                "201": _json("LogoStored", "stored by its SHA-256: name it as `logo` in `team.registered`"),
                "413": _json("Problem", "`too_large`: over 64 KiB"),
                "415": _json("Problem", "`unsupported_media`: another Content-Type, or a body whose first "
                                        "bytes are not that format's")}), admin=True, params=["team"]),
            "requestBody": {"required": True, "content": {
                t: image for t in ("image/png", "image/jpeg", "image/webp", "image/gif")}}}},
        "/logos/{sha}": {"get": _op(
            "getLogo", "A logo, by its SHA-256", "rosters", {
                "200": {"description": "the image, with its Content-Type; `Cache-Control: public, "
                                       "max-age=31536000, immutable` and an `ETag`",
                        "content": {t: image for t in ("image/png", "image/jpeg", "image/webp",
                                                        "image/gif")}},
                "304": {"description": "`If-None-Match` named its `ETag`"},
                "404": _json("Problem", "`unknown_logo`")}, params=["sha"])},
        "/api/players": {
            "get": _op("listPlayers", "Every player's current registration", "rosters", _admin_responses(**{
                "200": _list("PlayerEntry", "by id")}), admin=True),
            "post": _op("registerPlayer", "Register a player, or register them again (a "
                        "`player.registered` event)", "rosters", _submit_responses(), admin=True,
                        body="PlayerRegisteredRequest",
                        description="`revision` as for `POST /api/teams`.")},
        "/api/players/{player}": {"get": _op(
            "getPlayer", "A player's current registration and every revision", "rosters",
            _admin_responses(**{"200": _json("PlayerDocument", "`current`, and `history` oldest first"),
                                "404": unknown["player"]}), admin=True, params=["player"])},
        "/api/rosters/template.csv": {"get": _op(
            "rosterTemplate", "The CSV the roster import takes, with example rows", "rosters", {
                "200": {"description": "UTF-8 with a BOM; the columns `team,team_name,short,primary,"
                                       "secondary,player,player_name,number,handicap`",
                        "content": {"text/csv": {"schema": {"type": "string"}}}}})},
        "/api/rosters/import": {"post": {**_op(
            "importRosters", "Register teams and players from a CSV", "rosters", {
                **_admin_responses(**{
                    "200": _json("RosterImported", "every registration sent and acked (`duplicate` for a "
                                                   "file sent again); rows registered already skipped"),
                    "400": _json("InvalidCsv", "`invalid_csv`: every bad row by line and column; nothing "
                                               "was imported"),
                    "413": _TOO_LARGE,
                    "503": _json("RosterImported", "a registration was not stored (`error`): send the "
                                                   "same file again")}),
                "403": _either("neither an admin nor a committee token (text), or a team entered in an "
                               "event outside the token's scope (`Problem` `out_of_scope`)", "Problem")},
            admin=True, description="One row per player; a row with no player registers its team alone. "
                                    "Every row is checked before anything is sent."),
            "parameters": [{"name": "event", "in": "query", "required": False,
                            "description": "also enter each team in this tournament event",
                            "schema": {"type": "string"}}],
            "requestBody": {"required": True, "content": {"text/csv": {"schema": {"type": "string"}}}}}},
    }
