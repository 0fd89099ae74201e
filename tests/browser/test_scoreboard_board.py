"""The arena scoreboard read from the stands, in a real Chromium against the real service:
every visible text is at least 1/30 of the screen's shorter side (36 px at 1080p) and at
least 7:1 against the opaque colour actually behind it, at 1080p, 720p and on a portrait
screen, in English and Spanish, team colours included (a colour no ink reaches 7:1 on puts
the texts on a neutral plate); a first yellow leaves a trace (the last-event line and a
count beside the player); an empty box takes little room and a busy one takes what it
needs; carried suspensions and mount countdowns have their own panels; the interval after
a horn is counted down until the next start. Screenshots go to ``artifacts/screenshots``."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Browser, Page, ViewportSize, expect

from stream.live.ops.wallclock import now_ms

from ..live.conftest import Server, admin_device
from .conftest import shot

HD: ViewportSize = {"width": 1920, "height": 1080}
HD720: ViewportSize = {"width": 1280, "height": 720}
PORTRAIT: ViewportSize = {"width": 1080, "height": 1920}

#: A red no ink reaches 7:1 on (white 5.9:1, near-black 3.5:1): the texts go on a plate.
SCARLET = {"team": "g1-home", "name": "Aiken Arena", "short": "aik",
           "colors": {"primary": "#c8102e", "secondary": "#ffffff"}}
#: A light colour: dark ink, 17:1.
WELLINGTON = {"team": "g1-away", "name": "Wellington Blue", "short": "wel",
              "colors": {"primary": "#f4f7fc", "secondary": "#1c4fd8"}}
NAMES = {"h1": ("Ortega", 2), "h2": ("Pieres", 3), "h3": ("Heguy", 4),
         "a1": ("Núñez", 7), "a2": ("Salas", 5), "a3": ("Beck", 8)}


@pytest.fixture
async def board(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport=HD)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    yield page
    await context.close()
    assert not errors, errors


async def ready(page: Page) -> None:
    await expect(page.locator("body")).to_have_attribute("data-ready", "true", timeout=10_000)
    await expect(page.locator("body")).to_have_attribute("data-stale", "false", timeout=10_000)


def seconds(text: str) -> int:
    m = re.search(r"(\d+):(\d\d)", text)
    assert m, text
    return int(m[1]) * 60 + int(m[2])


async def register(server: Server) -> None:
    admin = await admin_device(server)
    await admin.send({"type": "team.registered", **SCARLET})
    await admin.send({"type": "team.registered", **WELLINGTON})
    for player, (name, number) in NAMES.items():
        await admin.send({"type": "player.registered", "player": player, "name": name, "number": number})
    await admin.close()


# ------------------------------------------------------------------ the audit, from the page

#: For every visible text node: its font size, its colour and the opaque colour behind it
#: (the first opaque background up the tree, with any translucent ones composed over it),
#: the opacity it is drawn with, and anything that makes the background unknowable
#: (a gradient or an image, a filter).
AUDIT = """() => {
  const parse = (c) => {
    const m = /rgba?\\(([^)]+)\\)/.exec(c);
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const lum = (c) => {
    const f = (x) => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent.trim();
    if (!text) continue;
    const e = n.parentElement;
    if (!e.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const r = range.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const cs = getComputedStyle(e);
    const layers = [];
    let opacity = 1, problem = "";
    for (let a = e; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      opacity *= Number(s.opacity);
      if (s.filter !== "none") problem = `filter on ${a.tagName}#${a.id}.${a.className}`;
      if (!layers.some((l) => l[3] >= 1)) {
        if (s.backgroundImage !== "none") problem = `background image on ${a.tagName}#${a.id}.${a.className}`;
        const bg = parse(s.backgroundColor);
        if (bg && bg[3] > 0) layers.push(bg);
      }
    }
    let base = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) base = over(layers[i], base);
    const fg = over(parse(cs.color), base);
    const [l1, l2] = [lum(fg), lum(base)];
    out.push({ text, size: parseFloat(cs.fontSize),
      ratio: (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05),
      opacity, problem, where: `${e.tagName.toLowerCase()}#${e.id}.${e.className}`,
      fg: fg.slice(0, 3).map(Math.round), bg: base.slice(0, 3).map(Math.round),
      inside: r.left >= -1 && r.top >= -1 && r.bottom <= innerHeight + 1 && r.right <= innerWidth + 1 });
  }
  return out;
}"""


async def audit(page: Page, label: str) -> list[dict[str, Any]]:
    """Every visible text: ≥ 1/30 of the shorter side, ≥ 7:1, drawn opaque, inside the screen."""
    await page.wait_for_timeout(150)  # a resize's refit
    vp = page.viewport_size
    assert vp is not None
    floor = min(vp["width"], vp["height"]) / 30
    texts: list[dict[str, Any]] = await page.evaluate(AUDIT)
    assert len(texts) > 10, texts
    small = [(t["text"], t["where"], round(t["size"], 1)) for t in texts if t["size"] < floor]
    assert not small, f"{label}: under {floor:.1f} px: {small}"
    dim = [(t["text"], t["where"], round(t["ratio"], 2), t["fg"], t["bg"]) for t in texts if t["ratio"] < 7]
    assert not dim, f"{label}: under 7:1: {dim}"
    unknown = [(t["text"], t["problem"]) for t in texts if t["problem"] or t["opacity"] < 1]
    assert not unknown, f"{label}: {unknown}"
    cut = [(t["text"], t["where"]) for t in texts if not t["inside"]]
    assert not cut, f"{label}: outside the screen: {cut}"
    return texts


def said(texts: list[dict[str, Any]], text: str) -> dict[str, Any]:
    found = [t for t in texts if t["text"] == text]
    assert found, (text, [t["text"] for t in texts])
    return found[0]


# ------------------------------------------------------------------ a busy game


async def busy_game(server: Server) -> list[Any]:
    """A tournament's second game: a2, sent off in g1, starts it suspended (carried); h1 has
    a first yellow, a1 two (in the box), h2 a red (sent off, no substitute for a while), a3's
    mount is being replaced. Both teams registered: the home one in a colour that needs a
    plate. Returns the devices (to close)."""
    status, reply = await server.api("POST", "/api/events", {
        "id": "ev", "event": "cup", "name": "Copa de Otoño", "class": "uspa", "handicap": 8,
        "teams": ["g1-home", "g1-away"]})
    assert status == 201, reply
    await server.setup_game("g1")
    tk1 = await server.device("timekeeper", "g1")
    ump1 = await server.device("umpire", "g1")
    await tk1.send({"type": "clock.start", "game": "g1"})
    await ump1.send({"type": "card", "game": "g1", "player": "a2", "color": "red", "conduct": "striking"})
    await ump1.send({"type": "game.end", "game": "g1"})
    await server.setup_game("g2", teams={
        "home": {"team": "g1-home", "players": ["h1", "h2", "h3"], "subs": ["h4"]},
        "away": {"team": "g1-away", "players": ["a1", "a2", "a3"], "subs": ["a4"]}})
    await register(server)
    tk = await server.device("timekeeper", "g2")
    ump = await server.device("umpire", "g2")
    await asyncio.sleep(0.3)
    now = now_ms()
    start = await tk.send({"type": "clock.start", "game": "g2", "at": now - 100_000})
    assert "obligation.applied" in [n["type"] for n in start["notices"]]
    await ump.send({"type": "card", "game": "g2", "player": "h1", "color": "yellow", "conduct": "arguing",
                    "at": now - 90_000})
    await ump.send({"type": "card", "game": "g2", "player": "a1", "color": "yellow", "count": 2,
                    "conduct": "rough_play", "at": now - 60_000})
    await ump.send({"type": "card", "game": "g2", "player": "h2", "color": "red", "conduct": "striking",
                    "at": now - 30_000})
    await ump.send({"type": "mount.removed", "game": "g2", "player": "a3", "reason": "unfit"})
    return [tk1, ump1, tk, ump]


async def test_every_text_reads_from_the_stands(server: Server, board: Page) -> None:
    """Sizes and contrast computed from the page: 1080p, 720p and portrait, English and
    Spanish, a busy game with every kind of text (clause badges, PLAY TIME OWED, PLAYING
    SHORT, 3 ON THE FIELD, yellows, the last event, carried, mounts)."""
    devices = await busy_game(server)
    await board.goto(f"{server.http}/scoreboard?game=g2")
    await ready(board)
    await expect(board.locator('#box .box-row[data-player="a1"] .status')).to_have_text("play time owed")
    await expect(board.locator("#mounts .mount-row")).to_have_count(1)
    await expect(board.locator("#carried .carried-row")).to_have_count(1)
    await expect(board.locator("#last-event")).to_contain_text("Mount replacement · #8 Beck")
    await expect(board.locator("#event")).to_have_text("Copa de Otoño · A1")  # the event's name

    texts = await audit(board, "1080p")
    # What the issue named is there, and checked: ≥ 36 px and ≥ 7:1 at 1080p.
    for text in ("play time owed", "R6", "R7", "R17", "Playing short", "Suspended for this game"):
        assert said(texts, text)["size"] >= 36
    # The scarlet home team: no ink reaches 7:1 on it, so the name and the score are on a plate.
    await expect(board.locator("#home")).to_have_attribute("data-plate", "true")
    await expect(board.locator("#away")).to_have_attribute("data-plate", "false")
    name = said(texts, "Aiken Arena")
    assert name["bg"] != [200, 16, 46] and name["ratio"] >= 7
    assert said(texts, "Wellington Blue")["bg"] == [244, 247, 252]   # its own colour, dark ink
    home = await board.locator("#home").evaluate("(n) => getComputedStyle(n).backgroundColor")
    assert home == "rgb(200, 16, 46)", "the colour stays, around the plate"
    landscape = await geometry(board)
    assert landscape["home"]["right"] <= landscape["center"]["left"] <= landscape["center"]["right"] \
        <= landscape["away"]["left"], landscape
    await board.screenshot(path=shot("scoreboard-board-1080p"))

    await board.set_viewport_size(HD720)
    await audit(board, "720p")
    assert said(await board.evaluate(AUDIT), "play time owed")["size"] >= 24
    await board.screenshot(path=shot("scoreboard-board-720p"))

    await board.set_viewport_size(PORTRAIT)
    await expect(board.locator("body")).to_have_attribute("data-layout", "portrait")
    await board.screenshot(path=shot("scoreboard-board-portrait"))
    await audit(board, "portrait")
    tall = await geometry(board)
    # The clock on top, the teams side by side below it, the box panels stacked.
    assert tall["center"]["bottom"] <= min(tall["home"]["top"], tall["away"]["top"]), tall
    assert tall["home"]["right"] <= tall["away"]["left"], tall
    assert tall["box-home"]["bottom"] <= tall["box-away"]["top"], tall

    await board.set_viewport_size(HD)
    await board.goto(f"{server.http}/scoreboard?game=g2&lang=es")
    await ready(board)
    await expect(board.locator('#box .box-row[data-player="a1"] .status')).to_have_text(
        "tiempo de juego debido")
    await expect(board.locator("#last-event")).to_contain_text("Reemplazo de caballo · #8 Beck")
    await audit(board, "1080p es")
    await board.screenshot(path=shot("scoreboard-board-1080p-es"))
    for d in devices:
        await d.close()


async def geometry(page: Page) -> dict[str, dict[str, float]]:
    got: dict[str, dict[str, float]] = await page.evaluate("""() => Object.fromEntries(
        ["home", "center", "away", "box-home", "box-away", "scoreline", "box", "events"].map((id) => {
          const n = id === "center" ? document.querySelector(".center") : document.getElementById(id);
          const r = n.getBoundingClientRect();
          return [id, { top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height }];
        }))""")
    return got


async def test_carried_suspensions_and_mounts_have_their_own_panels(server: Server, board: Page) -> None:
    devices = await busy_game(server)
    await board.goto(f"{server.http}/scoreboard?game=g2")
    await ready(board)
    carried = board.locator("#carried")
    await expect(carried).to_be_visible()
    await expect(carried.locator("h2")).to_have_text("Carried into this game")
    row = carried.locator('.carried-row[data-player="a2"]')
    await expect(row.locator(".who")).to_have_text("#5 Salas")
    await expect(row.locator(".what")).to_have_text("suspended · from G1")
    await expect(row.locator(".clause")).to_have_text("R6")
    mounts = board.locator("#mounts")
    await expect(mounts).to_be_visible()
    await expect(mounts.locator("h2")).to_have_text("Mount replacement")
    mount = mounts.locator('.mount-row[data-player="a3"]')
    await expect(mount.locator(".who")).to_have_text("#8 Beck")
    await expect(mount.locator(".countdown")).to_have_text(re.compile(r"^[45]:\d\d$"))
    first = seconds(await mount.locator(".countdown").inner_text())
    # Not under "Penalty box": the box panels hold the box and the sent off only.
    await expect(board.locator("#box .mount-row")).to_have_count(0)
    await expect(board.locator('#box [data-player="a3"]')).to_have_count(0)
    await expect(board.locator('#box-away .box-row[data-player="a1"]')).to_be_visible()
    await expect(board.locator('#box-home .sentoff-row[data-player="h2"]')).to_be_visible()
    # Their own places: below the box, side by side at 1080p, nothing cut off.
    boxes = await board.evaluate("""() => ["box", "mounts", "carried"].map((id) => {
        const r = document.getElementById(id).getBoundingClientRect();
        return [r.top, r.bottom, r.left]; })""")
    (_, box_bottom, _), (m_top, m_bottom, m_left), (c_top, _, c_left) = boxes
    assert m_top >= box_bottom and c_top >= box_bottom and m_left < c_left, boxes
    assert m_bottom <= HD["height"], boxes
    await asyncio.sleep(1.2)
    assert seconds(await mount.locator(".countdown").inner_text()) < first, "the mount counts down"
    # Replaced: the panel goes.
    await devices[3].send({"type": "mount.replaced", "game": "g2", "player": "a3"})
    await expect(mounts).to_be_hidden()
    await board.screenshot(path=shot("scoreboard-board-carried-only"))
    for d in devices:
        await d.close()


# ------------------------------------------------------------------ a first yellow


async def test_a_first_yellow_leaves_a_trace(server: Server, board: Page) -> None:
    """The most common card: no box, no penalty on the board, but the last-event line says
    it with the player's name, and the count shows beside him until the game's end; it is
    still there after a reload (the snapshot's recent notices)."""
    await server.setup_game()
    await register(server)
    await board.goto(f"{server.http}/scoreboard?game=g1")
    await ready(board)
    await expect(board.locator("#events")).to_be_hidden()
    await expect(board.locator("#home-yellows li")).to_have_count(0)
    tk = await server.device("timekeeper")
    ump = await server.device("umpire")
    await tk.send({"type": "clock.start", "game": "g1"})
    await ump.send({"type": "card", "game": "g1", "player": "h1", "color": "yellow", "conduct": "arguing"})

    last = board.locator("#last-event")
    await expect(last).to_have_text("Yellow card · #2 Ortega · Penalty to Wellington Blue")
    await expect(last).to_have_attribute("data-icon", "yellow")
    await expect(last.locator(".yc")).to_be_visible()
    count = board.locator('#home-yellows li[data-player="h1"]')
    await expect(count.locator(".n")).to_have_text("1")
    await expect(count.locator(".who")).to_have_text("#2 Ortega")
    await expect(count.locator(".yc")).to_be_visible()
    await expect(board.locator("#box-home .empty")).to_be_visible()  # no box for a first yellow
    await board.screenshot(path=shot("scoreboard-board-first-yellow"))

    # A second yellow to another player: the count, and the line says it in full.
    await ump.send({"type": "card", "game": "g1", "player": "a1", "color": "yellow", "conduct": "arguing"})
    await ump.send({"type": "card", "game": "g1", "player": "a1", "color": "yellow", "conduct": "arguing"})
    await expect(last).to_have_text("Second yellow · #7 Núñez · 2:00 in the box")
    await expect(board.locator('#away-yellows li[data-player="a1"] .n')).to_have_text("2")
    earlier = board.locator("#earlier-events li")
    await expect(earlier.first).to_have_text("Yellow card · #7 Núñez · Penalty to Aiken Arena")
    await expect(earlier.nth(1)).to_have_text("Yellow card · #2 Ortega · Penalty to Wellington Blue")

    # A reload (a new screen, a restart of the browser): the trace is still there.
    await board.reload()
    await ready(board)
    await expect(last).to_have_text("Second yellow · #7 Núñez · 2:00 in the box")
    await expect(board.locator('#home-yellows li[data-player="h1"] .n')).to_have_text("1")

    # In Spanish.
    await board.goto(f"{server.http}/scoreboard?game=g1&lang=es")
    await ready(board)
    await expect(last).to_have_text("Segunda amarilla · #7 Núñez · 2:00 en el área")
    await expect(earlier.nth(1)).to_have_text("Tarjeta amarilla · #2 Ortega · Penal para Wellington Blue")
    await tk.close()
    await ump.close()


# ------------------------------------------------------------------ the box's room


async def test_an_empty_box_takes_little_room_and_a_busy_one_what_it_needs(
        server: Server, board: Page) -> None:
    await server.setup_game()
    await board.goto(f"{server.http}/scoreboard?game=g1")
    await ready(board)
    await expect(board.locator("#box")).to_have_attribute("data-empty", "true")
    empty = await geometry(board)
    assert empty["box"]["height"] < 0.15 * HD["height"], empty["box"]
    assert empty["scoreline"]["height"] > 0.6 * HD["height"], empty["scoreline"]
    texts = await audit(board, "empty box")
    for text in ("3 on the field", "No one in the penalty box", "Penalty box · G1 Home"):
        assert said(texts, text)["size"] >= 36
    score_empty = await font_size(board, "#home-score")
    await board.screenshot(path=shot("scoreboard-board-empty-box"))

    tk = await server.device("timekeeper")
    ump = await server.device("umpire")
    await asyncio.sleep(0.3)
    now = now_ms()
    await tk.send({"type": "clock.start", "game": "g1", "at": now - 30_000})
    for player in ("a1", "a2", "h1"):
        await ump.send({"type": "card", "game": "g1", "player": player, "color": "yellow", "count": 2,
                        "conduct": "rough_play", "at": now - 1_000})
    await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "red", "conduct": "striking"})
    await expect(board.locator("#box .box-row")).to_have_count(3)
    await expect(board.locator("#box")).to_have_attribute("data-empty", "false")
    await board.wait_for_timeout(200)
    busy = await geometry(board)
    assert busy["box"]["height"] > 2.5 * empty["box"]["height"], (busy["box"], empty["box"])
    # The score line gives the room and keeps a big score; everything fits on the screen.
    assert 0.3 * HD["height"] < busy["scoreline"]["height"] < empty["scoreline"]["height"], busy
    assert await font_size(board, "#home-score") < score_empty
    assert await font_size(board, "#home-score") > 0.15 * HD["height"]
    await audit(board, "busy box")
    await board.screenshot(path=shot("scoreboard-board-busy-box"))
    await tk.close()
    await ump.close()


