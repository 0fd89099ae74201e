"""The draw (L3): an event's format, the games it makes, and what their results mean.

Each case is a function taking a fresh ``Season`` and cites its clause first. The
expectations are worked out from the format itself (a knockout of n teams is n - 1
games; its bracket is the next power of two, the top seeds taking the byes; a round
robin plays every pair once), never read back from the engine. After every case its
log is folded again by a fresh engine, which must give the same state and bracket.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from stream.rules import codec
from stream.rules import notices as nt
from stream.rules.draw import Bracket, DrawGame
from stream.rules.engine import Engine
from stream.rules.records import EngineImage

from .clause_helpers import P, Season, check_cases, roster

SeasonCase = Callable[[Season], None]

TEAMS = ["A", "B", "C", "D", "E", "F", "G", "H"]


def sheet(team: str) -> dict[str, Any]:
    """Team ``team``'s sheet: A has the followed player ``p``; the others x1, x2, x3 | x4."""
    low = team.lower()
    if team == "A":
        return roster("A", [P, "a2", "a3"], ["a4"])
    return roster(team, [f"{low}1", f"{low}2", f"{low}3"], [f"{low}4"])


def drawn(s: Season, n: int, *, fmt: str = "knockout", event: str = "cup", cls: str = "uspa",
          **draw: Any) -> Bracket:
    s.event(event, cls=cls, teams=TEAMS[:n])
    s.must("draw.made", event=event, format=fmt, teams=TEAMS[:n], **draw)
    return bracket(s, event)


def bracket(s: Season, event: str = "cup") -> Bracket:
    b = s.engine.draw(event)
    assert b is not None
    return b


def slot(b: Bracket, game: str) -> DrawGame:
    return next(g for g in b.games if g.game == game)


def teams_of(g: DrawGame) -> tuple[str | None, str | None]:
    return g.home.team, g.away.team


def set_up_from(s: Season, b: Bracket, game: str, **over: Any) -> list[Any]:
    """Set up a game of the draw as the console does: its id, kind and teams from the draw."""
    g = slot(b, game)
    assert g.home.team is not None and g.away.team is not None, g
    return s.setup(game, event=g.event, kind=g.kind, home=sheet(g.home.team),
                   away=sheet(g.away.team), **over)


def win(s: Season, game: str, side: str = "home") -> None:
    """Play ``game`` through: one goal to ``side``, then the end."""
    s.start(game)
    s.run(10_000)
    s.must("goal", game, team=side)
    s.run(10_000)
    s.end(game)


def seeding(size: int) -> list[int]:
    """The classic bracket order of seeds 1..size (1 meets size, and 1 and 2 meet last)."""
    order = [1]
    while len(order) < size:
        order = [x for seed in order for x in (seed, 2 * len(order) + 1 - seed)]
    return order


# ==========================================================================
# Making the draw


def l3_knockouts_of_two_to_eight_teams(s: Season) -> None:
    """L3: a knockout of n teams is n - 1 games on a bracket of the next power of two;
    the top seeds take the byes; the first round pairs seed k with seed size + 1 - k."""
    for n in (2, 3, 4, 5, 8):
        event = f"ko{n}"
        b = drawn(s, n, event=event)
        size = 1 << (n - 1).bit_length()
        assert len(b.games) == n - 1, (n, b.games)
        first = [g for g in b.games if g.round == 1]
        order = seeding(size)
        expected = [(TEAMS[a - 1], TEAMS[c - 1]) for a, c in zip(order[::2], order[1::2], strict=True)
                    if c <= n]
        assert [teams_of(g) for g in first] == expected, n
        byes = {TEAMS[k] for k in range(size - n)}
        seen_later = {side.team for g in b.games if g.round == 2 for side in (g.home, g.away)
                      if side.bye}
        assert seen_later == byes, n
        final = [g for g in b.games if g.name == "final"]
        assert [g.game for g in final] == [f"{event}-final"], n
        assert all(g.kind == "regular" and g.event == event for g in b.games)
        ids = [g.game for g in b.games]
        assert len(set(ids)) == len(ids)
        # Every game but the final feeds exactly one later side with its winner.
        fed = [side.winner_of for g in b.games for side in (g.home, g.away) if side.winner_of]
        assert sorted(fed) == sorted(i for i in ids if i != f"{event}-final"), n
        # Ready to set up: the games whose two teams are known, the first round's and
        # those of two seeds that both had byes.
        ready = {g.game for g in b.games if g.state == "ready"}
        assert ready == {g.game for g in b.games if not (g.home.winner_of or g.away.winner_of)}, n
        assert {g.game for g in first} <= ready, n


