"""Shared pieces of the per-clause tables (``test_clauses.py`` and ``test_clause_*.py``).

A *case* is a function taking a fresh ``Script``; its docstring starts with the
clause id(s) it checks (``R3:``, ``A1/R9:``) and quotes or paraphrases the
clause. ``table(*cases)`` turns cases into ``pytest.param``s whose ids are the
function names; ``@engine_bug(reason)`` marks a case that shows a suspected
engine bug as a strict xfail.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from stream.rules import codec
from stream.rules import notices as nt
from stream.rules.clauses import CLAUSES
from stream.rules.engine import Engine
from stream.rules.ledger import Obligation
from stream.rules.view import GameView, MountView, PlayerView, SitoutView

from .script import T0, Script, game_setup

Case = Callable[[Script], None]

# Rule quantities, written from the rule text (not read from the engine).
TWO_MIN = 120_000      # R3, R4, R8: "the next two minutes of play"
FOUR_MIN = 240_000     # R6: "the next four minutes of play"
FIVE_MIN = 300_000     # R17: "a maximum of 5 minutes for its replacement"
PERIOD = 450_000       # the Script's setup: period_ms (7½ minutes)

_XFAIL: dict[str, str] = {}


def engine_bug(reason: str) -> Callable[[Case], Case]:
    """Mark a case as showing a suspected engine bug (strict xfail)."""

    def mark(f: Case) -> Case:
        _XFAIL[f.__name__] = reason
        return f

    return mark


def table(*cases: Case) -> list[Any]:
    """Cases as pytest params, ids = function names, engine bugs as strict xfails."""
    out = []
    for f in cases:
        reason = _XFAIL.get(f.__name__)
        marks = [] if reason is None else [pytest.mark.xfail(strict=True, reason=reason)]
        out.append(pytest.param(f, id=f.__name__, marks=marks))
    return out


_CITE = re.compile(r"((?:[RAL]\d+)(?:/[RAL]\d+)*)(?: \([^)]*\))?:")


def check_cases(params: list[Any]) -> None:
    """Every case cites a known clause id first in its docstring; names are unique."""
    names = [p.id for p in params]
    assert len(names) == len(set(names)), names
    for p in params:
        f = p.values[0]
        m = _CITE.match(f.__doc__ or "")
        assert m is not None, f"{f.__name__}: docstring must start with a clause id"
        for cid in m.group(1).split("/"):
            assert cid in CLAUSES, (f.__name__, cid)


# --------------------------------------------------------------------------
# Reading notices and views


def tags(out: list[Any]) -> list[str]:
    """The ``type`` tags of notices, in order."""
    return [str(type(n).__struct_config__.tag) for n in out]


def one(out: list[Any], cls: type) -> Any:
    """The single notice of type ``cls`` in ``out`` (fails if none or several)."""
    xs = [n for n in out if isinstance(n, cls)]
    assert len(xs) == 1, out
    return xs[0]


def state_bytes(s: Script) -> bytes:
    return msgspec.json.encode(s.engine.state())


def box(s: Script, pid: str = "h2") -> SitoutView:
    b = s.players[pid].box
    assert b is not None, f"{pid} is not in the box"
    return b


def no_sub(s: Script, pid: str = "h1") -> SitoutView:
    w = s.players[pid].no_sub
    assert w is not None, f"{pid} has no no-substitute window"
    return w


def mount(s: Script, pid: str) -> MountView:
    m = s.players[pid].mount
    assert m is not None, f"{pid} has no mount window"
    return m


def sub(s: Script, team: str, out: str, in_: str) -> list[Any]:
    """Send an accepted substitution."""
    return s.must("substitution", team=team, out=out, **{"in": in_})


def sub_refused(s: Script, team: str, out: str, in_: str) -> Any:
    """Send a substitution that must be refused; returns the ``rejected`` notice."""
    return s.refused("substitution", team=team, out=out, **{"in": in_})


# --------------------------------------------------------------------------
# Getting into position


def second_yellow(s: Script, player: str = "h2", lead_ms: int = 10_000) -> str:
    """Start the clock, let ``lead_ms`` of play pass, give ``player`` two yellows
    (clock running, so the box is owed until ``lead_ms`` + 2:00 of play);
    returns the second card's id."""
    s.start()
    s.run(lead_ms)
    s.card(player)
    s.card(player)
    return s.last_id()


def red(s: Script, player: str = "h1", lead_ms: int = 10_000) -> str:
    """Start the clock, let ``lead_ms`` of play pass, show ``player`` a red;
    returns its id."""
    s.start()
    s.run(lead_ms)
    s.card(player, "red", conduct="striking")
    return s.last_id()


def fresh_replay(s: Script, skip: set[str]) -> Script:
    """A new Script fed the same bodies as ``s`` (after its setup), minus the ids
    in ``skip``, and advanced to the same moment."""
    r = Script(s.rules)
    for body in s.log[1:]:
        if body["id"] not in skip:
            r.send_raw(body)
    r.engine.advance(s.t)
    return r


# --------------------------------------------------------------------------
# Several games: the carry-over ledger (tests/rules/test_ledger.py)


def roster(team: str, players: list[str], subs: list[str] | None = None) -> dict[str, Any]:
    """One side of a ``game.setup``: ``{"team", "players", "subs"}``."""
    return {"team": team, "players": list(players), "subs": list(subs or [])}


#: The player the ledger cases follow, and his team's usual sides.
P = "p"
TEAM_A = roster("A", [P, "a2", "a3"], ["a4"])
TEAM_B = roster("B", ["b1", "b2", "b3"], ["b4"])


