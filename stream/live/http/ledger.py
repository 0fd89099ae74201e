"""The ledger of obligations: what a game would take (its previews), what a player owes,
every obligation and its history, and what the committee decides on them (R6: an increase;
a rescind; a decrease), with a game's place in the order of play. The committee's routes
take an admin or a committee token (its own event's games only); the reads are public."""

from __future__ import annotations

from typing import Any

import msgspec
from aiohttp import web

from ...errors import MalformedEvent, Refused
from ...rules import codec
from ...rules.events import GameSetup
from ..ops.wallclock import now_ms
from ..service import Service
from ..wire import api_types
from ..wire.schema_gen import generated, ref
from . import committee_api
from .ops import (
    TOO_LARGE,
    UNKNOWN_GAME,
    admin_responses,
    either,
    json_doc,
    op,
    scoped,
    submit_responses,
)
from .responses import problem, send
from .route import get, post
from .submit import json_body, submit_body

_json = msgspec.json.Encoder()


async def preview_game(request: web.Request) -> web.Response:
    """The obligations a game would apply to its rosters if set up now (admin; a committee, for
    its own event's games: ``committee_api.preview_refusal``)."""
    claims = committee_api.staff(request)
    hub = request.app[Service.KEY].hub
    body = await json_body(request)
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
        return problem(409 if isinstance(err, Refused) else 400, err.code, err.detail,
                       clause=err.clause if isinstance(err, Refused) else None)
    return send(api_types.GamePreview(game=event.game, applies=taken))


async def game_preview(request: web.Request) -> web.Response:
    """What a game set up and not yet begun will take when it begins (its carried obligations);
    a committee token: a game of its event only."""
    claims = committee_api.staff(request)
    hub = request.app[Service.KEY].hub
    gid = request.match_info["game"]
    feed = hub.feeds.get(gid)
    if feed is None or feed.view is None:
        return problem(404, "unknown_game", "no such game")
    if not committee_api.of_event(hub.engine, claims, gid):
        return problem(403, "out_of_scope", f"game {gid!r} is not one of event {claims.event!r}: a "
                                            "committee previews its own event's games only")
    try:
        applies = hub.engine.preview_game(gid)
    except Refused as err:
        return problem(409, err.code, err.detail, clause=err.clause)
    return send(api_types.GamePreview(game=gid, applies=applies))



async def player_obligations(request: web.Request) -> web.Response:
    """What a player owes, where it may be served, and what was served where."""
    hub = request.app[Service.KEY].hub
    player = request.match_info["player"]
    return send(api_types.PlayerObligations(player=player, obligations=hub.engine.obligations(player)))


async def obligations(request: web.Request) -> web.Response:
    """Every obligation, optionally by ``status`` (pending, serving, served): the history."""
    hub = request.app[Service.KEY].hub
    status = request.query.get("status")
    return send(hub.engine.all_obligations(status=status))


async def committee_increase(request: web.Request) -> web.Response:
    """The committee increases a penalty: logged with who and why (R6)."""
    return await submit_body(request, "committee.increase")


async def schedule_game(request: web.Request) -> web.Response:
    """A game's place in the order of play: its start time and its officials, by name."""
    return await submit_body(request, "game.scheduled", game=request.match_info["game"])


async def game_handicap(request: web.Request) -> web.Response:
    """A game's goals on handicap, set by the committee before it begins (A5)."""
    return await submit_body(request, "game.handicap", game=request.match_info["game"])


async def committee_rescind(request: web.Request) -> web.Response:
    """The committee rescinds an obligation no game has begun to serve: logged with who and why."""
    return await submit_body(request, "committee.rescind")


async def committee_decrease(request: web.Request) -> web.Response:
    """The committee lowers the play time an obligation owes: logged with who and why."""
    return await submit_body(request, "committee.decrease")


def _obligations_op() -> dict[str, Any]:
    """``GET /api/obligations``: its ``status`` is the generated schema's (built with the document)."""
    status = generated()["Obligation"]["properties"]["status"]
    return {**op("listObligations", "Every obligation of the ledger, or its history", "games",
                 {"200": {"description": "the obligations",
                          "content": {"application/json": {"schema": {"type": "array",
                                                                      "items": ref("Obligation")}}}}}),
            "parameters": [{"name": "status", "in": "query", "required": False,
                            "description": "only those in this status (`served`: the history)",
                            "schema": {k: v for k, v in status.items() if k != "default"}}]}