def l3_a_consolation_bracket_for_the_first_round_losers(s: Season) -> None:
    """L3/R16: with a consolation bracket, the first round's losers play a knockout of
    their own, every game of it a consolation game (R16: not a player's next game)."""
    b = drawn(s, 8, consolation=True)
    first = [g.game for g in b.games if g.bracket == "main" and g.round == 1]
    consolation = [g for g in b.games if g.bracket == "consolation"]
    assert len(first) == 4 and len(consolation) == len(first) - 1
    assert all(g.kind == "consolation" for g in consolation)
    losers = sorted(side.loser_of for g in consolation for side in (g.home, g.away) if side.loser_of)
    assert losers == sorted(first)
    assert all(g.kind == "regular" for g in b.games if g.bracket == "main")


def l3_round_robin_plays_every_pair_once(s: Season) -> None:
    """L3: a round robin plays every pair once, each team at most once a round."""
    for n in (2, 3, 4, 5, 6):
        b = drawn(s, n, fmt="round_robin", event=f"rr{n}")
        pairs = sorted(tuple(sorted(t for t in teams_of(g) if t is not None)) for g in b.games)
        assert pairs == sorted(itertools.combinations(TEAMS[:n], 2)), n
        for r in {g.round for g in b.games}:
            playing = [t for g in b.games if g.round == r for t in teams_of(g)]
            assert len(playing) == len(set(playing)), (n, r)
        assert len({g.round for g in b.games}) == (n if n % 2 else n - 1), n
        assert all(g.state == "ready" for g in b.games)


def r16_a_subsidiary_events_first_round(s: Season) -> None:
    """R16: "the first round game in a subsidiary event" is not a player's next game: the
    draw of a subsidiary event makes its first round's games of that kind, the rest regular."""
    s.event("cup", cls="uspa", teams=TEAMS[:4])
    s.event("plate", cls="uspa", teams=TEAMS[4:8])
    s.must("draw.made", event="cup", format="knockout", teams=TEAMS[:4], subsidiary="plate")
    s.must("draw.made", event="plate", format="knockout", teams=TEAMS[4:8], subsidiary_of="cup")
    b = bracket(s, "plate")
    assert {g.kind for g in b.games if g.round == 1} == {"subsidiary_first_round"}
    assert {g.kind for g in b.games if g.round > 1} == {"regular"}
    assert {g.kind for g in bracket(s, "cup").games} == {"regular"}


def l3_a_draw_the_rules_refuse(s: Season) -> None:
    """L3: a draw is refused, with nothing changed, for an event not set up or completed,
    a team not entered (or twice), a format that can't be, or an event whose drawn games
    have begun to be set up; made again before that, it replaces the first."""
    s.event("cup", teams=TEAMS[:4])
    s.event("old", teams=["A", "B"], completed=True)
    ko: dict[str, Any] = {"format": "knockout"}
    fields: dict[str, Any]
    for fields, code in (
            ({"event": "nope", "teams": ["A", "B"]}, "unknown_event"),
            ({"event": "old", "teams": ["A", "B"]}, "event_completed"),
            ({"event": "cup", "teams": ["A", "Z"]}, "unknown_team"),
            ({"event": "cup", "teams": ["A", "A"]}, "duplicate_team"),
            ({"event": "cup", "teams": ["A", "B", "C"], "consolation": True}, "draw_format"),
            ({"event": "cup", "teams": ["A", "B", "C", "D"], "consolation": True, "subsidiary": "old"},
             "draw_format"),
            ({"event": "cup", "teams": ["A", "B", "C", "D"], "subsidiary": "nope"}, "unknown_event"),
            ({"event": "cup", "teams": ["A", "B", "C", "D"], "subsidiary": "cup"}, "draw_format")):
        r = s.refused("draw.made", **{**ko, **fields})
        assert (r.reason, r.clause) == (code, "L3" if code.startswith("draw") else r.clause), fields
    r = s.refused("draw.made", event="cup", format="round_robin", teams=TEAMS[:4], consolation=True)
    assert r.reason == "draw_format"
    s.must("draw.made", event="cup", format="knockout", teams=TEAMS[:4])
    s.must("draw.made", event="cup", format="knockout", teams=["D", "C", "B", "A"])
    b = bracket(s)
    assert teams_of(slot(b, "cup-sf-1")) == ("D", "A")
    set_up_from(s, b, "cup-sf-1")
    r = s.refused("draw.made", event="cup", format="knockout", teams=TEAMS[:4])
    assert (r.reason, r.clause) == ("already_drawn", "L3")
    s.must("team.eliminated", event="cup", team="B")
    s.event("cup2", teams=TEAMS[:4])
    s.must("team.eliminated", event="cup2", team="B")
    r = s.refused("draw.made", event="cup2", format="knockout", teams=TEAMS[:4])
    assert r.reason == "already_eliminated"


