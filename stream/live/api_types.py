"""The aiohttp application: both WebSocket protocols and the HTTP API on one port.

HTTP API (docs/protocol.md, OpenAPI at ``/openapi.json``):

    GET  /healthz /readyz /metrics
    GET  /api/games                    every game, with score and status
    GET  /api/games/{game}             the game's committed view (what a snapshot holds)
    GET  /api/games/{game}/log         the game's log as JSON Lines (the pinned format)
    GET  /games/{game}/report[.json|.csv]  the game report: cards, box trips, clauses, timeline
    GET  /api/log                      the whole log as JSON Lines          (admin)
    GET  /api/state                    the SHA-256 of the folded state      (admin)
    POST /api/events                   set up a tournament event            (admin)
    POST /api/events/{event}/complete  mark it completed                    (admin)
    POST /api/events/{event}/eliminate a team is out of the event (R15)     (admin)
    POST /api/games                    set up a game and its rosters        (admin)
    POST /api/tokens                   issue a device token                 (admin)
    POST /api/tokens/revoke            revoke one                           (admin)
    GET  /api/players/{player}/obligations   what a player owes, and what was served where
    GET  /api/obligations?status=served      the ledger, or its history
    POST /api/games/preview            what a game would apply to its rosters (admin)
    POST /api/committee/increase       the committee increases a penalty    (admin)
    POST /api/committee/rescind        the committee rescinds an obligation (admin)
    POST /api/committee/decrease       the committee lowers the play time owed (admin)
    POST /api/admin/store/accept       take the history the store holds as the log (admin)

Admin calls carry ``Authorization: Bearer <token>``.

This module holds the API's shapes: the request and response types of the
handlers in ``app.py``, from which ``schemas.py`` generates the OpenAPI
document (this text is its description), and the browser pages it serves.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from ..rules.ledger import Obligation
from ..rules.view import GameView, Score
from ..store import Accepted
from . import auth

#: The browser clients, by route.
PAGES = {"/scoreboard": "scoreboard.html", "/overlay": "overlay.html", "/handheld": "handheld.html"}


# ------------------------------------------------------------ requests


class TokenRequest(msgspec.Struct, kw_only=True):
    role: auth.Role
    device: Annotated[str, msgspec.Meta(min_length=1, max_length=48, pattern=r"^[A-Za-z0-9_.:-]+$")]
    official: str = ""
    game: str | None = None
    arena: str | None = None
    ttl_s: Annotated[int, msgspec.Meta(ge=60, le=90 * 86_400)] = 12 * 3600


class TokenIssued(msgspec.Struct, kw_only=True):
    token: str
    claims: auth.Claims


class RevokeRequest(msgspec.Struct, kw_only=True):
    jti: str
    reason: str = ""


# ------------------------------------------------------------ responses


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


class GameDocument(msgspec.Struct, kw_only=True):
    """``GET /api/games/{game}``: the committed view, what a ``snapshot`` holds."""

    seq: int
    epoch: str
    view: GameView


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


class GamePreview(msgspec.Struct, kw_only=True):
    """``POST /api/games/preview``: the obligations the game would apply to its
    rosters if it were set up now."""

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


class AcceptRequest(msgspec.Struct, kw_only=True):
    """``POST /api/admin/store/accept``: why the operator accepts the history the store holds."""

    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=500)]


class StoreAccepted(Accepted, frozen=True, kw_only=True):
    """``POST /api/admin/store/accept``: the history the store holds is the log now: its new
    ``epoch``, the one before, who, when (ms) and why, what was made to agree with the log
    (``repaired``: game counters, dedup keys and game entries beyond the log's end), and the
    games this node reloaded."""

    games: int


#: Every request and response shape, for the generated documents.
SHAPES: tuple[type, ...] = (TokenRequest, TokenIssued, RevokeRequest, GameSummary, GameDocument, Problem,
                            Revoked, Health, Ready, PlayerObligations, GamePreview, StateDigest,
                            AcceptRequest, StoreAccepted)
