"""One score everywhere: the game report, its CSV and its printable page, and the draw say
what the engine holds, for random logs.

The logs: a season of the ledger property (suspensions carried from game to game, post-game
cards, 5.c(2) shootouts) with synthetic games (cards, box trips, reds, late cards, amended
cards, substitutions) whose goals on handicap are drawn at random, with voids of random events
(goals disallowed, cards and clock events taken back; some ``entered_in_error``), and a
knockout final of a drawn event played the same way, interleaved at random. For every game:

* ``report.json``'s score equals the engine's view (what a scoreboard's snapshot holds), and
  equals the goals on handicap plus the points of the goals it lists as standing;
* the cards it lists as standing are the offenses the view counts, player by player;
* the box trips it leaves open are the players the view has in the box, and its sent-off
  players the view's;
* its obligations are the ledger's, its goals on handicap the view's;
* the printable's header and the CSV's result row say the same score;
* the draw's ``score`` and ``winner`` say the same.

A few hundred logs here; thousands in the full suite (``slow``).
"""

from __future__ import annotations

import random
import re
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream.live.reports import report as rp
from stream.live.reports import report_csv, report_html
from stream.rules import codec
from stream.rules import events as ev
from stream.rules import notices as nt
from stream.rules.engine import Engine
from stream.rules.text import half
from stream.store import Record
from stream.tools.bench_replay import game_events

from ...rules.script import T0
from ...rules.test_ledger_property import Driver, EventSpec, GameSpec, seasons

_json = msgspec.json.Encoder()
HALVES = st.sampled_from([0, 0, 0.5, 1, 1.5, 2, 3.5])


def _synthetic(rng: random.Random, gid: str, event: str, t0: int, on_handicap: tuple[float, float] | None,
               teams: tuple[str, str] | None = None) -> list[dict[str, Any]]:
    """A synthetic game with goals on handicap, an amended card, and voids of random events."""
    bodies = game_events(rng, gid, event, t0, 140, cls=None if teams else "club")
    setup = bodies[0]
    if on_handicap is not None:
        setup["goals_on_handicap"] = {"home": on_handicap[0], "away": on_handicap[1]}
    if teams is not None:
        setup["teams"]["home"]["team"], setup["teams"]["away"]["team"] = teams
    cards = [b["id"] for b in bodies if b["type"] == "card"]
    if cards:
        card = rng.choice(cards)
        i = next(k for k, b in enumerate(bodies) if b["id"] == card)
        bodies.insert(i + 1, {"type": "card.amended", "id": f"{gid}-amend", "at": bodies[i]["at"] + 500,
                              "game": gid, "target": card, "conduct": "rough_play"})
    for j in range(5):
        i = rng.randrange(1, len(bodies))
        after = rng.randrange(i + 1, len(bodies) + 1)
        bodies.insert(after, {"type": "void", "id": f"{gid}-void{j}", "at": bodies[after - 1]["at"],
                              "game": gid, "target": bodies[i]["id"],
                              "entered_in_error": rng.random() < 0.3})
    return bodies


def _log(season: tuple[list[EventSpec], list[GameSpec]], seed: int,
         handicaps: list[tuple[float, float] | None]) -> list[Any]:
    events, games = season
    d = Driver(events)
    for g in games:
        d.play(g)
    log = list(d.accepted)
    rng = random.Random(seed)
    extra: list[list[Any]] = []
    for n, h in enumerate(handicaps):
        extra.append([codec.decode_event(_json.encode(x)) for x in
                      _synthetic(rng, f"x{n}", "friendly", T0 + n * 600_000, h)])
    drawn = [{"type": "event.setup", "id": "cup-setup", "at": T0 - 1, "event": "cup", "class": "club",
              "handicap": 8, "teams": ["dh", "da"]},
             {"type": "draw.made", "id": "cup-draw", "at": T0 - 1, "event": "cup", "format": "knockout",
              "teams": ["dh", "da"]},
             *_synthetic(rng, "cup-final", "cup", T0 + 3_600_000, handicaps[0] if handicaps else None,
                         ("dh", "da"))]
    extra.append([codec.decode_event(_json.encode(x)) for x in drawn])
    for more in extra:
        merged: list[Any] = []
        while log or more:  # each keeps its own order; which goes next is drawn
            take = log if log and (not more or rng.random() < 0.5) else more
            merged.append(take.pop(0))
        log = merged
    return log


