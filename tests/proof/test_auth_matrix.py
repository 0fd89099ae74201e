"""Proof: who may do what, every role x scope x action, each cell checked
against the log.

The expected outcome of each cell comes from the docs, not from the service's code:
what each role may send (``MAY_SEND``) is docs/protocol.md's table ("Tokens and roles",
checked against it), and who may read and write what, role by resource, is
docs/security.md's scope table (``SCOPE_TABLE``, parsed from the page): ``expect_*``
derive each cell from the two. Every event a cell sends would be taken in the state it
is sent in: a refused cell is followed by a *control*, the same event from an unscoped
admin, which is acked. So a refusal is the token's doing, not the rules'.

A committee's cells are the table's ``committee`` column, driven from it against two
events (``test_a_committee_s_cells_against_its_own_event_and_another``): every
resource, read and write, its own event's and another's, each refused write leaving
the log as it was.

* allowed: acked, and logged exactly once (one new row, with the cell's id);
* refused: the documented code (``error`` frame with ``forbidden`` /
  ``out_of_scope``, an auth ``error`` then close 4401, HTTP 401/403), zero rows
  written, the event's log id nowhere in the log.

Then every token variant (expired, forged, revoked, revoked across a restart,
in the query string, Origin look-alikes on the upgrade) and a scan of everything
the service logged (in-process at every level, and a real ``arena-stream serve``
process's stderr), the log rows and the SQLite file for any token or the secret.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import itertools
import json
import logging
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import websockets

from stream.live.http.documents import schemas
from stream.rules.events import TYPE_NAMES
from stream.tools.harness import ServiceProcess

from ..docs_text import doc_text, protocol_section
from ..live.conftest import Raw, RunningServer, Server, game_setup_body
from ..live.wire.test_auth import auth_attempt, revoked_rows
from ..rules.script import AWAY, HOME
from .conftest import Figures

# --------------------------------------------------------- the docs' table

#: docs/protocol.md, "Tokens and roles": what each role may send on /ws/device.
UMPIRE = frozenset({"whistle", "goal", "card", "card.amended", "box.left_early", "arena.left", "substitution",
                    "mount.removed", "mount.replaced", "postgame.card", "void", "game.end"})
TIMEKEEPER = frozenset({"clock.start", "clock.stop", "horn", "game.end", "void"})
#: "these twelve need an **unscoped** admin token, or a committee token within its event"
SETUP = frozenset({"event.setup", "event.complete", "team.eliminated", "draw.made", "game.setup",
                   "team.registered", "player.registered", "committee.increase", "committee.rescind",
                   "committee.decrease", "game.scheduled", "game.handicap"})
MAY_SEND: dict[str, frozenset[str]] = {
    "umpire": UMPIRE, "referee": UMPIRE, "timekeeper": TIMEKEEPER, "display": frozenset(),
    "admin": UMPIRE | TIMEKEEPER | SETUP, "committee": UMPIRE | TIMEKEEPER | SETUP,
}
#: "No role may send `tick`"
NOBODY = frozenset({"tick"})
#: The roles whose scope is a game or an arena. A committee's is a tournament event: its
#: cells are tests/live/http/test_committee_scope.py and test_committee_api.py.
ROLES = sorted(r for r in MAY_SEND if r != "committee")
#: The token's scope relative to the game a cell acts on.
SCOPES = ("game", "other_game", "arena", "other_arena", "none")


def documented_roles() -> dict[str, frozenset[str]]:
    """The role table as docs/protocol.md has it ("Tokens and roles")."""
    text = protocol_section("## Tokens and roles")
    start = text.index("What each role may send")
    table: dict[str, frozenset[str]] = {}
    above: set[str] = set()
    for line in text[start:text.index("\n\n", text.index("| role |", start))].splitlines()[3:]:
        _, who, what, _ = line.split("|")
        plain = re.sub(r"\(.*?\)", "", what)
        types = set(re.findall(r"`([a-z_.]+)`", plain)) | (above if "everything above" in plain else set())
        above |= types
        for role in re.findall(r"`([a-z]+)`", who):
            table[role] = frozenset(types)
    return table


def test_the_table_is_the_docs_table() -> None:
    assert documented_roles() == MAY_SEND
    # every event type of the log format (stream/rules/events.py) has its row
    assert frozenset().union(*MAY_SEND.values()) | NOBODY == TYPE_NAMES
    assert "No role may send `tick`" in protocol_section("## Tokens and roles")


# ------------------------------------------------------- docs/security.md's table

#: docs/security.md, "Who may do what": its columns (kinds of token), rows (resources), words.
SCOPE_ROLES = ("admin", "admin:scoped", "committee", "umpire", "referee", "timekeeper", "display",
               "anonymous")
RESOURCES = ("events", "teams", "players", "games", "play", "graphics", "tokens", "logs", "reports",
             "previews", "obligations", "decisions", "store", "public")
WORDS = frozenset({"all", "event", "scope", "public", "none"})
#: The resource each event type writes (the rest: a game's ``play``).
WRITES: dict[str, str] = {
    "event.setup": "events", "event.complete": "events", "team.eliminated": "events", "draw.made": "events",
    "game.setup": "games", "game.scheduled": "games", "game.handicap": "games",
    "team.registered": "teams", "player.registered": "players", "committee.increase": "decisions",
    "committee.rescind": "decisions", "committee.decrease": "decisions"}


def scope_table() -> dict[tuple[str, str], tuple[str, str]]:
    """(column, resource) -> (read, write), as the Markdown table between
    ``<!-- scope-table -->`` and ``<!-- /scope-table -->`` has it."""
    text = doc_text("security.md")
    block = text[text.index("<!-- scope-table -->"):text.index("<!-- /scope-table -->")]
    lines = [ln.strip() for ln in block.splitlines() if ln.strip().startswith("|")]

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip("|").split("|")]

    columns = [c.strip("`") for c in cells(lines[0])[1:]]
    assert set(cells(lines[1])) == {"---"}, lines[1]
    table: dict[tuple[str, str], tuple[str, str]] = {}
    for line in lines[2:]:
        resource, *row = cells(line)
        for column, cell in zip(columns, row, strict=True):
            read, write = (w.strip() for w in cell.split("/"))
            table[(column, resource.strip("`"))] = (read, write)
    return table


SCOPE_TABLE = scope_table()


def may(column: str, resource: str, action: str) -> str:
    """The table's word for what ``column``'s tokens may do to ``resource`` (``read``/``write``)."""
    read, write = SCOPE_TABLE[(column, resource)]
    return read if action == "read" else write


def column(role: str, scope: str) -> str:
    """The table's column of a token of ``role`` with the cell's ``scope`` (anonymous: none)."""
    return "admin:scoped" if role == "admin" and scope != "none" else role


def test_the_scope_table_is_whole_and_agrees_with_the_role_table() -> None:
    assert {c for c, _ in SCOPE_TABLE} == set(SCOPE_ROLES)
    assert {r for _, r in SCOPE_TABLE} == set(RESOURCES)
    assert len(SCOPE_TABLE) == len(SCOPE_ROLES) * len(RESOURCES)
    assert {w for cell in SCOPE_TABLE.values() for w in cell} <= WORDS
    # "event" is a committee's word only, "scope" a scoped token's only.
    assert {c for (c, _), cell in SCOPE_TABLE.items() if "event" in cell} == {"committee"}
    assert {c for (c, _), cell in SCOPE_TABLE.items() if "scope" in cell} <= {
        "admin:scoped", "umpire", "referee", "timekeeper", "display"}
    # What a role may send (docs/protocol.md) and what it may write (docs/security.md) agree:
    # the set-up, roster and decision events need an unscoped admin or a committee token;
    # a role writes a game's play exactly when it sends some of its types.
    for role in MAY_SEND:
        for col in ("admin", "admin:scoped") if role == "admin" else (role,):
            for resource in set(WRITES.values()):
                writes = may(col, resource, "write") != "none"
                assert writes == (col in ("admin", "committee")), (col, resource)
            plays = MAY_SEND[role] - set(WRITES)
            assert (may(col, "play", "write") != "none") == bool(plays), col
    assert may("anonymous", "play", "write") == "none"
    # No route writes the store (the log is written by the events themselves); the ledger is
    # public, written by no route.
    assert {may(c, "store", "write") for c in SCOPE_ROLES} == {"none"}
    assert {SCOPE_TABLE[(c, "obligations")] for c in SCOPE_ROLES} == {("public", "none")}


#: Every route the service serves (``schemas.ROUTES``), by the row of docs/security.md's table
#: it reads or writes ("What each resource is" names them); ``None``: none of its rows (the
#: service's health, its documents, the browser clients' pages and files, a logo, the roster
#: template; and the two sockets, whose token comes in a frame: their cells are above).
ROUTE_ROWS: dict[str, tuple[str, str] | None] = {
    "GET /": ("public", "read"), "GET /events/{event}": ("public", "read"),
    "GET /events/{event}/scores": ("public", "read"),
    "GET /events/{event}.ics": ("public", "read"), "GET /teams/{team}": ("public", "read"),
    "GET /teams/{team}.ics": ("public", "read"), "GET /games/{game}/public": ("public", "read"),
    "GET /api/public": ("public", "read"), "GET /api/public/events/{event}": ("public", "read"),
    "GET /api/public/teams/{team}": ("public", "read"), "GET /healthz": None, "GET /readyz": None,
    "GET /metrics": None,
    "GET /ws/device": None, "GET /ws/watch": None,
    "GET /api/games": ("games", "read"), "POST /api/games": ("games", "write"),
    "GET /api/games/{game}": ("games", "read"), "GET /api/games/{game}/log": ("games", "read"),
    "GET /api/log": ("logs", "read"), "GET /api/state": ("store", "read"),
    "POST /api/events": ("events", "write"), "GET /api/events": ("events", "read"),
    "GET /api/events/{event}/reports.csv": ("reports", "read"),
    "GET /api/events/{event}/decisions": ("decisions", "read"),
    "GET /api/events/{event}/decisions.csv": ("decisions", "read"),
    "GET /api/events/{event}/log": ("logs", "read"),
    "POST /api/events/{event}/complete": ("events", "write"),
    "POST /api/events/{event}/eliminate": ("events", "write"),
    "POST /api/events/{event}/draw": ("events", "write"), "GET /api/events/{event}/draw": ("events", "read"),
    "POST /api/games/preview": ("previews", "read"), "GET /api/games/{game}/preview": ("previews", "read"),
    "GET /api/players/{player}/obligations": ("obligations", "read"),
    "GET /api/obligations": ("obligations", "read"),
    "POST /api/committee/increase": ("decisions", "write"),
    "POST /api/games/{game}/schedule": ("games", "write"),
    "POST /api/games/{game}/handicap": ("games", "write"),
    "POST /api/committee/rescind": ("decisions", "write"),
    "POST /api/committee/decrease": ("decisions", "write"),
    "POST /api/tokens": ("tokens", "write"), "GET /api/tokens": ("tokens", "read"),
    "POST /api/pairings": ("tokens", "write"), "POST /api/tokens/revoke": ("tokens", "write"),
    "GET /api/teams": ("teams", "read"), "POST /api/teams": ("teams", "write"),
    "GET /api/teams/{team}": ("teams", "read"), "POST /api/teams/{team}/logo": ("teams", "write"),
    "GET /logos/{sha}": None,
    "GET /api/players": ("players", "read"), "POST /api/players": ("players", "write"),
    "GET /api/players/{player}": ("players", "read"), "GET /api/rosters/template.csv": None,
    "POST /api/rosters/import": ("teams", "write"),
    "GET /scoreboard": None, "GET /overlay": None, "GET /handheld": None, "GET /committee": None,
    "GET /overlay/control": None, "GET /clients/{filename}": None,
    "GET /games/{game}/report": ("games", "read"), "GET /games/{game}/report.json": ("games", "read"),
    "GET /games/{game}/report.csv": ("games", "read"),
    "GET /openapi.json": None, "GET /asyncapi.json": None,
}
#: The table's columns that may call a route, by who the route says may (``route.Route.who``):
#: a token of another column is refused before the handler runs (401/403).
CALLERS = {"staff": {"admin", "admin:scoped", "committee"}, "admin": {"admin", "admin:scoped"}}


def test_the_route_table_agrees_with_the_scope_table() -> None:
    """Who may call each route, as the route table declares it (and enforces it, before
    the handler), is what docs/security.md's table says of the route's row."""
    table = {f"{r.method} {r.path}": r for r in schemas.ROUTES}
    assert set(table) == set(ROUTE_ROWS)  # a route added is given its row here (and in the page)
    for name, route in table.items():
        row = ROUTE_ROWS[name]
        if row is None or route.who == "anyone":
            assert route.who == "anyone" and (row is None or may("anonymous", *row) == "public"), (
                name, route.who, row and may("anonymous", *row))
            continue
        callers = {c for c in SCOPE_ROLES if may(c, *row) != "none"}
        # the table's callers are the route's: the unscoped admin at least, none outside it
        assert "admin" in callers <= CALLERS[route.who], (name, route.who, row, callers)
        assert ("committee" in callers) == (route.who == "staff"), (name, route.who, row, callers)


@dataclass(frozen=True)
class Expect:
    allowed: bool
    at: str = "send"                        # where a refusal comes: "auth" (then 4401) or "send"
    codes: frozenset[str] = frozenset()     # the refusal codes the docs allow (any of them)


def expect_device(role: str, scope: str, etype: str) -> Expect:
    if scope == "none" and role != "admin":  # "Every role but admin must have one" (a scope)
        also = {"forbidden"} if role == "display" else set()
        return Expect(False, "auth", frozenset({"bad_token"} | also))
    if role == "display":  # "a display token can't open /ws/device at all"
        return Expect(False, "auth", frozenset({"forbidden"}))
    codes = set()
    if etype not in MAY_SEND[role]:
        codes.add("forbidden")
    word = may(column(role, scope), WRITES.get(etype, "play"), "write")  # docs/security.md
    assert word in ("all", "scope", "none"), (role, scope, etype, word)
    if word == "none" or (word == "scope" and scope in ("other_game", "other_arena")):
        codes.add("out_of_scope")
    return Expect(not codes, "send", frozenset(codes))


def expect_watch(role: str, scope: str, action: str) -> Expect:
    """Viewing is public, and any valid token may authenticate a viewer; its
    subscriptions are then held to the token's scope (docs: "Scope")."""
    if role == "anonymous":  # "By default viewing is public: no token is needed"
        return Expect(True)
    if scope == "none" and role != "admin":
        return Expect(False, "auth", frozenset({"bad_token"}))
    if scope in ("other_game", "other_arena") or (action == "subscribe arena" and scope == "game"):
        return Expect(False, "send", frozenset({"out_of_scope"}))
    return Expect(True)


