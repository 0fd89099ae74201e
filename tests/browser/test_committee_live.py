"""The committee console stays current by itself (README, "The committee console";
docs/clients.md): with the ledger tab open, a game ended through a device shows its
suspension in the ledger and in the next game's preview without a click, and the ledger's
"as of" time moves; a rescind made elsewhere (another member's console) leaves it at once,
from the feed; a tab switch reads again; and a game's end costs a few requests, not a storm.
When the connection is gone long enough, the "as of" says the data is not live."""

from __future__ import annotations

from playwright.async_api import Page, expect

from ..live.conftest import Server
from .conftest import Console
from .test_committee import EVENT, G1, G2, new_event, shot_page, sign_in_admin

# Well under the slow poll (30 s with the socket up): only the feed can make it in time.
LIVE_MS = 6000


async def _at(page: Page, sel: str) -> int:
    return int(await page.locator(sel).get_attribute("data-at") or 0)


async def test_the_ledger_picks_up_a_suspension_when_a_game_ends_with_no_click(
        server: Server, console: Console) -> None:
    await new_event(server)
    await server.setup_game(G1, arena="main", event=EVENT)
    await server.setup_game(G2, arena="main", event=EVENT)
    page = console.page
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/api/obligations" in r.url else None)
    await sign_in_admin(page, server)
    await console.tab("ledger")
    await expect(page.locator("#ledger-empty")).to_be_visible()
    await expect(page.locator(f"#previews [data-game={G2}] [data-empty=true]")).to_be_visible()
    stamp = page.locator("#ledger-asof")
    await expect(stamp).to_have_attribute("data-stale", "false")
    await expect(stamp).to_contain_text("As of")
    before = await _at(page, "#ledger-asof")
    assert before > 0

    tk = await server.device("timekeeper", G1, name="tk-live")
    ump = await server.device("umpire", G1, name="ump-live")
    try:
        await tk.send({"type": "clock.start", "game": G1})
        await ump.send({"type": "card", "game": G1, "player": "h2", "color": "red", "conduct": "striking"})
        await page.wait_for_timeout(1000)       # the card alone changes no ledger
        requests_before_end = len(asked)
        await tk.send({"type": "game.end", "game": G1})
    finally:
        await tk.close()
        await ump.close()
    owed = page.locator("#ledger-table tr[data-player=h2]")
    await expect(owed).to_have_attribute("data-status", "pending", timeout=LIVE_MS)
    preview = page.locator(f"#previews [data-game={G2}] li[data-player=h2]")
    await expect(preview).to_be_visible(timeout=LIVE_MS)
    await expect(page.locator(f"#previews [data-game={G1}]")).to_have_count(0)   # ended: nothing to preview
    assert await _at(page, "#ledger-asof") > before
    await shot_page(page, "live-01-ledger-after-the-game-ends")
    await page.wait_for_timeout(1000)
    assert len(asked) - requests_before_end <= 2, asked            # coalesced: no storm

    # Another member rescinds it from their own console: gone here at once, no click.
    oid = await owed.get_attribute("data-obligation")
    status, ack = await server.api("POST", "/api/committee/rescind", {
        "id": "rescind-live", "obligation": oid, "by": "HTC", "reason": "mistaken identity"})
    assert status == 201, ack
    await expect(page.locator("#ledger-table tr[data-player=h2][data-status=pending]")).to_have_count(
        0, timeout=LIVE_MS)
    await expect(page.locator(f"#previews [data-game={G2}] [data-empty=true]")).to_be_visible(timeout=LIVE_MS)

    # The day view has its own "as of", moving with the feed; a tab switch reads again.
    await console.tab("day")
    await expect(page.locator("#day-asof")).to_have_attribute("data-stale", "false")
    async with page.expect_request(lambda r: "/api/obligations" in r.url, timeout=LIVE_MS):
        await console.tab("ledger")


async def test_the_as_of_time_turns_to_a_warning_when_the_connection_is_gone(
        server: Server, console: Console) -> None:
    await new_event(server)
    await server.setup_game(G1, arena="main", event=EVENT)
    page = console.page
    await page.clock.install()
    await sign_in_admin(page, server)
    await console.tab("ledger")
    stamp = page.locator("#ledger-asof")
    await expect(stamp).to_have_attribute("data-stale", "false")
    await console.context.set_offline(True)
    await page.clock.fast_forward(40_000)
    await expect(stamp).to_have_attribute("data-stale", "true")
    await expect(stamp).to_contain_text("not live")
    await page.click("#lang")
    await expect(stamp).to_contain_text("sin conexión en vivo")
    await console.tab("day")
    await expect(page.locator("#day-asof")).to_have_attribute("data-stale", "true")
    await shot_page(page, "live-02-not-live")
    await console.context.set_offline(False)
    await page.clock.fast_forward(15_000)
    await console.tab("ledger")
    await expect(stamp).to_have_attribute("data-stale", "false")

