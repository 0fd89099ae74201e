"""``Engine.savepoint`` / ``Engine.rollback`` (what the live shell uses when another node
took a ``seq`` first, ``stream/live/hub/races.py``): for a random log of several interleaved
games, a random cut and a random game, the events of that game applied after the cut
(with other games' events among them) are taken back whole, or not at all.

* Taken back: the engine is, down to the bytes of its image, the engine fed the log
  without them; fed them again, it is the engine fed the whole log.
  A void of the game's events is the game's too, and is taken back with it.
* Refused (an event since may have changed more than its game: a game's start or end,
  a void that begins or un-begins its game, a tournament's event): the engine has not
  changed at all.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from stream.rules import codec
from stream.rules import events as ev
from stream.rules.engine import Engine
from stream.tools.bench_replay import game_events

from .script import T0

_json = msgspec.json.Encoder()
_pack = msgspec.msgpack.Encoder()


def _log(seed: int, games: int) -> list[Any]:
    rng = random.Random(seed)
    streams = [[codec.decode_event(_json.encode(x))
                for x in game_events(rng, f"x{n}", "friendly", T0 + n * 1000, 120, cls="club")]
               for n in range(games)]
    merged: list[Any] = []
    while any(streams):
        merged.append(rng.choice([s for s in streams if s]).pop(0))
    return merged


def _with_voids(log: list[Any], seed: int) -> list[Any]:
    """``log`` with voids of a few whistles, each some events after its target, stamped with
    the time of the event before it in its game."""
    rng = random.Random(seed)
    out = list(log)
    for n in range(3):
        whistles = [i for i, e in enumerate(out) if isinstance(e, ev.Whistle)]
        if not whistles:
            break
        j = rng.choice(whistles)
        target = out[j]
        p = rng.randrange(j + 1, len(out) + 1)
        at = max(e.at for e in out[:p] if getattr(e, "game", None) == target.game)
        out.insert(p, codec.decode_event(_json.encode(
            {"type": "void", "id": f"void-{n}", "target": target.id, "at": at})))
    return out


def _image(engine: Engine) -> bytes:
    """The engine's image, its map of event ids to games in id order (an id a rollback puts
    back, a void's target, goes back in at the end of the map: the same map)."""
    image = engine.image()
    return _pack.encode(msgspec.structs.replace(image, owner=dict(sorted(image.owner.items()))))


def _games(log: list[Any]) -> dict[str, str | None]:
    """Each event's game; a void's is its target's."""
    out: dict[str, str | None] = {}
    for e in log:
        out[e.id] = out.get(e.target) if isinstance(e, ev.Void) else getattr(e, "game", None)
    return out


def _fed(events: list[Any]) -> Engine:
    engine = Engine()
    for e in events:
        engine.feed(e)
    return engine


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), games=st.integers(1, 3), cut=st.floats(0.05, 0.95),
       span=st.integers(1, 12), which=st.integers(0, 2), voids=st.booleans())
def test_a_game_s_latest_events_are_taken_back_whole_or_not_at_all(
        seed: int, games: int, cut: float, span: int, which: int, voids: bool) -> None:
    log = _with_voids(_log(seed, games), seed) if voids else _log(seed, games)
    game = f"x{which % games}"
    k = int(len(log) * cut)
    engine = _fed(log[:k])
    sp = engine.savepoint(game)
    if sp is None:  # not set up yet
        return
    # The next ``span`` events of the game, with the other games' events among them.
    tail = log[k:]
    of = _games(log)
    mine = [i for i, e in enumerate(tail) if of[e.id] == game][:span]
    if not mine:
        return
    applied = tail[:mine[-1] + 1]
    for e in applied:
        engine.feed(e)
    before = _image(engine)
    if engine.rollback(sp):
        event("taken back" + (" with a void" if any(isinstance(e, ev.Void) and of[e.id] == game
                                                    for e in applied) else ""))
        kept = log[:k] + [e for e in applied if of[e.id] != game]
        assert _image(engine) == _image(_fed(kept))
        for e in applied:
            if of[e.id] == game:
                engine.feed(e)
        assert engine.state_hash() == _fed(kept + [e for e in applied if of[e.id] == game]).state_hash()
    else:
        event("refused")
        assert _image(engine) == before
        wide = (ev.GameEnd, ev.PostgameCard, ev.Void, ev.ClockStart, ev.Goal)
        assert any(isinstance(e, wide) for e in applied), "refused with no event that could be wide"


