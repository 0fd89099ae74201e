"""The scoreboard and the overlay in a real Chromium against the real service:
a second yellow counts down in the box on both, then returns at the next
stoppage, then is released at the whistle; the overlay is transparent; the
Spanish pages speak Spanish; a scoreboard that loses its connection says so
and comes back with the right state, and one handed a patch it can't apply
resyncs from a fresh snapshot. Screenshots of each state go to
``artifacts/screenshots`` (see ``shot``)."""

from __future__ import annotations

import asyncio
import json
import re
import struct
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Browser, Page, WebSocketRoute, expect

from stream.live.ops.wallclock import now_ms

from ..live.conftest import RunningServer, Server, admin_device
from .conftest import shot


@pytest.fixture
async def pages(browser: Browser) -> AsyncIterator[list[Page]]:
    """Pages of their own contexts (a scoreboard and an overlay are separate screens)."""
    made: list[Any] = []

    async def _new() -> Page:
        context = await browser.new_context(viewport={"width": 1280, "height": 720})
        made.append(context)
        pg = await context.new_page()
        pg.on("pageerror", lambda err: errors.append(str(err)))
        return pg

    errors: list[str] = []
    holder: list[Page] = []
    holder.append(await _new())
    holder.append(await _new())
    yield holder
    for c in made:
        await c.close()
    assert not errors, errors


async def ready(page: Page) -> None:
    await expect(page.locator("body")).to_have_attribute("data-ready", "true", timeout=10_000)
    await expect(page.locator("body")).to_have_attribute("data-stale", "false", timeout=10_000)


def seconds(text: str) -> int:
    m = re.fullmatch(r"(\d+):(\d\d)", text.strip())
    assert m, text
    return int(m[1]) * 60 + int(m[2])


# ------------------------------------------------------------------ the box, live


