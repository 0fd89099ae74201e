"""The OpenAPI 3.1 document of the HTTP API, served at ``/openapi.json``.

The schemas are generated (``schema_gen.py``) from the request and response
types of ``api_types.py`` and the log events; the paths are the route table's
(``http/routes.py``): each entry says what its route takes and returns, with
which status codes. What is written here is the document's frame around them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...wire import api_types
from ...wire.schema_gen import generated, version
from ..route import Route, paths

OPENAPI_VERSION = "3.1.0"


def openapi(routes: Iterable[Route]) -> dict[str, Any]:
    """The OpenAPI 3.1 _document of the HTTP API: every route of ``routes``, as its entry
    says (``http/route.py``), around the generated schemas."""
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Arena Stream HTTP API",
            "version": version(),
            "summary": "Real-time match events for USPA arena polo",
            "description": (api_types.__doc__ or "").strip() + "\n\n" + _listed(routes) +
                           "\n\nThe WebSocket protocols are described at "
                           "`/asyncapi.json`; both, with examples, in docs/protocol-device.md "
                           "and docs/protocol-viewer.md, and this API in docs/protocol-http.md.",
        },
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "tags": [{"name": n, "description": d} for n, d in (
            ("games", "what viewers can read"), ("log", "the event log, JSON Lines"),
            ("admin", "setup and tokens: `Authorization: Bearer <admin or committee token>` (a committee "
                      "token within its tournament event)"),
            ("rosters", "teams and players as registered, their logos, and the CSV import"),
            ("health", "probes and metrics"), ("websocket", "the two WebSocket endpoints"),
            ("docs", "this _document and its companion"),
            ("clients", "the browser clients: scoreboard, overlay, handheld"))],
        "paths": paths(routes),
        "components": {
            "schemas": generated(),
            "securitySchemes": {"bearerAuth": {
                "type": "http", "scheme": "bearer", "bearerFormat": "v1.<payload>.<signature>",
                "description": "An admin token (`admin.token` in the data directory, or one issued by "
                               "`POST /api/tokens` with `role: admin`), or a committee token (issued "
                               "with `role: committee` and its `event`), within its event."}},
        },
    }


def _listed(routes: Iterable[Route]) -> str:
    """Every route of the table, a line each: its method, its path and its summary."""
    lines = [f"    {r.method:<5}{r.path:<44} {r.operation().get('summary', '')}".rstrip() for r in routes]
    return "Routes:\n\n" + "\n".join(lines)
