"""The events of the pinned log format, as one tagged union of msgspec Structs.

One JSON object per line. Every event has ``type`` (the tag), ``id`` (unique in
the log), ``at`` (integer milliseconds since the Unix epoch) and, where it
concerns a game, ``game``. The fields of each type are listed in
``docs/log-format.md``; this module is the machine-readable copy of that table.

Schemas evolve only by adding fields with defaults, so an old log always
decodes with a new build. Unknown fields are ignored for the same reason;
unknown types, missing fields and ill-typed fields are refused.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

import msgspec

Side = Literal["home", "away"]
EventClass = Literal["club", "uspa"]
GameKind = Literal["regular", "consolation", "subsidiary_first_round", "shootout"]
Color = Literal["yellow", "red"]
MountReason = Literal["unfit", "abuse"]
PostgameLevel = Literal["2y", "3y", "red"]

#: Rule 14's listed unsportsmanlike conducts (R1), the appeal forms its appeal
#: paragraph defines, the two conducts other clauses name, and ``other``.
Conduct = Literal[
    "appealing",
    "unwelcome_talking",
    "abusive_language",
    "disrespect",
    "arguing",
    "team_member_behavior",
    "tack_time_out",
    "mallet_windmill",
    "dangerous_riding",
    "improper_mallet",
    "rough_play",
    "striking",
    "artificial_aids",
    "hit_after_whistle",
    "dangerous_ball",
    "appeal_demeaning",
    "appeal_mallet_raised",
    "left_box_deliberately",
    "left_arena",
    "other",
]

# Ids, times and lists are bounded so that a hostile line can't hold much
# memory or smuggle a number no display can show.
Ident = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
# A player id also names the player in display patches (``players.<id>.box``): no dots.
PlayerId = Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern=r"^[^.\s]+$")]
Millis = Annotated[int, msgspec.Meta(ge=0, le=2**53)]
Handicap = Annotated[int, msgspec.Meta(ge=-40, le=200)]
Label = Annotated[str, msgspec.Meta(max_length=64)]
#: A name as displays show it, in any script.
DisplayName = Annotated[str, msgspec.Meta(min_length=1, max_length=80, pattern=r"\S")]
Severity = Union[Label, Annotated[int, msgspec.Meta(ge=0, le=99)], None]
#: Goals on handicap, whole or half (arena scores carry halves: 5½–4).
HalfGoals = Annotated[float, msgspec.Meta(ge=0, le=40, multiple_of=0.5)]


class EventBase(msgspec.Struct, frozen=True, tag_field="type", kw_only=True, gc=False):
    id: Ident
    at: Millis


class GameEventBase(EventBase, frozen=True, kw_only=True):
    game: Ident


class Rules(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The readings of Rule 14 a committee chooses for its event (docs/rules.md,
    ambiguity register). They travel in the log, so one log always folds one way."""

    #: R8: "the remainder of his or her original suspension and until the first play
    #: stoppage ... following the next two minutes of play". ``sequential``: the
    #: remainder, then a fresh 2:00; ``concurrent``: max(remainder, 2:00) from the return.
    left_early: Literal["sequential", "concurrent"] = "sequential"
    #: R4: a red at the third offense allows "no substitute ... until the first play
    #: stoppage ... following the next two minutes of play" (120000); R6 says four (240000).
    third_offense_red_no_sub_ms: Literal[120_000, 240_000] = 120_000