async def test_second_yellow_counts_down_then_returns_then_is_released(
        server: Server, pages: list[Page]) -> None:
    await server.setup_game()
    board, overlay = pages
    await board.goto(f"{server.http}/scoreboard?game=g1")
    await overlay.goto(f"{server.http}/overlay?game=g1&hold=2&cite=1")
    await ready(board)
    await ready(overlay)
    await board.screenshot(path=shot("scoreboard-scheduled"))

    ump = await server.device("umpire")
    tk = await server.device("timekeeper")
    await asyncio.sleep(0.3)  # the server's first ping and the devices' pong: clock sync
    now = now_ms()
    # Play began 120 s ago; a first yellow at 4 s of play, the second at 6 s: the box
    # keeps a1 until the first stoppage after 2:00 of play, i.e. about 6 s from now.
    await tk.send({"type": "clock.start", "game": "g1", "at": now - 120_000})
    await ump.send({"type": "card", "game": "g1", "player": "a1", "color": "yellow",
                    "conduct": "arguing", "at": now - 116_000})
    ack = await ump.send({"type": "card", "game": "g1", "player": "a1", "color": "yellow",
                          "conduct": "rough_play", "at": now - 114_000})
    assert "box.enter" in [n["type"] for n in ack["notices"]]

    # The scoreboard: a countdown of play time owed, running locally.
    row = board.locator('#box .box-row[data-player="a1"]')
    await expect(row.locator(".countdown")).to_have_text(re.compile(r"^0:0[1-7]$"), timeout=5000)
    await expect(row.locator(".status")).to_have_text("play time owed")
    await expect(row.locator(".clause")).to_have_text("R3")
    await expect(board.locator("#away-strength [data-short]")).to_be_visible()
    first = seconds(await row.locator(".countdown").inner_text())
    # The overlay: the same countdown in its box panel, and the card as a lower third.
    orow = overlay.locator('#box .row[data-player="a1"]')
    await expect(orow.locator(".countdown")).to_have_text(re.compile(r"^0:0[1-7]$"))
    lower = overlay.locator('#lower .lt[data-type="card.recorded"]')
    # in broadcast words, the rule cited below (cite=1)
    await expect(lower.locator(".lt-headline")).to_have_text("SECOND YELLOW · A1 · 2:00 IN THE BOX")
    await expect(lower.locator(".lt-team")).to_have_text("G1 Away")
    await expect(lower.locator(".lt-cite")).to_have_text("Rule 14 · Second yellow: penalty box")
    await board.screenshot(path=shot("scoreboard-box-countdown"))
    await overlay.screenshot(path=shot("overlay-box-countdown"), omit_background=True)
    await asyncio.sleep(1.6)
    assert seconds(await row.locator(".countdown").inner_text()) < first, "counts down locally"

    # Two minutes of play served: returns at the next stoppage (pushed by the server's tick).
    await expect(row).to_have_attribute("data-eligible", "true", timeout=10_000)
    await expect(row.locator(".status")).to_have_text("returns at next stoppage")
    await expect(orow.locator(".countdown")).to_have_text("returns at next stoppage")
    eligible = overlay.locator('#lower .lt[data-type="box.eligible"]')
    await expect(eligible).to_be_visible(timeout=8000)
    await expect(eligible.locator(".lt-headline")).to_have_text("TIME SERVED · A1 · RETURNS AT NEXT STOPPAGE")
    await board.screenshot(path=shot("scoreboard-returns-at-next-stoppage"))
    await overlay.screenshot(path=shot("overlay-returns-at-next-stoppage"), omit_background=True)

    # The next whistle releases him: out of both box panels, and the overlay says so.
    out = await ump.send({"type": "whistle", "game": "g1"})
    assert "box.release" in [n["type"] for n in out["notices"]]
    await expect(board.locator('#box .box-row[data-player="a1"]')).to_have_count(0)
    await expect(board.locator("#box-away .empty")).to_be_visible()
    await expect(overlay.locator('#box .row[data-player="a1"]')).to_have_count(0)
    release = overlay.locator('#lower .lt[data-type="box.release"]')
    await expect(release).to_be_visible(timeout=10_000)
    await expect(release.locator(".lt-headline")).to_have_text("BACK IN PLAY · A1")
    await expect(release.locator(".lt-cite")).to_have_text("Rule 14 · Second yellow: penalty box")
    await expect(board.locator("#clock")).to_have_attribute("data-running", "false")
    await board.screenshot(path=shot("scoreboard-released"))
    await overlay.screenshot(path=shot("overlay-release-lower-third"), omit_background=True)
    await ump.close()
    await tk.close()


# ------------------------------------------------------------------ transparency


def png_rgba(data: bytes) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGBA, non-interlaced PNG (what Chromium writes) into rows."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, bytearray()
    width = height = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert (depth, color, interlace) == (8, 6, 0), "8-bit RGBA expected"
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    raw = zlib.decompress(bytes(idat))
    stride = width * 4
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind_ = raw[start]
        line = bytearray(raw[start + 1:start + 1 + stride])
        if kind_ == 1:
            for i in range(4, stride):
                line[i] = (line[i] + line[i - 4]) & 0xFF
        elif kind_ == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev, strict=True))
        elif kind_ == 3:
            for i in range(stride):
                left = line[i - 4] if i >= 4 else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind_ == 4:
            for i in range(stride):
                a = line[i - 4] if i >= 4 else 0
                b = prev[i]
                c = prev[i - 4] if i >= 4 else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def alpha(rows: list[bytes], x: int, y: int) -> int:
    return rows[y][x * 4 + 3]