#: docs/protocol-http.md, "HTTP API": the admin routes; the seven event routes (which write
#: the log) "answer exactly like a device socket". What each reads or writes, in
#: docs/security.md's table: a cell's answer is the table's word for the token's column.
HTTP_WRITES = {"POST /api/events", "POST /api/events/{e}/complete", "POST /api/events/{e}/eliminate",
               "POST /api/games", "POST /api/committee/increase", "POST /api/committee/rescind",
               "POST /api/committee/decrease"}
HTTP_ROUTES = ["GET /api/log", "GET /api/state", *sorted(HTTP_WRITES), "POST /api/games/preview",
               "POST /api/tokens", "POST /api/tokens/revoke"]
ROUTE_RESOURCES: dict[str, tuple[str, str]] = {
    "GET /api/log": ("logs", "read"), "GET /api/state": ("store", "read"),
    "POST /api/events": ("events", "write"), "POST /api/events/{e}/complete": ("events", "write"),
    "POST /api/events/{e}/eliminate": ("events", "write"), "POST /api/games": ("games", "write"),
    "POST /api/committee/increase": ("decisions", "write"),
    "POST /api/committee/rescind": ("decisions", "write"),
    "POST /api/committee/decrease": ("decisions", "write"), "POST /api/games/preview": ("previews", "read"),
    "POST /api/tokens": ("tokens", "write"), "POST /api/tokens/revoke": ("tokens", "write")}


def expect_http(role: str, scope: str, route: str) -> Expect:
    if role != "anonymous" and scope == "none" and role != "admin":  # never issued: bad_token
        return Expect(False, "http", frozenset({"401"}))
    word = may(column(role, scope), *ROUTE_RESOURCES[route])
    assert word != "event", (role, route)  # a committee's cells are their own test's
    if word in ("all", "public") or (word == "scope" and scope in ("game", "arena")):
        return Expect(True)
    # "none": 401 without a valid token, 403 with one; "scope": another game's or arena's, 403
    return Expect(False, "http", frozenset({"401" if role == "anonymous" else "403"}))