async def font_size(page: Page, selector: str) -> float:
    size: str = await page.locator(selector).evaluate("(n) => getComputedStyle(n).fontSize")
    return float(size.removesuffix("px"))


# ------------------------------------------------------------------ the interval


async def test_the_interval_is_counted_down_from_the_horn_to_the_next_start(
        server: Server, board: Page) -> None:
    await server.setup_game()
    await board.goto(f"{server.http}/scoreboard?game=g1")
    await ready(board)
    interval = board.locator("#interval")
    tk = await server.device("timekeeper")
    await tk.send({"type": "clock.start", "game": "g1"})
    await expect(board.locator("#clock")).to_have_attribute("data-running", "true")
    await expect(interval).to_be_hidden()

    horn = await tk.send({"type": "horn", "game": "g1"})
    assert horn["notices"], horn
    await expect(interval).to_be_visible()
    await expect(interval).to_have_text(re.compile(r"^Interval (4:00|3:5\d)$"))
    await expect(board.locator("#period")).to_have_text("End of period 1")
    first = seconds(await interval.inner_text())
    await asyncio.sleep(1.3)
    assert seconds(await interval.inner_text()) < first, "counts down"
    texts = await audit(board, "interval")
    assert said(texts, await interval.text_content() or "")["size"] >= 36
    await board.screenshot(path=shot("scoreboard-board-interval"))

    await tk.send({"type": "clock.start", "game": "g1"})
    await expect(interval).to_be_hidden()
    await expect(board.locator("#period")).to_have_text("Period 2 of 4")
    await expect(board.locator("#clock-state")).to_have_text("Clock running")

    # Half time is a long interval (10 minutes), and Spanish says "Intervalo".
    await tk.send({"type": "horn", "game": "g1"})
    await board.goto(f"{server.http}/scoreboard?game=g1&lang=es")
    await ready(board)
    await expect(interval).to_have_text(re.compile(r"^Intervalo (10:00|9:5\d)$"))
    await tk.close()


