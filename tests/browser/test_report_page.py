"""The printable game report (/games/{game}/report) opens clean: its page names its own icon
(a data: URI its CSP allows), so a browser asks for no /favicon.ico and logs no 404."""

from __future__ import annotations

from playwright.async_api import Page, Response

from ..live.conftest import Server


async def test_the_report_page_asks_for_nothing_missing(server: Server, page: Page) -> None:
    await server.setup_game("g1", arena="main")
    failed: list[str] = []

    def seen(r: Response) -> None:
        if r.status >= 400:
            failed.append(f"{r.status} {r.url}")

    page.on("response", seen)
    await page.goto(f"{server.http}/games/g1/report", wait_until="networkidle")
    await page.wait_for_timeout(500)
    assert await page.locator("link[rel=icon]").count() == 1
    assert failed == [], failed