# ---------------------------------------------------------------- tallies


@dataclass
class Matrix:
    cells: Counter[str] = field(default_factory=Counter)       # family -> cells
    allowed: Counter[str] = field(default_factory=Counter)
    forbidden: Counter[str] = field(default_factory=Counter)
    forbidden_with_writes: list[str] = field(default_factory=list)
    codes: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    tokens: set[str] = field(default_factory=set)              # every token the test saw, for the scan

    def record(self, family: str, cell: str, expect: Expect, outcome: str, wrote: int,
               problem: str | None) -> None:
        self.cells[family] += 1
        (self.allowed if expect.allowed else self.forbidden)[family] += 1
        self.codes[outcome] += 1
        if not expect.allowed and wrote:
            self.forbidden_with_writes.append(cell)
        if problem is not None and len(self.failures) < 30:
            self.failures.append(f"{cell}: {problem}"[:500])

    def report(self, figures: Figures, what: str) -> None:
        total = sum(self.cells.values())
        fams = ", ".join(f"{f} {n}" for f, n in sorted(self.cells.items()))
        figures(f"{what}: {total} cells ({fams}): allowed {sum(self.allowed.values())}, "
                f"forbidden {sum(self.forbidden.values())}, "
                f"forbidden-with-writes {len(self.forbidden_with_writes)}",
                cells=total, allowed=sum(self.allowed.values()), forbidden=sum(self.forbidden.values()),
                forbidden_with_writes=len(self.forbidden_with_writes))
        figures("outcomes: " + ", ".join(f"{o} {n}" for o, n in sorted(self.codes.items())))


# ------------------------------------------------------------------ tokens


