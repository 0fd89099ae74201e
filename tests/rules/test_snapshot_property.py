"""A snapshot is only a cache of the fold: for a random log and a random cut,
the snapshot of the fold of the prefix, restored, then fed the rest of the log
gives the same notices for the rest and the same engine, down to the bytes of
its next snapshot, as folding the whole log.

The logs: a season of the ledger property (events, 3-6 games of the followed
player with suspensions carried from game to game) with up to two games of
the benchmark's synthetic season (cards, box trips, reds, late cards, mount
changes) and voids of random events in them, interleaved at random.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream.live.hub import snapshot as snap
from stream.rules import codec
from stream.rules.book import Book
from stream.rules.engine import Engine, GameRecord
from stream.tools.bench_replay import game_events

from .script import T0
from .test_ledger_property import Driver, EventSpec, GameSpec, seasons

_json = msgspec.json.Encoder()


def _log(season: tuple[list[EventSpec], list[GameSpec]], seed: int, extra_games: int) -> list[Any]:
    events, games = season
    d = Driver(events)
    for g in games:
        d.play(g)
    log = list(d.accepted)
    rng = random.Random(seed)
    for n in range(extra_games):
        bodies = game_events(rng, f"x{n}", "friendly", T0 + n * 600_000, 160, cls="club")
        for j in range(4):  # voids of anything (the rules refuse some: both folds see that too)
            i = rng.randrange(1, len(bodies))
            after = rng.randrange(i + 1, len(bodies) + 1)
            bodies.insert(after, {"type": "void", "id": f"x{n}-void{j}", "at": bodies[after - 1]["at"],
                                  "game": f"x{n}", "target": bodies[i]["id"]})
        extra = [codec.decode_event(_json.encode(x)) for x in bodies]
        merged: list[Any] = []
        while log or extra:  # each keeps its own order; which goes next is drawn
            take = log if log and (not extra or rng.random() < 0.5) else extra
            merged.append(take.pop(0))
        log = merged
    return log


def _snapshot(engine: Engine) -> bytes:
    return bytes(snap.capture(engine, {}, {}, epoch="e", position="p"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seasons(), st.integers(0, 2**32 - 1), st.integers(0, 2), st.floats(0, 1))
def test_the_snapshot_of_a_prefix_and_the_fold_of_the_rest_is_the_fold_of_all(
        season: tuple[list[EventSpec], list[GameSpec]], seed: int, extra_games: int, cut: float) -> None:
    log = _log(season, seed, extra_games)
    k = int(cut * len(log))
    whole = Engine()
    notices = [whole.feed(e) for e in log]

    prefix = Engine()
    for e in log[:k]:
        prefix.feed(e)
    engine, seqs, keys = snap.restore(_snapshot(prefix), epoch="e", position="p")
    assert (seqs, keys) == ({}, {})
    assert [engine.feed(e) for e in log[k:]] == notices[k:]
    assert engine.state_hash() == whole.state_hash()
    assert _snapshot(engine) == _snapshot(whole)


def test_the_snapshot_holds_every_field_of_the_engine() -> None:
    """A field added to the engine must be added to the snapshot (stream/live/hub/snapshot.py)."""
    # _takes: only a fork's (Engine.fork_game); wide_changes, void_journal: only for live
    # savepoints; begun_by: derived from the games (Engine.from_image)
    assert set(vars(Engine())) == {"games", "tournaments", "book", "registry", "schedules", "owner", "voids",
                                   "voided", "_takes", "wide_changes", "void_journal", "begun_by", "draws"}
    assert set(vars(Book())) == {"ledger", "sources", "decisions", "withdrawn", "decreases", "rescinds",
                                 "by_team"}  # by_team: derived from the ledger (Book.reindex)
    assert set(GameRecord.__slots__) == {"any_team", "checkpoints", "events", "game", "now", "opened_at",
                                         "packed", "setup_notices", "took"}


def test_a_restored_game_unpacks_its_events_when_first_read() -> None:
    engine = Engine()
    for x in game_events(random.Random(7), "g", "friendly", T0, 60, cls="club"):
        engine.feed(codec.decode_event(_json.encode(x)))
    restored, _, _ = snap.restore(_snapshot(engine), epoch="e", position="p")
    rec = restored.games["g"]
    assert rec.packed is not None
    assert rec.events == engine.games["g"].events
    assert rec.packed is None
    assert restored.game_events("g") == engine.game_events("g")


def test_a_snapshot_from_other_code_is_refused() -> None:
    """The rule readings travel in the log (``event.setup``); what ties a snapshot to
    its fold is the code that made it."""
    blob = bytes(_snapshot(Engine()))
    other = blob.replace(snap.format_of().encode(), snap.format_of()[:-1].encode() + b"X")
    assert other != blob
    try:
        snap.restore(other, epoch="e", position="p")
    except snap.SnapshotError as err:
        assert "other code" in str(err)
    else:
        raise AssertionError("a snapshot made by other code was used")
