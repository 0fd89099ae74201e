"""A game folded again from its own logged events (``Engine.fork_game``, as a node
rebuilds the deltas a viewer resuming from before what it holds is sent) says
exactly what the fold of the whole log said for that game, event by event: the
same notices of its own and the same view after each.

A random case: the logs of the snapshot property (seasons with suspensions carried
from game to game, synthetic games with voids of random events, interleaved at
random). A found one: a game begun, its begin voided, a suspension created meanwhile
by another game's end, the game begun again (taking it) and that begin voided too:
each begin takes what it took in the log, not what the game serves at the end."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream.rules import codec
from stream.rules import events as ev
from stream.rules import notices as nt
from stream.rules.engine import Engine

from .script import T0, Script, event_setup, game_setup
from .test_ledger_property import EventSpec, GameSpec, seasons
from .test_snapshot_property import _log


def _own(game: str, notices: list[Any]) -> list[Any]:
    return [n for n in notices if n.game is None or n.game == game]


def _folded_again_as_logged(log: list[Any]) -> None:
    """Fold ``log`` whole; then fork each game and feed it that game's accepted events
    (a void: its target's game, as the log records it): each says what it said."""
    whole = Engine()
    said: dict[str, list[tuple[Any, list[Any], Any]]] = {}
    for e in log:
        game = whole.owner.get(e.target) if isinstance(e, ev.Void) else getattr(e, "game", None)
        out = whole.feed(e)
        if game is None or game not in whole.games or any(isinstance(n, nt.Rejected) for n in out):
            continue
        said.setdefault(game, []).append((e, _own(game, out), whole.view(game)))
    assert said
    for game, told in said.items():
        fork = whole.fork_game(game)
        for e, notices, view in told:
            out = fork.setup_notices(game) if isinstance(e, ev.GameSetup) else fork.feed(e)
            assert (e.id, _own(game, out), fork.view(game)) == (e.id, notices, view)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seasons(), st.integers(0, 2**32 - 1), st.integers(0, 2))
def test_a_game_folded_again_from_its_own_events_says_what_the_whole_fold_said(
        season: tuple[list[EventSpec], list[GameSpec]], seed: int, extra_games: int) -> None:
    _folded_again_as_logged(_log(season, seed, extra_games))


def test_each_begin_of_a_game_folded_again_takes_what_it_took_in_the_log() -> None:
    s = Script()  # g1; g2 of the same event, the same teams, set up beside it
    s.send_raw(game_setup("g2", at=T0 - 50_000))
    s.game = "g2"
    s.start()                                 # g2 begins: h1 owes nothing yet
    first = s.last_id()
    s.game = "g1"
    s.t += 5_000
    s.start()
    s.t += 5_000
    s.whistle()
    s.card("h1", color="red", conduct="dangerous_riding")  # R6: sent off, suspended
    s.t += 1_000
    assert any(isinstance(n, nt.ObligationCreated) for n in s.must("game.end"))
    s.t += 1_000
    s.send_raw({"type": "void", "id": "void-1", "at": s.t, "target": first})
    s.game = "g2"
    s.t += 1_000
    took = s.start()                          # begun again: it takes h1's suspension now
    assert [n.player for n in took if isinstance(n, nt.ObligationApplied)] == ["h1"]
    again = s.last_id()
    s.t += 1_000
    undone = s.send_raw({"type": "void", "id": "void-2", "at": s.t, "target": again})
    assert isinstance(undone[0], nt.Correction)
    assert "players.h1.suspended" in {c.path for c in undone[0].changes}
    _folded_again_as_logged([codec.decode_event(msgspec.json.encode(b)) for b in [event_setup(), *s.log]])
