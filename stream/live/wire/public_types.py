"""What the public pages show, as documents (``GET /api/public/...`` sends them as JSON; the
pages render the same documents as HTML: ``stream/live/public/``). Nothing here names a
token, a device or a committee's internal reason (docs/public.md, "What is public")."""

from __future__ import annotations

from typing import Literal

import msgspec

from ...rules.draw import Bracket
from ...rules.events import Colors
from ...rules.view import HandicapView, Score

Status = Literal["scheduled", "live", "ended"]


class Side(msgspec.Struct, kw_only=True):
    """A side of a game as the public sees it: its team by its registered name, in the
    colours it wears in that game (a kit chosen for a clash included)."""

    team: str
    name: str                  # the registered name; the id made readable when none
    short: str                 # its letters, as the score bug shows them
    colors: Colors | None      # None: not registered
    url: str                   # its team page


class Clock(msgspec.Struct, kw_only=True):
    """The game clock as a page runs it: ``remaining_ms`` at the server's ``at`` (ms)."""

    running: bool
    period: int
    periods: int
    remaining_ms: int
    at: int
    overtime: bool


class GameCard(msgspec.Struct, kw_only=True):
    """One game of the order of play, live or not."""

    game: str
    event: str
    arena: str
    kind: str                  # regular, consolation, ... (R16)
    round: str | None          # its round in the event's draw ("final", "sf", "rr1"), if any
    home: Side
    away: Side
    status: Status
    score: Score               # the total, goals on handicap included (A5)
    goals_on_handicap: HandicapView | None
    clock: Clock
    planned_start: int | None  # ms since the epoch, as the order of play gives it
    expected_start: int | None = None  # when it runs late: "not before about" this (to the minute)
    late: bool = False
    box: int = 0               # players in the penalty box now
    sent_off: int = 0          # players sent off
    report: str                # its public report


class EventCard(msgspec.Struct, kw_only=True):
    """An event on the front door."""

    event: str
    name: str
    url: str
    timezone: str              # IANA name; "UTC" when the committee set none
    arenas: list[str]
    first_start: int | None    # its first and last planned starts (ms): its dates
    last_start: int | None
    games: int
    live: int


class Front(msgspec.Struct, kw_only=True):
    """``/``: the events held, the games live now, and what is next on each arena."""

    events: list[EventCard]
    live: list[GameCard]
    next: list[GameCard]       # the next game to begin on each arena


class EventPage(msgspec.Struct, kw_only=True):
    """``/events/{event}``: its order of play, bracket, standings and results."""

    event: str
    name: str
    timezone: str
    games: list[GameCard]      # the order of play: by planned start, then arena
    draw: Bracket | None       # the bracket or the round robin, without the committee's proposals
    results: list[GameCard]    # the games that ended, latest first
    qr: str                    # the page's address as a QR code (SVG), for posters and the day sheet


class Player(msgspec.Struct, kw_only=True):
    player: str
    name: str
    number: int | None
    handicap: int | None


class TeamPage(msgspec.Struct, kw_only=True):
    """``/teams/{team}``: its roster, its team handicap, its games and the next one."""

    team: str
    name: str
    short: str
    colors: Colors | None
    logo: str | None
    handicap: int | None       # the sum of its players' registered handicaps (None: one unknown)
    players: list[Player]
    games: list[GameCard]      # its public games, in order of play
    next: GameCard | None      # its next game not yet ended
