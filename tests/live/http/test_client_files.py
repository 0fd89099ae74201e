"""The browser clients' files under ``/clients/`` (docs/clients.md, docs/protocol-http.md):
each file of clients/web at its path (``/clients/shared/patch.js``) and at its flat name,
its path without its folder (``/clients/patch.js``), the same file with the same headers;
a path that leaves the folder, however it is spelled, is a 404."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest
from multidict import CIMultiDict

from stream.live.http import pages

from ..conftest import Server

WEB = Path(__file__).resolve().parents[3] / "clients" / "web"

#: The flat URLs the docs name, and a few modules and files the pages loaded by them.
FLAT = ["patch.js", "common.js", "sw.js", "handheld.html", "watch.js", "roster.js", "refusals.js",
        "live.js", "scoreboard.html", "scoreboard.js", "overlay.html", "overlay-control.html",
        "handheld-main.js", "handheld.css", "committee.html", "committee-ui.js", "manifest.webmanifest",
        "fonts/barlow-condensed.css", "fonts/OFL.txt", "icons/icon-192.png"]
#: The headers a file is served with, that its two URLs must agree on.
SAME = ("Content-Type", "Cache-Control", "Content-Security-Policy", "X-Frame-Options", "ETag")


async def get(server: Server, path: str) -> tuple[int, CIMultiDict[str], bytes]:
    async with aiohttp.ClientSession() as s, s.get(server.http + path, allow_redirects=False) as r:
        return r.status, CIMultiDict(r.headers), await r.read()


async def raw_get(server: Server, target: str) -> tuple[int, bytes]:
    """GET ``target`` sent as written (an HTTP client would resolve its dot segments first)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        writer.write(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        answer = await reader.read()
    finally:
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def files() -> list[str]:
    """Every file of clients/web but the package's Python, by its path there."""
    return sorted(p.relative_to(WEB).as_posix() for p in WEB.rglob("*")
                  if p.is_file() and p.suffix not in (".py", ".pyc"))


async def test_each_file_is_served_at_its_path(server: Server) -> None:
    served = files()
    assert len(served) > 50 and any("/" in f for f in served)
    for path in served:
        status, _, body = await get(server, f"/clients/{path}")
        assert status == 200, path
        assert body == (WEB / path).read_bytes(), path


@pytest.mark.parametrize("flat", FLAT)
async def test_the_flat_urls_serve_the_same_file(server: Server, flat: str) -> None:
    """The URLs from before the folders: the one file whose path ends with the name."""
    [path] = [f for f in files() if f == flat or f.endswith("/" + flat)]
    status, headers, body = await get(server, f"/clients/{flat}")
    assert status == 200, flat
    assert body == (WEB / path).read_bytes(), (flat, path)
    _, nested, _ = await get(server, f"/clients/{path}")
    assert {h: headers.get(h) for h in SAME} == {h: nested.get(h) for h in SAME}, (flat, path)


async def test_a_name_that_is_no_file_is_a_404(server: Server) -> None:
    for path in ("/clients/nope.js", "/clients/shared/nope.js", "/clients/shared/handheld.html",
                 "/clients/displays/patch.js", "/clients/handheld/fonts/OFL.txt"):
        status, _, _ = await get(server, path)
        assert status == 404, path


@pytest.mark.parametrize("target", [
    "/clients/../../pyproject.toml", "/clients/%2e%2e/%2e%2e/pyproject.toml",
    "/clients/%2E%2E%2F%2E%2E%2Fpyproject.toml", "/clients/shared/..%2f..%2f..%2fpyproject.toml",
    "/clients/shared/%2e%2e/%2e%2e/%2e%2e/pyproject.toml", "/clients/fonts/..%2F..%2F..%2Fpyproject.toml",
    "/clients/..%5c..%5cpyproject.toml"])
async def test_a_path_out_of_the_folder_is_a_404(server: Server, target: str) -> None:
    assert (WEB.parent.parent / "pyproject.toml").is_file(), "the file the paths reach for"
    status, body = await raw_get(server, target)
    assert status == 404, target
    assert b"[project]" not in body


def test_a_flat_name_two_folders_give_is_refused(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.js").write_text("")
    with pytest.raises(ValueError, match=r"x\.js"):
        pages.flat_names(tmp_path)
    (tmp_path / "b" / "x.js").unlink()
    assert pages.flat_names(tmp_path) == {"x.js": "a/x.js"}
    (tmp_path / "x.js").write_text("")     # a file at the top takes the name
    with pytest.raises(ValueError, match=r"x\.js"):
        pages.flat_names(tmp_path)
