"""An event's and a team's games as an iCalendar feed (RFC 5545, written by the
``icalendar`` library): one VEVENT per game with a planned start, its UID the game's id at
the service's address (stable: a changed time or arena updates the entry, never adds one),
the arena as its location, times in the event's time zone. ``SEQUENCE`` counts the game's
schedule revisions, so a calendar that knows the entry takes the change."""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlsplit

import icalendar

from ..wire.public_types import GameCard
from .words import zone

#: A game's entry lasts this long where nothing better is known (a 4-period arena game,
#: with its intervals, runs about an hour).
LENGTH = dt.timedelta(minutes=60)


def uid(game: str, base_url: str) -> str:
    return f"game-{game}@{urlsplit(base_url).netloc or 'arena-stream'}"


def feed(name: str, cards: list[GameCard], tz: str, base_url: str,
         revisions: dict[str, tuple[int, int]]) -> bytes:
    """The calendar ``name`` of ``cards`` (those with a planned start), in the zone ``tz``;
    ``revisions``: each game's schedule revision and when it was made (ms), its entry's
    ``SEQUENCE`` and ``DTSTAMP``."""
    cal = icalendar.Calendar()
    cal.add("prodid", "-//Arena Stream//arena polo//EN")
    cal.add("version", "2.0")
    cal.add("x-wr-calname", name)
    cal.add("x-wr-timezone", tz)
    where = zone(tz)
    for c in cards:
        if c.planned_start is None:
            continue
        start = dt.datetime.fromtimestamp(c.planned_start / 1000, where)
        ev = icalendar.Event()
        ev.add("uid", uid(c.game, base_url))
        ev.add("summary", f"{c.home.name} v {c.away.name}" + (f" ({c.round})" if c.round else ""))
        ev.add("dtstart", start)
        ev.add("dtend", start + LENGTH)
        seq, made = revisions.get(c.game, (0, c.planned_start))
        ev.add("dtstamp", dt.datetime.fromtimestamp(made / 1000, dt.UTC))
        ev.add("sequence", seq)
        ev.add("location", f"Arena {c.arena}")
        ev.add("url", f"{base_url.rstrip('/')}/events/{c.event}")
        ev.add("status", "CONFIRMED")
        cal.add_component(ev)
    if hasattr(cal, "add_missing_timezones"):
        cal.add_missing_timezones()
    return bytes(cal.to_ical())