class MatrixRow(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One row of an event's handicap matrix: for games of ``periods`` periods, the goals on
    handicap given per goal of difference between the two team handicaps (A5)."""

    periods: Annotated[int, msgspec.Meta(ge=1, le=12)]
    goals_per_goal: HalfGoals


class HandicapGoals(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The goals each side starts a game with (A5)."""

    home: HalfGoals = 0.0
    away: HalfGoals = 0.0


class EventSetup(EventBase, frozen=True, tag="event.setup", kw_only=True):
    event: Ident
    # What displays call the event ("Copa de Otoño 2026"); None: its id, made readable.
    name: DisplayName | None = None
    cls: EventClass = msgspec.field(name="class")
    handicap: Handicap
    teams: Annotated[list[Ident], msgspec.Meta(max_length=256)]
    completed: bool = False
    rules: Rules = Rules()
    # The event's team handicap limits: the sum of a side's three starters' handicaps (from
    # their registrations) must lie within them. The arena rulebook's figures are not at
    # hand, so the committee sets them; None: no limit.
    team_handicap_min: Handicap | None = None
    team_handicap_max: Handicap | None = None
    # A handicap event's matrix (A5): its games start with goals on handicap worked out from
    # the team handicaps. None: no goals are given (an open event, or one played on the flat).
    handicap_matrix: Annotated[list[MatrixRow], msgspec.Meta(max_length=12)] | None = None
    # The event's time zone, an IANA name ("America/Chicago") the zone database knows (else
    # ``bad_timezone``): the public pages write its times in it. None: not given.
    timezone: Annotated[str, msgspec.Meta(min_length=1, max_length=64)] | None = None
    # A private event is not shown on the public pages; the committee's own pages show it.
    private: bool = False


class EventComplete(EventBase, frozen=True, tag="event.complete", kw_only=True):
    event: Ident


class TeamEliminated(EventBase, frozen=True, tag="team.eliminated", kw_only=True):
    """A team is out of an event: it no longer participates in it (R15)."""

    event: Ident
    team: Ident


class DrawMade(EventBase, frozen=True, tag="draw.made", kw_only=True):
    """An event's draw (L3, ``draw.py``): its format and its teams in seed order. The games
    it makes are set up with its ids, kinds and teams. Made again while none of its games
    is set up, it replaces the earlier draw."""

    event: Ident
    format: Literal["knockout", "round_robin"]
    teams: Annotated[list[Ident], msgspec.Meta(min_length=2, max_length=64)]
    # A knockout: the first round's losers play a consolation bracket (its games'
    # kind: consolation), or go to this subsidiary event instead.
    consolation: bool = False
    subsidiary: Ident | None = None
    # This event is a subsidiary of that one: its first round's games are of the kind
    # ``subsidiary_first_round`` (R16).
    subsidiary_of: Ident | None = None


Hex = Annotated[str, msgspec.Meta(pattern=r"^#[0-9A-Fa-f]{6}$")]
Revision = Annotated[int, msgspec.Meta(ge=0, le=2**31)]


class Colors(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    primary: Hex
    secondary: Hex


class TeamRegistered(EventBase, frozen=True, tag="team.registered", kw_only=True):
    """A team's name, score-bug letters, colours and logo, as displays show them from
    this point of the log on. A later registration of the same team is its next revision."""

    team: Ident
    name: DisplayName
    # 2 to 4 letters or digits, any script: the score bug shows them upper-cased.
    short: Annotated[str, msgspec.Meta(pattern=r"^[^\W_]{2,4}$")]
    colors: Colors
    # The SHA-256 (hex) of an image the service stores, served at /logos/{logo}.
    logo: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$")] | None = None
    # Also enters the team in this tournament event (set up, not completed).
    event: Ident | None = None
    # The revision this registration was made from (0: none yet); refused if the team's
    # current revision differs. None: not checked.
    revision: Revision | None = None


class PlayerRegistered(EventBase, frozen=True, tag="player.registered", kw_only=True):
    """A player's name, shirt number, handicap and team, as displays show them from this
    point of the log on; one id across teams and events."""

    player: PlayerId
    name: DisplayName
    number: Annotated[int, msgspec.Meta(ge=0, le=99)] | None = None
    handicap: Annotated[int, msgspec.Meta(ge=-2, le=10)] | None = None
    team: Ident | None = None
    revision: Revision | None = None


class Roster(msgspec.Struct, frozen=True, kw_only=True):
    team: Ident
    # Three a side; fewer when the team has no eligible player (A3, "All substitution rules apply").
    players: Annotated[list[PlayerId], msgspec.Meta(min_length=1, max_length=3)]
    subs: Annotated[list[PlayerId], msgspec.Meta(max_length=16)] = []
    # The colours the team wears in this game when they differ from its registered ones
    # (a kit clash with the other team): every display of the game shows these.
    colors: Colors | None = None


class Teams(msgspec.Struct, frozen=True, kw_only=True):
    home: Roster
    away: Roster


class Officials(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Who officiates a game, by name: its two mounted umpires, the referee and the timekeeper."""

    umpires: Annotated[list[DisplayName], msgspec.Meta(max_length=2)] = []
    referee: DisplayName | None = None
    timekeeper: DisplayName | None = None


class GameSetup(GameEventBase, frozen=True, tag="game.setup", kw_only=True):
    event: Ident
    # Only for a game whose event was never set up: it must say it is a Club game.
    cls: Literal["club"] | None = msgspec.field(default=None, name="class")
    handicap: Handicap
    kind: GameKind = "regular"
    shootout_option: bool = False
    periods: Annotated[int, msgspec.Meta(ge=1, le=12)] = 4
    period_ms: Annotated[int, msgspec.Meta(ge=1_000, le=3_600_000)] = 450_000
    teams: Teams
    # Arena facts: whether the clock stops on every whistle and on goals is
    # not known, so each game says; both default to the common practice.
    clock_stops_on_whistle: bool = True
    clock_stops_on_goal: bool = True
    # Arena facts: intervals are 4 minutes, 10 after the 2nd period (after half the
    # periods), and 10 before a 5.c(1) extra period; 4 before a 5.c(2) shootout.
    interval_ms: Annotated[int, msgspec.Meta(ge=0, le=3_600_000)] = 240_000
    long_interval_ms: Annotated[int, msgspec.Meta(ge=0, le=3_600_000)] = 600_000
    # The arena (venue) the game is played in: device tokens can be scoped to one.
    arena: Label = ""
    # The order of play: when the game is due to start (Unix ms), and who officiates it.
    # ``game.scheduled`` changes both later.
    starts_at: Millis | None = None
    officials: Officials | None = None
    # The goals each side starts with, as the committee sets them (A5). None: worked out
    # from the event's handicap matrix, if it has one.
    goals_on_handicap: HandicapGoals | None = None


class ClockStart(GameEventBase, frozen=True, tag="clock.start", kw_only=True):
    pass


class ClockStop(GameEventBase, frozen=True, tag="clock.stop", kw_only=True):
    """The timekeeper stops the clock. Added to the pinned format for the
    timekeeper's stop button; it counts as a play stoppage (docs/rules.md, A7)."""


class Whistle(GameEventBase, frozen=True, tag="whistle", kw_only=True):
    pass


class Goal(GameEventBase, frozen=True, tag="goal", kw_only=True):
    team: Side
    player: Ident | None = None
    points: Literal[1, 2] = 1
    # A goal the umpires disallowed: it stopped play and scores nothing. A ``void``
    # of a goal turns it into this (docs/rules.md, A28).
    disallowed: bool = False


class Horn(GameEventBase, frozen=True, tag="horn", kw_only=True):
    # A split-period horn is a stoppage that does not end the period.
    split: bool = False


class GameEnd(GameEventBase, frozen=True, tag="game.end", kw_only=True):
    shootout: bool = False


class TeamOfficial(msgspec.Struct, frozen=True, kw_only=True):
    """A member of a team's organization who is not a player: a coach, a groom (R1)."""

    team: Side
    role: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


class Card(GameEventBase, frozen=True, tag="card", kw_only=True):
    # A card names a player, or (R1: "any member of a team organization") a team official.
    player: Ident | None = None
    official: TeamOfficial | None = None
    color: Color
    count: Annotated[int, msgspec.Meta(ge=1, le=3)] = 1
    # Chosen when the card is recorded, or added later by a ``card.amended``: an umpire
    # never has to name it before the card is on record.
    conduct: Conduct | None = None
    penalty: Severity = None


class CardAmended(GameEventBase, frozen=True, tag="card.amended", kw_only=True):
    """The conduct a card was shown for, named (or named again) after it was recorded."""

    target: Ident       # the card's event id
    conduct: Conduct


class BoxLeftEarly(GameEventBase, frozen=True, tag="box.left_early", kw_only=True):
    player: Ident
    penalty: Severity = None


class ArenaLeft(GameEventBase, frozen=True, tag="arena.left", kw_only=True):
    player: Ident
    penalty: Severity = None


class Substitution(GameEventBase, frozen=True, tag="substitution", kw_only=True):
    team: Side
    out: Ident
    in_: Ident = msgspec.field(name="in")


class MountRemoved(GameEventBase, frozen=True, tag="mount.removed", kw_only=True):
    player: Ident
    reason: MountReason
    penalty: Severity = None


class MountReplaced(GameEventBase, frozen=True, tag="mount.replaced", kw_only=True):
    player: Ident


class PostgameCard(GameEventBase, frozen=True, tag="postgame.card", kw_only=True):
    player: Ident
    level: PostgameLevel


class Tick(GameEventBase, frozen=True, tag="tick", kw_only=True):
    """Time passing, written by the live service when a deadline falls due
    (a box trip's play time served, a mount window run out), so that the
    notices it brings have a place in the log like everything else. It
    changes no state."""


class GameScheduled(EventBase, frozen=True, tag="game.scheduled", kw_only=True):
    """A game's place in the order of play, as the committee sets it from this point of the
    log on: when it is due to start and who officiates it, by name. Like a registration it
    changes nothing in the game's state; each one replaces the one before, whole."""

    game: Ident
    starts_at: Millis | None = None
    officials: Officials = Officials()


class CommitteeIncrease(EventBase, frozen=True, tag="committee.increase", kw_only=True):
    """The Host Tournament Committee or the Association increases a penalty (R6:
    "This penalty may be increased"): more games of suspension, or a sit-out,
    for a player, on account of a game that has ended."""

    player: Ident
    origin_game: Ident
    games: Annotated[int, msgspec.Meta(ge=0, le=10)] = 1
    sit_out_ms: Annotated[int, msgspec.Meta(ge=0, le=3_600_000)] = 0
    by: Label
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=500)]


class _CommitteeDecision(EventBase, frozen=True, kw_only=True):
    obligation: Annotated[str, msgspec.Meta(min_length=1, max_length=512)]
    by: Label
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=500)]


