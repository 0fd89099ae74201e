"""``Book.plan`` reads only the players who may still owe something (``Book.owing``):
it must take exactly what reading every player who ever owed a team something takes."""

from __future__ import annotations

import msgspec

from stream.rules import codec
from stream.rules import ledger as lg
from stream.rules.engine import Engine
from stream.tools.bench_replay import synthetic_season


def _every_player_read(engine: Engine, gid: str) -> list[lg.Obligation]:
    g = engine.games[gid].game
    book = engine.book
    teams = book.by_team.get(g.home.team, set()) | book.by_team.get(g.away.team, set())
    return lg.plan(book.ledger, g, engine._info(g), sorted(teams - g.players.keys()))


def test_plan_takes_what_reading_every_player_takes() -> None:
    engine = Engine()
    lines = synthetic_season(40_000, 5).splitlines()
    compared = taken = 0
    for i, line in enumerate(lines):
        engine.feed(codec.decode_event(line))  # a refusal comes back as a notice
        if i % 400 == 0 or i == len(lines) - 1:
            for gid in engine.games:
                g = engine.games[gid].game
                mine = engine.book.plan(g, engine._info(g))
                assert msgspec.json.encode(mine) == msgspec.json.encode(_every_player_read(engine, gid))
                compared += 1
                taken += len(mine)
    book = engine.book
    pending = {o.player for obs in book.ledger.values() for o in obs if o.status == "pending"}
    assert pending <= book.owing
    assert compared > 1_000 and taken > 0