class Season:
    """Events and games of a season on one ``Engine``, sent through the real
    decoder with ids and times filled in: a ``Script`` for many games.

        s = Season()
        s.event("cup", cls="uspa", handicap=8, teams=["A", "B"])
        s.setup("g1", event="cup")            # A (p, a2, a3 | a4) v B
        s.start("g1"); s.run(10_000)
        s.card("g1", P, "red")
        s.end("g1")                           # obligation.created
        s.setup("g2", home=roster("A", ["a4", "a2", "a3"], [P]))

    One time line for the whole season: ``run(ms)`` moves it (and lets the
    clocks of every running game run); every event is sent at ``self.t``.
    """

    def __init__(self) -> None:
        self.engine = Engine()
        self.t = T0
        self.n = 0
        self.notices: list[Any] = []
        self.log: list[dict[str, Any]] = []

    # --- sending

    def send_raw(self, body: dict[str, Any]) -> list[Any]:
        self.log.append(body)
        out = self.engine.feed(codec.decode_event(msgspec.json.encode(body)))
        self.notices.extend(out)
        return out

    def body(self, type: str, game: str | None = None, **fields: Any) -> dict[str, Any]:
        self.n += 1
        body: dict[str, Any] = {"type": type, "id": f"e{self.n}", "at": self.t, **fields}
        if game is not None:
            body["game"] = game
        return body

    def send(self, type: str, game: str | None = None, **fields: Any) -> list[Any]:
        return self.send_raw(self.body(type, game, **fields))

    def must(self, type: str, game: str | None = None, **fields: Any) -> list[Any]:
        out = self.send(type, game, **fields)
        refused = [n for n in out if isinstance(n, nt.Rejected)]
        assert not refused, refused
        return out

    def refused(self, type: str, game: str | None = None, **fields: Any) -> nt.Rejected:
        """Send, expect one ``rejected`` notice, and check that nothing changed."""
        before = msgspec.msgpack.encode(self.engine.state())
        out = self.send(type, game, **fields)
        assert len(out) == 1 and isinstance(out[0], nt.Rejected), out
        assert msgspec.msgpack.encode(self.engine.state()) == before
        return out[0]

    def last_id(self) -> str:
        return f"e{self.n}"

    # --- set-up

    def event(self, event: str, *, cls: str = "club", handicap: int = 8,
              teams: list[str] | None = None, completed: bool = False) -> list[Any]:
        return self.must("event.setup", event=event, **{"class": cls}, handicap=handicap,
                         teams=["A", "B"] if teams is None else teams, completed=completed)

    def complete(self, event: str) -> list[Any]:
        return self.must("event.complete", event=event)

    def setup_body(self, game: str, *, event: str = "cup", handicap: int = 8, kind: str = "regular",
                   home: dict[str, Any] | None = None, away: dict[str, Any] | None = None,
                   **over: Any) -> dict[str, Any]:
        body = game_setup(game, at=self.t, event=event, handicap=handicap, kind=kind,
                          teams={"home": TEAM_A if home is None else home,
                                 "away": TEAM_B if away is None else away}, **over)
        if self.engine.has_event(event):
            del body["class"]  # only a Club game with no event set up says its class
        self.n += 1
        body["id"] = f"e{self.n}"
        return body

    def setup(self, game: str, **kw: Any) -> list[Any]:
        """Set up a game (A: p, a2, a3 | a4 at home, B away, unless told); must be accepted."""
        out = self.send_raw(self.setup_body(game, **kw))
        refused = [n for n in out if isinstance(n, nt.Rejected)]
        assert not refused, refused
        return out

    def setup_refused(self, game: str, **kw: Any) -> nt.Rejected:
        before = msgspec.msgpack.encode(self.engine.state())
        out = self.send_raw(self.setup_body(game, **kw))
        assert len(out) == 1 and isinstance(out[0], nt.Rejected), out
        assert msgspec.msgpack.encode(self.engine.state()) == before
        assert game not in self.engine.games
        return out[0]

    # --- playing

    def run(self, ms: int) -> list[Any]:
        self.t += ms
        out = self.engine.advance(self.t)
        self.notices.extend(out)
        return out

    def start(self, game: str) -> list[Any]:
        return self.must("clock.start", game)

    def begin(self, game: str, **kw: Any) -> list[Any]:
        """Set up a game (as ``setup``) and start its clock: the game begins and takes
        what its players owe from earlier games (A27). Both events' notices."""
        return self.setup(game, **kw) + self.start(game)

    def card(self, game: str, player: str = P, color: str = "yellow", count: int = 1) -> list[Any]:
        return self.must("card", game, player=player, color=color, count=count,
                         conduct="striking" if color == "red" else "arguing")

    def end(self, game: str, **kw: Any) -> list[Any]:
        return self.must("game.end", game, **kw)

    def postgame(self, game: str, level: str, player: str = P) -> list[Any]:
        return self.must("postgame.card", game, player=player, level=level)

    def play(self, game: str, ms: int = 60_000) -> list[Any]:
        """Start the clock (unless it runs), let ``ms`` of play pass, end the game."""
        out = [] if self.view(game).clock.running else self.start(game)
        out += self.run(ms)
        return out + self.end(game)

    # --- reading

    def view(self, game: str) -> GameView:
        return self.engine.view(game)

    def player(self, game: str, pid: str = P) -> PlayerView:
        return next(x for x in self.view(game).players if x.id == pid)

    def obligations(self, player: str = P) -> list[Obligation]:
        return self.engine.obligations(player)

    def pending(self, player: str = P) -> list[tuple[str, int, str]]:
        """``(kind, owed_ms, origin_game)`` of the player's pending obligations."""
        return [(o.kind, o.owed_ms, o.origin_game) for o in self.obligations(player)
                if o.status == "pending"]

    def of(self, cls: type, notices: list[Any] | None = None) -> list[Any]:
        return [n for n in (self.notices if notices is None else notices) if isinstance(n, cls)]