def l3_a_game_of_the_draw_is_set_up_as_the_draw_says(s: Season) -> None:
    """L3/R16: a game set up with a draw's id is that game of the draw: its event, its
    kind (R16 reads it) and its two teams (either way round); a game whose teams are not
    known yet waits for them. Other games are set up as before."""
    b = drawn(s, 4, consolation=True)
    r = s.setup_refused("cup-sf-1", kind="consolation", home=sheet("A"), away=sheet("D"))
    assert (r.reason, r.clause) == ("draw_kind", "L3")
    r = s.setup_refused("cup-sf-1", home=sheet("A"), away=sheet("B"))
    assert (r.reason, r.clause) == ("draw_teams", "L3")
    r = s.setup_refused("cup-final", home=sheet("A"), away=sheet("B"))
    assert (r.reason, r.clause) == ("draw_not_ready", "L3")
    s.event("other", teams=["A", "D"])
    r = s.setup_refused("cup-sf-1", event="other", home=sheet("A"), away=sheet("D"))
    assert r.reason == "draw_event"
    s.setup("cup-sf-1", home=sheet("D"), away=sheet("A"))
    assert slot(bracket(s), "cup-sf-1").state == "set_up"
    s.setup("friendly", home=sheet("A"), away=sheet("B"))
    assert "friendly" not in {g.game for g in bracket(s).games}
    assert b.games


def l3_the_winner_fills_the_next_game(s: Season) -> None:
    """L3: when a game of the draw ends, its winner takes its side of the next game; the
    final's winner wins the draw, and the committee is offered to complete the event."""
    b = drawn(s, 4)
    for game, side in (("cup-sf-1", "home"), ("cup-sf-2", "away")):
        set_up_from(s, b, game)
        assert slot(bracket(s), game).state == "set_up"
        win(s, game, side)
    b = bracket(s)
    sf1, sf2, final = slot(b, "cup-sf-1"), slot(b, "cup-sf-2"), slot(b, "cup-final")
    assert (sf1.state, sf1.winner, sf1.loser) == ("ended", sf1.home.team, sf1.away.team)
    assert (sf2.winner, sf2.loser) == (sf2.away.team, sf2.home.team)
    assert teams_of(final) == (sf1.winner, sf2.winner) and final.state == "ready"
    assert b.champion is None
    set_up_from(s, b, "cup-final")
    win(s, "cup-final")
    b = bracket(s)
    assert b.champion == sf1.winner
    assert ("complete", None) in {(p.action, p.team) for p in b.proposals}
    s.complete("cup")
    assert all(p.action != "complete" for p in bracket(s).proposals)


def l3_a_tied_game_decides_nothing(s: Season) -> None:
    """L3/A4: a game of the draw that ends level has no winner: its next game waits, and
    the bracket says why (a shootout's goals are goals of the game, A4)."""
    b = drawn(s, 4)
    set_up_from(s, b, "cup-sf-1")
    s.play("cup-sf-1")
    b = bracket(s)
    assert slot(b, "cup-sf-1").winner is None and slot(b, "cup-sf-1").problem == "tied"
    assert slot(b, "cup-final").state == "waiting"
    r = s.setup_refused("cup-final", home=sheet("A"), away=sheet("B"))
    assert r.reason == "draw_not_ready"


