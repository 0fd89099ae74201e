"""L2: teams and players as registered, the names every display shows.

Each case is a function taking a fresh ``Season``; its docstring starts with
the clause it checks. After every case its log is replayed through
``arena-stream replay``, which must give the same state, registrations and
every revision included.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from stream.cli import replay
from stream.rules import notices as nt

from .clause_helpers import P, Season, check_cases

SeasonCase = Callable[[Season], None]

AIK = {"primary": "#0B3D91", "secondary": "#FFD100"}


def team(s: Season, team: str = "A", name: str = "Aiken Arena", short: str = "AIK",
         **over: Any) -> list[Any]:
    return s.must("team.registered", team=team, name=name, short=short, colors=AIK, **over)


def l2_a_registration_names_the_team_and_players_in_every_game(s: Season) -> None:
    """L2: a game's roster is its teams' and players' current registrations; a player
    not registered is absent (displays show the id)."""
    s.setup("g1")
    team(s)
    s.must("player.registered", player=P, name="Tomás Ortega", number=2, handicap=3, team="A")
    r = s.engine.roster("g1")
    assert r.home is not None and (r.home.name, r.home.short, r.home.colors.primary) == (
        "Aiken Arena", "AIK", "#0B3D91")
    assert r.away is None
    assert (r.players[P].name, r.players[P].number, r.players[P].handicap) == ("Tomás Ortega", 2, 3)
    assert "a2" not in r.players
    assert s.engine.rosters_of("A") == ["g1"] and s.engine.rosters_of(P) == ["g1"]
    assert s.engine.rosters_of("nobody") == []


def l2_a_later_registration_is_the_next_revision_and_history_stays(s: Season) -> None:
    """L2: a later registration changes the displays from that point on and never
    rewrites an earlier one: every revision is kept."""
    first = team(s)
    assert first == []
    s.run(1_000)
    team(s, name="Aiken Arena Polo", revision=1)
    hist = s.engine.team_history("A")
    assert [(e.revision, e.name) for e in hist] == [(1, "Aiken Arena"), (2, "Aiken Arena Polo")]
    assert hist[0].at < hist[1].at
    current = s.engine.team("A")
    assert current is not None and current.revision == 2


def l2_a_stale_registration_is_refused_with_what_changed(s: Season) -> None:
    """L2: two committee members edit one team: the second save, made from revision 1
    after the first made revision 2, is refused with what changed, and nothing changes."""
    team(s)
    team(s, name="Aiken Arena Polo", short="AAP", revision=1)
    r = s.refused("team.registered", team="A", name="Aiken", short="AIK", colors=AIK, revision=1)
    assert (r.reason, r.clause) == ("stale_registration", "L2")
    assert "'Aiken Arena' → 'Aiken Arena Polo'" in r.detail and "'AIK' → 'AAP'" in r.detail
    assert "now revision 2" in r.detail
    fresh = s.refused("player.registered", player=P, name="X", revision=1)
    assert fresh.reason == "stale_registration" and "not registered yet" in fresh.detail
    s.must("player.registered", player=P, name="Ortega", revision=0)
    again = s.refused("player.registered", player=P, name="Ortega", revision=0)
    assert "already registered (revision 1)" in again.detail


def l2_registering_for_an_event_enters_the_team(s: Season) -> None:
    """L2/R15: a team registered for an event is entered in it (so R15 counts it);
    an unknown or completed event refuses the registration whole."""
    s.event("cup", teams=["A", "B"])
    team(s, team="C", name="Casa Chica", short="CC", event="cup")
    t = s.engine.tournament("cup")
    assert t is not None and t.teams == ["A", "B", "C"]
    team(s, team="C", name="Casa Chica", short="CCH", event="cup")  # entered once
    assert t.teams == ["A", "B", "C"]
    r = s.refused("team.registered", team="D", name="D", short="DD", colors=AIK, event="nope")
    assert r.reason == "unknown_event" and s.engine.team("D") is None
    s.complete("cup")
    r = s.refused("team.registered", team="D", name="D", short="DD", colors=AIK, event="cup")
    assert (r.reason, r.clause) == ("event_completed", "L2")


def l2_bad_registrations_are_refused_by_the_format(s: Season) -> None:
    """L2: short names are 2 to 4 letters or digits, colours are #rrggbb, numbers 0-99:
    the codec refuses anything else (a typed error, nothing applied)."""
    from stream.errors import MalformedEvent
    from stream.rules import codec
    bad: list[dict[str, Any]] = [{"short": "A"}, {"short": "AB_C"}, {"name": "   "},
                                 {"colors": {"primary": "red", "secondary": "#000000"}}]
    for over in bad:
        body = {"type": "team.registered", "id": "x", "at": s.t, "team": "A", "name": "Aiken",
                "short": "AIK", "colors": AIK, **over}
        with pytest.raises(MalformedEvent):
            codec.decode_event(msgspec.json.encode(body))
    with pytest.raises(MalformedEvent):
        codec.decode_event(msgspec.json.encode({"type": "player.registered", "id": "y", "at": s.t,
                                                "player": P, "name": "Ortega", "number": 100}))


def l2_registrations_change_no_game_and_no_obligation(s: Season) -> None:
    """L2/R6: names only: a game's view and the ledger are the same with or without them."""
    s.event("cup")
    s.setup("g1")
    s.start("g1")
    s.run(10_000)
    s.card("g1", P, "red")
    before = (msgspec.json.encode(s.engine.view("g1")), s.engine.all_obligations())
    team(s)
    s.must("player.registered", player=P, name="Ortega", number=2, team="A")
    assert (msgspec.json.encode(s.engine.view("g1")), s.engine.all_obligations()) == before
    out = s.end("g1")
    assert any(isinstance(n, nt.ObligationCreated) for n in out)


CASES = [pytest.param(f, id=f.__name__) for f in (
    l2_a_registration_names_the_team_and_players_in_every_game,
    l2_a_later_registration_is_the_next_revision_and_history_stays,
    l2_a_stale_registration_is_refused_with_what_changed,
    l2_registering_for_an_event_enters_the_team,
    l2_bad_registrations_are_refused_by_the_format,
    l2_registrations_change_no_game_and_no_obligation,
)]


@pytest.mark.parametrize("case", CASES)
def test_rosters(case: SeasonCase) -> None:
    s = Season()
    case(s)
    log = b"".join(msgspec.json.encode(b) + b"\n" for b in s.log)
    out = io.BytesIO()
    replay(io.BytesIO(log), out, state=True)
    replayed = msgspec.json.decode(out.getvalue())
    live = msgspec.to_builtins(s.engine.state())
    assert replayed["teams"] == live["teams"] and replayed["players"] == live["players"]


def test_cases_cite_their_clauses() -> None:
    check_cases(CASES)