class CommitteeRescind(_CommitteeDecision, frozen=True, tag="committee.rescind", kw_only=True):
    """The committee rescinds an obligation its serving game has not yet started to serve."""


class CommitteeDecrease(_CommitteeDecision, frozen=True, tag="committee.decrease", kw_only=True):
    """The committee lowers the play time an obligation owes (a sit-out, or the
    no-substitute window of a post-game red)."""

    owed_ms: Annotated[int, msgspec.Meta(ge=0, le=3_600_000)]


class GameHandicap(GameEventBase, frozen=True, tag="game.handicap", kw_only=True):
    """The committee sets a game's goals on handicap before it begins (A5): ``goals`` as
    given, or (None) worked out again from the event's matrix and the starters' handicaps
    as registered at this point of the log."""

    goals: HandicapGoals | None = None
    by: Label
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=500)]
    # Left out by a sender: where ``goals`` is None, the fold fills in the goals it worked out
    # and this, what it worked them out from.
    worked: WorkedOut | None = None


class WorkedOut(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What goals on handicap were worked out from (A5): the two team handicaps (each side's
    starters' registered handicaps, summed) and the matrix's goals per goal of difference."""

    home_handicap: int
    away_handicap: int
    goals_per_goal: float


class Void(EventBase, frozen=True, tag="void", kw_only=True):
    target: Ident
    game: Ident | None = None
    # False (a correction): a voided goal is disallowed, its points come off and its
    # stoppage stands. True: the event never happened, so it is removed entirely.
    entered_in_error: bool = False


Event = Union[
    EventSetup,
    EventComplete,
    TeamEliminated,
    DrawMade,
    TeamRegistered,
    PlayerRegistered,
    GameSetup,
    ClockStart,
    ClockStop,
    Whistle,
    Goal,
    Horn,
    GameEnd,
    Card,
    CardAmended,
    BoxLeftEarly,
    ArenaLeft,
    Substitution,
    MountRemoved,
    MountReplaced,
    PostgameCard,
    Tick,
    CommitteeIncrease,
    CommitteeRescind,
    CommitteeDecrease,
    GameScheduled,
    GameHandicap,
    Void,
]

EVENT_TYPES: tuple[type[EventBase], ...] = Event.__args__  # type: ignore[attr-defined]
TYPES_BY_NAME: dict[str, type[EventBase]] = {str(t.__struct_config__.tag): t for t in EVENT_TYPES}
TYPE_NAMES: frozenset[str] = frozenset(TYPES_BY_NAME)


def event_type(event: EventBase) -> str:
    """The ``type`` tag of an event, as written in the log."""
    return str(type(event).__struct_config__.tag)
