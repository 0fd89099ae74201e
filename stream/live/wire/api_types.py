"""The HTTP API's shapes (docs/protocol-http.md): the request and response types of the
route table's handlers (``http/``), from which ``schemas.py`` generates the OpenAPI
document, served at ``/openapi.json`` (this text begins its description; the list of
routes after it is made from the table itself, so it can't drift from what is served).

Admin calls carry ``Authorization: Bearer <token>``: an admin token, or a committee
token within its tournament event (``committee_api``).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from ...rules import notices as nt
from ...rules.draw import Bracket
from ...rules.ledger import Obligation
from ...rules.rosters import GameRoster, PlayerEntry, TeamEntry
from ...rules.tournaments import Tournament
from ...rules.view import GameView, HandicapView, Score
from ...store import StoreStatus
from . import auth
from . import protocol as pr
from .public_types import EventPage, Front, TeamPage

#: The browser clients, by route: the file of each in clients/web (served as ``stream.web``).
PAGES = {"/scoreboard": "displays/scoreboard.html", "/overlay": "displays/overlay.html",
         "/handheld": "handheld/handheld.html", "/committee": "committee/committee.html",
         "/overlay/control": "displays/overlay-control.html"}


# ------------------------------------------------------------ requests


class TokenRequest(msgspec.Struct, kw_only=True):
    role: auth.Role
    device: Annotated[str, msgspec.Meta(min_length=1, max_length=48, pattern=r"^[A-Za-z0-9_.:-]+$")]
    official: str = ""
    game: str | None = None
    arena: str | None = None
    event: str | None = None     # a committee token: the tournament event it runs
    ttl_s: Annotated[int, msgspec.Meta(ge=60, le=90 * 86_400)] = 12 * 3600


class TokenIssued(msgspec.Struct, kw_only=True):
    token: str
    claims: auth.Claims


class RevokeRequest(msgspec.Struct, kw_only=True):
    jti: str
    reason: str = ""


class PairingRequest(msgspec.Struct, kw_only=True):
    """``POST /api/pairings``: a device token for one game and role, to pair a handheld by QR code."""

    game: str
    role: Literal["umpire", "referee", "timekeeper", "display"]
    official: str = ""
    device: Annotated[str, msgspec.Meta(min_length=1, max_length=48,
                                         pattern=r"^[A-Za-z0-9_.:-]+$")] | None = None  # else made up
    ttl_s: Annotated[int, msgspec.Meta(ge=60, le=90 * 86_400)] = 12 * 3600


class Pairing(msgspec.Struct, kw_only=True):
    """``POST /api/pairings``: the token, its claims, the page that pairs with it (the token in the
    URL's ``#pair=`` fragment, which no browser sends to a server) and that URL as a QR code (SVG)."""

    token: str
    claims: auth.Claims
    url: str
    qr_svg: str


class TokenInfo(msgspec.Struct, kw_only=True):
    """One row of ``GET /api/tokens``: a token issued (never the token itself), when (ms) and by
    whom, whether it is revoked, and how many sockets it has open on this node now."""

    claims: auth.Claims
    at: int
    by: str
    revoked: bool
    connected: int


# ------------------------------------------------------------ responses


class EventListed(Tournament, kw_only=True):
    """One row of ``GET /api/events``: the tournament event, and whether it has a draw yet
    (``GET /api/events/{event}/draw`` reads it)."""

    drawn: bool


class GameSummary(msgspec.Struct, kw_only=True):
    """One row of ``GET /api/games``."""

    game: str
    event: str
    arena: str
    status: str
    home: str
    away: str
    score: Score
    seq: int
    roster: GameRoster          # who its displays name (the ``roster`` frame's document)
    kind: str = "regular"       # the game's kind (R16): regular, consolation, ...
    goals_on_handicap: HandicapView | None = None  # the goals each side started with (A5), in ``score``


class GameDocument(msgspec.Struct, kw_only=True):
    """``GET /api/games/{game}``: the committed view, what a ``snapshot`` holds."""

    seq: int
    epoch: str
    view: GameView
    roster: GameRoster          # who its displays name (the ``roster`` frame's document)


class StateDigest(msgspec.Struct, kw_only=True):
    """``GET /api/state``: the SHA-256 of the whole folded state (keys sorted),
    what ``arena-stream replay LOG --hash`` prints for the same log."""

    sha256: str
    events: int                 # accepted events folded so far
    games: int


class Problem(msgspec.Struct, kw_only=True):
    """A refusal of an HTTP call that is not an event submission (``clause``:
    set when the rules refused, as by ``POST /api/games/preview``; null when that
    call's body was not a game set-up; absent from every other refusal)."""

    code: str
    detail: str
    clause: str | msgspec.UnsetType | None = msgspec.UNSET


class PlayerObligations(msgspec.Struct, kw_only=True):
    """``GET /api/players/{player}/obligations``: what the player owes, where it
    may be served, and what was served where."""

    player: str
    obligations: list[Obligation]


class CommitteeDecision(msgspec.Struct, kw_only=True):
    """One decision of a tournament committee (``GET /api/events/{event}/decisions``, and a
    game report's ``decisions``): what it was, when, who took it and why, and what it changed."""

    type: str                      # the event's type: committee.rescind, team.eliminated, ...
    id: str                        # the event's id in the log
    at: int                        # the event's ``at`` (ms)
    by: str                        # who: a committee decision's own ``by``; else the official (or
    #                                device) of the token that sent it
    device: str = ""               # the token subject that sent it ("" in a game report)
    official: str = ""             # the official that token names
    reason: str | None = None      # why (a committee.rescind, .decrease or .increase)
    event: str | None = None       # the tournament event it concerns
    game: str | None = None        # the game: an obligation's origin game
    team: str | None = None
    player: str | None = None
    obligation: str | None = None  # the obligation it rescinded or decreased
    kind: str | None = None        # that obligation's kind
    from_ms: int | None = None     # a decrease: the play time owed before ...
    owed_ms: int | None = None     # ... and after
    games: int | None = None       # an increase: the games of suspension it added ...
    sit_out_ms: int | None = None  # ... and the sit-out
    text: nt.Text                  # what it changed, in English and Spanish


class GamePreview(msgspec.Struct, kw_only=True):
    """``POST /api/games/preview``: the obligations the game would apply to its
    rosters if it were set up now; ``GET /api/games/{game}/preview``: those a game
    set up and not yet begun will take when it begins."""

    game: str
    applies: list[Obligation]


class Revoked(msgspec.Struct, kw_only=True):
    """``POST /api/tokens/revoke``: the token's ``jti``, and how many of its sockets were closed here."""

    revoked: str
    sockets_closed: int


class Health(msgspec.Struct, kw_only=True):
    ok: bool


class Ready(msgspec.Struct, kw_only=True):
    """``GET /readyz``: ready, or why not (``reason``: loading or reloading the log, or why the
    store takes no writes)."""

    ready: bool
    reason: str | None = None
    #: On a store on a cluster (etcd): its member in use, leader, Raft term and commit time.
    store: StoreStatus | None = None


class TeamDocument(msgspec.Struct, kw_only=True):
    """``GET /api/teams/{team}``: the team's current registration and every revision, oldest first."""

    current: TeamEntry
    history: list[TeamEntry]


class PlayerDocument(msgspec.Struct, kw_only=True):
    """``GET /api/players/{player}``: the player's current registration and every revision, oldest first."""

    current: PlayerEntry
    history: list[PlayerEntry]


class LogoStored(msgspec.Struct, kw_only=True):
    """``POST /api/teams/{team}/logo``: the image's SHA-256 (what ``team.registered`` names as
    its ``logo``) and where it is served."""

    logo: str
    url: str


class CsvRowProblem(msgspec.Struct, kw_only=True):
    """A row of a roster CSV that can't be imported: its line (the header is line 1), the
    column, and why."""

    line: int
    field: str
    reason: str


class InvalidCsv(msgspec.Struct, kw_only=True):
    """``POST /api/rosters/import``, 400: the file can't be imported; nothing was."""

    code: str
    detail: str
    rows: list[CsvRowProblem]


class RosterImported(msgspec.Struct, kw_only=True):
    """``POST /api/rosters/import``: the teams and players registered anew, the registrations
    skipped as unchanged, and the ack of every registration sent (``duplicate`` for a file sent
    again). ``error``: why one was refused, after the others were sent (send the file again)."""

    teams: int
    players: int
    unchanged: int
    acks: list[pr.Ack]
    error: pr.Error | None = None


#: Every request and response shape, for the generated documents.
SHAPES: tuple[type, ...] = (TokenRequest, TokenIssued, RevokeRequest, GameSummary, GameDocument, Problem,
                            Revoked, Health, Ready, PlayerObligations, GamePreview, StateDigest,
                            PairingRequest, Pairing, TokenInfo, EventListed,
                            TeamDocument, PlayerDocument, LogoStored, InvalidCsv, RosterImported,
                            CommitteeDecision, Bracket, Front, EventPage, TeamPage)
