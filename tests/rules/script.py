"""A small driver for rule tests: send events through the real decoder and
engine, with ids and times filled in, and read the notices and the view.

    s = Script()                      # event + game set up, clock not started
    s.start(); s.run(30_000)          # clock starts, 30 s of play
    s.whistle()
    s.card("h2")                      # a yellow to home's No. 2
    s.view.players["h2"].box          # what the scoreboard shows

Times are milliseconds from T0. ``run(ms)`` only moves time forward; the clock
runs if it was started.
"""

from __future__ import annotations

from typing import Any

import msgspec

from stream.errors import Refused
from stream.rules import codec
from stream.rules import notices as nt
from stream.rules.engine import Engine
from stream.rules.view import GameView, PlayerView

T0 = 1_780_000_000_000
HOME = ["h1", "h2", "h3"]
AWAY = ["a1", "a2", "a3"]


def event_setup(rules: dict[str, Any] | None = None, *, at: int = T0 - 120_000) -> dict[str, Any]:
    """The Club event "cup" that the Script's game belongs to, with its rule readings."""
    return {"type": "event.setup", "id": "cup-setup", "at": at, "event": "cup", "class": "club",
            "handicap": 8, "teams": ["home-team", "away-team"], "rules": rules or {}}


def game_setup(game: str = "g1", *, at: int = T0 - 60_000, **over: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "game.setup", "id": f"{game}-setup", "at": at, "game": game, "event": "cup",
        "class": "club",
        "handicap": 8, "kind": "regular", "shootout_option": False, "periods": 4,
        "period_ms": 450_000,
        "teams": {"home": {"team": "home-team", "players": HOME, "subs": ["h4"]},
                  "away": {"team": "away-team", "players": AWAY, "subs": ["a4"]}},
    }
    body.update(over)
    return body


class Players:
    def __init__(self, view: GameView) -> None:
        self._by_id = {p.id: p for p in view.players}

    def __getitem__(self, pid: str) -> PlayerView:
        return self._by_id[pid]


class Script:
    """One game of the Club event "cup", whose ``rules`` (``event.setup``) are as given.
    ``log`` holds what was sent after the event's set-up: the game's set-up first."""

    def __init__(self, rules: dict[str, Any] | None = None, game: str = "g1", **setup: Any) -> None:
        self.engine = Engine()
        self.rules = rules
        self.engine.feed(codec.decode_event(msgspec.json.encode(event_setup(rules))))
        self.game = game
        self.t = T0
        self.n = 0
        self.notices: list[Any] = []
        self.log: list[dict[str, Any]] = []
        self.send_raw(game_setup(game, **setup))

    # --- sending

    def send_raw(self, body: dict[str, Any]) -> list[Any]:
        """Encode, decode and apply one event, as the service would."""
        self.log.append(body)
        event = codec.decode_event(msgspec.json.encode(body))
        out = self.engine.feed(event)
        self.notices.extend(out)
        return out

    def send(self, type: str, *, at: int | None = None, **fields: Any) -> list[Any]:
        self.n += 1
        body = {"type": type, "id": f"e{self.n}", "at": self.t if at is None else at,
                "game": self.game, **fields}
        return self.send_raw(body)

    def must(self, type: str, **fields: Any) -> list[Any]:
        """Send, and fail the test if the engine refuses."""
        out = self.send(type, **fields)
        refused = [n for n in out if isinstance(n, nt.Rejected)]
        assert not refused, refused
        return out

    def refused(self, type: str, **fields: Any) -> nt.Rejected:
        """Send, expect a refusal, and check that nothing changed."""
        before = msgspec.json.encode(self.engine.state())
        out = self.send(type, **fields)
        assert len(out) == 1 and isinstance(out[0], nt.Rejected), out
        assert msgspec.json.encode(self.engine.state()) == before
        return out[0]

    def refuses(self, type: str, **fields: Any) -> Refused:
        """Like ``refused`` but through ``Engine.apply``: the typed exception."""
        self.n += 1
        body = {"type": type, "id": f"e{self.n}", "at": self.t, "game": self.game, **fields}
        try:
            self.engine.apply(codec.decode_event(msgspec.json.encode(body)))
        except Refused as r:
            return r
        raise AssertionError(f"{type} was accepted")

    # --- shorthands

    def run(self, ms: int) -> list[Any]:
        """Let ``ms`` pass with no event; returns the deadlines that fell due."""
        self.t += ms
        out = self.engine.advance(self.t)
        self.notices.extend(out)
        return out

    def start(self) -> list[Any]:
        return self.must("clock.start")

    def whistle(self) -> list[Any]:
        return self.must("whistle")

    def goal(self, team: str = "home", **kw: Any) -> list[Any]:
        return self.must("goal", team=team, **kw)

    def horn(self, **kw: Any) -> list[Any]:
        return self.must("horn", **kw)

    def card(self, player: str, color: str = "yellow", count: int = 1,
             conduct: str | None = "arguing", **kw: Any) -> list[Any]:
        return self.must("card", player=player, color=color, count=count, conduct=conduct, **kw)

    def last_id(self) -> str:
        return f"e{self.n}"

    # --- reading

    @property
    def view(self) -> GameView:
        return self.engine.view(self.game)

    @property
    def players(self) -> Players:
        return Players(self.view)

    def of(self, cls: type, notices: list[Any] | None = None) -> list[Any]:
        return [n for n in (self.notices if notices is None else notices) if isinstance(n, cls)]
