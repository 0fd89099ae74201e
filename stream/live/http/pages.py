"""The browser clients: one HTML page each (``api_types.PAGES``), configured by URL
parameters, and the files they load under ``/clients/``."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

from aiohttp import web

from ..wire import api_types
from .ops import html, op, text
from .route import Route, get


def _clients() -> Path:
    """The browser clients' folder: the package ``stream.web`` (written in clients/web and
    shipped inside the package), found wherever the package is installed."""
    folder = importlib.resources.files("stream.web")
    assert isinstance(folder, Path), f"stream.web is not a folder on disk: {folder!r}"
    return folder


CLIENTS = _clients()


async def page(request: web.Request) -> web.StreamResponse:
    """The browser clients: one HTML page each, configured by URL parameters."""
    return web.FileResponse(CLIENTS / api_types.PAGES[request.path], headers={"Cache-Control": "no-cache"})


ROUTES = (
    *(get(route, page, op(f"{route.strip('/')}Page", f"The browser client `{file}`, configured by URL "
                          "parameters", "clients", {"200": html("the page")}))
      for route, file in api_types.PAGES.items()),
    # The folder as it is when the app is built (a test may serve another).
    Route("GET", "/clients/{filename}", None, op(
        "clientFile", "The browser clients' files (scripts, styles, fonts, icons)", "clients",
        {"200": {"description": "the file", "content": {"*/*": {"schema": {"type": "string"}}}},
         "404": text("no such file")}, params=["filename"]), folder=lambda: CLIENTS),
)
