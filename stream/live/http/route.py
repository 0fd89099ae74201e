"""A route table's entry: the method, the path, the handler, who may call it, and its
OpenAPI operation.

A resource's module lists its routes as ``ROUTES``; ``routes.py`` gathers them. The app
registers each entry (``register``) and the OpenAPI document lists each (``paths``): what
a route takes and returns, and the token it needs, is written once, beside its handler.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from aiohttp import web
from aiohttp.typedefs import Handler
from aiohttp.web_urldispatcher import UrlMappingMatchInfo

from . import committee_api

#: An OpenAPI operation, or what builds it when the document is first built (one that
#: needs the generated schemas).
Operation = dict[str, Any] | Callable[[], dict[str, Any]]

#: Who may call a route (docs/security.md, "Who may do what"): anyone, with no token; an
#: admin or a committee token (``staff``); an admin token alone. What a token may reach
#: within its scope (a committee's event, a scoped admin's game) is the handler's to check.
Who = Literal["anyone", "staff", "admin"]

_BEARER: list[dict[str, list[str]]] = [{"bearerAuth": []}]


@dataclass(frozen=True)
class Route:
    method: str                     # "GET" (HEAD with it) or "POST"
    path: str
    handler: Handler | None         # None: a folder's files (``folder``), the path ends ``{filename}``
    doc: Operation
    folder: Callable[[], Path] | None = None
    who: Who = "anyone"
    #: A folder's other names for its files (name -> path in it), read from the folder.
    names: Callable[[Path], Mapping[str, str]] | None = None

    def definition(self) -> web.AbstractRouteDef:
        if self.folder is not None:
            assert self.who == "anyone", self.path
            folder = self.folder()
            return _FolderDef(_Folder(self.path.removesuffix("/{filename}"), folder,
                                      self.names(folder) if self.names else {}))
        assert self.handler is not None, self.path
        handler = self.handler if self.who == "anyone" else _guarded(self.handler, self.who)
        return web.route(self.method, self.path, handler)

    def operation(self) -> dict[str, Any]:
        op = self.doc() if callable(self.doc) else self.doc
        return {**op, "security": [] if self.who == "anyone" else _BEARER}


class _Folder(web.StaticResource):
    """A folder's files (aiohttp's static route: a path that leaves the folder is a 404), each
    also at the other name ``names`` gives it: the route reads that name as the file's path, so
    what follows the route (the headers, ``headers.page_of``) sees the file it serves."""

    def __init__(self, prefix: str, folder: Path, names: Mapping[str, str]) -> None:
        super().__init__(prefix, folder, append_version=True)
        self._names = dict(names)

    async def resolve(self, request: web.Request) -> tuple[UrlMappingMatchInfo | None, set[str]]:
        match, allowed = await super().resolve(request)
        if match is not None and (path := self._names.get(posixpath.normpath(match["filename"]))):
            match["filename"] = path
        return match, allowed


@dataclass(frozen=True)
class _FolderDef(web.AbstractRouteDef):
    resource: _Folder

    def register(self, router: web.UrlDispatcher) -> list[web.AbstractRoute]:
        router.register_resource(self.resource)
        return list(self.resource)


def _guarded(handler: Handler, who: Who) -> Handler:
    """``handler`` behind the token check: a request without a token the route takes is
    refused (401/403) before the handler reads anything."""

    @functools.wraps(handler)
    async def guarded(request: web.Request) -> web.StreamResponse:
        committee_api.check(request, admin_only=who == "admin")
        return await handler(request)

    return guarded


def get(path: str, handler: Handler, doc: Operation, *, who: Who = "anyone") -> Route:
    return Route("GET", path, handler, doc, who=who)


def post(path: str, handler: Handler, doc: Operation, *, who: Who = "anyone") -> Route:
    return Route("POST", path, handler, doc, who=who)


def register(app: web.Application, routes: Iterable[Route]) -> None:
    """Route every entry on ``app``, in the table's order."""
    app.add_routes([r.definition() for r in routes])


def paths(routes: Iterable[Route]) -> dict[str, Any]:
    """The OpenAPI ``paths`` of the table: each path's operations, by method, in its order."""
    out: dict[str, dict[str, Any]] = {}
    for r in routes:
        out.setdefault(r.path, {})[r.method.lower()] = r.operation()
    return out