def _fold(log: list[Any]) -> tuple[Engine, dict[str, list[Record]], dict[str, int]]:
    """Fold ``log`` as the live service does, keeping each accepted event as its record."""
    engine = Engine()
    records: dict[str, list[Record]] = {}
    seqs: dict[str, int] = {}
    for e in log:
        game = engine.owner.get(e.target) if isinstance(e, ev.Void) else getattr(e, "game", None)
        out = engine.feed(e)
        if any(isinstance(n, nt.Rejected) for n in out) or game is None:
            continue  # refused (not logged), or no game's
        seqs[game] = seqs.get(game, 0) + 1
        records.setdefault(game, []).append(Record(
            game=game, seq=seqs[game], device="ump-1", client_id=e.id, official="A. Umpire",
            digest=b"", received_at=e.at, body=_json.encode(e)))
    return engine, records, seqs


_HEADER = re.compile(r'<div class="score">([^<]*) – ([^<]*)</div>')


def _check(log: list[Any]) -> None:
    engine, records, seqs = _fold(log)
    assert records
    for game, recs in records.items():
        view = engine.view(game)
        r = rp.assemble(engine, game, recs, seqs[game])
        doc = msgspec.json.decode(rp.to_json(r))
        where = f"game {game}"
        # the score: the view's, and the report's own standing goals plus goals on handicap
        assert (doc["home"]["score"], doc["away"]["score"]) == (view.score.home, view.score.away), where
        h = view.goals_on_handicap
        on = {"home": 0.0 if h is None else h.home, "away": 0.0 if h is None else h.away}
        for side in ("home", "away"):
            points = sum(int(g["detail"].split(" ", 1)[0]) for g in doc["goals"]
                         if g["side"] == side and not g["voided"])
            assert points + on[side] == doc[side]["score"], (where, side, doc["goals"])
            assert doc[side]["on_handicap"] == on[side], where
        assert doc["goals_on_handicap"] == msgspec.to_builtins(h), where
        # the cards that stand: the offenses the view counts
        players = {p.id: p for p in view.players}
        standing: dict[str, int] = {}
        for c in doc["cards"]:
            if c["kind"] == "card.recorded" and not c["voided"]:
                standing[c["player"]] = standing.get(c["player"], 0) + 1
        for pid, p in players.items():
            assert standing.get(pid, 0) == p.offenses - p.carried_yellow, (where, pid, doc["cards"])
        # box trips still open, sent-off players
        still_in = {t["player"] for t in doc["box_trips"] if t["release"] is None}
        assert still_in == {pid for pid, p in players.items() if p.box is not None}, where
        sent_off = {pid for pid, p in players.items() if p.sent_off}
        assert {x["player"] for x in doc["sent_off"]} == sent_off, where
        assert doc["obligations"] == msgspec.to_builtins(
            sorted(engine.all_obligations(origin_game=game), key=lambda o: (o.order, o.player))), where
        # the printable's header and the CSV's result
        m = _HEADER.search(report_html.to_html(r))
        assert m is not None and (m.group(1), m.group(2)) == (half(view.score.home), half(view.score.away))
        result = report_csv.rows(r).__next__()
        assert result[0] == "result" and str(result[12]).startswith(
            f"{half(view.score.home)}–{half(view.score.away)} "), (where, result)
    d = engine.draw("cup")
    if d is not None and "cup-final" in engine.games:
        view = engine.view("cup-final")
        g = next(x for x in d.games if x.game == "cup-final")
        assert g.score == [view.score.home, view.score.away]
        if view.status == "ended" and view.score.home != view.score.away:
            assert g.winner == ("dh" if view.score.home > view.score.away else "da")
        else:
            assert g.winner is None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seasons(), st.integers(0, 2**32 - 1), st.lists(st.none() | st.tuples(HALVES, HALVES), max_size=2))
def test_every_record_says_the_engines_score(season: tuple[list[EventSpec], list[GameSpec]], seed: int,
                                            handicaps: list[tuple[float, float] | None]) -> None:
    _check(_log(season, seed, handicaps))


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seasons(), st.integers(0, 2**32 - 1), st.lists(st.none() | st.tuples(HALVES, HALVES), max_size=3))
def test_every_record_says_the_engines_score_thousands(season: tuple[list[EventSpec], list[GameSpec]],
                                                       seed: int, handicaps: list[tuple[float, float] | None]
                                                       ) -> None:
    _check(_log(season, seed, handicaps))
