"""The machine-readable API descriptions, served at ``/openapi.json`` and ``/asyncapi.json``.

Three modules, one job each:

* ``schema_gen.py``: every schema both documents use, generated once by
  ``msgspec.json.schema_components`` from the types the service itself decodes
  and encodes (the protocol unions, the log events, ``api_types.py``);
* ``openapi_doc.py``: the OpenAPI 3.1 document of the HTTP API, around the
  route table's paths;
* ``asyncapi_doc.py``: the AsyncAPI 3.0 document of the two WebSocket protocols.

This module is what the app (``app.py``) and the tests use: the whole route
table (``ROUTES``: ``http/routes.py``'s, and the two documents' own), each
document, built once, and its JSON, encoded once. Nothing here imports ``app.py``.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec
from aiohttp import web

from ...wire.schema_gen import REQUEST_BODIES, generated
from ..ops import document, op
from ..route import Route, get
from ..routes import TABLE
from . import openapi_doc
from .asyncapi_doc import ASYNCAPI_VERSION, CLOSE_CODES, asyncapi
from .openapi_doc import OPENAPI_VERSION

__all__ = ["ASYNCAPI_VERSION", "CLOSE_CODES", "OPENAPI_VERSION", "REQUEST_BODIES", "ROUTES", "asyncapi",
           "asyncapi_json", "generated", "openapi", "openapi_json"]


async def openapi_document(request: web.Request) -> web.Response:
    return web.Response(body=openapi_json(), content_type="application/json")


async def asyncapi_document(request: web.Request) -> web.Response:
    return web.Response(body=asyncapi_json(), content_type="application/json")


#: Every route the service serves, as the app routes them and the OpenAPI document lists them.
ROUTES: tuple[Route, ...] = (
    *TABLE,
    get("/openapi.json", openapi_document, op("openapi", "This _document", "docs",
                                               {"200": document("OpenAPI 3.1")})),
    get("/asyncapi.json", asyncapi_document, op("asyncapi", "The WebSocket protocols", "docs",
                                                 {"200": document("AsyncAPI 3.0")})),
)


@functools.cache
def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``ROUTES``, built once."""
    return openapi_doc.openapi(ROUTES)


@functools.cache
def openapi_json() -> bytes:
    return msgspec.json.encode(openapi())


@functools.cache
def asyncapi_json() -> bytes:
    return msgspec.json.encode(asyncapi())
