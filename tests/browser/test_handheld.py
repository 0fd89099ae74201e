"""The officials' handheld (clients/web/handheld/) in a real Chromium against the
real service: events recorded offline are kept in the page's outbox and sent
once, in order, when the network comes back (also across a reload while
offline); a lost ack is answered by resending the same event, which the
service stores once; a refusal shows its reason and clause and is never
resent; an alert (a fact the rules did not expect) stays on top of the page until
dismissed, whether it came in the device's own ack or in the feed, and none is lost
when several arrive; the Spanish handheld speaks Spanish; voids go through a
confirmation; the timekeeper runs the clock; the app is installable (manifest, icons,
service worker). Its feed is the scoreboard's (watch.js): a patch that names a path the
view doesn't have makes it resync from a fresh snapshot, and a service without public
viewing gets the token in a frame. Screenshots go to ``artifacts/screenshots`` (see
``shot``)."""

from __future__ import annotations

import json
import re
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Browser, BrowserContext, Page, WebSocketRoute, expect

from stream.live.ops.wallclock import now_ms

from ..live.conftest import RunningServer, Server, admin_device
from .conftest import shot

GAME = "g1"
MOBILE: dict[str, Any] = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2,
                          "is_mobile": True, "has_touch": True}


SUGGESTED = re.compile(r"\bsuggest\b")


@dataclass
class Handheld:
    context: BrowserContext
    page: Page
    device: str
    sent: list[dict[str, Any]] = field(default_factory=list)   # every `send` frame on /ws/device
    token: str = ""

    def sends_of(self, event_id: str) -> int:
        return sum(1 for f in self.sent if f["event"]["id"] == event_id)

    async def entries(self) -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = await self.page.evaluate("arenaHandheld.entries()")
        return got

    async def online(self) -> None:
        await expect(self.page.locator("[data-conn=device]")).to_have_attribute("data-state", "online")

    async def go_offline(self) -> None:
        await self.context.set_offline(True)
        await expect(self.page.locator("[data-conn=device]")).to_have_attribute("data-state", "offline")

    async def go_online(self) -> None:
        await self.context.set_offline(False)
        await self.online()

    async def card(self, player: str, card: str = "yellow1", conduct: str | None = "arguing") -> None:
        """Player → colour → (the conduct, optional) → record; 2 and 3 yellows are confirmed."""
        p = self.page
        await p.click(f"[data-player={player}]")
        await p.click(f"#sheet [data-card={card}]")
        if conduct:
            await p.click("#sheet .conduct-pick summary")
            await p.click(f"#sheet [data-conduct={conduct}]")
        await p.click("#sheet [data-act=record]")
        if card in ("yellow2", "yellow3"):
            await expect(p.locator("#sheet [data-sheet=card-confirm]")).to_be_visible()
            await p.click("#sheet [data-act=confirm-card]")
        await expect(p.locator("#sheet")).not_to_be_visible()

    async def goal(self, team: str, points: int = 1, scorer: str | None = None) -> None:
        p = self.page
        await p.click("#actions [data-act=goal]")
        await p.click(f"#sheet [data-team={team}]")
        await p.click(f"#sheet [data-points='{points}']")
        if scorer:
            await p.click(f"#sheet [data-scorer={scorer}]")
        await p.click("#sheet [data-act=record]")
        await expect(p.locator("#sheet")).not_to_be_visible()


Open = Callable[..., Awaitable[Handheld]]


@pytest.fixture
async def handheld(browser: Browser, server: Server) -> AsyncIterator[Open]:
    """Open a handheld in its own phone-sized browser context (its own storage),
    signed in with a fresh device token carried in the URL fragment."""
    contexts: list[BrowserContext] = []
    errors: list[str] = []
    urls: list[str] = []                       # every URL the pages asked for, sockets included
    tokens: list[str] = []

    async def _open(role: str = "umpire", device: str = "ump-1", *, lang: str | None = None,
                    route: Callable[[WebSocketRoute], Any] | None = None,
                    watch: Callable[[WebSocketRoute], Any] | None = None, paste: bool = False,
                    pair: bool = False, ttl: int = 3600,
                    before: Callable[[BrowserContext, Page], Awaitable[None]] | None = None) -> Handheld:
        context = await browser.new_context(**MOBILE)
        contexts.append(context)
        page = await context.new_page()
        if before is not None:     # init scripts, a fake clock: before the page is loaded
            await before(context, page)
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.on("request", lambda request: urls.append(request.url))
        hh = Handheld(context, page, device)

        def on_socket(ws: Any) -> None:
            urls.append(ws.url)
            if ws.url.endswith("/ws/device"):
                ws.on("framesent", lambda payload: _record_send(hh, payload))

        page.on("websocket", on_socket)
        if route is not None:
            await page.route_web_socket("**/ws/device", route)
        if watch is not None:
            await page.route_web_socket(re.compile(r"/ws/watch"), watch)
        token = server.token(role, device, game=GAME, official="A. Rivera", ttl=ttl)
        tokens.append(token)
        hh.token = token
        query = f"?lang={lang}" if lang else ""
        if paste:
            await page.goto(f"{server.http}/handheld{query}")
            await expect(page.locator("#signin")).to_be_visible()
            await shot_page(page, "handheld-sign-in")
            await page.fill("#token-input", token)
            await page.click("[data-act=signin]")
        elif pair:   # the committee's pairing link (its QR code): the token in the fragment
            await page.goto(f"{server.http}/handheld?game={GAME}{query.replace('?', '&')}#pair={token}")
        else:
            await page.goto(f"{server.http}/handheld{query}#token={token}")
        if ttl > 0:
            await hh.online()
        # the token never stays in the address bar
        assert "token" not in page.url
        return hh

    yield _open
    for c in contexts:
        await c.close()
    assert not errors, errors
    # the token travels only inside the first frame of a socket: never in a URL
    assert urls
    assert not [u for u in urls for token in tokens if token in u or token[-20:] in u]