def _b64(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def _unb64(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def sign(secret: bytes, claims: dict[str, Any]) -> str:
    """A token signed with the service's secret, claims and all as given: what
    ``issue`` would never sign (a device token without a scope)."""
    body = "v1." + _b64(json.dumps(claims).encode())
    return f"{body}.{_b64(hmac.new(secret, body.encode(), hashlib.sha256).digest())}"


class World:
    """The service, an unscoped admin ``prep`` socket that sets each cell's state
    up (and sends the controls), and the tokens of each cell."""

    OTHER_GAME, OTHER_ARENA = "gO", "arO"

    def __init__(self, server: Server, matrix: Matrix) -> None:
        self.server = server
        self.matrix = matrix
        self.prep: Raw | None = None
        self.ids = itertools.count(1)

    async def start(self) -> None:
        self.prep = await Raw.device(self.server, self.mint("admin", "none", "", "", "prep"))
        await self.setup_game(self.OTHER_GAME, self.OTHER_ARENA)

    def mint(self, role: str, scope: str, game: str, arena: str, name: str) -> str:
        s = self.server
        if scope == "none" and role != "admin":
            token = sign(s.svc.secret, {"sub": name, "role": role, "exp": int(time.time()) + 3600,
                                        "jti": f"{next(self.ids):016x}", "official": ""})
        else:
            token = s.token(role, name, game={"game": game, "other_game": self.OTHER_GAME}.get(scope),
                            arena={"arena": arena, "other_arena": self.OTHER_ARENA}.get(scope))
        self.matrix.tokens.add(token)
        return token

    async def issue(self, body: dict[str, Any]) -> dict[str, Any]:
        """A token issued by the unscoped admin over the API (so recorded): its claims."""
        status, doc = await self.server.api("POST", "/api/tokens", body)
        assert status == 201, doc
        self.matrix.tokens.add(doc["token"])
        claims: dict[str, Any] = doc["claims"]
        return claims

    async def admin(self, event: dict[str, Any]) -> dict[str, Any]:
        assert self.prep is not None
        event = {"id": f"p{next(self.ids)}", **event}
        await self.prep.send(json.dumps({"type": "send", "event": event}))
        reply = await self.prep.reply()
        assert reply["type"] == "ack", (event, reply)
        return reply

    async def setup_game(self, game: str, arena: str) -> None:
        """A game with players of its own: what a cell does to one (a card, a committee
        increase) carries over to no other cell's game."""
        body = game_setup_body(game, sides=(f"{game}-h", f"{game}-a"), player=lambda x: p(game, x),
                               arena=arena)
        del body["id"]  # the prepared events' own
        await self.admin({"type": "game.setup", **body, "class": "club"})

    async def prepare(self, etype: str, game: str, arena: str, n: int) -> dict[str, Any]:
        """Set ``game`` up so that the event of type ``etype`` returned is one the rules take."""
        await self.setup_game(game, arena)
        g: dict[str, Any] = {"game": game}
        obligation = target = ""
        # (goals on handicap change only before the game begins)
        begun = etype not in ("clock.start", "game.handicap")
        start = (await self.admin({"type": "clock.start", **g})) if begun else None
        if etype == "box.left_early":  # a second yellow in the game: to the box
            for _ in range(2):
                await self.admin({"type": "card", **g, "player": p(game, "h2"), "color": "yellow",
                                  "conduct": "arguing"})
        elif etype == "card.amended":  # a card recorded without its conduct, to name it
            card = await self.admin({"type": "card", **g, "player": p(game, "h3"), "color": "yellow"})
            target = card["log_id"]
        elif etype == "mount.replaced":
            await self.admin({"type": "mount.removed", **g, "player": p(game, "a1"), "reason": "unfit"})
        elif etype in ("postgame.card", "committee.increase"):
            await self.admin({"type": "game.end", **g})
        elif etype in ("committee.rescind", "committee.decrease"):
            obligation = await self.pending_obligation(game)
        elif etype == "event.complete":
            await self.admin({"type": "event.setup", "event": f"ev{n}", "class": "club", "handicap": 8,
                              "teams": []})
        elif etype in ("team.eliminated", "draw.made"):
            await self.admin({"type": "event.setup", "event": f"ev{n}", "class": "club", "handicap": 8,
                              "teams": [f"{game}-h", f"{game}-a"]})
        body: dict[str, Any] = {
            "clock.start": g, "clock.stop": g, "whistle": g, "horn": {**g, "split": True}, "game.end": g,
            "tick": g, "goal": {**g, "team": "home", "player": p(game, "h1")},
            "card": {**g, "player": p(game, "h2"), "color": "yellow", "conduct": "arguing"},
            "card.amended": {**g, "target": target, "conduct": "arguing"},
            "box.left_early": {**g, "player": p(game, "h2")}, "arena.left": {**g, "player": p(game, "h3")},
            "substitution": {**g, "team": "home", "out": p(game, "h1"), "in": p(game, "h4")},
            "mount.removed": {**g, "player": p(game, "a1"), "reason": "unfit"},
            "mount.replaced": {**g, "player": p(game, "a1")},
            "postgame.card": {**g, "player": p(game, "a2"), "level": "2y"},
            "void": {**g, "target": start["log_id"] if start else ""},
            "committee.increase": {"player": p(game, "h1"), "origin_game": game, "games": 1,
                                   "by": "committee", "reason": "striking"},
            "committee.rescind": {"obligation": obligation, "by": "committee", "reason": "mistaken"},
            "committee.decrease": {"obligation": obligation, "owed_ms": 60_000, "by": "committee",
                                   "reason": "mitigation"},
            "event.setup": {"event": f"ev{n}x", "class": "club", "handicap": 8, "teams": []},
            "team.registered": {"team": f"{game}-h", "name": "Aiken Arena", "short": "AIK",
                                "colors": {"primary": "#0B3D91", "secondary": "#FFD100"}},
            "player.registered": {"player": p(game, "h1"), "name": "Tomás Ortega", "number": 2},
            "event.complete": {"event": f"ev{n}"},
            "team.eliminated": {"event": f"ev{n}", "team": f"{game}-h"},
            "draw.made": {"event": f"ev{n}", "format": "knockout", "teams": [f"{game}-h", f"{game}-a"]},
            "game.handicap": {"game": game, "goals": {"home": 1.5, "away": 0}, "by": "committee",
                              "reason": "appeal upheld"},
            "game.scheduled": {"game": game, "starts_at": 1_796_148_000_000,
                               "officials": {"umpires": ["Marta Pérez"], "referee": "Ana Soto"}},
            "game.setup": {"game": f"{game}-new", "event": "cup", "class": "club", "handicap": 8,
                           "arena": arena,
                           "teams": {"home": {"team": "x", "players": ["x1", "x2", "x3"]},
                                     "away": {"team": "y", "players": ["y1", "y2", "y3"]}}},
        }[etype]
        return {"type": etype, **body}

    async def pending_obligation(self, game: str) -> str:
        """End ``game`` (its clock running) with a post-game card: the id of the sit-out it creates."""
        await self.admin({"type": "game.end", "game": game})
        ack = await self.admin({"type": "postgame.card", "game": game, "player": p(game, "a2"),
                                "level": "2y"})
        (ob,) = [str(n["obligation"]) for n in ack["notices"] if n["type"] == "obligation.created"]
        return ob

    async def prep_send(self, event: dict[str, Any]) -> dict[str, Any]:
        """The unscoped admin sends ``event``: its reply, whatever it is."""
        assert self.prep is not None
        await self.prep.send(json.dumps({"type": "send", "event": event}))
        return await self.prep.reply()

    async def close(self) -> None:
        if self.prep is not None:
            await self.prep.close()


def p(game: str, player: str) -> str:
    """A player of ``game``."""
    return f"{game}-{player}"


def rows(server: Server) -> list[tuple[Any, ...]]:
    return server.log_rows()


def log_ids(rows_: list[tuple[Any, ...]]) -> set[str]:
    return {json.loads(r[4])["id"] for r in rows_}


def check_writes(before: list[tuple[Any, ...]], after: list[tuple[Any, ...]], expect: Expect,
                 log_id: str | None) -> tuple[int, str | None]:
    """(rows the cell wrote, a problem or None): exactly one row with its id if allowed
    and writing, none (and its id nowhere) if refused."""
    if after[:len(before)] != before:
        return len(after) - len(before), "earlier rows changed"
    added = after[len(before):]
    if not expect.allowed or log_id is None:
        if added:
            return len(added), f"wrote {len(added)} rows: {[r[3] for r in added]}"
        if log_id is not None and log_id in log_ids(after):
            return 1, f"{log_id} is in the log"
        return 0, None
    if [json.loads(r[4])["id"] for r in added] != [log_id]:
        return len(added), f"expected exactly one row {log_id}, got {[r[3] for r in added]}"
    return 1, None


# ------------------------------------------------------------- /ws/device


async def device_cell(world: World, matrix: Matrix, n: int, role: str, scope: str, etype: str) -> None:
    server = world.server
    expect = expect_device(role, scope, etype)
    game, arena, name = f"c{n}", f"ar{n}", f"{role}-{scope}-{n}".replace("_", "-")
    event = await world.prepare(etype, game, arena, n) if expect.at == "send" else {"type": etype}
    token = world.mint(role, scope, game, arena, name)
    cid = f"cell-{n}"
    cell = f"device {role} {scope} {etype}"
    before = rows(server)
    problem: str | None = None
    if expect.at == "auth":
        first, then = await auth_attempt(server, token)
        outcome = f"auth {first.get('code', first['type'])} + close {then.get('code')}"
        if not (first["type"] == "error" and first["code"] in expect.codes and then == {"type": "closed",
                                                                                           "code": 4401}):
            problem = f"expected auth refusal {set(expect.codes)}, got {first} then {then}"
    else:
        raw = await Raw.device(server, token)
        await raw.send(json.dumps({"type": "send", "event": {**event, "id": cid}}))
        reply = await raw.reply()
        await raw.close()
        if expect.allowed:
            outcome = reply["type"]
            if reply["type"] != "ack" or reply["duplicate"]:
                problem = f"expected an ack, got {reply}"
        else:
            outcome = f"error {reply.get('code')}"
            if reply["type"] != "error" or reply["code"] not in expect.codes or reply["id"] != cid:
                problem = f"expected error {set(expect.codes)}, got {reply}"
    wrote, bad = check_writes(before, rows(server), expect, f"{name}/{cid}")
    problem = problem or bad
    if not expect.allowed and expect.at == "send" and etype not in NOBODY:
        # the control: the same event from an unscoped admin is taken, so the refusal was the token's
        control = await world.prep_send({**event, "id": f"control-{n}"})
        if control["type"] != "ack":
            problem = problem or f"control not acked: {control}"
    matrix.record("device", cell, expect, outcome, wrote, problem)


async def test_every_role_scope_and_event_type_on_the_device_socket(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, figures: Figures) -> None:
    caplog.set_level(logging.DEBUG)
    matrix = Matrix()
    t0 = time.monotonic()
    etypes = sorted(TYPE_NAMES)
    # the limiter is not what this measures: the prep socket sends a few events per cell
    async with RunningServer(tmp_path, device_rate=1e6, device_burst=10**6) as server:
        world = World(server, matrix)
        await world.start()
        n = itertools.count(1)
        for role in ROLES:
            for scope in SCOPES:
                for etype in etypes:
                    await device_cell(world, matrix, next(n), role, scope, etype)
        await world.close()
        secrets = scan_for_secrets(server, caplog, matrix.tokens)
    matrix.report(figures, "device events")
    figures(f"device events: {len(matrix.tokens)} tokens, secrets found in logs/log rows/SQLite file "
            f"{len(secrets)}; {time.monotonic() - t0:.1f}s", secrets_found=len(secrets))
    assert matrix.failures == [], matrix.failures
    assert matrix.forbidden_with_writes == []
    assert sum(matrix.cells.values()) == len(ROLES) * len(SCOPES) * len(etypes)
    assert secrets == []


# ------------------------------------------------------ /ws/watch and HTTP


async def watch_cell(world: World, matrix: Matrix, role: str, scope: str, action: str) -> None:
    server = world.server
    expect = expect_watch(role, scope, action)
    before = rows(server)
    raw = await Raw.connect(server.watch_url)
    if role != "anonymous":
        token = world.mint(role, scope, "gw", "arw", f"w-{role}-{scope}".replace("_", "-"))
        await raw.send(json.dumps({"type": "auth", "token": token}))
    sub = {"type": "subscribe", "game": "gw"} if action == "subscribe game" else {"type": "subscribe",
                                                                                  "arena": "arw"}
    with contextlib.suppress(websockets.ConnectionClosed):
        await raw.send(json.dumps(sub))
    got: list[dict[str, Any]] = []
    while not got or got[-1]["type"] not in ("snapshot", "error", "closed"):
        msg = await raw.reply()
        if msg["type"] not in ("heartbeat", "presence"):
            got.append(msg)
    if got[-1]["type"] == "error":  # then the close, if one comes: whatever precedes the pong to a ping
        with contextlib.suppress(websockets.ConnectionClosed):
            await raw.send(json.dumps({"type": "ping", "device_time": 1}))
        while (msg := await raw.reply())["type"] not in ("pong", "closed"):
            pass
        if msg["type"] == "closed":
            got.append(msg)
    await raw.close()
    kinds = [g["type"] for g in got]
    problem = None
    if expect.allowed:
        outcome = "snapshot"
        if kinds != ["snapshot"] or got[0]["game"] != "gw":
            problem = f"expected a snapshot of gw, got {got}"
    elif expect.at == "auth":
        outcome = f"auth {got[0].get('code') if got else None} + close 4401"
        if kinds != ["error", "closed"] or got[0]["code"] not in expect.codes or got[1]["code"] != 4401:
            problem = f"expected {set(expect.codes)} then 4401, got {got}"
    else:
        outcome = f"error {got[0].get('code') if got else None}"
        if not kinds or kinds[0] != "error" or got[0]["code"] not in expect.codes or "snapshot" in kinds:
            problem = f"expected {set(expect.codes)}, got {got}"
    wrote, bad = check_writes(before, rows(server), Expect(False), None)
    matrix.record("watch", f"watch {role} {scope} {action}", expect, outcome, wrote, problem or bad)


async def http_cell(world: World, matrix: Matrix, n: int, role: str, scope: str, route: str) -> None:
    server = world.server
    expect = expect_http(role, scope, route)
    game, arena = f"h{n}", f"har{n}"
    await world.setup_game(game, arena)
    cid, name = f"http-{n}", f"h-{role}-{scope}-{n}".replace("_", "-")
    token = None if role == "anonymous" else world.mint(role, scope, game, arena, name)
    method, path = route.split()
    body: Any = None
    if route == "POST /api/events":
        body = {"id": cid, "event": f"hev{n}", "class": "club", "handicap": 8, "teams": []}
    elif route == "POST /api/events/{e}/complete":
        await world.admin({"type": "event.setup", "event": f"hcomp{n}", "class": "club", "handicap": 8,
                           "teams": []})
        path, body = f"/api/events/hcomp{n}/complete", {"id": cid}
    elif route in ("POST /api/games", "POST /api/games/preview"):
        body = {"id": cid, "game": f"{game}-new", "event": "cup", "class": "club", "handicap": 8,
                "arena": arena,
                "teams": {"home": {"team": "x", "players": ["x1", "x2", "x3"]},
                          "away": {"team": "y", "players": ["y1", "y2", "y3"]}}}
    elif route == "POST /api/committee/increase":
        await world.admin({"type": "clock.start", "game": game})
        await world.admin({"type": "game.end", "game": game})
        body = {"id": cid, "player": p(game, "h1"), "origin_game": game, "games": 1, "by": "committee",
                "reason": "striking"}
    elif route in ("POST /api/committee/rescind", "POST /api/committee/decrease"):
        await world.admin({"type": "clock.start", "game": game})
        body = {"id": cid, "obligation": await world.pending_obligation(game), "by": "committee",
                "reason": "mistaken", **({"owed_ms": 60_000} if route.endswith("decrease") else {})}
    elif route == "POST /api/events/{e}/eliminate":
        await world.admin({"type": "event.setup", "event": f"helim{n}", "class": "club", "handicap": 8,
                           "teams": [f"{game}-h"]})
        path, body = f"/api/events/helim{n}/eliminate", {"id": cid, "team": f"{game}-h"}
    elif route == "POST /api/tokens":
        body = {"role": "umpire", "device": f"hd{n}", "game": game}
    elif route == "POST /api/tokens/revoke":  # a token the service issued (and recorded) for the game
        body = {"jti": (await world.issue({"role": "umpire", "device": f"victim{n}", "game": game}))["jti"]}
    before, revoked_before = rows(server), revoked_rows(server)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as s, s.request(
            method, server.http + path, data=None if body is None else json.dumps(body).encode(),
            headers=headers) as r:
        status, text = r.status, await r.text()
    problem = None
    if expect.allowed:
        outcome = str(status)
        if status not in (200, 201):
            problem = f"expected 200/201, got {status} {text[:200]}"
        if route == "POST /api/tokens" and status == 201:
            matrix.tokens.add(json.loads(text)["token"])
    else:
        outcome = str(status)
        if str(status) not in expect.codes:
            problem = f"expected {set(expect.codes)}, got {status} {text[:200]}"
        if token and token in text:
            problem = "the refusal echoes the token"
    writes = route in HTTP_WRITES and expect.allowed
    wrote, bad = check_writes(before, rows(server), expect if writes else Expect(False),
                              f"{name}/{cid}" if writes else None)
    if route == "POST /api/tokens/revoke":
        grew = len(revoked_rows(server)) - len(revoked_before)
        if grew != (1 if expect.allowed else 0):
            problem = problem or f"revoked table grew by {grew}"
            wrote += grew
    if not expect.allowed and route in HTTP_WRITES:
        # the control: the same request from the unscoped admin is taken
        async with aiohttp.ClientSession() as s, s.request(
                method, server.http + path, data=json.dumps({**body, "id": f"control-{n}"}).encode(),
                headers={"Authorization": f"Bearer {server.admin}"}) as r:
            if r.status != 201:
                problem = problem or f"control answered {r.status} {await r.text()}"
    matrix.record("http", f"http {role} {scope} {route}", expect, outcome, wrote, problem or bad)


async def test_every_role_and_scope_on_the_watch_socket_and_the_admin_api(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, figures: Figures) -> None:
    caplog.set_level(logging.DEBUG)
    matrix = Matrix()
    t0 = time.monotonic()
    async with RunningServer(tmp_path, device_rate=1e6, device_burst=10**6) as server:
        matrix.tokens.add(server.admin)
        world = World(server, matrix)
        await world.start()
        await world.setup_game("gw", "arw")
        for role in [*ROLES, "anonymous"]:
            for scope in SCOPES if role != "anonymous" else ("none",):
                for action in ("subscribe game", "subscribe arena"):
                    await watch_cell(world, matrix, role, scope, action)
        n = itertools.count(1)
        for role in [*ROLES, "anonymous"]:
            for scope in SCOPES if role != "anonymous" else ("none",):
                for route in HTTP_ROUTES:
                    await http_cell(world, matrix, next(n), role, scope, route)
        await world.close()
        secrets = scan_for_secrets(server, caplog, matrix.tokens)
    matrix.report(figures, "watch + admin API")
    figures(f"watch + admin API: secrets found {len(secrets)}; {time.monotonic() - t0:.1f}s",
            secrets_found=len(secrets))
    assert matrix.failures == [], matrix.failures
    assert matrix.forbidden_with_writes == []
    assert secrets == []


# ------------------------------------------- a committee: its own event and another


COLORS = {"primary": "#0b3d91", "secondary": "#ffd100"}


def players_of(team: str) -> list[str]:
    """The players registered on ``team`` (``ta2``: ``pa4``, ``pa5``, ``pa6``)."""
    x, i = team[1], int(team[2])
    return [f"p{x}{3 * (i - 1) + k}" for k in (1, 2, 3)]


def _team(team: str, name: str, **more: Any) -> dict[str, Any]:
    return {"team": team, "name": name, "short": team.upper(), "colors": COLORS, **more}


def _setup(game: str, event: str, home: str, away: str) -> dict[str, Any]:
    return {"game": game, "event": event, "handicap": 8, "arena": f"ar-{game}",
            "teams": {"home": {"team": home, "players": players_of(home)},
                      "away": {"team": away, "players": players_of(away)}}}


@dataclass(frozen=True)
class Cell:
    """What the committee of ``ev-a`` asks of its own event (``own``) or of ``ev-b``
    (``other``): one resource of docs/security.md's table, read or written."""

    resource: str
    action: str                 # "read" or "write"
    target: str                 # "own" or "other"
    what: str
    method: str
    path: str
    body: Any = None            # a JSON body; bytes: a CSV
    via: str = "http"           # "device": an event on /ws/device; "watch": a graphics command

    def name(self) -> str:
        return f"committee of ev-a, {self.target} event: {self.resource} {self.action}: {self.what}"


def committee_cells(jtis: dict[str, str]) -> list[Cell]:
    """Each resource of the table, read and written (where a route does either), in the
    committee's own event (x = a) and then in the other (x = b)."""
    out: list[Cell] = []
    for target, x in (("own", "a"), ("other", "b")):
        ev, g1, g2, g3 = f"ev-{x}", f"{x}-g1", f"{x}-g2", f"{x}-g3"
        csv = (b"team,team_name,short,primary,secondary,player,player_name,number,handicap\n"
               + f"t{x}1,Renamed by CSV,RCSV,#0b3d91,#ffd100,p{x}3,Renamed by CSV,9,2\n".encode())
        out += [
            Cell("events", "read", target, "the events", "GET", "/api/events"),
            Cell("events", "write", target, "a team eliminated", "POST", f"/api/events/{ev}/eliminate",
                 {"team": f"t{x}4"}),
            Cell("teams", "read", target, "a team", "GET", f"/api/teams/t{x}1"),
            Cell("teams", "write", target, "a team renamed", "POST", "/api/teams",
                 _team(f"t{x}1", "Renamed")),
            Cell("teams", "write", target, "a team renamed and entered in ev-a", "POST", "/api/teams",
                 _team(f"t{x}2", "Renamed", event="ev-a")),
            Cell("teams", "write", target, "a roster file naming a team", "POST", "/api/rosters/import", csv),
            Cell("players", "read", target, "a player", "GET", f"/api/players/p{x}1"),
            Cell("players", "write", target, "a player renamed", "POST", "/api/players",
                 {"player": f"p{x}2", "name": "Renamed", "team": f"t{x}1"}),
            Cell("players", "write", target, "ev-a's player moved onto a team", "POST", "/api/players",
                 {"player": "pa5", "name": "Moved", "team": f"t{x}1"}),
            Cell("players", "write", target, "a player moved onto ev-a's team", "POST", "/api/players",
                 {"player": f"p{x}6", "name": "Moved", "team": "ta2"}),
            Cell("games", "read", target, "a game", "GET", f"/api/games/{g1}"),
            Cell("games", "write", target, "a game set up", "POST", "/api/games",
                 _setup(f"{x}-new", ev, f"t{x}1", f"t{x}2")),
            Cell("games", "write", target, "an ev-a game naming a team", "POST", "/api/games",
                 _setup(f"a-with-{x}", "ev-a", "ta1", f"t{x}3")),
            Cell("play", "write", target, "a game's clock started", "", "",
                 {"type": "clock.start", "game": g2}, via="device"),
            Cell("graphics", "write", target, "a game's graphics commanded", "", "",
                 {"type": "graphics", "game": g1, "action": "lang", "lang": "es"}, via="watch"),
            Cell("tokens", "read", target, "a game's tokens", "GET", f"/api/tokens?game={g1}"),
            Cell("tokens", "write", target, "a token issued", "POST", "/api/tokens",
                 {"role": "umpire", "device": f"u-{x}", "game": g1}),
            Cell("tokens", "write", target, "a handheld paired", "POST", "/api/pairings",
                 {"game": g1, "role": "referee"}),
            Cell("tokens", "write", target, "a token revoked", "POST", "/api/tokens/revoke",
                 {"jti": jtis[x], "reason": "lost"}),
            Cell("logs", "read", target, "the event's log", "GET", f"/api/events/{ev}/log"),
            Cell("reports", "read", target, "the event's reports", "GET", f"/api/events/{ev}/reports.csv"),
            Cell("decisions", "read", target, "the event's decisions", "GET", f"/api/events/{ev}/decisions"),
            Cell("decisions", "read", target, "the event's decisions as CSV", "GET",
                 f"/api/events/{ev}/decisions.csv"),
            Cell("previews", "read", target, "a game's preview", "GET", f"/api/games/{g1}/preview"),
            Cell("previews", "read", target, "a set-up previewed", "POST", "/api/games/preview",
                 _setup(f"{x}-next", ev, f"t{x}1", f"t{x}2")),
            Cell("previews", "read", target, "an ev-a set-up naming a team, previewed", "POST",
                 "/api/games/preview", _setup(f"a-next-{x}", "ev-a", "ta1", f"t{x}2")),
            Cell("previews", "read", target, "an ev-a set-up of a game's id, previewed", "POST",
                 "/api/games/preview", _setup(g1 if x == "b" else "a-next", "ev-a", "ta1", "ta2")),
            Cell("obligations", "read", target, "a player's obligations", "GET",
                 f"/api/players/p{x}1/obligations"),
            Cell("obligations", "read", target, "the ledger", "GET", "/api/obligations"),
            Cell("decisions", "write", target, "a penalty increased", "POST", "/api/committee/increase",
                 {"player": f"p{x}1", "origin_game": g3, "games": 1, "by": "HTC", "reason": "striking"}),
            Cell("store", "read", target, "the state's digest", "GET", "/api/state"),
            Cell("public", "read", target, "the event's public page", "GET", f"/events/{ev}"),
            Cell("public", "read", target, "the event's public data", "GET", f"/api/public/events/{ev}"),
        ]
    return out


async def two_events(server: Server) -> dict[str, str]:
    """``ev-a`` and ``ev-b``, each with four teams (``ta1``…) of three registered players,
    a game to preview and pair (``a-g1``), one to play (``a-g2``), one ended (``a-g3``), and
    an umpire token issued for its first game, by the admin: each event's token's jti."""
    prep = await Raw.device(server, server.admin)
    jtis: dict[str, str] = {}
    for x in ("a", "b"):
        teams = [f"t{x}{i}" for i in (1, 2, 3, 4)]
        status, ack = await server.api("POST", "/api/events", {
            "id": f"ev-{x}", "event": f"ev-{x}", "class": "club", "handicap": 8, "teams": teams})
        assert status == 201, ack
        for team in teams:
            status, ack = await server.api("POST", "/api/teams", _team(team, f"Team {team}"))
            assert status == 201, ack
            for player in players_of(team):
                status, ack = await server.api("POST", "/api/players",
                                               {"player": player, "name": f"Player {player}", "team": team})
                assert status == 201, ack
        for game in ("g1", "g2", "g3"):
            status, ack = await server.api("POST", "/api/games", _setup(f"{x}-{game}", f"ev-{x}", f"t{x}1",
                                                                          f"t{x}2"))
            assert status == 201, ack
        for n, etype in enumerate(("clock.start", "game.end")):
            await prep.send(json.dumps({"type": "send", "event": {"type": etype, "game": f"{x}-g3",
                                                                  "id": f"{x}-g3-{n}"}}))
            assert (await prep.reply())["type"] == "ack"
        status, doc = await server.api("POST", "/api/tokens", {"role": "umpire", "device": f"v-{x}",
                                                               "game": f"{x}-g1"})
        assert status == 201, doc
        jtis[x] = doc["claims"]["jti"]
    await prep.close()
    return jtis


def expect_committee(cell: Cell) -> Expect:
    """The cell's answer, from the ``committee`` column of docs/security.md's table."""
    word = may("committee", cell.resource, cell.action)
    if word in ("all", "public") or (word == "event" and cell.target == "own"):
        return Expect(True)
    # "event", of another event: out_of_scope; "none": a plain 403 (an HTTP route's admin check)
    return Expect(False, cell.via, frozenset({"out_of_scope" if word == "event" else "403"}))


def _count(server: Server, table: str) -> int:
    import sqlite3

    with sqlite3.connect(server.data / "arena.sqlite") as c:
        n: int = c.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # our own table names
        return n


async def committee_cell(server: Server, token: str, cell: Cell) -> tuple[str, str | None, str | None]:
    """Ask it: (outcome, the refusal's code or None, a problem or None)."""
    if cell.via == "device":
        raw = await Raw.device(server, token)
        event = {**cell.body, "id": f"cell-{time.monotonic_ns()}"}
        await raw.send(json.dumps({"type": "send", "event": event}))
        reply = await raw.reply()
        await raw.close()
        return reply["type"], reply.get("code"), None
    if cell.via == "watch":
        raw = await Raw.connect(server.watch_url)
        await raw.send(json.dumps({"type": "auth", "token": token}))
        await raw.send(json.dumps(cell.body))
        while (reply := await raw.reply())["type"] not in ("graphics", "error", "closed"):
            pass
        await raw.close()
        return reply["type"], reply.get("code"), None
    headers = {"Authorization": f"Bearer {token}"}
    if isinstance(cell.body, bytes):
        headers["Content-Type"] = "text/csv"
    data = cell.body if isinstance(cell.body, bytes) or cell.body is None else json.dumps(cell.body).encode()
    async with aiohttp.ClientSession() as s, s.request(cell.method, server.http + cell.path, data=data,
                                                       headers=headers) as r:
        status, text = r.status, await r.text()
    try:
        code = json.loads(text).get("code") if r.content_type == "application/json" else None
    except (ValueError, AttributeError):
        code = None
    return str(status), code or (str(status) if status >= 400 else None), text[:300]


async def test_a_committee_s_cells_against_its_own_event_and_another(tmp_path: Path,
                                                                     figures: Figures) -> None:
    """docs/security.md's ``committee`` column, cell by cell, as the committee of ``ev-a`` asks
    them of its own event and of ``ev-b``: allowed where the table says ``all``, ``public``
    or ``event`` (its own), refused ``out_of_scope`` where it says ``event`` (another's),
    refused 403 where it says ``none``. A refused write leaves the log, the tokens issued and
    those revoked as they were; the same write from the unscoped admin is then taken, so the
    refusal was the token's. Event B's rosters are the admin's as before, read back."""
    matrix = Matrix()
    async with RunningServer(tmp_path, device_rate=1e6, device_burst=10**6) as server:
        jtis = await two_events(server)
        token = server.token("committee", "htc-a", event="ev-a")
        matrix.tokens.add(token)
        cells = committee_cells(jtis)
        assert {c.resource for c in cells} == set(RESOURCES)  # every row of the table is asked
        controls: list[Cell] = []
        for cell in cells:
            expect = expect_committee(cell)
            before = (rows(server), _count(server, "token"), _count(server, "revoked"))
            outcome, code, text = await committee_cell(server, token, cell)
            after = (rows(server), _count(server, "token"), _count(server, "revoked"))
            problem = None
            if expect.allowed:
                if outcome not in ("200", "201", "ack", "graphics"):
                    problem = f"expected it taken, got {outcome} {code} {text}"
            else:
                if outcome in ("200", "201", "ack", "graphics") or code not in expect.codes:
                    problem = f"expected {set(expect.codes)}, got {outcome} {code} {text}"
                if after != before:
                    problem = problem or (f"a refused write changed the store: log {len(before[0])} -> "
                                          f"{len(after[0])} rows, tokens {before[1]} -> {after[1]}, "
                                          f"revoked {before[2]} -> {after[2]}")
                if cell.action == "write" and cell.via == "http":
                    controls.append(cell)
            wrote = len(after[0]) - len(before[0])
            matrix.record("committee", cell.name(), expect, outcome if code is None else f"{outcome} {code}",
                          wrote if not expect.allowed else 0, problem)
        # Event B's rosters, read back: the admin's names, on its teams' page and its game's roster.
        _, team = await server.api("GET", "/api/teams/tb1")
        _, game = await server.api("GET", "/api/games/b-g1")
        shown = (team["current"]["name"], game["roster"]["home"]["name"], len(team["history"]))
        if shown != ("Team tb1", "Team tb1", 1):
            matrix.failures.append(f"event B's team changed: {team['current']} {game['roster']['home']}")
        for player in ("pb2", "pb6"):
            _, doc = await server.api("GET", f"/api/players/{player}")
            if (doc["current"]["name"], len(doc["history"])) != (f"Player {player}", 1):
                matrix.failures.append(f"event B's player changed: {doc['current']}")
        # The controls: each refused write, from the unscoped admin, is taken.
        for cell in controls:
            outcome, code, text = await committee_cell(server, server.admin, cell)
            if outcome not in ("200", "201"):
                matrix.failures.append(f"control of {cell.name()}: {outcome} {code} {text}")
    matrix.report(figures, "committee cells")
    assert matrix.failures == [], matrix.failures
    assert matrix.forbidden_with_writes == []
    assert matrix.allowed["committee"] and matrix.forbidden["committee"]


# ------------------------------------------------------------ token variants


def forgeries(good: str, secret_other: bytes, umpire: str) -> dict[str, str]:
    """Tokens that must not authenticate, made from a valid unscoped admin token."""
    version, payload, sig = good.split(".")
    raw_sig = bytearray(_unb64(sig))
    raw_sig[-1] ^= 1
    claims = json.loads(_unb64(payload))
    _, u_payload, u_sig = umpire.split(".")
    longer = {**claims, "exp": claims["exp"] + 10**6}
    promoted = _b64(json.dumps({**json.loads(_unb64(u_payload)), "role": "admin", "game": None}).encode())
    jwt_header = _b64(b'{"alg":"none","typ":"JWT"}')
    return {
        "signature bit flipped": f"{version}.{payload}.{_b64(bytes(raw_sig))}",
        "signature truncated": f"{version}.{payload}.{sig[:-4]}",
        "signature empty": f"{version}.{payload}.",
        "no signature part": f"{version}.{payload}",
        "signature of another token": f"{version}.{payload}.{u_sig}",
        "payload of another token": f"{version}.{u_payload}.{sig}",
        "umpire promoted to admin": f"{version}.{promoted}.{u_sig}",
        "expiry extended": f"{version}.{_b64(json.dumps(longer).encode())}.{sig}",
        "version v2": f"v2.{payload}.{sig}",
        "version V1": f"V1.{payload}.{sig}",
        "alg none": f"none.{payload}.",
        "jwt-style header": f"{jwt_header}.{payload}.",
        "other secret": sign(secret_other, claims),
        "truncated half": good[: len(good) // 2],
        "truncated one char": good[:-1],
        "extra part": f"{good}.x",
        "non-ascii": f"{version}.{payload}.{sig[:-1]}\u00e9",
        "empty": "",
    }


async def refused_everywhere(server: Server, token: str, codes: set[str]) -> tuple[str, int, str | None]:
    """Device auth, watch auth and an admin HTTP call with ``token``: all refused,
    nothing written even with a valid event sent right behind the auth frame."""
    before = rows(server)
    raw = await Raw.connect(server.device_url)
    await raw.send(json.dumps({"type": "auth", "token": token}))
    with contextlib.suppress(websockets.ConnectionClosed):
        await raw.send(json.dumps({"type": "send", "event": {"type": "event.setup", "id": "sneak", "event":
                                                             f"sneak{time.monotonic_ns()}", "class": "club",
                                                             "handicap": 8, "teams": []}}))
    first, then = await raw.reply(), await raw.reply()
    await raw.close()
    problems = []
    if not (first["type"] == "error" and first["code"] in codes and then == {"type": "closed", "code": 4401}):
        problems.append(f"device: {first} {then}")
    raw = await Raw.connect(server.watch_url)
    await raw.send(json.dumps({"type": "auth", "token": token}))
    wfirst, wthen = await raw.reply(), await raw.reply()
    await raw.close()
    if not (wfirst["type"] == "error" and wfirst["code"] in codes and wthen == {"type": "closed",
                                                                                "code": 4401}):
        problems.append(f"watch: {wfirst} {wthen}")
    async with aiohttp.ClientSession() as s:
        for method, path, body in (("GET", "/api/log", None),
                                   ("POST", "/api/events", {"id": "sneak-http", "event": "sneak-http",
                                                            "class": "club", "handicap": 8, "teams": []})):
            try:
                async with s.request(method, server.http + path, headers={"Authorization": f"Bearer {token}"},
                                     data=None if body is None else json.dumps(body).encode()) as r:
                    if r.status != 401:
                        problems.append(f"http {path}: {r.status}")
            except ValueError:  # a header aiohttp won't send (a newline, ...): nothing to refuse
                pass
    wrote, bad = check_writes(before, rows(server), Expect(False), None)
    if bad:
        problems.append(bad)
    return f"{first.get('code')}", wrote, "; ".join(problems) or None


ORIGINS = ["http://127.0.0.1.evil.test", "http://evil-127.0.0.1", "http://127.0.0.1:{port}.evil.test",
           "http://127.0.0.1:{port}@evil.test", "http://evil.test/127.0.0.1:{port}", "https://127.0.0.1.evil.test",
           "http://127.0.0.1:{port2}", "http://127.0.0.1", "ws://127.0.0.1:{port}", "wss://127.0.0.1:{port}",
           "file://", "null", "ftp://127.0.0.1:{port}", "http://localhost:{port}", "http://[::1]:{port}",
           "HTTP://127.0.0.1:{port}", "http://127.0.0.1:{port}/",
           "http://127.0.0.1:{port}, http://evil.test", "http://0x7f000001:{port}", "http://2130706433:{port}",
           "http://127.1:{port}", "http://127.0.0.1:0{port}", "http://evil.test"]


async def test_every_token_variant_is_refused(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                              figures: Figures) -> None:
    caplog.set_level(logging.DEBUG)
    matrix = Matrix()
    async with RunningServer(tmp_path, auth_timeout=1.0) as server:
        world = World(server, matrix)
        await world.start()
        good = world.mint("admin", "none", "", "", "admin-x")
        umpire = world.mint("umpire", "game", world.OTHER_GAME, "", "ump-x")
        variants = forgeries(good, os.urandom(32), umpire)
        variants["expired admin"] = server.token("admin", "old", ttl=-1)
        variants["expired umpire"] = server.token("umpire", "old-u", game=world.OTHER_GAME, ttl=-1)
        variants["unscoped umpire, signed"] = world.mint("umpire", "none", "", "", "rogue")
        for name, token in variants.items():
            matrix.tokens.add(token)
            codes = {"expired"} if name.startswith("expired") else {"bad_token"}
            outcome, wrote, problem = await refused_everywhere(server, token, codes)
            matrix.record("variant", f"variant {name}", Expect(False), outcome, wrote, problem)
        # revoked: issued through the API, revoked, then refused, and still after a restart
        async with aiohttp.ClientSession() as s:
            async with s.post(server.http + "/api/tokens", json={"role": "admin", "device": "revokee"},
                              headers={"Authorization": f"Bearer {server.admin}"}) as r:
                issued = await r.json()
            revokee = issued["token"]
            matrix.tokens.add(revokee)
            async with s.post(server.http + "/api/tokens/revoke", json={"jti": issued["claims"]["jti"]},
                              headers={"Authorization": f"Bearer {server.admin}"}) as r:
                assert r.status == 200
        outcome, wrote, problem = await refused_everywhere(server, revokee, {"revoked"})
        matrix.record("variant", "variant revoked", Expect(False), outcome, wrote, problem)
        # a token in the query string is not authentication: a send first is auth_required
        for query in ("token", "access_token", "auth", "authorization", "bearer"):
            before = rows(server)
            raw = await Raw.connect(f"{server.device_url}?{query}={good}")
            sneak = {"type": "event.setup", "id": "q", "event": "q", "class": "club", "handicap": 8,
                     "teams": []}
            await raw.send(json.dumps({"type": "send", "event": sneak}))
            first, then = await raw.reply(), await raw.reply()
            await raw.close()
            ok = first.get("code") == "auth_required" and then == {"type": "closed", "code": 4401}
            async with aiohttp.ClientSession() as s, s.get(f"{server.http}/api/log?{query}={good}") as r:
                ok = ok and r.status == 401
            wrote, bad = check_writes(before, rows(server), Expect(False), None)
            matrix.record("query", f"query ?{query}=", Expect(False), "device auth_required + http 401",
                          wrote, bad or (None if ok else f"{first} {then} http {r.status}"))
        # Origin look-alikes on the upgrade: 403 before any frame
        for path in ("/ws/device", "/ws/watch"):
            for template in ORIGINS:
                origin = template.format(port=server.port, port2=server.port + 1)
                try:
                    ws = await websockets.connect(f"ws://127.0.0.1:{server.port}{path}",
                                                  origin=origin)  # type: ignore[arg-type]
                    await ws.close()
                    status = 101
                except websockets.InvalidStatus as err:
                    status = err.response.status_code
                matrix.record("origin", f"origin {path} {origin!r}", Expect(False), str(status), 0,
                              None if status == 403 else f"upgrade answered {status}")
            own = await websockets.connect(f"ws://127.0.0.1:{server.port}{path}",
                                           origin=f"http://127.0.0.1:{server.port}")  # type: ignore[arg-type]
            await own.close()
        await world.close()
        secrets = scan_for_secrets(server, caplog, matrix.tokens)
    # a service without public viewing: a token in the watch URL authenticates nothing either
    async with RunningServer(tmp_path / "private", public_watch=False) as private:
        await private.setup_game("g1", "a1")
        for query in ("token", "access_token", "auth"):
            raw = await Raw.connect(f"{private.watch_url}?game=g1&{query}={private.admin}")
            await raw.send(json.dumps({"type": "subscribe", "game": "g1"}))
            first = await raw.reply()
            await raw.close()
            matrix.record("query", f"query ?{query}= on a private /ws/watch", Expect(False),
                          f"watch {first.get('code', first['type'])}", 0,
                          None if first.get("code") == "auth_required" else f"got {first}")
        matrix.tokens.add(private.admin)
        secrets += scan_for_secrets(private, caplog, matrix.tokens)
    # revoked, then the service restarted: still revoked
    async with RunningServer(tmp_path) as again:
        outcome, wrote, problem = await refused_everywhere(again, revokee, {"revoked"})
        matrix.record("variant", "variant revoked, after a restart", Expect(False), outcome, wrote, problem)
        secrets += scan_for_secrets(again, caplog, matrix.tokens)
    matrix.report(figures, "token variants")
    figures(f"token variants: secrets found {len(secrets)}", secrets_found=len(secrets))
    assert matrix.failures == [], matrix.failures
    assert secrets == []


# ------------------------------------------------------------ the secrets scan


def scan_for_secrets(server: Server, caplog: pytest.LogCaptureFixture, tokens: set[str]) -> list[str]:
    """Every token the test saw (and each one's signature), and the secret key (raw,
    hex, base64), in: every record the service logged, the log rows, the SQLite file."""
    secret = (server.data / "secret.key").read_bytes()
    needles = {t for t in tokens if len(t) >= 16}
    needles |= {t.split(".")[2] for t in tokens if t.count(".") == 2 and len(t.split(".")[2]) >= 16}
    needles |= {secret.hex(), base64.b64encode(secret).decode(), _b64(secret)}
    hits: list[str] = []
    for r in caplog.records:
        if r.name.startswith("websockets"):  # the test's own client library, not the service
            continue
        text = r.getMessage() + " " + " ".join(repr(v) for v in vars(r).values())
        hits += [f"log {r.name}: {n[:12]}…" for n in needles if n in text]
    for row in server.log_rows():
        blob = repr(row)
        hits += [f"log row {row[3]}: {n[:12]}…" for n in needles if n in blob]
    for path in server.data.glob("arena.sqlite*"):
        data = path.read_bytes()
        hits += [f"{path.name}: {n[:12]}…" for n in needles if n.encode() in data]
        if secret in data:
            hits.append(f"{path.name}: the secret's bytes")
    return hits


def test_the_service_process_logs_no_token(tmp_path: Path, figures: Figures) -> None:
    """``arena-stream serve`` as operators run it: its stderr and stdout, after tokens
    issued, used, refused, revoked, in query strings and in an over-long header."""
    data, log = tmp_path / "data", tmp_path / "service.log"
    srv = ServiceProcess(data, log=log)  # stdout and stderr both
    srv.start()
    try:
        tokens = asyncio.run(_exercise(srv.http, srv.port, srv.admin))
    finally:
        srv.stop()
    secret = (data / "secret.key").read_bytes()
    needles = tokens | {t.split(".")[2] for t in tokens if t.count(".") == 2}
    needles |= {secret.hex(), base64.b64encode(secret).decode(), _b64(secret)}
    text = log.read_bytes()
    hits = [f"{log.name}: {n[:12]}…" for n in needles if len(n) >= 16 and n.encode() in text]
    if secret in text:
        hits.append(f"{log.name}: the secret's bytes")
    lines = text.decode(errors="replace").splitlines()
    figures(f"service process: {len(tokens)} tokens used, {len(lines)} lines of stdout and stderr, "
            f"tracebacks {sum('Traceback' in ln for ln in lines)}, secrets found {len(hits)}",
            process_secrets_found=len(hits))
    assert hits == []
    assert not any("Traceback" in ln for ln in lines), lines[:5]


async def _exercise(base: str, port: int, admin: str) -> set[str]:
    tokens = {admin}
    h = {"Authorization": f"Bearer {admin}"}
    async with aiohttp.ClientSession() as s:
        async with s.post(f"{base}/api/games", headers=h, json={
                "id": "s", "game": "g1", "event": "cup", "class": "club", "handicap": 8, "arena": "a1",
                "teams": {"home": {"team": "x", "players": HOME},
                          "away": {"team": "y", "players": AWAY}}}) as r:
            assert r.status == 201
        issued = []
        for role in ("umpire", "timekeeper", "display", "admin"):
            body = {"role": role, "device": f"d-{role}", "official": "Pat", **({} if role == "admin" else
                                                                               {"game": "g1"})}
            async with s.post(f"{base}/api/tokens", headers=h, json=body) as r:
                issued.append(await r.json())
        tokens |= {i["token"] for i in issued}
        ump = issued[0]["token"]
        for tok in (ump, ump[:-3] + "abc", issued[2]["token"]):
            raw = await Raw.connect(f"ws://127.0.0.1:{port}/ws/device")
            await raw.send(json.dumps({"type": "auth", "token": tok}))
            if (await raw.reply())["type"] == "welcome":
                await raw.send(json.dumps({"type": "send", "event": {"type": "clock.start", "game": "g1",
                                                                     "id": "x"}}))
                await raw.reply()
            await raw.close()
        async with s.post(f"{base}/api/tokens/revoke", headers=h, json={"jti": issued[0]["claims"]["jti"]}):
            pass
        raw = await Raw.connect(f"ws://127.0.0.1:{port}/ws/device?token={ump}")
        await raw.send(json.dumps({"type": "auth", "token": ump}))  # revoked now
        await raw.reply()
        await raw.close()
        for tok in (ump, "v1.x.y", issued[3]["token"][:-2] + "AA"):
            async with s.get(f"{base}/api/log?token={tok}", headers={"Authorization": f"Bearer {tok}"}):
                pass
    # an Authorization header too long for aiohttp's parser: it used to quote it in a traceback
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /api/log HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {admin}".encode()
                 + b"A" * 9000 + b"\r\n\r\n")
    await reader.readline()
    writer.close()
    return tokens
