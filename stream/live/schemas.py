"""The machine-readable API descriptions, served at ``/openapi.json`` and ``/asyncapi.json``.

Three modules, one job each:

* ``schema_gen.py``: every schema both documents use, generated once by
  ``msgspec.json.schema_components`` from the types the service itself decodes
  and encodes (the protocol unions, the log events, ``api_types.py``);
* ``openapi_doc.py``: the OpenAPI 3.1 document of the HTTP API;
* ``asyncapi_doc.py``: the AsyncAPI 3.0 document of the two WebSocket protocols.

This module is what the app (``app.py``) and the tests use: each document,
built once, and its JSON, encoded once. Nothing here imports ``app.py``.
"""

from __future__ import annotations

import functools

import msgspec

from .asyncapi_doc import ASYNCAPI_VERSION, CLOSE_CODES, asyncapi
from .openapi_doc import OPENAPI_VERSION, openapi
from .schema_gen import REQUEST_BODIES, generated

__all__ = ["ASYNCAPI_VERSION", "CLOSE_CODES", "OPENAPI_VERSION", "REQUEST_BODIES", "asyncapi",
           "asyncapi_json", "generated", "openapi", "openapi_json"]


@functools.cache
def openapi_json() -> bytes:
    return msgspec.json.encode(openapi())


@functools.cache
def asyncapi_json() -> bytes:
    return msgspec.json.encode(asyncapi())
