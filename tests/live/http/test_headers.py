"""The browser headers (stream/live/http/headers.py) on the real service's answers: each page's
Content-Security-Policy (no inline script or style), framing refused for the pages a token
drives and allowed for the scoreboard and the overlay (OBS, vMix), nosniff and no-referrer on
every answer (pages, static files, JSON, a 404, a 401), no-store on what carries a token."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from multidict import CIMultiDict

from stream.live.wire import api_types

from ..conftest import Server

UNFRAMED = ["/committee", "/handheld", "/overlay/control"]
EMBEDDED = ["/scoreboard", "/overlay"]


async def fetch(server: Server, method: str, path: str, *, body: Any = None, token: str | None = None,
                ) -> tuple[int, CIMultiDict[str], bytes]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as s, s.request(method, server.http + path, json=body,
                                                       headers=headers, allow_redirects=False) as r:
        return r.status, CIMultiDict(r.headers), await r.read()


def directives(csp: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in csp.split(";"):
        name, *values = part.split()
        assert name not in out, f"{name} twice in {csp!r}"
        out[name] = values
    return out


def test_every_page_is_framed_or_embedded_on_purpose() -> None:
    assert sorted(UNFRAMED + EMBEDDED) == sorted(api_types.PAGES)


@pytest.mark.parametrize("path", [*UNFRAMED, *EMBEDDED, "/clients/handheld.html", "/clients/scoreboard.html"])
async def test_each_page_has_a_strict_policy(server: Server, path: str) -> None:
    status, h, _ = await fetch(server, "GET", path + "?game=g1")
    assert status == 200 and h["Content-Type"].startswith("text/html")
    csp = directives(h["Content-Security-Policy"])
    assert csp["default-src"] == ["'self'"]
    assert csp["script-src"] == ["'self'"]
    assert csp["style-src"] == ["'self'"]
    assert csp["object-src"] == ["'none'"] and csp["base-uri"] == ["'none'"]
    assert csp["form-action"] == ["'none'"]
    assert csp["font-src"] == ["'self'"]
    assert csp["img-src"][:2] == ["'self'", "data:"]
    # WebSockets to this host only: never ws: or wss: alone (any host).
    host = f"127.0.0.1:{server.port}"
    assert csp["connect-src"] == ["'self'", f"ws://{host}", f"wss://{host}"]
    whole = h["Content-Security-Policy"]
    assert "unsafe-inline" not in whole and "unsafe-eval" not in whole and "*" not in whole
    assert h["X-Content-Type-Options"] == "nosniff" and h["Referrer-Policy"] == "no-referrer"


async def test_only_the_committee_shows_blob_images(server: Server) -> None:
    """Its pairing QR codes are SVG blobs shown as images; no other page has blob:."""
    for path in api_types.PAGES:
        _, h, _ = await fetch(server, "GET", path)
        img = directives(h["Content-Security-Policy"])["img-src"]
        assert img == (["'self'", "data:", "blob:"] if path == "/committee" else ["'self'", "data:"]), path


@pytest.mark.parametrize("path", [*UNFRAMED, "/clients/handheld.html", "/clients/committee.html",
                                  "/clients/overlay-control.html"])
async def test_the_pages_a_token_drives_may_not_be_framed(server: Server, path: str) -> None:
    _, h, _ = await fetch(server, "GET", path)
    assert directives(h["Content-Security-Policy"])["frame-ancestors"] == ["'none'"]
    assert h["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize("path", [*EMBEDDED, "/clients/scoreboard.html", "/clients/overlay.html"])
async def test_the_scoreboard_and_the_overlay_stay_embeddable(server: Server, path: str) -> None:
    _, h, _ = await fetch(server, "GET", path)
    assert "frame-ancestors" not in directives(h["Content-Security-Policy"])
    assert "X-Frame-Options" not in h


async def test_another_html_file_of_the_clients_folder_gets_the_strict_policy(server: Server) -> None:
    """However the path is spelled (the policy follows the file the static route reads)."""
    for path in ("/clients/./handheld.html", "/clients/icons/../handheld.html", "/clients/none.html"):
        _, h, _ = await fetch(server, "GET", path)
        csp = directives(h["Content-Security-Policy"])
        assert csp["script-src"] == ["'self'"] and csp["frame-ancestors"] == ["'none'"], path


async def test_the_generated_documents_run_no_script(server: Server) -> None:
    """A game report and its public one: HTML made here, inline styles, no script at all."""
    await server.setup_game()
    for path in ("/games/g1/report", "/games/g1/public"):
        status, h, body = await fetch(server, "GET", path)
        assert status == 200 and h["Content-Type"].startswith("text/html"), path
        csp = directives(h["Content-Security-Policy"])
        assert csp["default-src"] == ["'none'"] and "script-src" not in csp, path
        assert csp["base-uri"] == ["'none'"] and csp["form-action"] == ["'none'"]
        assert b"<script" not in body
        assert h["X-Content-Type-Options"] == "nosniff" and h["Referrer-Policy"] == "no-referrer"


async def test_nosniff_and_no_referrer_on_every_kind_of_answer(server: Server) -> None:
    await server.setup_game()
    answers = [
        ("GET", "/scoreboard", None, 200),                 # a page
        ("GET", "/clients/scoreboard.js", None, 200),      # a static file
        ("GET", "/clients/handheld.css", None, 200),
        ("GET", "/api/games", None, 200),                  # JSON
        ("GET", "/api/games/g1", None, 200),
        ("GET", "/healthz", None, 200),
        ("GET", "/api/games/nope", None, 404),             # a handler's 404 (a Problem)
        ("GET", "/no/such/route", None, 404),              # the router's 404
        ("GET", "/clients/nope.js", None, 404),            # the static route's 404
        ("POST", "/scoreboard", None, 405),                # the router's 405
        ("GET", "/api/log", None, 401),                    # no token: 401
        ("POST", "/api/tokens", "v1.not-a-token.x", 401),  # a bad token: 401
    ]
    for method, path, token, expected in answers:
        status, h, _ = await fetch(server, method, path, token=token,
                                   body={} if method == "POST" else None)
        assert status == expected, (method, path, status)
        assert h.get("X-Content-Type-Options") == "nosniff", (method, path)
        assert h.get("Referrer-Policy") == "no-referrer", (method, path)
        if not path.startswith(("/scoreboard", "/clients/")):
            assert "X-Frame-Options" not in h and "Content-Security-Policy" not in h, (method, path)


async def test_no_store_on_the_answers_that_carry_a_token(server: Server) -> None:
    await server.setup_game()
    status, h, body = await fetch(server, "POST", "/api/tokens", token=server.admin,
                                  body={"role": "umpire", "device": "u1", "game": "g1"})
    assert status == 201 and b'"token"' in body
    assert h["Cache-Control"] == "no-store"
    status, h, body = await fetch(server, "POST", "/api/pairings", token=server.admin,
                                  body={"game": "g1", "role": "umpire"})
    assert status == 201 and b'"token"' in body
    assert h["Cache-Control"] == "no-store"
    status, h, _ = await fetch(server, "GET", "/api/tokens?game=g1", token=server.admin)
    assert status == 200 and h["Cache-Control"] == "no-store"
    # Refused, too (and whatever else an API write answers), and what a token reads.
    status, h, _ = await fetch(server, "POST", "/api/tokens", body={"role": "admin", "device": "x"})
    assert status == 401 and h["Cache-Control"] == "no-store"
    status, h, _ = await fetch(server, "GET", "/api/log", token=server.admin)
    assert status == 200 and h["Cache-Control"] == "no-store"


async def test_a_cache_control_the_handler_set_stays(server: Server) -> None:
    _, h, _ = await fetch(server, "GET", "/scoreboard")
    assert h["Cache-Control"] == "no-cache"                     # the page's own
    status, h, _ = await fetch(server, "GET", "/api/games")     # public and anonymous: cacheable
    assert status == 200 and "Cache-Control" not in h
    # A logo keeps "immutable", even fetched with a token.
    png = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(200))
    async with aiohttp.ClientSession() as s, s.post(
            f"{server.http}/api/teams/g1-home/logo", data=png,
            headers={"Authorization": f"Bearer {server.admin}", "Content-Type": "image/png"}) as r:
        assert r.status == 201, await r.text()
        assert r.headers["Cache-Control"] == "no-store"
        sha = (await r.json())["logo"]
    for token in (None, server.admin):
        status, h, _ = await fetch(server, "GET", f"/logos/{sha}", token=token)
        assert status == 200 and "immutable" in h["Cache-Control"]
        assert h["X-Content-Type-Options"] == "nosniff" and h["Referrer-Policy"] == "no-referrer"
