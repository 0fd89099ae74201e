"""What the engine says back: one tagged union of notices.

Every notice names the event that caused it (``cause``), the time it speaks
of (``at``: the event's own time, or the computed moment a deadline fell
due), the game, and the clause it applies. ``text`` holds the display text
in English and Spanish; the engine leaves it empty and
``stream.rules.text.render`` fills it once, where notices leave the process,
so the fold itself stays cheap.
"""

from __future__ import annotations

from typing import Literal, Union

import msgspec

from .events import Side


class Text(msgspec.Struct, frozen=True):
    en: str
    es: str


class _Notice(msgspec.Struct, frozen=True, tag_field="type", kw_only=True, gc=False):
    cause: str
    at: int
    game: str | None
    clause: str
    text: Text | None = None


class CardRecorded(_Notice, frozen=True, tag="card.recorded", kw_only=True):
    player: str
    side: Side
    color: Literal["yellow", "red"]
    count: int
    yellows: int
    offense: int
    conduct: str | None
    # Why the color differs from what the device sent ("fourth_offense"),
    # or "left_arena" for the automatic red of R14.
    converted: str | None = None


class OfficialCarded(_Notice, frozen=True, tag="official.carded", kw_only=True):
    """A card to a member of a team's organization (R1): a penalty, no box."""

    side: Side
    role: str
    color: Literal["yellow", "red"]
    count: int
    conduct: str | None


class ConductNamed(_Notice, frozen=True, tag="conduct.named", kw_only=True):
    """The conduct of a card already recorded, named: ``target`` is the card's event."""

    target: str
    player: str | None
    conduct: str


class PenaltyAwarded(_Notice, frozen=True, tag="penalty.awarded", kw_only=True):
    to: Side
    against: Side
    player: str | None
    severity: str | int | None
    reason: Literal["card", "left_box_early", "mount_abuse", "left_arena"]


class BoxEnter(_Notice, frozen=True, tag="box.enter", kw_only=True):
    player: str
    side: Side
    owed_ms: int
    # R8: "returned" to the box after leaving early; "carried" from an earlier game.
    kind: Literal["card", "returned", "carried"] = "card"


class BoxEligible(_Notice, frozen=True, tag="box.eligible", kw_only=True):
    player: str
    side: Side


class BoxRelease(_Notice, frozen=True, tag="box.release", kw_only=True):
    player: str
    side: Side
    stoppage: str


class SentOff(_Notice, frozen=True, tag="sent_off", kw_only=True):
    player: str
    side: Side
    no_sub_ms: int


class SubEligible(_Notice, frozen=True, tag="sub.eligible", kw_only=True):
    player: str
    side: Side


class SubAllowed(_Notice, frozen=True, tag="sub.allowed", kw_only=True):
    player: str
    side: Side
    stoppage: str


class SubstitutionMade(_Notice, frozen=True, tag="substitution.made", kw_only=True):
    side: Side
    out: str
    in_: str = msgspec.field(name="in")


class GoalScored(_Notice, frozen=True, tag="goal.scored", kw_only=True):
    side: Side
    player: str | None
    points: int
    home: int | float   # the score after it: goals and goals on handicap (A5), a half as .5
    away: int | float


class ClockChanged(_Notice, frozen=True, tag="clock", kw_only=True):
    running: bool
    period: int
    remaining_ms: int
    play_ms: int
    period_over: bool


class GameReady(_Notice, frozen=True, tag="game.ready", kw_only=True):
    home: str
    away: str


class GameEnded(_Notice, frozen=True, tag="game.ended", kw_only=True):
    home: int | float
    away: int | float
    shootout: bool


class HandicapSet(_Notice, frozen=True, tag="handicap.set", kw_only=True):
    """The goals each side starts with, as the committee set them or the matrix gave them (A5)."""

    home: int | float        # the score they make, before any goal
    away: int | float
    on_home: int | float     # the goals on handicap
    on_away: int | float
    source: Literal["matrix", "committee"]
    home_handicap: int | None = None   # "matrix": the team handicaps they were worked out from
    away_handicap: int | None = None
    by: str = ""
    reason: str = ""


class ShootoutExcluded(_Notice, frozen=True, tag="shootout.excluded", kw_only=True):
    player: str
    side: Side
    owed_ms: int


class MountDeadline(_Notice, frozen=True, tag="mount.deadline", kw_only=True):
    player: str
    side: Side
    deadline_at: int
    status: Literal["open", "expired"]
    reason: Literal["unfit", "abuse"]


class MountReplacedNotice(_Notice, frozen=True, tag="mount.replaced", kw_only=True):
    player: str
    side: Side


class PostgameRecorded(_Notice, frozen=True, tag="postgame.recorded", kw_only=True):
    player: str
    side: Side
    level: str


class _ObligationNotice(_Notice, frozen=True, kw_only=True):
    player: str
    obligation: str
    kind: str            # sit_out, suspension, yellow_status
    owed_ms: int
    origin_game: str


class ObligationCreated(_ObligationNotice, frozen=True, tag="obligation.created", kw_only=True):
    """Carried to the player's next qualifying game."""


class ObligationApplied(_ObligationNotice, frozen=True, tag="obligation.applied", kw_only=True):
    """This game serves it: the player starts in the box, suspended, or on a yellow."""


class ObligationServed(_ObligationNotice, frozen=True, tag="obligation.served", kw_only=True):
    pass


class ObligationWithdrawn(_ObligationNotice, frozen=True, tag="obligation.withdrawn", kw_only=True):
    """A correction removed what created it, or the committee rescinded it."""


class ObligationUpdated(_ObligationNotice, frozen=True, tag="obligation.updated", kw_only=True):
    """Still owed, changed: the committee decreased it (``owed_ms``; ``by`` and ``reason``
    say who and why), or R15 made it servable with any team once the team's events were
    complete (``any_team``; ``by`` and ``reason`` null)."""

    any_team: bool
    by: str | None = None
    reason: str | None = None


class Alert(_Notice, frozen=True, tag="alert", kw_only=True):
    """The record and the rule disagree. The fact stands, the engine applies the rule,
    and the officials are told what it did and what to do (``code``; the text says it
    in English and Spanish). Fields that do not concern the alert are null."""

    code: str
    player: str | None = None
    side: Side | None = None
    subject: str | None = None       # the event it concerns
    other: str | None = None         # another player it names (one moved to the bench)
    origin_game: str | None = None   # the game an obligation comes from
    owed_ms: int | None = None
    reason: str | None = None        # set_aside: the refusal code; slot_held: the obligation's kind
    detail: str = ""


class Change(msgspec.Struct, frozen=True):
    path: str
    before: object
    after: object


class Correction(_Notice, frozen=True, tag="correction", kw_only=True):
    target: str
    reason: Literal["void", "late"]
    changes: list[Change]


class Rejected(_Notice, frozen=True, tag="rejected", kw_only=True):
    event_type: str
    reason: str
    detail: str


Notice = Union[
    CardRecorded,
    ConductNamed,
    OfficialCarded,
    PenaltyAwarded,
    BoxEnter,
    BoxEligible,
    BoxRelease,
    SentOff,
    SubEligible,
    SubAllowed,
    SubstitutionMade,
    GoalScored,
    ClockChanged,
    GameReady,
    GameEnded,
    HandicapSet,
    ShootoutExcluded,
    MountDeadline,
    MountReplacedNotice,
    PostgameRecorded,
    ObligationCreated,
    ObligationApplied,
    ObligationServed,
    ObligationWithdrawn,
    ObligationUpdated,
    Alert,
    Correction,
    Rejected,
]