async def test_a_long_name_in_the_box_is_cut_and_never_runs_into_the_time_owed(server: Server,
                                                                                board: Page) -> None:
    devices = await busy_game(server)
    status, ack = await server.api("POST", "/api/players", {
        "player": "a1", "name": "Maximiliano Bartolomé de la Santísima Trinidad Echeverría", "number": 11})
    assert status == 201, ack
    await board.goto(f"{server.http}/scoreboard?game=g2")
    await ready(board)
    row = '#box .box-row[data-player="a1"]'
    await expect(board.locator(row).locator(".who .name")).to_contain_text("MAXIMILIANO", ignore_case=True)
    small: ViewportSize = {"width": 800, "height": 600}
    for viewport in (HD, HD720, small):
        await board.set_viewport_size(viewport)
        # Read once the board has drawn itself again for the new size (its resize handler
        # runs before the next frames), in one task: a row the handler replaced is never read.
        geometry = await board.evaluate("""async (row) => {
            await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
            const r = document.querySelector(row);
            const box = (sel) => r.querySelector(sel).getBoundingClientRect();
            const name = r.querySelector('.who .name');
            const status = r.querySelector('.status');
            return {who: box('.who').right, countdown: box('.countdown').left, clause: box('.clause').left,
                    status: status.textContent ? box('.status') : null, whoBox: box('.who'),
                    cut: name.scrollWidth > name.clientWidth, ellipsis: getComputedStyle(name).textOverflow};
        }""", row)
        assert geometry["who"] <= geometry["countdown"] + 0.5, (viewport, geometry)
        assert geometry["who"] <= geometry["clause"] + 0.5, (viewport, geometry)
        assert geometry["cut"] and geometry["ellipsis"] == "ellipsis", (viewport, geometry)
        status, who = geometry["status"], geometry["whoBox"]
        if status is not None:   # beside the name (a dense layout) or under it: never over it
            apart = status["left"] >= who["right"] - 0.5 or status["top"] >= who["bottom"] - 0.5
            assert apart, (viewport, geometry)
    # The team panel's yellows line names him too, cut inside the panel.
    line = board.locator('#away .yellows li[data-player="a1"]')
    inside = await line.evaluate("(li) => { const p = li.closest('.team').getBoundingClientRect(); "
                                 "const b = li.getBoundingClientRect(); return b.left >= p.left - 0.5 "
                                 "&& b.right <= p.right + 0.5; }")
    assert inside
    await board.screenshot(path=shot("scoreboard-board-long-name"))
    for d in devices:
        await d.close()