async def test_overlay_is_transparent_around_an_opaque_score_bug(server: Server, page: Page) -> None:
    await server.setup_game()
    tk = await server.device("timekeeper")
    await tk.send({"type": "clock.start", "game": "g1"})
    await page.goto(f"{server.http}/overlay?game=g1")
    await ready(page)
    bug = await page.locator("#bug").bounding_box()
    assert bug is not None and bug["width"] > 100
    png = await page.screenshot(path=shot("overlay-transparent"), omit_background=True)
    width, height, rows = png_rgba(png)
    assert (width, height) == (1280, 720)
    for x, y in [(0, 0), (width - 1, 0), (0, height - 1), (width - 1, height - 1),
                 (width // 2, height // 2)]:
        assert alpha(rows, x, y) == 0, f"pixel {x},{y} is not transparent"
    xs = range(int(bug["x"]) + 2, int(bug["x"] + bug["width"]) - 2)
    ys = range(int(bug["y"]) + 2, int(bug["y"] + bug["height"]) - 2)
    opaque = sum(1 for y in ys for x in xs if alpha(rows, x, y) == 255)
    assert opaque > 0.9 * len(xs) * len(ys), "the score bug is drawn opaque"
    # Nothing else is drawn (the box is empty, no lower third): outside the bug and
    # its shadow every pixel is transparent.
    pad = 32
    x0, x1 = int(bug["x"]) - pad, int(bug["x"] + bug["width"]) + pad
    y0, y1 = int(bug["y"]) - pad, int(bug["y"] + bug["height"]) + pad
    stray = [(x, y) for y in range(0, height, 4) for x in range(0, width, 4)
             if alpha(rows, x, y) and not (x0 <= x <= x1 and y0 <= y <= y1)]
    assert not stray, stray[:10]
    await tk.close()


async def test_overlay_elements_and_position(server: Server, page: Page) -> None:
    await server.setup_game()
    await page.goto(f"{server.http}/overlay?game=g1&elements=bug&position=bottom-right")
    await ready(page)
    assert await page.locator("#box").count() == 0 and await page.locator("#lower").count() == 0
    bug = await page.locator("#bug").bounding_box()
    assert bug is not None and bug["x"] > 640 and bug["y"] > 600
    await expect(page.locator("#bug-home-name")).to_have_text("G1 HOME")
    await expect(page.locator("#bug-home-score")).to_have_text("0")
    await page.screenshot(path=shot("overlay-bug-bottom-right"), omit_background=True)


# ------------------------------------------------------------------ Spanish


async def test_spanish_pages(server: Server, pages: list[Page]) -> None:
    await server.setup_game()
    board, overlay = pages
    await board.goto(f"{server.http}/scoreboard?game=g1&lang=es")
    await overlay.goto(f"{server.http}/overlay?game=g1&lang=es&hold=4")
    await ready(board)
    await ready(overlay)
    ump = await server.device("umpire")
    tk = await server.device("timekeeper")
    await asyncio.sleep(0.3)
    now = now_ms()
    await tk.send({"type": "clock.start", "game": "g1", "at": now - 119_700})
    await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow", "count": 2,
                    "conduct": "striking", "at": now - 119_700})
    await expect(board.locator("#period")).to_have_text("Período 1 de 4")
    await expect(board.locator("#clock-state")).to_have_text("Reloj en marcha")
    row = board.locator('#box .box-row[data-player="h2"]')
    await expect(row.locator(".status")).to_have_text("vuelve en la próxima detención", timeout=5000)
    await expect(board.locator("#box-home h2")).to_contain_text("Área de castigo")
    await expect(overlay.locator('#box .row[data-player="h2"] .countdown')).to_have_text(
        "vuelve en la próxima detención")
    await expect(overlay.locator("#bug-period")).to_have_text("P1")
    lower = overlay.locator('#lower .lt[data-type="card.recorded"]')
    await expect(lower.locator(".lt-headline")).to_have_text("2 TARJETAS AMARILLAS · H2 · 2:00 EN EL ÁREA")
    await expect(lower.locator(".lt-team")).to_have_text("G1 Home")
    await expect(lower.locator(".lt-cite")).to_have_count(0)  # the rule is cited only when asked
    await board.screenshot(path=shot("scoreboard-es"))
    await overlay.screenshot(path=shot("overlay-es"), omit_background=True)
    await ump.close()
    await tk.close()


# ------------------------------------------------------------------ connection


