"""The operator's route: take the history the store holds as the log (docs/reliability.md)."""

from __future__ import annotations

import logging

import msgspec
from aiohttp import web

from ..service import Service
from ..wire import api_types
from . import committee_api
from .ops import RETRY_AFTER, TOO_LARGE, admin_responses, either, json_doc, op
from .responses import problem, send
from .route import post
from .submit import struct_body

log = logging.getLogger("arena_stream.app")


async def accept_store(request: web.Request) -> web.Response:
    """The operator takes the history the store holds as the log (docs/reliability.md): a new
    epoch; this node reloads it and every viewer gets a fresh snapshot; the others follow."""
    svc = request.app[Service.KEY]
    claims = committee_api.staff(request)
    if claims.game is not None or claims.arena is not None:
        return problem(403, "out_of_scope", "accepting the store's history needs an unscoped admin token")
    req = await struct_body(request, api_types.AcceptRequest)
    if isinstance(req, web.Response):
        return req
    hold = svc.hub.store.hold
    if hold is None or hold.kind != "diverged":
        return problem(409, "not_diverged", "the store's history is not in question: nothing to accept"
                       + ("" if hold is None else f" (it takes no writes because {hold.reason})"))
    done = await svc.hub.store.accept(claims.sub, req.reason)
    await svc.hub.replaced()  # this node has reloaded it and reset its viewers
    log.warning("store history accepted", extra={"by": claims.sub, "epoch": done.epoch,
                                                  "previous": done.previous, "reason": req.reason})
    return send(api_types.StoreAccepted(**msgspec.structs.asdict(done), games=len(svc.hub.feeds)))


ROUTES = (
    post("/api/admin/store/accept", accept_store, op(
        "acceptStoreHistory", "Take the history the store holds as the log, while it is in question",
        "admin", {**admin_responses(**{
            "200": json_doc("StoreAccepted", "accepted: a new epoch; this node has reloaded the log and "
                                             "sent every viewer a snapshot (`reset: true`, "
                                             "`history_replaced`); the other nodes follow by themselves"),
            "400": json_doc("Problem", "`invalid_field`: the body is not `{reason}`"),
            "409": json_doc("Problem", "`not_diverged`: the store's history is not in question"),
            "413": TOO_LARGE,
            "503": json_doc("Problem", "`not_stored`: the store could not be reached", **RETRY_AFTER)}),
         "403": either("not an admin token (text), or a _scoped one (`Problem` `out_of_scope`)",
                       "Problem")}, body="AcceptRequest",
        description="On Redis, when the store no longer holds the history the service showed "
                    "(`GET /readyz`: 503 with the reason; the metric `arena_store_diverged` is 1), "
                    "it takes no writes until the right history is back or this is called. The "
                    "store then makes its game counters, dedup keys and games' streams agree with "
                    "its log (`repaired`), writes a new epoch and an `accepted` record, and the "
                    "nodes reload. Needs an unscoped admin token."), who="admin"),
)
