"""A request's body, and a route that submits a log event: as a device sends it
(``ingest.submit_fields``), with an admin or a committee token, answered with its
``ack`` or ``error`` (``responses.answer``)."""

from __future__ import annotations

import secrets
from typing import Any, TypeVar

import msgspec
from aiohttp import web

from ..devices.ingest import submit_fields
from ..service import Service
from . import committee_api
from .responses import answer, problem

_body = msgspec.json.Decoder(dict[str, Any])
T = TypeVar("T", bound=msgspec.Struct)


async def json_body(request: web.Request) -> dict[str, Any]:
    """The body as a JSON object; else 400, with a plain-text body."""
    try:
        body = _body.decode(await request.read())
    except (msgspec.DecodeError, RecursionError) as err:
        raise web.HTTPBadRequest(text=f"the body is not a JSON object: {err}\n") from None
    return body


async def struct_body(request: web.Request, shape: type[T]) -> T | web.Response:
    """The body as a request of ``api_types``; else 400 ``invalid_field``, a ``Problem``."""
    try:
        return msgspec.json.decode(await request.read(), type=shape)
    except (msgspec.DecodeError, RecursionError) as err:
        return problem(400, "invalid_field", str(err))


async def submit(request: web.Request, etype: str, fields: dict[str, Any]) -> web.Response:
    """Submit ``fields`` as an event of ``etype`` (an ``id`` made up if it names none)."""
    svc = request.app[Service.KEY]
    claims = committee_api.staff(request)
    fields = {**fields, "type": etype}
    fields.setdefault("id", f"api-{secrets.token_hex(6)}")
    return answer(await submit_fields(svc, claims, fields, None))


async def submit_body(request: web.Request, etype: str, **path: str) -> web.Response:
    """Submit the body as an event of ``etype``, with the path's parts (``event``, ``game``)
    over its own. The token is checked first: an anonymous caller learns nothing from the body."""
    committee_api.staff(request)
    return await submit(request, etype, {**await json_body(request), **path})
