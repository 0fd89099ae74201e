"""The parts a route's OpenAPI operation is written with (``route.Route.doc``): a response
of each media type, an operation (the token it needs is its route's: ``route.Route.who``)."""

from __future__ import annotations

from typing import Any

from ..wire.schema_gen import ref


def json_doc(name: str, description: str, **headers: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description,
                           "content": {"application/json": {"schema": ref(name)}}}
    if headers:
        out["headers"] = headers
    return out


def text(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/plain": {"schema": {"type": "string"}}}}


def html(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


def either(description: str, name: str) -> dict[str, Any]:
    """Some refusals come from aiohttp (plain text), some from the service (JSON)."""
    return {"description": description,
            "content": {"application/json": {"schema": ref(name)},
                        "text/plain": {"schema": {"type": "string"}}}}


UNAUTHORIZED = text("no `Authorization: Bearer <token>`, or a token that is forged, expired or revoked")
NOT_ADMIN = text("the token is valid but neither an admin nor a committee token")
TOO_LARGE = text("the body is larger than 256 KiB")
_NDJSON = {"type": "string", "description": "JSON Lines: one `LogEvent` per line, in log order"}


def list_of(name: str, description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/json": {"schema": {"type": "array", "items": ref(name)}}}}


def scoped(description: str) -> dict[str, Any]:
    """A 403 of a route a committee token calls within its event only."""
    return either("neither an admin nor a committee token (text), or outside the token's scope "
                   f"(`Problem`: {description})", "Problem")


def ndjson(description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/x-ndjson": {"schema": _NDJSON,
                                                 "x-item-schema": ref("LogEvent")}}}


def submit_responses() -> dict[str, Any]:
    """What ``submit.submit`` answers: an ``ack`` or an ``error`` frame, as on /ws/device."""
    retry_after = {"Retry-After": {"description": "seconds; send the same body again",
                                   "schema": {"type": "integer"}}}
    return {
        "201": json_doc("Ack", "committed to disk (`duplicate: false`)"),
        "200": json_doc("Ack", "a retry of an event already committed (same `id`, same body): "
                            "the first ack again, with `duplicate: true` and no notices"),
        "400": either("malformed: the body is not a JSON object (text), or an event field is "
                       "missing or ill-typed (`Error`, `clause: null`: `invalid_field`, …)", "Error"),
        "401": UNAUTHORIZED,
        "403": either("not an admin token (text), or an admin token _scoped to a game or an arena "
                       "(`Error` `out_of_scope`; setting up needs an unscoped one) or a role that "
                       "may not send this (`forbidden`)", "Error"),
        "409": json_doc("Error", "refused: by the rules (`clause` names the clause: `duplicate_event`, "
                              "`unknown_event`, `unknown_player`, …) or `id_conflict` (this id was "
                              "used for a different body; the first one stands)"),
        "413": TOO_LARGE,
        "503": json_doc("Error", "`not_stored` (nothing was committed) or `unknown` (the store lost its "
                              "connection after the write was sent: it may have been committed), "
                              "`retry: true`: send the same body again; dedup settles it",
                     **retry_after),
    }


def op(op_id: str, summary: str, tag: str, responses: dict[str, Any], *,
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
    return op  # its ``security``: the route's (``route.Route.who``)


def document(what: str) -> dict[str, Any]:
    return {"description": what, "content": {"application/json": {"schema": {"type": "object"}}}}


def admin_responses(**more: Any) -> dict[str, Any]:
    return {"401": UNAUTHORIZED, "403": NOT_ADMIN, **more}


#: A game the path names that is not one.
UNKNOWN_GAME = json_doc("Problem", "no such game (`unknown_game`)")
#: The 503 of a route that records a token: Retry-After, in seconds.
RETRY_AFTER = {"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}}
#: The 404 of a route whose path names an event.
UNKNOWN_EVENT = json_doc("Problem", "`unknown_event`: never set up, and no game names it")


#: The page of the docs that describes each socket's protocol, with real frames.
_PROTOCOL_PAGES = {"device": "protocol-device.md", "watch": "protocol-viewer.md"}


def ws_upgrade(kind: str, channel: str) -> dict[str, Any]:
    return {
        "operationId": f"{kind}Socket",
        "summary": f"The {kind} WebSocket ({channel}); its frames are in /asyncapi.json",
        "tags": ["websocket"],
        "description": "A WebSocket upgrade. The protocol on it is described by the AsyncAPI "
                       f"_document at `/asyncapi.json` and in docs/{_PROTOCOL_PAGES[kind]}.",
        "responses": {
            "101": {"description": "switching protocols"},
            "403": text("a browser `Origin` that is neither this service nor an allowed one"),
            "503": text("too many connections, or the service is still loading its log "
                         "(`Retry-After`)"),
        },
        "security": [],
    }