async def test_scoreboard_goes_stale_then_resumes_with_what_it_missed(server: Server, page: Page) -> None:
    """The server drops the socket and the network stays down (reconnects are refused
    by the test's WebSocket route) while a goal is scored: the scoreboard keeps the
    last state, flagged stale; when the network returns it resumes with since/epoch
    and shows the goal."""
    await server.setup_game()
    tk = await server.device("timekeeper")
    ump = await server.device("umpire")
    await tk.send({"type": "clock.start", "game": "g1"})
    down = asyncio.Event()
    urls: list[str] = []

    async def route(ws: WebSocketRoute) -> None:
        urls.append(ws.url)
        if down.is_set():
            await ws.close(code=1011, reason="network down")
            return
        ws.connect_to_server()

    await page.route_web_socket(re.compile(r"/ws/watch"), route)
    await page.goto(f"{server.http}/scoreboard?game=g1")
    await ready(page)
    await expect(page.locator("#home-score")).to_have_text("0")
    await expect(page.locator("#clock")).to_have_attribute("data-running", "true")

    down.set()
    for w in list(server.svc.fanout.watchers):
        await w.ws.close(code=1001, message=b"test: connection lost")
    await expect(page.locator("body")).to_have_attribute("data-stale", "true", timeout=3000)
    await ump.send({"type": "goal", "game": "g1", "team": "home", "player": "h1"})
    await asyncio.sleep(0.8)
    # Still the last state (not blanked, not a new one), marked stale, the clock frozen.
    await expect(page.locator("#home-score")).to_have_text("0")
    await expect(page.locator("body")).to_have_attribute("data-ready", "true")
    await expect(page.locator("#stale-banner")).to_be_visible()
    frozen = await page.locator("#clock").inner_text()
    await asyncio.sleep(1.2)
    assert await page.locator("#clock").inner_text() == frozen, "a stale clock does not run"
    await page.screenshot(path=shot("scoreboard-stale"))

    down.clear()
    await expect(page.locator("#home-score")).to_have_text("1", timeout=15_000)
    await expect(page.locator("body")).to_have_attribute("data-stale", "false")
    resumed = urls[-1]
    assert "since=" in resumed and "epoch=" in resumed, resumed
    await expect(page.locator("#clock")).to_have_attribute("data-running", "false")  # the goal stopped it
    await page.screenshot(path=shot("scoreboard-resumed"))
    await tk.close()
    await ump.close()


async def test_a_silent_connection_is_stale_after_two_heartbeats(server: Server, page: Page) -> None:
    """Frames stop but the socket stays open: no heartbeat for two intervals (the test
    server beats every 0.5 s) flags the data stale, and the page reconnects itself."""
    await server.setup_game()
    silent = asyncio.Event()
    opened: list[str] = []

    async def route(ws: WebSocketRoute) -> None:
        opened.append(ws.url)
        upstream = ws.connect_to_server()

        def forward(message: str | bytes) -> None:
            if not silent.is_set():
                ws.send(message)

        upstream.on_message(forward)

    await page.route_web_socket(re.compile(r"/ws/watch"), route)
    await page.goto(f"{server.http}/scoreboard?game=g1")
    await ready(page)
    await asyncio.sleep(1.0)  # a first heartbeat: the page learns the interval (else it assumes 5 s)
    silent.set()
    await expect(page.locator("body")).to_have_attribute("data-stale", "true", timeout=3000)
    assert len(opened) >= 1
    silent.clear()
    await expect(page.locator("body")).to_have_attribute("data-stale", "false", timeout=10_000)
    assert len(opened) >= 2 and "since=1" in opened[-1], opened