@pytest.mark.parametrize("kind", [ev.ClockStart, ev.GameEnd])
def test_a_game_s_start_and_end_are_not_taken_back(kind: type) -> None:
    """The event that begins a game takes its players' obligations (A27); its end derives
    the game's obligations into the ledger (R13), which other games read: neither is taken
    back alone, and the engine is left as it was."""
    log = _log(7, 1)
    k = next(i for i, e in enumerate(log) if isinstance(e, kind))
    engine = _fed(log[:k])
    sp = engine.savepoint("x0")
    assert sp is not None
    engine.feed(log[k])
    before = _image(engine)
    assert not engine.rollback(sp)
    assert _image(engine) == before


def test_a_later_event_of_the_game_is_taken_back_exactly() -> None:
    """A card in play: taken back, the engine is the one that never saw it."""
    log = _log(7, 1)
    k = next(i for i, e in enumerate(log) if isinstance(e, ev.Card))
    engine = _fed(log[:k])
    sp = engine.savepoint("x0")
    assert sp is not None
    engine.feed(log[k])
    assert engine.rollback(sp)
    assert _image(engine) == _image(_fed(log[:k]))
    assert not engine.knows(log[k].id)


@pytest.mark.parametrize("from_target", [False, True])
def test_a_void_in_play_is_taken_back_with_its_game(from_target: bool) -> None:
    """A void of a card in play changes its game alone (L1): taken back with the game, the
    engine is the one that never saw it, its target accepted again; taken back from before its
    target, neither is left."""
    log = next(x for x in (_log(seed, 2) for seed in range(200)) if any(isinstance(e, ev.Void) for e in x))
    of = _games(log)
    k = next(i for i, e in enumerate(log) if isinstance(e, ev.Void))
    void = log[k]
    start = next(i for i, e in enumerate(log) if e.id == void.target) if from_target else k
    engine = _fed(log[:start])
    sp = engine.savepoint(of[void.id] or "")
    assert sp is not None
    applied = log[start:k + 1]
    for e in applied:
        engine.feed(e)
    assert void.target not in engine.owner and engine.knows(void.id)
    assert engine.rollback(sp)
    kept = log[:start] + [e for e in applied if of[e.id] != of[void.id]]
    assert _image(engine) == _image(_fed(kept))
    assert engine.knows(void.target) != from_target and not engine.knows(void.id)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), games=st.integers(2, 3), at=st.floats(0.0, 0.999),
       later=st.booleans(), span=st.integers(1, 8), voids=st.booleans(), a_void=st.booleans())
def test_an_event_that_changes_its_game_alone_commutes_with_other_games_events(
        seed: int, games: int, at: float, later: bool, span: int, voids: bool, a_void: bool) -> None:
    """What lets a node fold a game's entries out of the log's order (a game's tail read ahead
    of the follower, a log entry folded after this node's own event of another game): an
    event ``Engine.only_its_game`` says changes its game alone, where it is applied, moved
    past other games' events, leaves the engine as the log's order does. Voids of whistles
    in play are among them (L1)."""
    log = _with_voids(_log(seed, games), seed) if voids else _log(seed, games)
    of = _games(log)
    picks = [i for i, x in enumerate(log) if isinstance(x, ev.Void)] if voids and a_void else []
    i = picks[int(len(picks) * at)] if picks else int(len(log) * at)
    e = log[i]
    game = of[e.id]
    if game is None:
        return
    # Walk from it, earlier or later, over the other games' events only.
    p, step = i, (1 if later else -1)
    while 0 <= p + step < len(log) and of[log[p + step].id] != game and abs(p + step - i) <= span:
        p += step
    if p == i:
        return
    rest = log[:i] + log[i + 1:]
    moved = [*rest[:p], e, *rest[p:]]
    engine = _fed(moved[:p])
    if not engine.only_its_game(e):
        event("not alone: " + type(e).__name__)
        return
    event("moved " + ("a void" if isinstance(e, ev.Void) else "an event"))
    assert _image(_fed(moved)) == _image(_fed(log))


@pytest.mark.parametrize(("target", "alone"), [(ev.Whistle, True), (ev.ClockStart, False)])
def test_a_void_is_alone_only_of_an_event_that_did_not_begin_its_game(target: type, alone: bool) -> None:
    """A void of a whistle in play changes its game alone; a void of the clock start that
    began the game may make it scheduled again: not alone (L1, A27)."""
    log = _log(7, 1)
    k = next(i for i, e in enumerate(log) if isinstance(e, target))
    later = next(i for i, e in enumerate(log) if i > k and isinstance(e, ev.Whistle))
    engine = _fed(log[:later])
    assert engine.status_of("x0") == "live"
    void = codec.decode_event(_json.encode({"type": "void", "id": "v", "target": log[k].id,
                                            "at": log[later - 1].at}))
    assert engine.only_its_game(void) is alone
    assert not engine.only_its_game(codec.decode_event(_json.encode(
        {"type": "void", "id": "w", "target": "no-such-event", "at": log[later - 1].at})))
