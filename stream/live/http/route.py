"""A route table's entry: the method, the path, the handler, and its OpenAPI operation.

A resource's module lists its routes as ``ROUTES``; ``routes.py`` gathers them. The app
registers each entry (``register``) and the OpenAPI document lists each (``paths``): what
a route takes and returns is written once, beside its handler.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

#: An OpenAPI operation, or what builds it when the document is first built (one that
#: needs the generated schemas).
Operation = dict[str, Any] | Callable[[], dict[str, Any]]


@dataclass(frozen=True)
class Route:
    method: str                     # "GET" (HEAD with it) or "POST"
    path: str
    handler: Handler | None         # None: a folder's files (``folder``), the path ends ``{filename}``
    doc: Operation
    folder: Callable[[], Path] | None = None

    def definition(self) -> web.AbstractRouteDef:
        if self.folder is not None:
            return web.static(self.path.removesuffix("{filename}"), self.folder(), append_version=True)
        assert self.handler is not None, self.path
        return web.route(self.method, self.path, self.handler)

    def operation(self) -> dict[str, Any]:
        return self.doc() if callable(self.doc) else self.doc


def get(path: str, handler: Handler, doc: Operation) -> Route:
    return Route("GET", path, handler, doc)


def post(path: str, handler: Handler, doc: Operation) -> Route:
    return Route("POST", path, handler, doc)


def register(app: web.Application, routes: Iterable[Route]) -> None:
    """Route every entry on ``app``, in the table's order."""
    app.add_routes([r.definition() for r in routes])


def paths(routes: Iterable[Route]) -> dict[str, Any]:
    """The OpenAPI ``paths`` of the table: each path's operations, by method, in its order."""
    out: dict[str, dict[str, Any]] = {}
    for r in routes:
        out.setdefault(r.path, {})[r.method.lower()] = r.operation()
    return out
