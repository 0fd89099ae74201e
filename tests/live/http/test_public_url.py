"""Links the service makes never come from the Host header (docs/security.md): a pairing
URL, its QR code, the index page and the demo's printed links start with ``--public-url``
(the listening address by default), whatever Host a client or a proxy sends; what the index
page shows is escaped."""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from stream import cli
from stream.serve import config_from
from stream.tools.harness.processes import HOST, Process, free_port

from ..conftest import RunningServer, Server

EVIL_HOST = 'x"><script>alert(1)</script>'


async def _with_host(server: Server, method: str, path: str, host: str, body: Any = None) -> tuple[int, str]:
    async with aiohttp.ClientSession() as s, s.request(
            method, server.http + path, json=body,
            headers={"Host": host, "Authorization": f"Bearer {server.admin}"}) as r:
        return r.status, await r.text()


async def test_the_public_pages_reflect_no_host(server: Server) -> None:
    """The front door and an event's calendar: what they link to is the service's own
    address (its UIDs name it), never the Host header."""
    await server.setup_game(starts_at=1_827_684_000_000)
    status, html = await _with_host(server, "GET", "/", EVIL_HOST)
    assert status == 200
    assert "<script>" not in html and "alert(1)" not in html
    status, ics = await _with_host(server, "GET", "/events/cup.ics", EVIL_HOST)
    assert status == 200 and f"UID:game-g1@127.0.0.1:{server.port}" in ics, ics
    assert "alert" not in ics


async def _pairing_url(server: Server, host: str) -> str:
    await server.setup_game()
    status, text = await _with_host(server, "POST", "/api/pairings", host, {"game": "g1", "role": "umpire"})
    assert status == 201, text
    url = re.search(r'"url":"([^"]+)"', text)
    assert url, text
    return url[1]


async def test_a_pairing_link_ignores_the_host_header(server: Server) -> None:
    url = await _pairing_url(server, "evil.example")
    assert url.startswith(f"http://127.0.0.1:{server.port}/handheld?game=g1#pair=v1."), url


async def test_a_pairing_link_starts_with_the_public_url(tmp_path: Path) -> None:
    async with RunningServer(tmp_path, public_url="https://arena.example") as server:
        url = await _pairing_url(server, "evil.example")
        assert url.startswith("https://arena.example/handheld?game=g1#pair=v1."), url
        # The public URL is the service's own origin for a browser's socket.
        assert server.svc.origin_allowed("https://arena.example", "evil.example")
        assert not server.svc.origin_allowed("https://evil.example", "evil.example:1")


@pytest.mark.parametrize(("given", "kept"), [
    ("https://arena.example", "https://arena.example"),
    ("https://arena.example/", "https://arena.example"),
    ("http://10.0.0.5:8080", "http://10.0.0.5:8080"),
    ("", ""),
])
def test_public_url_is_an_origin(given: str, kept: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[argparse.Namespace] = []

    def serve(args: argparse.Namespace) -> int:
        seen.append(args)
        return 0

    monkeypatch.setattr(cli, "_cmd_serve", serve)
    assert cli.main(["serve", "--public-url", given]) == 0
    assert config_from(seen[0]).public_url == kept


@pytest.mark.parametrize("bad", ["arena.example", "ftp://arena.example", "https://arena.example/app",
                                 "https://arena.example/?x=1", "https://u:p@arena.example", "https://"])
def test_a_public_url_that_is_not_an_origin_is_refused(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["serve", "--public-url", bad])
    assert exit_.value.code == 2
    assert "is not an http(s) origin" in capsys.readouterr().err


@pytest.mark.slow
async def test_the_demo_prints_links_on_the_public_url_and_no_demo_prints_no_token(tmp_path: Path) -> None:
    """The demo's handheld link carries the one token the service ever writes out; with
    ``--no-demo``, as every deploy file runs it, nothing printed holds a token."""
    for demo, data in ((True, tmp_path / "demo"), (False, tmp_path / "prod")):
        port = free_port()
        log = tmp_path / f"{data.name}.log"
        argv = [sys.executable, "-m", "stream", "serve", "--data", str(data), "--host", HOST,
                "--port", str(port), "--public-url", "https://arena.example",
                "--demo" if demo else "--no-demo"]
        proc = Process(data.name, argv, log=log)
        proc.spawn()
        try:
            # The start's last line; the demo's links, its last, come 0.5 s after the start.
            last = "watch       wss://arena.example/ws/watch" if demo else "admin token in"
            async with asyncio.timeout(60):
                while last not in log.read_text():
                    assert proc.alive, log.read_text()
                    await asyncio.sleep(0.1)
        finally:
            await asyncio.to_thread(proc.stop)
        out = log.read_text()
        tokens = re.findall(r"v1\.[A-Za-z0-9_-]{20,}", out)
        if demo:
            link = r"handheld    https://arena\.example/handheld\?game=demo-\S+#pair=v1\."
            assert re.search(link, out), out
            assert len(tokens) == 1, out
        else:
            assert tokens == [] and "#pair=" not in out, out