ROUTES = (
    post("/api/games/preview", preview_game, op(
        "previewGame", "What a game would apply to its rosters (carried obligations) if set up now",
        "admin", admin_responses(**{
            "200": json_doc("GamePreview", "the obligations it would take; nothing is stored"),
            "400": either("the body is not a JSON object (text), or not a valid `game.setup` "
                          "(`Problem`: `invalid_field`, …)", "Problem"),
            "403": scoped("`out_of_scope`: a committee token previewing a game of another event, "
                          "or naming a team entered only in other events"),
            "409": json_doc("Problem", "the rules refuse the setup (`clause` names the clause)"),
            "413": TOO_LARGE}), body="GameSetupRequest",
        description="The body is a `game.setup` as for `POST /api/games` (`id` defaults to "
                    "`preview`). Nothing is logged."), who="staff"),
    get("/api/games/{game}/preview", game_preview, op(
        "previewScheduledGame", "What a game set up and not yet begun will take when it begins",
        "admin", admin_responses(**{
            "200": json_doc("GamePreview", "the obligations it would take if it began now"),
            "403": scoped("`out_of_scope`: a committee token asking for a game of another event"),
            "404": UNKNOWN_GAME,
            "409": json_doc("Problem", "`game_begun`: it has begun (it took its obligations then: "
                                       "`GET /api/obligations`)")}), params=["game"]), who="staff"),
    get("/api/players/{player}/obligations", player_obligations, op(
        "getPlayerObligations", "What a player owes, where it may be served, and what was served "
        "where", "games", {"200": json_doc("PlayerObligations", "the player's obligations, in "
                                                                "serving order (empty if none)")},
        params=["player"])),
    get("/api/obligations", obligations, _obligations_op),
    post("/api/committee/increase", committee_increase, op(
        "committeeIncrease", "The committee increases a penalty (a `committee.increase` event)",
        "admin", submit_responses(), body="CommitteeIncreaseRequest"), who="staff"),
    post("/api/games/{game}/schedule", schedule_game, op(
        "scheduleGame", "Set a game's place in the order of play (a `game.scheduled` event)",
        "admin", submit_responses(), body="GameScheduledRequest", params=["game"],
        description="`starts_at` (Unix ms) and `officials` (`umpires`: up to two names, "
                    "`referee`, `timekeeper`) replace the game's schedule whole; the game's "
                    "viewers get a new `roster` frame with it. Refused `unknown_game`."), who="staff"),
    post("/api/games/{game}/handicap", game_handicap, op(
        "setGameHandicap", "Set a game's goals on handicap before it begins (a `game.handicap` event)",
        "admin", submit_responses(), body="GameHandicapRequest", params=["game"],
        description="`goals` (`home`, `away`: whole or half goals, e.g. `1.5`) as the committee sets "
                    "them; left out or null, they are worked out again from the event's handicap "
                    "matrix and the starters' handicaps as registered now. `by` and `reason` say who "
                    "and why. The game's viewers get the new score in a delta. Refused "
                    "`unknown_game`, `game_begun` once the game has begun, `not_worked_out` when "
                    "they can't be worked out (no matrix, no row for the game's periods, a starter "
                    "with no registered handicap)."), who="staff"),
    post("/api/committee/rescind", committee_rescind, op(
        "committeeRescind", "The committee rescinds an obligation (a `committee.rescind` event)",
        "admin", submit_responses(), body="CommitteeRescindRequest",
        description="`obligation` is an obligation's `id` (`GET /api/obligations`). The ack's "
                    "notices hold its `obligation.withdrawn`. Refused `unknown_obligation`, or "
                    "`record_closed` once the game that serves it has begun."), who="staff"),
    post("/api/committee/decrease", committee_decrease, op(
        "committeeDecrease", "The committee lowers the play time an obligation owes "
        "(a `committee.decrease` event)", "admin", submit_responses(),
        body="CommitteeDecreaseRequest",
        description="`owed_ms` is the play time it owes from now on. The ack's notices hold its "
                    "`obligation.updated`. Refused `unknown_obligation`, `record_closed` once the "
                    "game that serves it has begun, `not_decreasable` (it owes no play time: "
                    "rescind it instead) or `not_a_decrease` (not less than it owes; a sit-out "
                    "must still owe some)."), who="staff"),
)
