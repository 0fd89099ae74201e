"""The officials' handheld under pressure, on a phone (390×844, touch) in a real Chromium
against the real service: a card in three taps (player → colour → record), its conduct named
afterwards (a card.amended); "2 yellows" confirmed with the player named; a card not yet acked
shown on the player's tile; the last event undone (a void) after a confirmation; the
timekeeper's cues (30 s left, time, the interval counted down, the clock stopped too long);
the screen kept awake while the game is live; the players in the thumb's reach and undo,
void and end away from it; alerts on top; the connection's detail behind one tap; offline
known without navigator.onLine. Screenshots go to ``artifacts/screenshots``."""

# ruff: noqa: F811
from __future__ import annotations

import re
from typing import Any

from playwright.async_api import BrowserContext, FloatRect, Page, expect

from ..live.conftest import Server, admin_device

# `handheld` is test_handheld.py's fixture (a phone-sized context, signed in), which the tests
# here take as a parameter: hence F811 off for this file.
from .test_handheld import GAME, Handheld, Open, handheld, rows_of, shot_page, start_clock  # noqa: F401

HEIGHT = 844


class Taps:
    """Touch taps on the page, counted."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.n = 0

    async def __call__(self, selector: str) -> None:
        await self.page.locator(selector).tap()
        self.n += 1


async def box(page: Page, selector: str) -> FloatRect:
    b = await page.locator(selector).bounding_box()
    assert b is not None, selector
    return b


# ------------------------------------------------------------------ cards


async def test_a_card_in_three_taps_and_its_conduct_named_later(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    await start_clock(server)
    hh = await handheld()
    page = hh.page
    tap = Taps(page)
    await expect(page.locator("[data-player=h2]")).to_be_visible()

    # player → colour → record: three taps from the game screen to a card on record
    await tap("[data-player=h2]")
    await tap("#sheet [data-card=yellow1]")
    await expect(page.locator("#sheet [data-act=record]")).to_have_text("Record: Yellow · h2")
    await shot_page(page, "handheld-pressure-card-sheet")
    await tap("#sheet [data-act=record]")
    card = page.locator("#outbox .entry[data-type=card]")
    await expect(card).to_have_attribute("data-state", "acked")
    assert tap.n == 3
    [stored] = [e for _, _, e in rows_of(server, hh.device) if e["type"] == "card"]
    assert (stored["player"], stored["color"], stored.get("conduct")) == ("h2", "yellow", None)
    await expect(card.locator(".what")).to_have_text("Yellow · h2 · conduct not named")
    await expect(page.locator("[data-player=h2] .pips")).to_have_attribute("data-yellows", "1")

    # the conduct, named afterwards from the card's entry: a card.amended of that card
    [entry] = [e for e in await hh.entries() if e["type"] == "card"]
    await tap("#outbox .entry[data-type=card] [data-act=name-conduct]")
    await expect(page.locator("#sheet [data-sheet=conduct] .sheet-head p")).to_have_text(
        "Yellow · h2 · conduct not named")
    await tap("#sheet [data-conduct=arguing]")
    await tap("#sheet [data-act=record]")
    amended = page.locator("#outbox .entry[data-type='card.amended']")
    await expect(amended).to_have_attribute("data-state", "acked")
    await expect(amended.locator(".sub")).to_contain_text("The card to h2 was for arguing")
    [amend] = [e for _, _, e in rows_of(server, hh.device) if e["type"] == "card.amended"]
    assert amend["target"] == entry["log_id"] and amend["conduct"] == "arguing"
    await expect(card.locator(".what")).to_have_text("Yellow · h2 · Arguing with officials")
    await expect(card.locator("[data-act=name-conduct]")).to_have_count(0)
    await expect(page.locator("#feed .notice.n-conduct-named")).to_contain_text("was for arguing")
    await shot_page(page, "handheld-pressure-conduct-named")


async def test_another_officials_card_gets_its_conduct_from_the_feed(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    await start_clock(server)
    hh = await handheld()
    page = hh.page
    other = await server.device("umpire", GAME, name="ump-2")
    try:
        await other.send({"type": "card", "game": GAME, "player": "a1", "color": "yellow"})
    finally:
        await other.close()
    button = page.locator("#feed .notice.n-card-recorded [data-act=name-conduct]")
    await expect(button).to_have_count(1)
    await button.tap()
    await page.locator("#sheet [data-conduct=dangerous_riding]").tap()
    await page.locator("#sheet [data-act=record]").tap()
    amended = page.locator("#outbox .entry[data-type='card.amended']")
    await expect(amended).to_have_attribute("data-state", "acked")
    await expect(button).to_have_count(0)
    [amend] = [e for _, _, e in rows_of(server, hh.device) if e["type"] == "card.amended"]
    assert amend["target"].startswith("ump-2/") and amend["conduct"] == "dangerous_riding"


async def test_two_yellows_ask_for_a_confirmation_that_names_the_player(server: Server,
                                                                       handheld: Open) -> None:
    await server.setup_game(GAME)
    await start_clock(server)
    admin = await admin_device(server)
    try:
        await admin.send({"type": "player.registered", "player": "h2", "name": "Núñez", "number": 7,
                          "team": "g1-home"})
    finally:
        await admin.close()
    hh = await handheld()
    page = hh.page
    await expect(page.locator("[data-player=h2] .pid")).to_have_text("#7 Núñez")

    await page.locator("[data-player=h2]").tap()
    await page.locator("#sheet [data-card=yellow2]").tap()
    await page.locator("#sheet [data-act=record]").tap()
    confirm = page.locator("#sheet [data-sheet=card-confirm]")
    await expect(confirm).to_be_visible()
    await expect(confirm.locator(".sheet-head h2")).to_have_text("2 yellows to #7 Núñez?")
    await expect(confirm.locator(".card-target")).to_have_text("2 yellows · #7 Núñez")
    await expect(confirm).to_contain_text("penalty box")
    await shot_page(page, "handheld-pressure-2y-confirm")
    assert hh.sent == []                                   # nothing sent before it is confirmed

    # back to the card: the choice kept; then confirmed
    await page.locator("#sheet [data-act=back]").tap()
    await expect(page.locator("#sheet [data-act=record]")).to_have_text("Record: 2 yellows · #7 Núñez")
    await page.locator("#sheet [data-act=record]").tap()
    await page.locator("#sheet [data-act=confirm-card]").tap()
    await expect(page.locator("#outbox .entry[data-type=card]")).to_have_attribute("data-state", "acked")
    [stored] = [e for _, _, e in rows_of(server, hh.device) if e["type"] == "card"]
    assert (stored["player"], stored["count"]) == ("h2", 2)
    await expect(page.locator("[data-player=h2] .tags")).to_contain_text("BOX")

    # three yellows are confirmed the same way, naming the player
    await page.locator("[data-player=a1]").tap()
    await page.locator("#sheet [data-card=yellow3]").tap()
    await page.locator("#sheet [data-act=record]").tap()
    heading = page.locator("#sheet [data-sheet=card-confirm] .sheet-head h2")
    await expect(heading).to_have_text("3 yellows to a1?")
    await page.locator("#sheet [data-act=back]").tap()
    await page.locator("#sheet [data-act=cancel]").tap()
    await expect(page.locator("#sheet")).not_to_be_visible()
    assert len(hh.sent) == 1


async def test_a_queued_card_shows_on_the_players_tile(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    await start_clock(server)
    hh = await handheld()
    page = hh.page
    tile = page.locator("[data-player=h2]")
    await expect(tile).to_have_attribute("data-pending-cards", "0")
    await hh.go_offline()
    await hh.card("h2", "yellow1", None)
    await expect(tile).to_have_attribute("data-pending-cards", "1")
    await expect(tile.locator(".tag.cardpending")).to_have_text("⏳ YELLOW NOT SENT")
    await expect(tile.locator(".pip.pending")).to_have_count(1)
    await shot_page(page, "handheld-pressure-queued-card-on-tile")
    # the same player tapped again: the sheet says a card for him waits to be sent
    await tile.tap()
    await expect(page.locator("#sheet .pending-warn")).to_have_text(
        "Yellow for h2 is recorded on this handheld and not acked yet: don't record it twice.")
    await page.locator("#sheet [data-act=cancel]").tap()

    await hh.go_online()
    await expect(page.locator("#outbox .entry[data-type=card]")).to_have_attribute("data-state", "acked")
    await expect(tile).to_have_attribute("data-pending-cards", "0")
    await expect(tile.locator(".tag.cardpending")).to_have_count(0)
    await expect(tile.locator(".pips")).to_have_attribute("data-yellows", "1")


async def test_the_last_event_is_undone_after_a_confirmation(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    await start_clock(server)
    hh = await handheld()
    page = hh.page
    undo = page.locator("#gamebar [data-act=undo]")
    await expect(undo).to_be_disabled()                    # nothing of this device's yet
    await hh.goal("home", 1, scorer="h1")
    await expect(page.locator("[data-score=home]")).to_have_text("1")
    await expect(page.locator("#outbox .entry[data-type=goal]")).to_have_attribute("data-state", "acked")
    [goal] = await hh.entries()

    await undo.tap()
    sheet = page.locator("#sheet [data-sheet=undo]")
    await expect(sheet.locator(".target")).to_have_text("Goal g1-home · h1 · 1 pt")
    await shot_page(page, "handheld-pressure-undo-confirm")
    await page.locator("#sheet [data-act=keep]").tap()      # changed their mind: nothing sent
    await expect(page.locator("#sheet")).not_to_be_visible()
    assert len(hh.sent) == 1

    await undo.tap()
    await page.locator("#sheet [data-act=confirm-undo]").tap()
    await expect(page.locator("#outbox .entry[data-type=void]")).to_have_attribute("data-state", "acked")
    await expect(page.locator("[data-score=home]")).to_have_text("0")
    stored = rows_of(server, hh.device)
    assert stored[-1][2]["type"] == "void" and stored[-1][2]["target"] == goal["log_id"]
    await expect(undo).to_be_disabled()                    # nothing left to undo


# ------------------------------------------------------------------ the timekeeper


STUBS = """
window.__cues = { vibrations: 0 };
navigator.vibrate = () => { window.__cues.vibrations += 1; return true; };
"""


async def stubs(context: BrowserContext, page: Page) -> None:
    await page.add_init_script(STUBS)


async def timer(page: Page) -> dict[str, Any]:
    got: dict[str, Any] = await page.evaluate("arenaHandheld.timer()")
    return got


async def test_the_timekeeper_is_warned_30_s_before_the_period_ends(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME, period_ms=36_000)
    hh = await handheld("timekeeper", "tk-1", before=stubs)
    page = hh.page
    await page.locator("#actions [data-act='clock.start']").tap()
    await expect(page.locator(".bigclock")).to_have_class("bigclock running")
    warn = page.locator("#tk-timer [data-tk=warn]")
    await expect(warn).to_have_count(0)                    # 0:36 left: no warning yet
    assert (await timer(page))["sounds"] == []
    await expect(warn).to_be_visible(timeout=12_000)
    await expect(warn).to_contain_text("30 seconds left in the period")
    await expect(warn.locator(".tk-count")).to_have_text(re.compile(r"0:[0-3]\d"))
    assert (await timer(page))["sounds"] == ["warn"]       # one cue, not one per tick
    assert await page.evaluate("window.__cues.vibrations") >= 1
    await shot_page(page, "handheld-pressure-tk-30s")


async def test_the_timekeeper_gets_time_the_horn_and_the_interval(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME, period_ms=2_500, interval_ms=5_000)
    hh = await handheld("timekeeper", "tk-1", before=stubs)
    page = hh.page
    await page.locator("#actions [data-act='clock.start']").tap()
    time_up = page.locator("#tk-timer [data-tk=time]")
    await expect(time_up).to_have_text("Time! Sound the horn", timeout=8_000)
    await expect(page.locator("#tk [data-act=horn]")).to_have_class(re.compile(r"\bsuggest\b"))
    assert "horn" in (await timer(page))["sounds"]
    await shot_page(page, "handheld-pressure-tk-time")

    await page.locator("#tk [data-act=horn]").tap()        # ends the period: the interval begins
    interval = page.locator("#tk-timer [data-tk=interval]")
    await expect(interval).to_contain_text("Interval · period 2 next")
    await expect(interval.locator(".tk-count")).to_have_text(re.compile(r"0:0[1-5]"))
    await expect(page.locator(".bigclock")).to_have_attribute("data-interval", "true")
    await expect(page.locator(".bigclock span")).to_have_text(re.compile(r"0:0[1-5]"))
    await expect(page.locator(".scoreline .period")).to_contain_text("Interval")
    await expect(time_up).to_have_count(0)
    await shot_page(page, "handheld-pressure-tk-interval")
    over = page.locator("#tk-timer [data-tk=interval-over]")
    await expect(over).to_contain_text("Interval over: start period 2", timeout=9_000)
    assert "interval" in (await timer(page))["sounds"]

    await page.locator("#actions [data-act='clock.start']").tap()
    await expect(page.locator(".bigclock small")).to_contain_text("Period 2 of 4")
    await expect(over).to_have_count(0)                    # the break is over: no more of it
    await expect(interval).to_have_count(0)
    await expect(page.locator(".bigclock")).to_have_attribute("data-interval", "false")


async def test_a_clock_stopped_too_long_after_a_whistle_is_called(server: Server, handheld: Open) -> None:
    """Driven by the page's clock (Playwright's fake clock, fast-forwarded): 30 s by default."""

    async def fake_clock(context: BrowserContext, page: Page) -> None:
        await page.add_init_script(STUBS)
        await page.clock.install()

    await server.setup_game(GAME)
    await start_clock(server)
    hh = await handheld("timekeeper", "tk-1", before=fake_clock)
    page = hh.page
    await expect(page.locator(".bigclock")).to_have_class("bigclock running")
    await page.click("#tk-settings summary")
    await expect(page.locator("#stop-remind")).to_have_value("30")
    ump = await server.device("umpire", GAME, name="ump-2")
    try:
        await ump.send({"type": "whistle", "game": GAME})  # the whistle stops the clock
    finally:
        await ump.close()
    await expect(page.locator(".bigclock")).to_have_class("bigclock stopped")
    stopped = page.locator("#tk-timer [data-tk=stopped]")
    await page.clock.fast_forward(20_000)
    await page.wait_for_timeout(700)
    await expect(stopped).to_have_count(0)                 # 20 s: not yet
    await page.clock.fast_forward(11_000)
    await expect(stopped).to_contain_text(re.compile(r"Clock stopped for 0:3\d: restart it\?"))
    assert (await timer(page))["sounds"].count("stopped") == 1
    await shot_page(page, "handheld-pressure-tk-stopped")

    tk = await server.device("timekeeper", GAME, name="tk-2")
    try:
        await tk.send({"type": "clock.start", "game": GAME})
        await expect(stopped).to_have_count(0)             # running again: no reminder
        # a shorter reminder, set on this handheld
        await page.fill("#stop-remind", "10")
        await page.press("#stop-remind", "Enter")
        await page.locator("#stop-remind").blur()
        assert (await timer(page))["remind"] == 10
        await tk.send({"type": "clock.stop", "game": GAME})
        await expect(page.locator(".bigclock")).to_have_class("bigclock stopped")
        await page.clock.fast_forward(11_000)
        await expect(stopped).to_be_visible()
    finally:
        await tk.close()


WAKE = """
window.__wake = { requests: 0, releases: 0, locks: [] };
Object.defineProperty(Navigator.prototype, "wakeLock", { configurable: true, get() { return {
  request: async (type) => {
    window.__wake.requests += 1;
    const s = new EventTarget();
    s.type = type; s.released = false;
    s.release = async () => { if (s.released) return; s.released = true; window.__wake.releases += 1;
      s.dispatchEvent(new Event("release")); };
    window.__wake.locks.push(s);
    return s;
  } }; } });
