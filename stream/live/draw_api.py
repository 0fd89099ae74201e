"""An event's draw over HTTP (``stream/rules/draw.py``, L3).

    POST /api/events/{event}/draw    make the event's draw (a ``draw.made`` event)
    GET  /api/events/{event}/draw    the draw as it stands: its games, their sides, states,
                                     winners, and what it asks the committee to confirm

Both take an admin or a committee token; a committee token draws and reads its own
event only (403 ``out_of_scope``, as ``auth.authorize`` and ``committee_api.event_refusal``
hold it). The POST is submitted as a device's event is (``ingest.submit_fields``): the
answer is its ``ack`` (201) or its ``error`` (409 with the rules' refusal and clause).
"""

from __future__ import annotations

import secrets
from typing import Any

import msgspec
from aiohttp import web

from . import api_types, committee_api
from .ingest import submit_fields
from .rosters_api import answer
from .service import Service

_body = msgspec.json.Decoder(dict[str, Any])
_json = msgspec.json.Encoder()


def _problem(status: int, code: str, detail: str) -> web.Response:
    return web.Response(status=status, body=_json.encode(api_types.Problem(code=code, detail=detail)),
                        content_type="application/json")


async def make_draw(request: web.Request) -> web.Response:
    """The event's draw: format, teams in seed order, consolation or subsidiary."""
    claims = committee_api.staff(request)  # the token first: an anonymous caller learns nothing
    try:
        body = _body.decode(await request.read())
    except (msgspec.DecodeError, RecursionError) as err:
        raise web.HTTPBadRequest(text=f"the body is not a JSON object: {err}\n") from None
    fields = {**body, "type": "draw.made", "event": request.match_info["event"]}
    fields.setdefault("id", f"api-{secrets.token_hex(6)}")
    return answer(await submit_fields(request.app[Service.KEY], claims, fields, None))


async def get_draw(request: web.Request) -> web.Response:
    claims = committee_api.staff(request)
    event = request.match_info["event"]
    if (refusal := committee_api.event_refusal(claims, event)) is not None:
        return refusal
    engine = request.app[Service.KEY].hub.engine
    if not engine.has_event(event):
        return _problem(404, "unknown_event", f"no event {event!r} has been set up")
    found = engine.draw(event)
    if found is None:
        return _problem(404, "not_drawn", f"event {event!r} has no draw yet: POST one")
    return web.Response(body=_json.encode(found), content_type="application/json")


def add_routes(app: web.Application) -> None:
    app.add_routes([web.post("/api/events/{event}/draw", make_draw),
                    web.get("/api/events/{event}/draw", get_draw)])
