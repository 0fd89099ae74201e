"""The state of a game, as the fold leaves it.

Plain mutable msgspec Structs: cheap to build, and encodable as they are, so
that ``--state``, snapshots and tests can compare two states byte for byte.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from .clock import Clock
from .events import Colors, Rules, Side


class Sitout(msgspec.Struct, gc=False):
    """Time a player owes in play time: the penalty box, or the no-substitute
    window after a red. Served at the first stoppage once ``play_ms`` has
    reached ``target_play_ms``."""

    kind: Literal["box", "no_sub"]
    target_play_ms: int
    owed_ms: int                 # what was imposed, for display and notices
    cause: str                   # the event id that imposed it
    clause: str


class MountWindow(msgspec.Struct, gc=False):
    deadline_at: int             # wall time: play is stopped while a mount is replaced
    reason: Literal["unfit", "abuse"]
    cause: str


class Player(msgspec.Struct):
    id: str
    side: Side
    yellows: int = 0
    offenses: int = 0
    box: Sitout | None = None
    sent_off: bool = False
    sent_off_clause: str | None = None  # R6 (a red card) or R14 (left the arena)
    suspended: bool = False            # carried into this game: may not play (R6, R9, R14)
    no_sub: Sitout | None = None       # after a red, until a substitute is allowed
    sub_allowed: bool = False          # after a red, once the no-sub window is served
    mount: MountWindow | None = None
    carried_yellow: bool = False       # R12: began this game with one yellow
    shootout_excluded: bool = False    # R11: box time left at the end of regulation


class Team(msgspec.Struct):
    team: str
    lineup: list[str]                  # the three slots; a sent-off player holds his until replaced
    bench: list[str]
    kit: Colors | None = None          # the colours worn in this game, if not the registered ones


class Carried(msgspec.Struct):
    """An obligation from an earlier game that this game serves (R9-R16)."""

    id: str
    player: str
    kind: str
    owed_ms: int
    clause: str
    origin_game: str


class OfficialCards(msgspec.Struct):
    """Cards shown to one member of a team's organization (R1)."""

    side: Side
    role: str
    yellows: int = 0
    reds: int = 0


class PostgameEntry(msgspec.Struct):
    player: str
    level: str
    cause: str


class OnHandicap(msgspec.Struct):
    """The goals each side starts with (A5), and where they come from."""

    home: float
    away: float
    source: Literal["matrix", "committee"]
    cause: str                          # the game.setup or game.handicap that set them
    # "matrix": the two team handicaps (the starters' registered handicaps, summed) and the
    # matrix's goals per goal of difference that gave them.
    home_handicap: int | None = None
    away_handicap: int | None = None
    goals_per_goal: float | None = None


class Game(msgspec.Struct):
    id: str
    event: str
    arena: str
    handicap: int
    kind: str
    shootout_option: bool
    periods: int
    period_ms: int
    stops_on_whistle: bool
    stops_on_goal: bool
    home: Team
    away: Team
    players: dict[str, Player]
    clock: Clock = msgspec.field(default_factory=Clock)
    score_home: int = 0
    score_away: int = 0
    status: Literal["scheduled", "live", "ended"] = "scheduled"
    began_at: int | None = None        # the event that began it (A27): when it took its obligations
    shootout: bool = False
    ended_at: int | None = None
    ended_by: str | None = None        # the game.end event: what the game's obligations cite
    postgame: list[PostgameEntry] = msgspec.field(default_factory=list)
    # Players with a box trip, a no-substitute window or a mount window, in
    # the order they were imposed: the box panel's order, and the only
    # players the fold looks at when time passes or play stops.
    pending: list[str] = msgspec.field(default_factory=list)
    carried: list[Carried] = msgspec.field(default_factory=list)
    officials: list[OfficialCards] = msgspec.field(default_factory=list)
    rules: Rules = msgspec.field(default_factory=Rules)  # the event's readings of the rule
    interval_ms: int = 240_000         # between periods (arena facts) ...
    long_interval_ms: int = 600_000    # ... after half of them, and before an extra period
    # The cards recorded (event id -> the player, or None for a team official): what
    # a ``card.amended`` may name.
    cards: dict[str, str | None] = msgspec.field(default_factory=dict)
    on_handicap: OnHandicap | None = None  # goals on handicap (A5); None: none given

    def team(self, side: Side) -> Team:
        return self.home if side == "home" else self.away

    def totals(self) -> tuple[int | float, int | float]:
        """The score as it stands: goals scored plus goals on handicap (A5), a half as .5."""
        h = self.on_handicap
        if h is None:
            return self.score_home, self.score_away
        return goals(self.score_home + h.home), goals(self.score_away + h.away)


def goals(x: float) -> int | float:
    """A score as the log and the displays write it: ``5`` when whole, ``5.5`` with a half."""
    return int(x) if x == int(x) else x


def other(side: Side) -> Side:
    return "away" if side == "home" else "home"