def _record_send(hh: Handheld, payload: str | bytes) -> None:
    if isinstance(payload, bytes):
        return
    frame = json.loads(payload)
    if frame.get("type") == "send":
        hh.sent.append(frame)


async def start_clock(server: Server) -> None:
    tk = await server.device("timekeeper", GAME)
    try:
        await tk.send({"type": "clock.start", "game": GAME})
    finally:
        await tk.close()


def rows_of(server: Server, device: str) -> list[tuple[int, str, dict[str, Any]]]:
    """(seq, client id, event) of each stored event from ``device``, in log order."""
    return [(seq, cid, json.loads(body)) for _, seq, dev, cid, body in server.log_rows() if dev == device]


async def test_offline_card_and_goal_are_sent_once_in_order(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    await start_clock(server)
    hh = await handheld()
    page = hh.page
    await expect(page.locator("[data-player=h2]")).to_be_visible()
    await shot_page(page, "handheld-umpire-online")

    await hh.go_offline()
    recorded_at = now_ms()
    await hh.card("h2", "yellow1", "arguing")
    await hh.goal("home", 2, scorer="h1")
    queued = page.locator("#outbox .entry[data-state=queued]")
    await expect(queued).to_have_count(2)
    await expect(page.locator("[data-conn=outbox]")).to_have_attribute("data-pending", "2")
    await page.wait_for_timeout(1500)              # some time offline: the events keep their moment
    assert rows_of(server, hh.device) == []
    assert hh.sent == []
    await shot_page(page, "handheld-offline-queued")

    online_at = now_ms()
    await hh.go_online()
    await expect(page.locator("#outbox .entry[data-state=acked]")).to_have_count(2)
    await expect(page.locator("[data-conn=outbox]")).to_have_attribute("data-pending", "0")

    stored = rows_of(server, hh.device)
    assert [e["type"] for _, _, e in stored] == ["card", "goal"]
    entries = await hh.entries()
    assert [e["type"] for e in entries] == ["card", "goal"]
    assert [cid for _, cid, _ in stored] == [e["id"] for e in entries]        # each exactly once
    assert [seq for seq, _, _ in stored] == [e["seq"] for e in entries]       # acked with its seq ...
    assert stored[0][0] < stored[1][0]                                         # ... in order
    assert all(e["state"] == "acked" for e in entries)
    assert [hh.sends_of(e["id"]) for e in entries] == [1, 1]
    card, goal = stored[0][2], stored[1][2]
    assert (card["player"], card["color"], card["conduct"]) == ("h2", "yellow", "arguing")
    assert (goal["team"], goal["points"], goal["player"]) == ("home", 2, "h1")
    # clock sync: the events keep the device's moment, not the moment they reached the server
    for event in (card, goal):
        assert recorded_at - 1000 <= event["at"] < online_at, (event["at"], recorded_at, online_at)

    # the page shows the seqs, and the game state the watch feed brought back
    seqs = await page.locator("#outbox .entry").evaluate_all("els => els.map(e => Number(e.dataset.seq))")
    assert seqs == sorted(seqs, reverse=True) == [stored[1][0], stored[0][0]]   # newest first
    await expect(page.locator("[data-player=h2] .pips")).to_have_attribute("data-yellows", "1")
    await expect(page.locator("[data-score=home]")).to_have_text("2")
    await shot_page(page, "handheld-online-acked")


async def test_reload_while_offline_keeps_the_outbox(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    await start_clock(server)
    hh = await handheld()
    page = hh.page
    # the service worker controls the page: the app shell is cached
    await expect(page.locator("body")).to_have_attribute("data-offline-ready", "yes")

    await hh.go_offline()
    await page.click("#actions [data-act=whistle]")
    await hh.card("a3", "yellow2", "dangerous_riding")
    await expect(page.locator("#outbox .entry[data-state=queued]")).to_have_count(2)
    before = await hh.entries()

    await page.reload()                            # no network: the shell comes from the cache
    await expect(page.locator("#outbox .entry[data-state=queued]")).to_have_count(2)
    await expect(page.locator("[data-conn=device]")).to_have_attribute("data-state", "offline")
    await expect(page.locator("[data-player=a3]")).to_be_visible()     # the last game state, kept
    assert await hh.entries() == before
    assert rows_of(server, hh.device) == []
    await shot_page(page, "handheld-reloaded-offline")

    await hh.go_online()
    await expect(page.locator("#outbox .entry[data-state=acked]")).to_have_count(2)
    stored = rows_of(server, hh.device)
    assert [cid for _, cid, _ in stored] == [e["id"] for e in before]
    assert [e["type"] for _, _, e in stored] == ["whistle", "card"]
    await expect(page.locator("[data-player=a3] .tags")).to_contain_text("BOX")


async def test_a_lost_ack_is_resent_with_the_same_id_and_stored_once(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    await start_clock(server)
    dropped: list[str] = []

    def route(ws: WebSocketRoute) -> None:
        """Pass everything through, but lose the first ack: the socket dies before it arrives."""
        upstream = ws.connect_to_server()

        async def from_server(message: str | bytes) -> None:
            frame = json.loads(message)
            if frame.get("type") == "ack" and not dropped:
                dropped.append(frame["id"])
                await ws.close(code=4000, reason="lost")
                await upstream.close()
                return
            ws.send(message)

        upstream.on_message(from_server)

    hh = await handheld(route=route)
    page = hh.page
    await page.click("#actions [data-act=whistle]")
    await expect(page.locator("#outbox .entry[data-state=acked]")).to_have_count(1)
    [entry] = await hh.entries()
    assert dropped == [entry["id"]]
    assert hh.sends_of(entry["id"]) == 2                     # resent after reconnecting, same id ...
    assert [cid for _, cid, _ in rows_of(server, hh.device)] == [entry["id"]]   # ... stored once
    sent = [f["event"] for f in hh.sent]
    assert sent[0] == sent[1]                                # the same bytes, `at` included
    await expect(page.locator("#outbox .entry .state")).to_contain_text("already stored")


async def test_a_refused_event_shows_its_reason_and_is_not_resent(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)          # the game has not begun: leaving the arena is refused
    hh = await handheld()
    page = hh.page
    await page.click("[data-player=h3]")
    await page.click("#sheet [data-act=arena]")
    await page.click("#sheet [data-act=record]")
    refused = page.locator("#outbox .entry[data-state=refused]")
    await expect(refused).to_have_count(1)
    await expect(refused).to_have_attribute("data-code", "game_not_started")
    # In the officials' words: what happened and what to do, not the service's detail.
    await expect(refused.locator(".why")).to_have_text("The game has not begun yet. Start the clock first.")
    await expect(refused.locator(".clause")).to_contain_text("A1 · Arena · Periods and the game clock")
    await expect(refused.locator(".state")).to_have_text("Refused")
    [entry] = await hh.entries()
    assert entry["error"]["code"] == "game_not_started"
    await shot_page(page, "handheld-refused")

    # a new connection resends whatever is unanswered: not this one
    await hh.go_offline()
    await hh.go_online()
    await page.click("#actions [data-act=whistle]")    # something after it, to be sure the queue ran
    await expect(page.locator("#outbox .entry[data-type=whistle]")).to_have_attribute("data-state", "acked")
    assert hh.sends_of(entry["id"]) == 1
    assert [e["type"] for _, _, e in rows_of(server, hh.device)] == ["whistle"]
    assert (await hh.entries())[0]["state"] == "refused"


async def test_the_spanish_handheld_speaks_spanish(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    hh = await handheld(lang="es")
    page = hh.page
    await expect(page.locator("html")).to_have_attribute("lang", "es")
    await expect(page.locator("#actions [data-act=whistle]")).to_have_text("Silbato")
    await expect(page.locator("#actions [data-act=goal]")).to_have_text("Gol")
    await expect(page.locator("#gamebar [data-act=void]")).to_have_text("Anular…")
    await expect(page.locator("#outbox-section h2")).to_have_text("Eventos de este dispositivo")
    await expect(page.locator("[data-conn=device]")).to_contain_text("Dispositivo: en línea")

    await page.click("[data-player=h1]")
    await expect(page.locator("#sheet [data-act=record]")).to_have_text("Elija una tarjeta")
    await expect(page.locator("#sheet [data-act=arena]")).to_have_text("Abandonó la arena")
    await expect(page.locator("#sheet [data-card=yellow2]")).to_have_text("2 amarillas")
    await expect(page.locator("#sheet [data-card=red1]")).to_have_text("Roja")
    await page.click("#sheet [data-card=yellow1]")
    await page.click("#sheet .conduct-pick summary")
    await expect(page.locator("#sheet [data-conduct=arguing]")).to_have_text("Discutir con los oficiales")
    await expect(page.locator("#sheet [data-conduct=dangerous_riding]")).to_have_text("Monta peligrosa")
    await page.click("#sheet [data-conduct=abusive_language]")
    await expect(page.locator("#sheet [data-act=record]")).to_have_text(
        "Registrar: Amarilla · h1 · Lenguaje vulgar u ofensivo")
    await shot_page(page, "handheld-es-card")
    await page.click("#sheet [data-act=record]")
    acked = page.locator("#outbox .entry[data-state=acked]")
    await expect(acked.locator(".state")).to_have_text("Confirmado n.º 2")
    await expect(acked.locator(".sub")).to_have_text(
        "Tarjeta amarilla para h1 (local): 1 amarilla(s) en el partido, infracción 1.")

    # a goal before the clock starts counts, with an alert to start the clock: in Spanish
    await page.click("#actions [data-act=goal]")
    await expect(page.locator("#sheet [data-points='2']")).to_have_text("2 puntos")
    await expect(page.locator("#sheet [data-team=home]")).to_have_text("g1-home (Local)")
    await page.click("#sheet [data-team=home]")
    await page.click("#sheet [data-act=record]")
    alert = page.locator("#alerts .alert[data-code=goal_before_clock]")
    await expect(alert).to_contain_text("Gol registrado antes de poner en marcha el reloj")
    await expect(alert).to_contain_text("(Arena · Períodos y reloj de juego)")
    await expect(alert.locator("[data-act=dismiss-alert]")).to_have_text("Entendido")

    # h1 is not in the box: leaving it early is refused, the reason and the clause in Spanish
    await page.click("[data-player=h1]")
    await page.click("#sheet [data-act=box_early]")
    await page.click("#sheet [data-act=record]")
    refused = page.locator("#outbox .entry[data-state=refused]")
    await expect(refused.locator(".state")).to_have_text("Rechazado")
    await expect(refused.locator(".why")).to_have_text(
        "El jugador no está en el área de castigo. Elija al jugador que está en el área de castigo.")
    await expect(refused.locator(".clause")).to_contain_text("Regla 14 · Abandonar el área de castigo")
    await shot_page(page, "handheld-es-refused")

    # and back to English with the toggle
    await page.click("[data-act=lang]")
    await expect(page.locator("#actions [data-act=whistle]")).to_have_text("Whistle")
    await expect(refused.locator(".state")).to_have_text("Refused")
    await expect(alert).to_contain_text("Goal recorded before the clock was ever started")


async def test_a_late_postgame_card_of_the_last_game_is_told_in_the_game_under_way(
        server: Server, handheld: Open) -> None:
    """R9: g1 is under way when the umpire's post-game red for h2 in g0 (the same teams'
    game before) reaches the log: g1's handheld puts the alert on top of the page at once,
    naming h2, g0, and what the committee must decide."""
    teams = {"home": {"team": f"{GAME}-home", "players": ["h1", "h2", "h3"], "subs": ["h4"]},
             "away": {"team": f"{GAME}-away", "players": ["a1", "a2", "a3"], "subs": ["a4"]}}
    await server.setup_game("g0", teams=teams)
    await server.setup_game(GAME)
    before = await server.device("timekeeper", "g0", name="tk-g0")
    try:
        await before.send({"type": "clock.start", "game": "g0"})
        await before.send({"type": "game.end", "game": "g0"})
    finally:
        await before.close()
    hh = await handheld("timekeeper", "tk-1")
    page = hh.page
    await page.locator("#actions [data-act='clock.start']").click()
    await expect(page.locator(".bigclock")).to_have_class("bigclock running")
    await expect(page.locator("#alerts")).to_be_hidden()
    ump = await server.device("umpire", "g0", name="ump-g0")
    try:
        ack = await ump.send({"type": "postgame.card", "game": "g0", "player": "h2", "level": "red"})
    finally:
        await ump.close()
    assert ack["type"] == "ack"
    told = page.locator("#alerts .alert[data-code=next_game_begun]")
    await expect(told).to_be_visible()
    await expect(told).to_contain_text("h2 (home) is suspended (his team short for 4:00 of play) for this "
                                       "game under Rule 14 (from game g0, recorded only now)")
    await expect(told).to_contain_text("Umpires: is he on the field? Committee: the record leaves it for "
                                       "his following qualifying game; decide whether that stands")
    await expect(told).to_contain_text("(Rule 14 · Cards after the game)")
    await page.screenshot(path=shot("handheld-next-game-begun"), animations="disabled")


async def test_alerts_stay_on_top_until_dismissed_and_none_is_lost(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    hh = await handheld("timekeeper", "tk-1")
    page = hh.page
    alerts = page.locator("#alerts .alert")
    start = page.locator("#actions [data-act='clock.start']")
    await start.click()
    await expect(page.locator(".bigclock")).to_have_class("bigclock running")
    await expect(page.locator("#alerts")).to_be_hidden()

    # the clock started again while it runs: taken, and the ack's alert is shown at once
    await start.click()
    await expect(page.locator("#outbox .entry[data-state=acked]")).to_have_count(2)
    clock = page.locator("#alerts .alert[data-code=clock_already_running]")
    await expect(clock).to_be_visible()
    await expect(clock).to_contain_text(
        "The clock was started while it was already running: nothing changed; timekeeper, check the clock. "
        "(Arena · Periods and the game clock)")
    await expect(clock).to_have_attribute("role", "alert")
    # not an ordinary notice: on top of the page, apart from the feed and the outbox
    assert await page.locator("#top #alerts .alert").count() == 1
    await expect(page.locator("#outbox .entry .sub.alert")).to_contain_text("already running")

    # another official's fact the rules did not expect arrives through the feed: both are kept
    ump = await server.device("umpire", GAME, name="ump-2")
    try:
        for _ in range(2):
            await ump.send({"type": "card", "game": GAME, "player": "h2", "color": "yellow",
                            "conduct": "arguing"})
        await ump.send({"type": "goal", "game": GAME, "team": "home", "player": "h2"})
    finally:
        await ump.close()
    other = await server.device("timekeeper", GAME, name="tk-2")
    try:
        await other.send({"type": "clock.stop", "game": GAME})   # the goal stopped it already
    finally:
        await other.close()
    await expect(alerts).to_have_count(3)
    await expect(page.locator("#alerts .alerts-head")).to_have_text("3 alerts")
    await expect(page.locator("#alerts .alert[data-code=scorer_not_on_field]")).to_contain_text(
        "Goal credited to h2, who was not on the field for home")
    await expect(page.locator("#alerts .alert[data-code=clock_not_running]")).to_be_visible()
    # the ack's alert came again in the feed's delta: still one
    await expect(clock).to_have_count(1)
    assert [a["code"] for a in await page.evaluate("arenaHandheld.alerts()")] == [
        "clock_already_running", "scorer_not_on_field", "clock_not_running"]
    await page.screenshot(path=shot("handheld-alerts"), animations="disabled")

    # dismissed one by one; the others stay, across a reload too
    await clock.locator("[data-act=dismiss-alert]").click()
    await expect(alerts).to_have_count(2)
    await expect(clock).to_have_count(0)
    await page.reload()
    await hh.online()
    await expect(page.locator("#feed .notice.n-alert")).to_have_count(3)   # the feed still lists all
    await expect(alerts).to_have_count(2)
    await expect(clock).to_have_count(0)
    for _ in range(2):
        await alerts.first.locator("[data-act=dismiss-alert]").click()
    await expect(page.locator("#alerts")).to_be_hidden()


async def test_void_asks_for_confirmation_and_names_the_log_id(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    await start_clock(server)
    other = await server.device("umpire", GAME, name="ump-2")    # the other umpire's card, from the feed
    try:
        await other.send({"type": "card", "game": GAME, "player": "a1", "color": "yellow",
                          "conduct": "appealing"})
    finally:
        await other.close()
    hh = await handheld()
    page = hh.page
    await hh.card("h3", "red1", "striking")
    await expect(page.locator("#outbox .entry[data-state=acked]")).to_have_count(1)
    [card] = await hh.entries()

    await page.click("#gamebar [data-act=void]")
    items = page.locator("#sheet .recent-item")
    # newest first: this device's card, the other umpire's, the timekeeper's start of the period
    await expect(items).to_have_count(3)
    await expect(items.nth(0)).to_contain_text("Red · h3 · Striking a player or mount")
    await expect(items.nth(1)).to_contain_text("Yellow card to a1")
    await expect(items.nth(2)).to_contain_text("Period 1 under way")
    await shot_page(page, "handheld-void-list")
    await items.nth(0).click()
    await expect(page.locator("#sheet [data-sheet=void-confirm]")).to_be_visible()
    await expect(page.locator("#sheet .target")).to_have_text("Red · h3 · Striking a player or mount")
    await shot_page(page, "handheld-void-confirm")
    await page.click("#sheet [data-act=keep]")                   # changed their mind: nothing sent
    await expect(page.locator("#sheet")).not_to_be_visible()
    assert len(hh.sent) == 1

    await page.click("#gamebar [data-act=void]")
    await page.locator("#sheet .recent-item").nth(0).click()
    await page.click("#sheet [data-act=confirm-void]")
    await expect(page.locator("#outbox .entry[data-type=void]")).to_have_attribute("data-state", "acked")
    stored = rows_of(server, hh.device)
    assert stored[-1][2]["type"] == "void"
    assert stored[-1][2]["target"] == card["log_id"] == f"{hh.device}/{card['id']}"
    await expect(page.locator(f"#outbox .entry[data-id='{card['id']}'] .state")).to_contain_text("voided")
    await expect(page.locator("[data-player=h3] .tags")).to_be_empty()


async def test_timekeeper_runs_the_clock(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    hh = await handheld("timekeeper", "tk-1")
    page = hh.page
    await expect(page.locator("#official")).to_be_hidden()
    start = page.locator("#actions [data-act='clock.start']")
    stop = page.locator("#actions [data-act='clock.stop']")
    await expect(start).to_have_class(SUGGESTED)
    await expect(stop).not_to_have_class(SUGGESTED)
    await start.click()
    await expect(page.locator(".bigclock")).to_have_class("bigclock running")
    await expect(stop).to_have_class(SUGGESTED)
    await expect(page.locator(".bigclock span")).to_have_text(re.compile(r"7:2\d"))      # it runs
    await shot_page(page, "handheld-timekeeper-running")
    await stop.click()
    await expect(page.locator(".bigclock")).to_have_class("bigclock stopped")
    stored = rows_of(server, hh.device)
    assert [e["type"] for _, _, e in stored] == ["clock.start", "clock.stop"]
    # a timekeeper's void list holds only clock events
    await page.click("#gamebar [data-act=void]")
    await expect(page.locator("#sheet .recent-item")).to_have_count(2)
    await expect(page.locator("#sheet .recent-item").nth(0)).to_contain_text("Clock stop")


async def test_a_patch_with_a_missing_path_resyncs_from_a_fresh_snapshot(server: Server,
                                                                          handheld: Open) -> None:
    """The handheld's feed is the scoreboard's (watch.js, patch.js). The test's route stops
    passing the server's frames while the other umpire scores, then hands the page a delta
    of the next seq whose patch names a player the view doesn't have. The handheld applies
    none of it (it used to skip the path and keep the rest: a score of 7), subscribes again
    without since, and shows the fresh snapshot's state; it keeps that position, and
    deltas go on from it."""
    await server.setup_game(GAME)
    urls: list[str] = []
    routes: list[WebSocketRoute] = []
    held: list[bool] = []
    crafted = {"type": "delta", "game": GAME, "seq": 2, "notices": [],
               "patch": [["score.home", 7], ["players.ghost.box", None]]}

    def watch(ws: WebSocketRoute) -> None:
        urls.append(ws.url)
        routes.append(ws)
        first = len(urls) == 1
        upstream = ws.connect_to_server()

        def forward(message: str | bytes) -> None:
            if not (first and held):
                ws.send(message)

        upstream.on_message(forward)

    hh = await handheld(watch=watch)
    page = hh.page
    live_at = "seq => arenaHandheld.feed().seq === seq && arenaHandheld.feed().state === 'live'"
    await page.wait_for_function(live_at, arg=1)
    await expect(page.locator("[data-score=home]")).to_have_text("0")

    held.append(True)               # the first socket passes nothing more from the server
    other = await server.device("umpire", GAME, name="ump-2")
    try:
        await other.send({"type": "goal", "game": GAME, "team": "home", "player": "h1"})
        routes[0].send(json.dumps(crafted))
        await expect(page.locator("[data-score=home]")).to_have_text("1", timeout=10_000)
        await page.wait_for_function(live_at, arg=2)
        assert len(urls) == 2, urls
        assert "since=" not in urls[1] and "epoch=" not in urls[1], urls[1]   # a fresh snapshot
        kept = await page.evaluate(f"JSON.parse(localStorage.getItem('arena.handheld.watch.{GAME}'))")
        assert kept["seq"] == 2 and kept["epoch"] and kept["view"]["score"]["home"] == 1

        await other.send({"type": "goal", "game": GAME, "team": "away", "player": "a1"})
        await expect(page.locator("[data-score=away]")).to_have_text("1")
        await expect(page.locator("[data-score=home]")).to_have_text("1")
        assert len(urls) == 2, urls
    finally:
        await other.close()


async def test_without_public_viewing_the_feed_authenticates_in_a_frame(browser: Browser,
                                                                        tmp_path: Path) -> None:
    """A service run without public viewing answers the feed's subscription with
    auth_required: the handheld's feed (watch.js) sends its token in an auth frame, never
    in a URL, and then gets the game."""
    async with RunningServer(tmp_path, public_watch=False) as srv:
        await srv.setup_game(GAME)
        token = srv.token("umpire", "ump-1", game=GAME, official="A. Rivera")
        context = await browser.new_context(**MOBILE)
        try:
            page = await context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda err: errors.append(str(err)))
            watch_urls: list[str] = []
            auth_frames: list[str] = []

            def on_socket(ws: Any) -> None:
                if "/ws/watch" in ws.url:
                    watch_urls.append(ws.url)
                    ws.on("framesent", lambda p: auth_frames.append(p) if '"auth"' in str(p) else None)

            page.on("websocket", on_socket)
            await page.goto(f"{srv.http}/handheld#token={token}")
            await expect(page.locator("[data-conn=feed]")).to_have_attribute("data-state", "live")
            await expect(page.locator("[data-player=h2]")).to_be_visible()
            await expect(page.locator(".scoreline .tname").first).to_have_text("g1-home")
            assert watch_urls and all(token not in u for u in watch_urls), watch_urls
            assert [json.loads(f) for f in auth_frames][:1] == [{"type": "auth", "token": token}]
            assert not errors, errors
        finally:
            await context.close()


async def test_the_handheld_shows_who_else_is_connected(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    hh = await handheld("umpire", "ump-north")
    page = hh.page
    about = page.locator("#about .presence")
    await expect(about.locator("[data-device='ump-north']")).to_have_count(1)
    other = await server.device("timekeeper", GAME, name="timer-1")
    await expect(about.locator("[data-device='timer-1']")).to_have_count(1)
    await other.close()
    await expect(about.locator("[data-device='timer-1']")).to_have_count(0)


async def test_an_expired_token_is_refused_with_its_reason(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    hh = await handheld(ttl=-60)
    page = hh.page
    device = page.locator("[data-conn=device]")
    await expect(device).to_have_attribute("data-state", "denied")
    await expect(page.locator("#conn .error")).to_contain_text(
        "The token has expired: ask the committee for a new one.")
    await shot_page(page, "handheld-token-expired")
    await page.click("#conn [data-act=signout]")
    await expect(page.locator("#signin")).to_be_visible()


async def test_the_handheld_is_installable(server: Server, handheld: Open) -> None:
    await server.setup_game(GAME)
    hh = await handheld(paste=True)                    # the official pastes the token
    page = hh.page
    href = await page.locator("link[rel=manifest]").get_attribute("href")
    assert href == "/clients/handheld/manifest.webmanifest"
    async with aiohttp.ClientSession() as s:
        async with s.get(server.http + href) as r:
            assert r.status == 200
            manifest = json.loads(await r.text())
        assert manifest["display"] == "standalone"
        assert manifest["start_url"].startswith(manifest["scope"])
        sizes = set()
        for icon in manifest["icons"]:
            async with s.get(server.http + icon["src"]) as r:
                assert r.status == 200 and r.content_type == "image/png"
                png = await r.read()
            assert png[:8] == b"\x89PNG\r\n\x1a\n"
            width, height = struct.unpack(">II", png[16:24])
            assert f"{width}x{height}" == icon["sizes"]
            sizes.add(icon["sizes"])
        assert {"192x192", "512x512"} <= sizes
        async with s.get(server.http + "/clients/sw.js") as r:
            assert r.status == 200 and "javascript" in r.content_type
    await expect(page.locator("body")).to_have_attribute("data-offline-ready", "yes")
    assert page.url.startswith(server.http + "/clients/handheld.html")     # inside the worker's scope


async def shot_page(page: Page, name: str) -> None:
    await page.screenshot(path=shot(name), full_page=False)


# ------------------------------------------------------------------ pairing, names and numbers


async def test_the_last_line_and_the_feed_name_the_player_as_registered(server: Server,
                                                                      handheld: Open) -> None:
    """Notices in names: the "Last:" line, the feed and the outbox read "#4 José Díaz (Aiken
    Arena)" and the teams by name, for this handheld's own card (its penalty to Wellington
    Blue is the last line) and for another official's goal, in English and (with the toggle)
    in Spanish."""
    await server.setup_game(GAME)
    await start_clock(server)
    admin = await admin_device(server)
    await admin.send({"type": "team.registered", "team": "g1-home", "name": "Aiken Arena", "short": "AIK",
                      "colors": {"primary": "#0b3d2e", "secondary": "#f2c230"}})
    await admin.send({"type": "team.registered", "team": "g1-away", "name": "Wellington Blue",
                      "short": "WEL", "colors": {"primary": "#ffffff", "secondary": "#1f4e9c"}})
    await admin.send({"type": "player.registered", "player": "h2", "name": "José Díaz", "number": 4,
                      "team": "g1-home"})
    await admin.close()
    hh = await handheld()
    page = hh.page
    await expect(page.locator("[data-player=h2] .pid")).to_have_text("#4 José Díaz")
    await hh.card("h2")
    card_en = "Yellow card to #4 José Díaz (Aiken Arena): 1 yellow in this game, offense 1."
    await expect(page.locator("#lastev .last")).to_contain_text("Penalty to Wellington Blue.")
    await expect(page.locator("#outbox .entry[data-type=card] .sub")).to_have_text(card_en)
    await expect(page.locator("#feed .notice.n-card-recorded")).to_contain_text(card_en)

    other = await server.device("referee", GAME)
    await other.send({"type": "goal", "game": GAME, "team": "home", "player": "h2"})
    await other.close()
    goal_en = "Goal Aiken Arena by #4 José Díaz: 1-0."
    await expect(page.locator("#lastev .last")).to_contain_text(goal_en)
    await expect(page.locator("#feed .notice.n-goal-scored")).to_contain_text(goal_en)
    await shot_page(page, "handheld-notices-in-names")

    await page.click("[data-act=lang]")
    await expect(page.locator("#lastev .last")).to_contain_text("Gol de Aiken Arena de #4 José Díaz: 1-0.")
    await expect(page.locator("#feed .notice.n-card-recorded")).to_contain_text(
        "Tarjeta amarilla para #4 José Díaz (Aiken Arena): 1 amarilla(s) en el partido, infracción 1.")
    await expect(page.locator("#feed .notice.n-penalty-awarded")).to_contain_text(
        "Penal a favor de Wellington Blue.")
    await shot_page(page, "handheld-notices-in-names-es")


async def test_a_pairing_link_signs_in_and_players_show_by_number_and_name(server: Server,
                                                                           handheld: Open) -> None:
    """The committee's link /handheld?game=G#pair=<token>: the handheld keeps the token as it
    keeps a pasted one, takes the fragment out of the address bar, and its events are accepted.
    Unregistered, players show by id; registrations made while it is open show at once: "#7
    Núñez" on his button, in the sheets and in the outbox, the teams by name in their colours;
    a later registration renames him."""
    await server.setup_game(GAME)
    await start_clock(server)
    hh = await handheld(pair=True)
    page = hh.page
    assert "#" not in page.url and "pair" not in page.url and hh.token not in page.url
    assert await page.evaluate("localStorage.getItem('arena.handheld.token')") == hh.token
    assert await page.evaluate("location.hash") == ""
    assert "game=g1" in page.url                                                    # the rest stays
    # Nothing registered yet: ids.
    await expect(page.locator("[data-player=h2] .pid")).to_have_text("h2")
    await expect(page.locator(".scoreline .side.home .tname")).to_have_text("g1-home")
    assert await page.locator(".col.home").get_attribute("data-colors") is None

    admin = await admin_device(server)
    await admin.send({"type": "team.registered", "team": "g1-home", "name": "Aiken Arena", "short": "aik",
                      "colors": {"primary": "#0b3d2e", "secondary": "#f2c230"}})
    await admin.send({"type": "player.registered", "player": "h2", "name": "Núñez", "number": 7,
                      "team": "g1-home"})
    await admin.send({"type": "player.registered", "player": "h1", "name": "Ortega", "number": 2})
    await expect(page.locator("[data-player=h2] .pid")).to_have_text("#7 Núñez")
    await expect(page.locator("[data-player=h1] .pid")).to_have_text("#2 Ortega")
    await expect(page.locator("[data-player=a1] .pid")).to_have_text("a1")           # not registered
    await expect(page.locator(".col.home .teamhead span")).to_have_text("Aiken Arena")
    await expect(page.locator(".scoreline .side.home .tname")).to_have_text("AIK")
    await expect(page.locator(".scoreline .side.away .tname")).to_have_text("g1-away")
    await expect(page.locator(".col.home")).to_have_attribute("data-colors", "true")
    head = page.locator(".col.home .teamhead")
    assert await head.evaluate("(n) => getComputedStyle(n).backgroundColor") == "rgb(11, 61, 46)"
    assert await head.evaluate("(n) => getComputedStyle(n).color") == "rgb(255, 255, 255)"
    await shot_page(page, "handheld-registered-names")

    # The card flow: the umpire picks "#7 Núñez"; the sheets and the outbox name him.
    await page.click("[data-player=h2]")
    await expect(page.locator("#sheet .sheet-head h2")).to_have_text("#7 Núñez")
    await page.click("#sheet [data-card=yellow1]")
    await expect(page.locator("#sheet [data-act=record]")).to_have_text("Record: Yellow · #7 Núñez")
    await page.click("#sheet .conduct-pick summary")
    await page.click("#sheet [data-conduct=arguing]")
    await shot_page(page, "handheld-card-sheet-names")
    await page.click("#sheet [data-act=record]")
    entry = page.locator("#outbox .entry[data-type=card]")
    await expect(entry).to_have_attribute("data-state", "acked")
    await expect(entry.locator(".what")).to_have_text("Yellow · #7 Núñez · Arguing with officials")
    (stored,) = [e for _, _, e in rows_of(server, hh.device) if e["type"] == "card"]
    assert (stored["player"], stored["color"]) == ("h2", "yellow")                   # the id, as ever

    # The goal sheet offers the scorers by number and name.
    await page.click("#actions [data-act=goal]")
    await page.click("#sheet [data-team=home]")
    await expect(page.locator("#sheet [data-scorer=h1]")).to_have_text("#2 Ortega")
    await page.click("#sheet [data-act=cancel]")

    # A later registration (a new number) renames him at once.
    await admin.send({"type": "player.registered", "player": "h2", "name": "Núñez", "number": 8,
                      "team": "g1-home"})
    await expect(page.locator("[data-player=h2] .pid")).to_have_text("#8 Núñez")
    await admin.close()


async def test_the_room_above_the_players_shows_the_events_before_the_last(server: Server,
                                                                          handheld: Open) -> None:
    """The players stay at the bottom, in the thumb's reach; the room between the last line
    and them is not left empty: the events before the last fill it, newest first, as many as
    fit, and never push the players below the screen."""
    await server.setup_game(GAME)
    await start_clock(server)
    hh = await handheld()
    page = hh.page
    ref = await server.device("referee", GAME)
    for n in range(12):
        await ref.send({"type": "goal", "game": GAME, "team": "home" if n % 2 else "away", "player": None})
    await ref.close()
    await expect(page.locator("#lastev .last")).to_contain_text("Goal")
    earlier = page.locator("#lastev .earlier")
    await expect(earlier.first).to_be_visible()
    geometry = await page.evaluate("""() => {
        const box = (el) => el.getBoundingClientRect();
        const lines = [...document.querySelectorAll('#lastev .ev')];
        const players = box(document.querySelector('#official'));
        const bar = box(document.querySelector('#actions'));
        return {gap: players.top - box(lines[lines.length - 1]).bottom, n: lines.length,
                playersBottom: players.bottom, barTop: bar.top, height: innerHeight};
    }""")
    assert geometry["n"] >= 2, geometry          # the last line and at least one before it
    assert geometry["gap"] < 48, geometry         # no empty band left between them
    assert geometry["playersBottom"] <= geometry["barTop"] + 1, geometry   # the players on screen
    texts = await earlier.all_inner_texts()
    assert all(t.strip() for t in texts) and len(texts) <= 11
    await shot_page(page, "handheld-recent-events")