async def test_a_patch_with_a_missing_path_resyncs_from_a_fresh_snapshot(server: Server, page: Page) -> None:
    """The test's WebSocket route stops passing the server's frames while a goal is scored,
    then hands the scoreboard a delta of the next seq whose patch names a player the view
    doesn't have. The scoreboard applies none of it (not the 7 before the bad path), drops
    its copy and its position, subscribes again without since, and shows the fresh
    snapshot's state: the real goal. Deltas go on from there."""
    await server.setup_game()
    ump = await server.device("umpire")
    urls: list[str] = []
    routes: list[WebSocketRoute] = []
    held = asyncio.Event()
    crafted = {"type": "delta", "game": "g1", "seq": 2, "notices": [],
               "patch": [["score.home", 7], ["players.ghost.box", None]]}

    async def route(ws: WebSocketRoute) -> None:
        urls.append(ws.url)
        routes.append(ws)
        first = len(urls) == 1
        upstream = ws.connect_to_server()

        def forward(message: str | bytes) -> None:
            if not (first and held.is_set()):
                ws.send(message)

        upstream.on_message(forward)

    await page.route_web_socket(re.compile(r"/ws/watch"), route)
    await page.goto(f"{server.http}/scoreboard?game=g1")
    await ready(page)
    await expect(page.locator("#home-score")).to_have_text("0")

    held.set()                      # the first socket passes nothing more from the server
    await ump.send({"type": "goal", "game": "g1", "team": "home", "player": "h1"})
    routes[0].send(json.dumps(crafted))
    await expect(page.locator("#home-score")).to_have_text("1", timeout=10_000)
    await expect(page.locator("body")).to_have_attribute("data-stale", "false")
    assert len(urls) == 2, urls
    assert "since=" not in urls[1] and "epoch=" not in urls[1], urls[1]   # a fresh snapshot, not a resume
    await page.screenshot(path=shot("scoreboard-resynced"))

    await ump.send({"type": "goal", "game": "g1", "team": "away", "player": "a1"})
    await expect(page.locator("#away-score")).to_have_text("1")
    await expect(page.locator("#home-score")).to_have_text("1")
    assert len(urls) == 2, urls
    await ump.close()


async def test_scoreboard_without_a_game_says_how_to_use_it(server: Server, page: Page) -> None:
    await page.goto(f"{server.http}/scoreboard")
    await expect(page.locator("#message")).to_contain_text("?game=")
    await page.goto(f"{server.http}/scoreboard?game=nope")
    await expect(page.locator("#message")).to_contain_text("No game “nope” has been set up yet.")


# ------------------------------------------------------------------ the game report


async def test_report_page_screen_and_print(server: Server, page: Page) -> None:
    from ..live.reports.test_report import play

    await play(server)
    await page.set_viewport_size({"width": 1280, "height": 900})
    await page.goto(f"{server.http}/games/g1/report")
    await expect(page.locator("svg.timeline")).to_be_visible()
    box = await page.locator("svg.timeline").bounding_box()
    assert box is not None and box["width"] > 800
    await page.screenshot(path=shot("report"), full_page=True)
    await page.emulate_media(media="print")
    await expect(page.locator(".links")).to_be_hidden()
    await page.screenshot(path=shot("report-print"), full_page=True)
    pdf = await page.pdf(format="A4", print_background=True)
    assert pdf[:5] == b"%PDF-"


# ------------------------------------------------------------------ names, numbers, colours

AIKEN = {"team": "g1-home", "name": "Aiken Arena", "short": "aik",
         "colors": {"primary": "#0b3d2e", "secondary": "#f2c230"}}      # dark: white ink
WELLINGTON = {"team": "g1-away", "name": "Wellington Blue", "short": "wel",
              "colors": {"primary": "#f4f7fc", "secondary": "#1c4fd8"}}  # light: dark ink


