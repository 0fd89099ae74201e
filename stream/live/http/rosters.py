"""Rosters: teams and players as registered in the log, and their logos.

Every route takes an admin or a committee token (``Authorization: Bearer``) but the
logos and the CSV template (``roster_import.py``, with the import), which carry
nothing private. A registration is an event like any other (``submit_fields``, as a
device sends it): the answers are the device's, and a committee token changes only
the teams and players of its own event, or of none (``auth.committee_rosters``;
docs/security.md).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import msgspec
from aiohttp import web

from ..service import Service
from ..wire import api_types
from . import committee_api
from .ops import TOO_LARGE, admin_responses, either, json_doc, list_of, op, submit_responses
from .responses import problem, send
from .roster_import import import_csv, template_csv
from .route import get, post
from .submit import submit

_body = msgspec.json.Decoder(dict[str, Any])

#: The images a logo may be, by Content-Type: what its first bytes must be.
LOGO_TYPES: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),          # and b"WEBP" at offset 8
}
LOGO_MAX = 64 * 1024
IMMUTABLE = "public, max-age=31536000, immutable"
_SHA = re.compile(r"^[0-9a-f]{64}$")


# ------------------------------------------------------------------ reading


async def list_teams(request: web.Request) -> web.Response:
    committee_api.staff(request)
    return send(request.app[Service.KEY].hub.engine.teams())


async def get_team(request: web.Request) -> web.Response:
    committee_api.staff(request)
    engine = request.app[Service.KEY].hub.engine
    team = request.match_info["team"]
    current = engine.team(team)
    if current is None:
        return problem(404, "unknown_team", f"no team {team!r} is registered")
    return send(api_types.TeamDocument(current=current, history=engine.team_history(team)))


async def list_players(request: web.Request) -> web.Response:
    committee_api.staff(request)
    return send(request.app[Service.KEY].hub.engine.players())


async def get_player(request: web.Request) -> web.Response:
    committee_api.staff(request)
    engine = request.app[Service.KEY].hub.engine
    player = request.match_info["player"]
    current = engine.player(player)
    if current is None:
        return problem(404, "unknown_player", f"no player {player!r} is registered")
    return send(api_types.PlayerDocument(current=current, history=engine.player_history(player)))


# ------------------------------------------------------------------ registering


async def _register(request: web.Request, etype: str) -> web.Response:
    committee_api.staff(request)  # the token first: an anonymous caller learns nothing
    try:
        fields = _body.decode(await request.read())
    except (msgspec.DecodeError, RecursionError) as err:
        return problem(400, "invalid_field", f"the body is not a JSON object: {err}")
    return await submit(request, etype, fields)


async def post_team(request: web.Request) -> web.Response:
    return await _register(request, "team.registered")


async def post_player(request: web.Request) -> web.Response:
    return await _register(request, "player.registered")


# ------------------------------------------------------------------ logos


def _image_type(data: bytes) -> str | None:
    """The image type ``data`` is, by its first bytes."""
    for kind, magics in LOGO_TYPES.items():
        if any(data.startswith(m) for m in magics) and (kind != "image/webp" or data[8:12] == b"WEBP"):
            return kind
    return None


async def _read_limited(request: web.Request, limit: int) -> bytes | None:
    """The body, or None once it is longer than ``limit`` (nothing more is read)."""
    if request.content_length is not None and request.content_length > limit:
        return None
    out = bytearray()
    while chunk := await request.content.read(limit + 1 - len(out)):
        out += chunk
        if len(out) > limit:
            return None
    return bytes(out)


async def post_logo(request: web.Request) -> web.Response:
    committee_api.staff(request)
    svc = request.app[Service.KEY]
    kind = request.content_type
    if kind not in LOGO_TYPES:
        return problem(415, "unsupported_media", f"a logo is a PNG, JPEG, WebP or GIF image "
                                                  f"(Content-Type {', '.join(LOGO_TYPES)}), not {kind!r}")
    data = await _read_limited(request, LOGO_MAX)
    if data is None:
        return problem(413, "too_large", f"a logo is at most {LOGO_MAX // 1024} KiB")
    if _image_type(data) != kind:
        return problem(415, "unsupported_media", f"the body is not a {kind.removeprefix('image/').upper()} "
                                                  "image (its first bytes are not that format's)")
    sha = hashlib.sha256(data).hexdigest()
    await svc.hub.store.put_blob(sha, kind, data)
    return send(api_types.LogoStored(logo=sha, url=f"/logos/{sha}"), 201)


async def get_logo(request: web.Request) -> web.Response:
    sha = request.match_info["sha"]
    etag = f'"{sha}"'
    if not _SHA.match(sha):
        return problem(404, "unknown_logo", "a logo is named by the SHA-256 of its bytes (64 hex digits)")
    headers = {"Cache-Control": IMMUTABLE, "ETag": etag, "X-Content-Type-Options": "nosniff"}
    if etag in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    found = await request.app[Service.KEY].hub.store.get_blob(sha)
    if found is None:
        return problem(404, "unknown_logo", f"no logo {sha} is stored")
    kind, data = found
    return web.Response(body=data, content_type=kind, headers=headers)


_UNKNOWN = {k: json_doc("Problem", f"`unknown_{k}`: never registered") for k in ("team", "player")}
_IMAGE = {"schema": {"type": "string", "format": "binary"}}
_IMAGES = {t: _IMAGE for t in ("image/png", "image/jpeg", "image/webp", "image/gif")}

ROUTES = (
    get("/api/teams", list_teams, op("listTeams", "Every team's current registration", "rosters",
                                     admin_responses(**{"200": list_of("TeamEntry", "by id")})), who="staff"),
    post("/api/teams", post_team, op(
        "registerTeam", "Register a team, or register it again (a `team.registered` event)",
        "rosters", submit_responses(), body="TeamRegisteredRequest",
        description="Send `revision` (the one edited; 0 for a new team): a registration "
                    "made from an older one is refused `stale_registration` (409), with "
                    "what changed since and the current values in `detail`."), who="staff"),
    get("/api/teams/{team}", get_team, op(
        "getTeam", "A team's current registration and every revision", "rosters", admin_responses(**{
            "200": json_doc("TeamDocument", "`current`, and `history` oldest first"),
            "404": _UNKNOWN["team"]}), params=["team"]), who="staff"),
    post("/api/teams/{team}/logo", post_logo, {**op(
        "uploadLogo", "Store a team's logo", "rosters", admin_responses(**{
            "201": json_doc("LogoStored", "stored by its SHA-256: name it as `logo` in `team.registered`"),
            "413": json_doc("Problem", "`too_large`: over 64 KiB"),
            "415": json_doc("Problem", "`unsupported_media`: another Content-Type, or a body whose first "
                                       "bytes are not that format's")}), params=["team"]),
        "requestBody": {"required": True, "content": _IMAGES}}, who="staff"),
    get("/logos/{sha}", get_logo, op(
        "getLogo", "A logo, by its SHA-256", "rosters", {
            "200": {"description": "the image, with its Content-Type; `Cache-Control: public, "
                                   "max-age=31536000, immutable` and an `ETag`",
                    "content": _IMAGES},
            "304": {"description": "`If-None-Match` named its `ETag`"},
            "404": json_doc("Problem", "`unknown_logo`")}, params=["sha"])),
    get("/api/players", list_players, op(
        "listPlayers", "Every player's current registration", "rosters",
        admin_responses(**{"200": list_of("PlayerEntry", "by id")})), who="staff"),
    post("/api/players", post_player, op(
        "registerPlayer", "Register a player, or register them again (a `player.registered` event)",
        "rosters", submit_responses(), body="PlayerRegisteredRequest",
        description="`revision` as for `POST /api/teams`."), who="staff"),
    get("/api/players/{player}", get_player, op(
        "getPlayer", "A player's current registration and every revision", "rosters",
        admin_responses(**{"200": json_doc("PlayerDocument", "`current`, and `history` oldest first"),
                           "404": _UNKNOWN["player"]}), params=["player"]), who="staff"),
    get("/api/rosters/template.csv", template_csv, op(
        "rosterTemplate", "The CSV the roster import takes, with example rows", "rosters", {
            "200": {"description": "UTF-8 with a BOM; the columns `team,team_name,short,primary,"
                                   "secondary,player,player_name,number,handicap`",
                    "content": {"text/csv": {"schema": {"type": "string"}}}}})),
    post("/api/rosters/import", import_csv, {**op(
        "importRosters", "Register teams and players from a CSV", "rosters", {
            **admin_responses(**{
                "200": json_doc("RosterImported", "every registration sent and acked (`duplicate` for a "
                                                  "file sent again); rows registered already skipped"),
                "400": json_doc("InvalidCsv", "`invalid_csv`: every bad row by line and column; nothing "
                                              "was imported"),
                "413": TOO_LARGE,
                "503": json_doc("RosterImported", "a registration was not stored (`error`): send the "
                                                  "same file again")}),
            "403": either("neither an admin nor a committee token (text), or a team entered in an "
                          "event outside the token's scope (`Problem` `out_of_scope`)", "Problem")},
        description="One row per player; a row with no player registers its team alone. "
                                "Every row is checked before anything is sent."),
        "parameters": [{"name": "event", "in": "query", "required": False,
                        "description": "also enter each team in this tournament event",
                        "schema": {"type": "string"}}],
        "requestBody": {"required": True, "content": {"text/csv": {"schema": {"type": "string"}}}}},
        who="staff"),
)