def r15_a_knockout_loss_is_proposed_for_elimination(s: Season) -> None:
    """R15: a team knocked out "is not at the time ... participating in an as-yet
    uncompleted event": the draw proposes its elimination, never enters it; once the
    committee confirms it (``team.eliminated``), what its players owe may be served with
    any team."""
    b = drawn(s, 4)
    loser_side = next(side for side in ("home", "away") if getattr(slot(b, "cup-sf-1"), side).team == "A")
    set_up_from(s, b, "cup-sf-1")
    s.start("cup-sf-1")
    s.run(10_000)
    s.card("cup-sf-1", P, "red")
    s.run(10_000)
    s.must("goal", "cup-sf-1", team="away" if loser_side == "home" else "home")
    s.end("cup-sf-1")
    b = bracket(s)
    assert [(p.action, p.team, p.game, p.reason) for p in b.proposals] == [
        ("eliminate", "A", "cup-sf-1", "lost")]
    cup = s.engine.tournament("cup")
    assert cup is not None and not cup.eliminated  # a proposal, never an elimination
    assert all(not o.any_team for o in s.obligations())
    out = s.must("team.eliminated", event="cup", team="A")
    assert [n.player for n in out if isinstance(n, nt.ObligationUpdated)] == [P]
    assert all(o.any_team for o in s.obligations())
    assert bracket(s).proposals == []


def r16_a_red_in_the_first_round_is_not_served_in_the_consolation(s: Season) -> None:
    """R16: a suspension is served in the next game "that is not a consolation game": a red
    in a first-round game of the draw passes over the consolation game the draw sets up
    for the loser, whose kind the committee never typed, and no elimination is proposed
    while the team still has a game in the draw (R15)."""
    b = drawn(s, 4, consolation=True)
    a_side = next(side for side in ("home", "away") if getattr(slot(b, "cup-sf-1"), side).team == "A")
    set_up_from(s, b, "cup-sf-1")
    s.start("cup-sf-1")
    s.run(10_000)
    s.card("cup-sf-1", P, "red")
    s.must("goal", "cup-sf-1", team="away" if a_side == "home" else "home")
    s.end("cup-sf-1")
    set_up_from(s, bracket(s), "cup-sf-2")
    win(s, "cup-sf-2")
    b = bracket(s)
    assert all(p.team != "A" for p in b.proposals)
    consolation = next(g for g in b.games if g.bracket == "consolation")
    assert "A" in teams_of(consolation) and consolation.state == "ready"
    out = set_up_from(s, b, consolation.game) + s.start(consolation.game)
    assert s.engine.view(consolation.game).kind == "consolation"
    assert not [n for n in out if isinstance(n, nt.ObligationApplied)]
    assert [(o.kind, o.status) for o in s.obligations()] == [("suspension", "pending")]
    s.run(10_000)
    s.must("goal", consolation.game, team="home")
    s.end(consolation.game)
    # The consolation over, A has no game left in the draw: its elimination is proposed.
    assert ("eliminate", "A") in {(p.action, p.team) for p in bracket(s).proposals}


CASES = [pytest.param(f, id=f.__name__) for f in (
    l3_knockouts_of_two_to_eight_teams, l3_a_consolation_bracket_for_the_first_round_losers,
    l3_round_robin_plays_every_pair_once, r16_a_subsidiary_events_first_round, l3_a_draw_the_rules_refuse,
    l3_a_game_of_the_draw_is_set_up_as_the_draw_says, l3_the_winner_fills_the_next_game,
    l3_a_tied_game_decides_nothing, r15_a_knockout_loss_is_proposed_for_elimination,
    r16_a_red_in_the_first_round_is_not_served_in_the_consolation,
)]


@pytest.mark.parametrize("case", CASES)
def test_the_draw(case: SeasonCase) -> None:
    s = Season()
    case(s)
    # A fresh fold of the log gives the same state and the same brackets.
    again = Engine()
    for body in s.log:
        again.feed(codec.decode_event(msgspec.json.encode(body)))
    again.advance(s.t)
    s.engine.advance(s.t)
    assert again.state_hash() == s.engine.state_hash()
    # And the fold's image, as a snapshot caches it, restores the draws with everything else.
    image = msgspec.msgpack.decode(msgspec.msgpack.encode(s.engine.image()), type=EngineImage)
    restored = Engine.from_image(image)
    assert restored.draws == s.engine.draws
    for event in s.engine.tournaments.by_id:
        drawn = msgspec.json.encode(s.engine.draw(event))
        assert msgspec.json.encode(again.draw(event)) == drawn == msgspec.json.encode(restored.draw(event))


def test_cases_cite_their_clauses() -> None:
    check_cases(CASES)