def png(width: int, height: int, rgba: tuple[int, int, int, int]) -> bytes:
    """A solid-colour RGBA PNG (a team's logo)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + bytes(rgba) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


async def upload_logo(server: Server, team: str, data: bytes) -> str:
    async with aiohttp.ClientSession() as s, s.post(
            f"{server.http}/api/teams/{team}/logo", data=data,
            headers={"Authorization": f"Bearer {server.admin}", "Content-Type": "image/png"}) as r:
        assert r.status == 201, await r.text()
        sha: str = (await r.json())["logo"]
        return sha


def rgb(hex_colour: str) -> str:
    h = hex_colour.lstrip("#")
    return f"rgb({int(h[0:2], 16)}, {int(h[2:4], 16)}, {int(h[4:6], 16)})"


async def style(page: Page, selector: str, prop: str) -> str:
    got: str = await page.locator(selector).evaluate(f"(n) => getComputedStyle(n).{prop}")
    return got


async def test_registered_names_numbers_and_colours_show_and_update_live(
        server: Server, pages: list[Page]) -> None:
    """Unregistered, the pages show ids. The registrations (made while the pages are open)
    show at once: team names on the scoreboard and the short letters, upper-cased, on the
    overlay's score bug, in the teams' colours (the primary behind, the secondary as the
    accent, the ink by contrast); a carded player is "#7 Núñez" in the box on both and in
    the lower third; a later registration of his number renames him on both, live."""
    await server.setup_game()
    board, overlay = pages
    await board.goto(f"{server.http}/scoreboard?game=g1")
    await overlay.goto(f"{server.http}/overlay?game=g1&hold=30")
    await ready(board)
    await ready(overlay)
    # Nothing registered: the ids (made readable), the stylesheet's own colours.
    await expect(board.locator("#home-name")).to_have_text("G1 Home")
    await expect(board.locator("#home")).to_have_attribute("data-colors", "false")
    await expect(overlay.locator("#bug-home-name")).to_have_text("G1 HOME")
    await expect(overlay.locator("body")).to_have_attribute("data-home-colors", "false")

    admin = await admin_device(server)
    logo = await upload_logo(server, "g1-home", png(24, 16, (242, 194, 48, 255)))
    await admin.send({"type": "team.registered", **AIKEN, "logo": logo})
    await admin.send({"type": "team.registered", **WELLINGTON})
    await admin.send({"type": "player.registered", "player": "a1", "name": "Núñez", "number": 7,
                      "team": "g1-away"})
    await admin.send({"type": "player.registered", "player": "h1", "name": "Ortega", "number": 2})

    # The scoreboard: names, in the teams' colours, each with a readable ink.
    await expect(board.locator("#home-name")).to_have_text("Aiken Arena")
    await expect(board.locator("#away-name")).to_have_text("Wellington Blue")
    await expect(board.locator("#home")).to_have_attribute("data-colors", "true")
    assert await style(board, "#home", "backgroundColor") == rgb("#0b3d2e")
    assert await style(board, "#home", "borderTopColor") == rgb("#f2c230")
    assert await style(board, "#home-name", "color") == "rgb(255, 255, 255)"
    assert await style(board, "#away", "backgroundColor") == rgb("#f4f7fc")
    assert await style(board, "#away-name", "color") == rgb("#0b0f17")
    await expect(board.locator("#box-away h2")).to_have_text("Penalty box · Wellington Blue")
    # The logo, where there is one (served from /logos/{sha}, and loaded).
    for pg, sel in ((board, "#home-logo"), (overlay, "#bug-home-logo")):
        await expect(pg.locator(sel)).to_be_visible()
        await expect(pg.locator(sel)).to_have_attribute("src", f"/logos/{logo}")
        await pg.wait_for_function(f"() => document.querySelector('{sel}').naturalWidth === 24", timeout=5000)
    await expect(board.locator("#away-logo")).to_be_hidden()
    await expect(overlay.locator("#bug-away-logo")).to_be_hidden()
    # The overlay's score bug: the short letters, upper-cased, in the colours.
    await expect(overlay.locator("#bug-home-name")).to_have_text("AIK")
    await expect(overlay.locator("#bug-away-name")).to_have_text("WEL")
    await expect(overlay.locator("body")).to_have_attribute("data-home-colors", "true")
    assert await style(overlay, "#bug-home-name", "backgroundColor") == rgb("#0b3d2e")
    assert await style(overlay, "#bug-home-name", "color") == "rgb(255, 255, 255)"
    assert await style(overlay, "#bug-away-name", "backgroundColor") == rgb("#f4f7fc")
    assert await style(overlay, "#bug-away-name", "color") == rgb("#0b0f17")
    assert await style(overlay, "#bug-away-score", "backgroundColor") == rgb("#1c4fd8")

    ump = await server.device("umpire")
    tk = await server.device("timekeeper")
    await asyncio.sleep(0.3)
    now = now_ms()
    await tk.send({"type": "clock.start", "game": "g1", "at": now - 60_000})
    await ump.send({"type": "card", "game": "g1", "player": "a1", "color": "yellow", "count": 2,
                    "conduct": "rough_play", "at": now - 1_000})
    row = board.locator('#box .box-row[data-player="a1"]')
    await expect(row.locator(".who")).to_have_text("#7 Núñez")
    orow = overlay.locator('#box .row[data-player="a1"]')
    await expect(orow.locator(".who")).to_have_text("#7 NÚÑEZ")
    lower = overlay.locator('#lower .lt[data-type="card.recorded"]')
    await expect(lower.locator(".lt-headline")).to_have_text("2 YELLOW CARDS · #7 NÚÑEZ · 2:00 IN THE BOX")
    await expect(lower.locator(".lt-team")).to_have_text("Wellington Blue")
    assert await style(overlay, '#box .row[data-player="a1"]', "borderLeftColor") == rgb("#1c4fd8")
    assert await style(board, "#box-away", "borderLeftColor") == rgb("#1c4fd8")
    await board.screenshot(path=shot("scoreboard-registered-names"))
    await overlay.screenshot(path=shot("overlay-registered-names"), omit_background=True)

    # A later registration (a new number) renames him on both pages, live.
    await admin.send({"type": "player.registered", "player": "a1", "name": "Núñez", "number": 9,
                      "team": "g1-away"})
    await expect(row.locator(".who")).to_have_text("#9 Núñez")
    await expect(orow.locator(".who")).to_have_text("#9 NÚÑEZ")
    await expect(board.locator("#box-home .empty")).to_be_visible()
    for d in (admin, ump, tk):
        await d.close()


async def test_an_unregistered_player_in_a_registered_team_shows_by_id(server: Server, page: Page) -> None:
    """Only what is registered is named: a player with no registration stays his id."""
    await server.setup_game()
    admin = await admin_device(server)
    await admin.send({"type": "team.registered", **AIKEN})
    await page.goto(f"{server.http}/scoreboard?game=g1")
    await ready(page)
    await expect(page.locator("#home-name")).to_have_text("Aiken Arena")
    await expect(page.locator("#away-name")).to_have_text("G1 Away")
    await expect(page.locator("#away")).to_have_attribute("data-colors", "false")
    ump = await server.device("umpire")
    await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "red", "conduct": "striking"})
    await expect(page.locator('#box .sentoff-row[data-player="h2"] .who')).to_have_text("H2")
    for d in (admin, ump):
        await d.close()


async def test_a_display_paired_by_link_follows_a_private_service(browser: Browser, tmp_path: Path) -> None:
    """Without public viewing, the committee pairs a scoreboard by a link whose fragment
    carries a display token (/scoreboard?game=G#pair=<token>): the page keeps the token, takes
    the fragment out of the address bar, sends the token in a frame (never in a URL) and shows
    the game; reloaded without the fragment, it uses the token it kept."""
    async with RunningServer(tmp_path, public_watch=False) as srv:
        await srv.setup_game()
        token = srv.token("display", "board-1", game="g1")
        context = await browser.new_context(viewport={"width": 1280, "height": 720})
        try:
            page = await context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda err: errors.append(str(err)))
            urls: list[str] = []
            page.on("request", lambda r: urls.append(r.url))
            page.on("websocket", lambda ws: urls.append(ws.url))
            await page.goto(f"{srv.http}/scoreboard?game=g1#pair={token}")
            await ready(page)
            await expect(page.locator("#home-name")).to_have_text("G1 Home")
            assert "#" not in page.url and token not in page.url and page.url.endswith("?game=g1")
            assert await page.evaluate("localStorage.getItem('arena.display.token')") == token
            await page.reload()
            await ready(page)
            assert urls and not [u for u in urls if token in u or token[-20:] in u]
            assert not errors, errors
        finally:
            await context.close()
