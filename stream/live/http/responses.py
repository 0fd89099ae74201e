"""What the HTTP handlers answer with, written once.

``send``: a JSON document (a shape of ``api_types``, a protocol frame, or a list of
them), encoded once. ``problem``: an RFC 7807-style ``Problem`` (``code``, ``detail``,
and a rule's ``clause`` where one refused). ``answer``: an event submitted over HTTP is
answered with the ``ack`` or ``error`` frame a device gets, its status by ``STATUS``.
``store_unavailable``: a store that can't answer is a 503 on every route.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import msgspec
from aiohttp import web
from aiohttp.typedefs import Handler

from ...errors import NotStored
from ...store import Record
from ..wire import api_types
from ..wire import protocol as pr

_json = msgspec.json.Encoder()

#: An ``error`` frame's HTTP status by its code; any other: 409 if a rule's clause
#: refused it, else 400 (the event was malformed).
STATUS = {"not_stored": 503, "unknown": 503, "forbidden": 403, "out_of_scope": 403, "id_conflict": 409}
RETRY = {"Retry-After": "1"}


def send(doc: msgspec.Struct | Sequence[msgspec.Struct], status: int = 200,
         headers: dict[str, str] | None = None) -> web.Response:
    """A JSON response: a shape of ``api_types`` (or of the protocol), or a list of them, encoded once."""
    return web.Response(status=status, body=_json.encode(doc), content_type="application/json",
                        headers=headers)


def problem(status: int, code: str, detail: str,
            clause: str | msgspec.UnsetType | None = msgspec.UNSET) -> web.Response:
    return send(api_types.Problem(code=code, detail=detail, clause=clause), status)


def error_status(err: pr.Error) -> int:
    """An event refused, as HTTP."""
    return STATUS.get(err.code, 400 if err.clause is None else 409)


def answer(result: pr.Ack | pr.Error) -> web.Response:
    """An event's ``ack`` (201; 200 for a duplicate) or ``error`` (``error_status``; with
    Retry-After when it may be sent again)."""
    if isinstance(result, pr.Error):
        return send(result, error_status(result), RETRY if result.retry else None)
    return send(result, 200 if result.duplicate else 201)


def jsonl(records: Iterable[Record]) -> bytes:
    """Records as JSON Lines: each one's body, as the log holds it, and a newline."""
    return b"".join(r.body + b"\n" for r in records)


def filename(name: str) -> str:
    """``name`` as a download's file name: anything but letters, digits and ``_.-`` is ``_``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


@web.middleware
async def store_unavailable(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A store that can't answer (etcd down, or back a moment ago) makes any HTTP route a
    503 a client can act on, never a 500 with a traceback: a ``Problem`` with the store's
    code (``not_stored``; ``unknown`` for a write it can't tell landed) and Retry-After."""
    try:
        return await handler(request)
    except NotStored as err:
        if request.path.startswith("/ws/"):  # upgraded already: no HTTP answer to give
            raise
        return send(api_types.Problem(code=err.code, detail=err.detail), 503, RETRY)
