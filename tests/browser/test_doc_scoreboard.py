"""docs/protocol.md's "Write a scoreboard in 30 lines", done as it says: its two files saved
into the folder the service serves under ``/clients/``, opened in Chromium with the page's
Content-Security-Policy in force, against a game the officials then play. It shows the
teams, the score as it changes, and the period, with no policy violation."""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from stream.live.http import pages

from ..docs_text import protocol_section
from ..live.conftest import RunningServer, Server
from .test_csp import RECORD


def _snippets() -> tuple[str, str]:
    """The section's html and js code blocks, as written."""
    text = protocol_section("## Write a scoreboard in 30 lines")
    html = re.findall(r"^```html\n(.*?)^```$", text, re.M | re.S)
    js = re.findall(r"^```js\n(.*?)^```$", text, re.M | re.S)
    assert len(html) == 1 and len(js) == 1, "the section holds one html and one js block"
    assert len(js[0].splitlines()) <= 32, "thirty lines, or about"
    return html[0], js[0]


@pytest.fixture
async def doc_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Server]:
    """The service, serving a copy of its clients' folder with the doc's two files saved in it."""
    folder = tmp_path / "web"
    shutil.copytree(pages.CLIENTS, folder, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    html, js = _snippets()
    (folder / "mini.html").write_text(html)
    (folder / "mini.js").write_text(js)
    monkeypatch.setattr(pages, "CLIENTS", folder)
    async with RunningServer(tmp_path / "data") as server:
        yield server


async def test_the_thirty_line_scoreboard_follows_a_game(doc_server: Server, page: Page) -> None:
    server = doc_server
    await server.setup_game("final")
    await page.add_init_script(RECORD)
    await page.goto(f"{server.http}/clients/mini.html?game=final")
    board = page.locator("#board")
    await expect(board).to_contain_text("final-home 0 – 0 final-away", timeout=10_000)
    await expect(board).to_contain_text("period 1")
    tk = await server.device("timekeeper", game="final")
    ump = await server.device("umpire", game="final")
    try:
        await tk.send({"type": "clock.start", "game": "final"})
        await ump.send({"type": "goal", "game": "final", "team": "away"})
        await expect(board).to_contain_text("final-home 0 – 1 final-away", timeout=10_000)
    finally:
        await tk.close()
        await ump.close()
    assert await page.evaluate("getComputedStyle(document.getElementById('board')).fontSize") == "48px"
    assert await page.evaluate("window.__csp") == []


async def test_the_thirty_line_scoreboard_writes_a_half_goal(doc_server: Server, page: Page) -> None:
    """A game that starts with ½ a goal on handicap: the doc's board says "½", never "0.5"."""
    server = doc_server
    await server.setup_game("cup", goals_on_handicap={"home": 0.5, "away": 0})
    await page.goto(f"{server.http}/clients/mini.html?game=cup")
    board = page.locator("#board")
    await expect(board).to_contain_text("cup-home ½ – 0 cup-away", timeout=10_000)
    ump = await server.device("umpire", game="cup")
    tk = await server.device("timekeeper", game="cup")
    try:
        await tk.send({"type": "clock.start", "game": "cup"})
        await ump.send({"type": "goal", "game": "cup", "team": "home"})
        await expect(board).to_contain_text("cup-home 1½ – 0 cup-away", timeout=10_000)
    finally:
        await tk.close()
        await ump.close()
    assert "0.5" not in (await board.text_content() or "")