"""


async def test_the_screen_is_kept_awake_while_the_game_is_live(server: Server, handheld: Open) -> None:
    async def wake(context: BrowserContext, page: Page) -> None:
        await page.add_init_script(WAKE)

    await server.setup_game(GAME)
    hh = await handheld("timekeeper", "tk-1", before=wake)
    page = hh.page
    body = page.locator("body")
    await page.wait_for_timeout(300)
    assert await page.evaluate("window.__wake.requests") == 0     # not live yet: no lock
    await page.locator("#actions [data-act='clock.start']").tap()
    await expect(body).to_have_attribute("data-wake-lock", "held")
    assert await page.evaluate("window.__wake.requests") == 1

    # the page hidden (the browser lets the lock go), then shown again: asked for again
    await page.evaluate("""() => {
      Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
      window.__wake.locks.at(-1).release();
      document.dispatchEvent(new Event("visibilitychange"));
    }""")
    await expect(body).to_have_attribute("data-wake-lock", "released")
    await page.evaluate("""() => {
      Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "visible" });
      document.dispatchEvent(new Event("visibilitychange"));
    }""")
    await expect(body).to_have_attribute("data-wake-lock", "held")
    assert await page.evaluate("window.__wake.requests") == 2

    # the game ends: the lock goes
    ump = await server.device("umpire", GAME, name="ump-2")
    try:
        await ump.send({"type": "game.end", "game": GAME})
    finally:
        await ump.close()
    await expect(body).to_have_attribute("data-wake-lock", "released")
    assert await page.evaluate("window.__wake.releases") == 2


# ------------------------------------------------------------------ the screen


async def test_players_in_the_thumbs_reach_and_void_and_end_away_from_it(server: Server,
                                                                          handheld: Open) -> None:
    await server.setup_game(GAME)
    await start_clock(server)
    hh = await handheld()
    page = hh.page
    await expect(page.locator("[data-player=h1]")).to_be_visible()
    bar = await box(page, "#actions")
    tiles = page.locator("#roster .player")
    assert await tiles.count() == 8
    for i in range(await tiles.count()):
        b = await tiles.nth(i).bounding_box()
        assert b is not None
        assert b["y"] >= HEIGHT / 2, (i, b)                 # the bottom half of the screen ...
        assert b["y"] + b["height"] <= bar["y"] + 1, (i, b)  # ... above the action bar, not under it
    for act in ("undo", "void", "end"):
        b = await box(page, f"[data-act={act}]")
        assert b["y"] + b["height"] <= HEIGHT * 0.35, (act, b)   # at the top, away from the thumb
    assert await page.locator("#actions [data-act=void], #actions [data-act=end]").count() == 0
    await expect(page.locator("#actions [data-act=whistle]")).to_be_visible()
    await shot_page(page, "handheld-pressure-thumb-zone")


async def test_an_alert_is_shown_prominently(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)                          # a goal before the clock: an alert
    hh = await handheld()
    page = hh.page
    await hh.goal("home")
    alert = page.locator("#alerts .alert[data-code=goal_before_clock]")
    await expect(alert).to_be_visible()
    await expect(alert).to_have_attribute("role", "alert")
    first = await box(page, "#alerts .alert")
    assert first["y"] < HEIGHT * 0.3 and first["width"] >= 390 * 0.9, first
    size = await alert.locator(".alert-text").evaluate("n => parseFloat(getComputedStyle(n).fontSize)")
    assert size >= 16, size
    # the page scrolled to its end (the outbox, the feed): the alert stays in view
    await page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    await page.wait_for_timeout(200)
    assert await page.evaluate("window.scrollY") > 100
    b = await box(page, "#alerts .alert")
    assert 0 <= b["y"] < HEIGHT * 0.3, b
    await shot_page(page, "handheld-pressure-alert")


async def test_the_connection_detail_is_one_tap_away(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    hh = await handheld()
    page = hh.page
    summary = page.locator("[data-conn=summary]")
    await expect(summary).to_have_text("Connected")
    await expect(summary).to_have_attribute("data-state", "connected")
    await expect(page.locator("[data-conn=device]")).to_be_hidden()
    await expect(page.locator("#top")).not_to_contain_text(" ms", use_inner_text=True)   # what is shown
    await summary.tap()
    await expect(page.locator("[data-conn=device]")).to_be_visible()
    await expect(page.locator("[data-conn=device]")).to_contain_text(re.compile(r"heard \d+ s ago · \d+ ms"))
    await expect(page.locator("[data-conn=feed]")).to_be_visible()
    await shot_page(page, "handheld-pressure-connection-detail")
    await summary.tap()
    await expect(page.locator("[data-conn=device]")).to_be_hidden()


# ------------------------------------------------------------------ offline, told by evidence


NO_ONLINE_FLAG = """
Object.defineProperty(Navigator.prototype, "onLine", { configurable: true, get: () => true });
for (const type of ["online", "offline"]) {
  window.addEventListener(type, (e) => e.stopImmediatePropagation(), true);
}
"""


async def test_offline_is_known_without_navigator_online(server: Server, handheld: Open) -> None:
    """A browser that says it is online with no network (navigator.onLine true, no online or
    offline events), as Chromium may after a reload under Playwright's offline mode: the
    handheld still says offline, across a reload, and sends all when the network is back."""

    async def no_flag(context: BrowserContext, page: Page) -> None:
        await page.add_init_script(NO_ONLINE_FLAG)

    await server.setup_game(GAME)
    await start_clock(server)
    hh: Handheld = await handheld(before=no_flag)
    page = hh.page
    await expect(page.locator("body")).to_have_attribute("data-offline-ready", "yes")
    await page.context.set_offline(True)
    assert await page.evaluate("navigator.onLine") is True
    device = page.locator("[data-conn=device]")
    await expect(device).to_have_attribute("data-state", "offline", timeout=10_000)
    await expect(page.locator("[data-conn=summary]")).to_have_attribute("data-state", "offline")
    await page.locator("#actions [data-act=whistle]").tap()
    await hh.card("a3", "yellow1", None)
    await expect(page.locator("#outbox .entry[data-state=queued]")).to_have_count(2)

    await page.reload()
    assert await page.evaluate("navigator.onLine") is True
    await expect(page.locator("#outbox .entry[data-state=queued]")).to_have_count(2)
    await expect(device).to_have_attribute("data-state", "offline")
    await expect(page.locator("[data-conn=summary]")).to_have_text("Offline · events kept")
    await expect(page.locator("[data-conn=feed]")).to_have_attribute("data-state", "offline")
    await shot_page(page, "handheld-pressure-offline-no-flag")
    assert rows_of(server, hh.device) == []

    await page.context.set_offline(False)                  # no "online" event: found by trying
    await expect(page.locator("#outbox .entry[data-state=acked]")).to_have_count(2, timeout=10_000)
    await expect(device).to_have_attribute("data-state", "online")
    assert [e["type"] for _, _, e in rows_of(server, hh.device)] == ["whistle", "card"]
