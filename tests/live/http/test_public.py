"""The tournament in public (docs/public.md), from outside, on a real service on loopback:
the front door, an event's page, a team's page and their JSON (with ETags), the calendars
(read back by the ``icalendar`` library: stable UIDs across a schedule change), the public
report (no device, no official's entry, no alert, no committee reason), the byte budget of a
day's page, and a service run without public pages."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import aiohttp
import icalendar

from ..conftest import RunningServer, Server, admin_device

T = 1_827_684_000_000   # 2027-12-01 18:00 UTC: a day to come (nothing runs late yet)
HOUR = 3_600_000


def hhmm(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%H:%M")


async def get(server: Server, path: str, **headers: str) -> tuple[int, str, dict[str, str]]:
    async with aiohttp.ClientSession() as s, s.get(server.http + path, headers=headers) as r:
        return r.status, await r.text(), {k.lower(): v for k, v in r.headers.items()}


async def an_event(server: Server, games: int = 2, *, event: str = "cup", name: str = "Copa de Otoño",
                   **setup: Any) -> None:
    """``event`` with its teams registered (names, colours) and ``games`` games an hour apart on
    arena a1, the first at T."""
    teams = [f"t{i}" for i in range(games * 2)]
    status, reply = await server.api("POST", "/api/events", {
        "id": f"ev-{event}", "event": event, "name": name, "class": "uspa", "handicap": 8, "teams": teams,
        **setup})
    assert status == 201, reply
    admin = await admin_device(server)
    for i, t in enumerate(teams):
        await admin.send({"type": "team.registered", "team": t, "name": f"Team {chr(65 + i)} Polo",
                          "short": f"t{i}x", "colors": {"primary": "#0b3d91", "secondary": "#ffd21f"}})
    await admin.close()
    for g in range(games):
        await server.setup_game(f"{event}{g}", event=event, sides=(teams[2 * g], teams[2 * g + 1]),
                                starts_at=T + g * HOUR)


async def test_the_front_door_and_the_event_page_name_teams_in_the_order_of_play(server: Server) -> None:
    await an_event(server)
    status, page, headers = await get(server, "/")
    assert status == 200 and "Copa de Otoño" in page and "Team A Polo" in page, page
    assert "t0" not in re.sub(r'(href|data-[a-z]+)="[^"]*"', "", page), "names, never ids"
    assert "frame-ancestors" not in headers["content-security-policy"], "a club may embed it"
    status, page, _ = await get(server, "/events/cup")
    assert status == 200
    assert page.index("Team A Polo") < page.index("Team C Polo"), "in the order of play"
    assert hhmm(T) in page and hhmm(T + HOUR) in page and "Times in UTC" in page, page
    status, page, _ = await get(server, "/events/cup?lang=es")
    assert 'lang="es"' in page and "Orden de juego" in page and "Horarios en UTC" in page
    status, page, _ = await get(server, "/teams/t2")
    assert status == 200 and "Team C Polo" in page, page
    assert f"Next: {hhmm(T + HOUR)}, Arena a1, v Team D Polo" in page, page


async def test_a_goal_changes_the_json_and_its_etag_and_an_unchanged_one_answers_304(server: Server) -> None:
    await an_event(server, 1)
    status, body, headers = await get(server, "/api/public/events/cup")
    tag = headers["etag"]
    assert status == 200 and tag.startswith('"')
    status, _, again = await get(server, "/api/public/events/cup", **{"If-None-Match": tag})
    assert status == 304 and again["etag"] == tag
    tk, ump = await server.device("timekeeper", game="cup0"), await server.device("umpire", game="cup0")
    await tk.send({"type": "clock.start", "game": "cup0"})
    await ump.send({"type": "goal", "game": "cup0", "team": "away"})
    await tk.close()
    await ump.close()
    status, body, headers = await get(server, "/api/public/events/cup", **{"If-None-Match": tag})
    assert status == 200 and headers["etag"] != tag and '"score":{"home":0,"away":1}' in body, body


async def test_the_calendar_parses_and_keeps_its_uids_across_a_schedule_change(server: Server) -> None:
    await an_event(server)
    status, text, headers = await get(server, "/events/cup.ics")
    assert status == 200 and headers["content-type"].startswith("text/calendar")
    before = {str(v["UID"]): v for v in icalendar.Calendar.from_ical(text).walk("VEVENT")}
    assert len(before) == 2 and all(str(v["LOCATION"]) == "Arena a1" for v in before.values())
    status, ack = await server.api("POST", "/api/games/cup1/schedule", {"starts_at": T + 3 * HOUR})
    assert status == 201, ack
    _, text, _ = await get(server, "/events/cup.ics")
    after = {str(v["UID"]): v for v in icalendar.Calendar.from_ical(text).walk("VEVENT")}
    assert set(after) == set(before), "a change updates an entry, never adds one"
    moved = next(u for u in after if u.startswith("game-cup1@"))
    start = after[moved].decoded("DTSTART")
    assert isinstance(start, dt.datetime) and start.timestamp() * 1000 == T + 3 * HOUR
    assert int(after[moved].decoded("SEQUENCE")) > int(before[moved].decoded("SEQUENCE"))
    status, text, _ = await get(server, "/teams/t0.ics")
    assert status == 200 and len(icalendar.Calendar.from_ical(text).walk("VEVENT")) == 1


async def test_the_public_report_names_no_device_no_official_and_no_alert(server: Server) -> None:
    await an_event(server, 1)
    ump = await server.device("umpire", game="cup0", name="secret-handheld-7")
    tk = await server.device("timekeeper", game="cup0")
    await tk.send({"type": "clock.start", "game": "cup0"})
    await tk.send({"type": "clock.start", "game": "cup0"})      # an alert: the clock already runs
    await ump.send({"type": "card", "game": "cup0", "player": "h1", "color": "yellow", "conduct": "arguing"})
    await ump.close()
    await tk.close()
    _, full, _ = await get(server, "/games/cup0/report")
    status, public, _ = await get(server, "/games/cup0/public")
    assert "secret-handheld-7" in full, "the full report names the device that entered the card"
    assert status == 200 and "secret-handheld-7" not in public and "timekeeper-" not in public
    assert "Yellow" in public or "yellow" in public


async def test_a_day_of_sixteen_games_fits_the_byte_budget(server: Server) -> None:
    """The first paint on a slow link: a day's event page under 64 KiB, its style and script
    under 24 KiB (docs/public.md, "Poor connection")."""
    await an_event(server, 16)
    _, page, _ = await get(server, "/events/cup")
    assert len(page.encode()) <= 64 * 1024, len(page.encode())
    _, css, _ = await get(server, "/clients/public/public.css")
    _, js, _ = await get(server, "/clients/public/public.js")
    assert len(css.encode()) + len(js.encode()) <= 24 * 1024


async def test_without_public_pages_every_public_route_answers_404(tmp_path: Path) -> None:
    async with RunningServer(tmp_path, public_pages=False) as server:
        await an_event(server, 1)
        for path in ("/", "/events/cup", "/events/cup/scores", "/teams/t0", "/events/cup.ics",
                     "/teams/t0.ics", "/api/public", "/api/public/events/cup", "/api/public/teams/t0",
                     "/games/cup0/public"):
            status, _, _ = await get(server, path)
            assert status == 404, path
        status, _, _ = await get(server, "/scoreboard?game=cup0")
        assert status == 200, "the displays stay"


def game_card(page: str, game: str) -> str:
    start = page.index(f'<article class="game" data-game="{game}"')
    return page[start:page.index("</article>", start)]


async def test_a_game_that_overruns_gives_the_next_one_an_expected_start(server: Server) -> None:
    """Register A35, from outside: the first game on the arena begins half an hour late; the
    second, planned an hour after the first, is shown "not before about" its expected start,
    on the event page and on its teams' pages; the first shows none."""
    now = int(dt.datetime.now(dt.UTC).timestamp() * 1000)
    first = now - 30 * 60_000
    await an_event(server, 0)
    for g, start in (("cup0", first), ("cup1", first + HOUR)):
        await server.setup_game(g, event="cup", sides=("t0", "t1") if g == "cup0" else ("t2", "t3"),
                                starts_at=start)
    tk = await server.device("timekeeper", game="cup0")
    await tk.send({"type": "clock.start", "game": "cup0"})
    await tk.close()
    _, page, _ = await get(server, "/events/cup")
    assert "not before about" not in game_card(page, "cup0")
    late = game_card(page, "cup1")
    shown = re.search(r"not before about (\d\d:\d\d)", late)
    assert shown is not None, late
    _, data, _ = await get(server, "/api/public/events/cup")
    doc = {g["game"]: g for g in __import__("json").loads(data)["games"]}
    assert doc["cup1"]["late"] and doc["cup1"]["expected_start"] > first + HOUR, doc["cup1"]
    assert shown.group(1) == hhmm(doc["cup1"]["expected_start"])
    _, team, _ = await get(server, "/teams/t2")
    assert f"(not before about {shown.group(1)})" in team, team


