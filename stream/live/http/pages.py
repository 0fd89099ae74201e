"""The browser clients: one HTML page each (``api_types.PAGES``), configured by URL
parameters, and the files they load under ``/clients/``.

clients/web holds a folder per client (``displays/``, ``handheld/``, ``committee/``) and one
for what they share (``shared/``), and at its top only what must be there: ``sw.js``, the
handheld's service worker, whose URL ``/clients/sw.js`` gives it the scope ``/clients/``.
Each file is served at its path (``/clients/shared/patch.js``) and, as before the folders,
at its flat name: its path without its folder (``/clients/patch.js``, ``/clients/fonts/…``).
"""

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


def flat_names(folder: Path) -> dict[str, str]:
    """The files of ``folder``'s folders by their flat names: a file's path without its
    folder (``shared/fonts/OFL.txt`` -> ``fonts/OFL.txt``; hidden files and ``__pycache__``
    have none). A flat name is one file's: one that two folders give, or that is a path of
    ``folder`` itself, is refused (ValueError)."""
    names: dict[str, str] = {}
    for file in sorted(folder.rglob("*")):
        path = file.relative_to(folder)
        if len(path.parts) < 2 or any(p.startswith((".", "__")) for p in path.parts) or not file.is_file():
            continue
        flat = path.relative_to(path.parts[0]).as_posix()
        if flat in names or (folder / flat).exists():
            raise ValueError(f"/clients/{flat} would name both {names.get(flat, flat)} and {path.as_posix()}")
        names[flat] = path.as_posix()
    return names


async def page(request: web.Request) -> web.StreamResponse:
    """The browser clients: one HTML page each, configured by URL parameters."""
    return web.FileResponse(CLIENTS / api_types.PAGES[request.path], headers={"Cache-Control": "no-cache"})


ROUTES = (
    *(get(route, page, op(f"{route.strip('/')}Page", f"The browser client `{file}`, configured by URL "
                          "parameters", "clients", {"200": html("the page")}))
      for route, file in api_types.PAGES.items()),
    # The folder as it is when the app is built (a test may serve another).
    Route("GET", "/clients/{filename}", None, op(
        "clientFile", "The browser clients' files (scripts, styles, fonts, icons), by their path "
        "(`shared/patch.js`) or their flat name (`patch.js`)", "clients",
        {"200": {"description": "the file", "content": {"*/*": {"schema": {"type": "string"}}}},
         "404": text("no such file")}, params=["filename"]), folder=lambda: CLIENTS, names=flat_names),
)
