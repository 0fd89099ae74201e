"""Real headless Chromium (Debian's /usr/bin/chromium) driven by Playwright,
against the real service on loopback. Screenshots go to ``artifacts/screenshots``
(kept by CI as artifacts)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright, expect

from ..live.conftest import Server, server  # noqa: F401  (the fixture)

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield b
        finally:
            await b.close()


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport={"width": 1280, "height": 720})
    pg = await context.new_page()
    try:
        yield pg
    finally:
        await context.close()


TABLET: dict[str, Any] = {"viewport": {"width": 1024, "height": 768}, "has_touch": True}


class Console:
    """The committee member's browser, and what it asked for (the token must be in none)."""

    def __init__(self, context: BrowserContext, page: Page) -> None:
        self.context = context
        self.page = page
        self.urls: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self.urls.append(r.url))
        page.on("websocket", lambda ws: self.urls.append(ws.url))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    async def tab(self, name: str) -> None:
        await self.page.click(f"#tabs [data-tab={name}]")
        await expect(self.page.locator(f"#{name}-section")).to_be_visible()


async def open_console(browser: Browser, **options: Any) -> AsyncIterator[Console]:
    """A committee member's tablet (``options``: more of the browser context's), closed after;
    no page error may have happened."""
    context = await browser.new_context(**TABLET, accept_downloads=True, **options)
    c = Console(context, await context.new_page())
    try:
        yield c
    finally:
        await context.close()
    assert not c.errors, c.errors


@pytest.fixture
async def console(browser: Browser) -> AsyncIterator[Console]:
    async for c in open_console(browser):
        yield c


def shot(name: str) -> str:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return str(SCREENSHOTS / f"{name}.png")


__all__ = ["TABLET", "Console", "Server", "shot"]