async def test_a_private_event_is_on_no_public_page_and_times_are_in_the_event_s_zone(server: Server) -> None:
    await an_event(server, 1, event="open", name="Open Day", timezone="America/Chicago")
    await an_event(server, 1, event="priv", name="Members Only", private=True)
    _, front, _ = await get(server, "/")
    assert "Open Day" in front and "Members Only" not in front
    for path in ("/events/priv", "/api/public/events/priv", "/events/priv.ics"):
        status, body, _ = await get(server, path)
        assert status == 404 and "unknown_event" in body, (path, body)
    status, body, _ = await get(server, "/games/priv0/public")
    assert status == 404 and "unknown_game" in body
    _, page, _ = await get(server, "/events/open")
    local = dt.datetime.fromtimestamp(T / 1000, dt.timezone(dt.timedelta(hours=-6))).strftime("%H:%M")
    assert "Times in America/Chicago" in page and f">{local}</time>" in page, page


async def test_the_score_widget_shows_the_live_game_and_may_be_embedded(server: Server) -> None:
    await an_event(server, 2)
    tk = await server.device("timekeeper", game="cup1")
    await tk.send({"type": "clock.start", "game": "cup1"})
    await tk.close()
    status, page, headers = await get(server, "/events/cup/scores")
    assert status == 200 and 'data-game="cup1"' in page and 'data-game="cup0"' not in page, page
    assert 'class="widget"' in page and "frame-ancestors" not in headers["content-security-policy"]
    assert "x-frame-options" not in headers
