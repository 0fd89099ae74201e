"""L2: notices in names. ``text.render`` names a player "#4 José Díaz (Aiken Arena)" and a
team by its registered name, from the names it is given (the roster as of the event that
raised the notice); whatever is not registered reads by id, exactly as before rosters.
The notices' fields keep their ids, and the fold does not change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import msgspec
import pytest

from stream.rules import notices as nt
from stream.rules.names import NO_NAMES
from stream.rules.text import describe, render

from .script import Script
from .script import game_setup as game_setup_body

AIK = {"primary": "#0B3D91", "secondary": "#FFD100"}


def registered(s: Script, *, players: bool = True, teams: bool = True) -> None:
    """Script's home team as Aiken Arena, away as Wellington Blue; h2 is #4 José Díaz,
    a1 is Ñandú Peña (no number)."""
    if teams:
        s.must("team.registered", team="home-team", name="Aiken Arena", short="AIK", colors=AIK)
        s.must("team.registered", team="away-team", name="Wellington Blue", short="WEL", colors=AIK)
    if players:
        s.must("player.registered", player="h2", name="José Díaz", number=4, team="home-team")
        s.must("player.registered", player="a1", name="Ñandú Peña", team="away-team")


def texts(s: Script, out: list[Any], kind: type) -> tuple[str, str]:
    (n,) = [n for n in out if isinstance(n, kind)]
    t = describe(cast(nt.Notice, n), s.engine.names())
    return t.en, t.es


def yellow(s: Script) -> list[Any]:
    s.start()
    return s.card("h2")


def red(s: Script) -> list[Any]:
    s.start()
    return s.card("h2", "red", conduct="striking")


def away_goal(s: Script) -> list[Any]:
    s.start()
    return s.goal("away", player="a1")


def official(s: Script) -> list[Any]:
    s.start()
    return s.must("card", official={"team": "home", "role": "coach"}, color="yellow", count=1,
                  conduct="arguing")


def suspension(s: Script) -> list[Any]:
    red(s)
    return s.must("game.end")


def substitution(s: Script) -> list[Any]:
    s.start()
    s.whistle()
    return s.must("substitution", team="home", out="h2", **{"in": "h4"})


Play = Callable[[Script], list[Any]]

# (what happens, the notice, its English and Spanish text with everyone registered, and
# with no one registered: the texts as they always read)
CASES: list[tuple[Play, type, tuple[str, str], tuple[str, str]]] = [
    (yellow, nt.CardRecorded,
     ("Yellow card to #4 José Díaz (Aiken Arena): 1 yellow in this game, offense 1. "
      "(Rule 14 · Every card: a penalty)",
      "Tarjeta amarilla para #4 José Díaz (Aiken Arena): 1 amarilla(s) en el partido, infracción 1. "
      "(Regla 14 · Cada tarjeta: un penal)"),
     ("Yellow card to h2 (home): 1 yellow in this game, offense 1. (Rule 14 · Every card: a penalty)",
      "Tarjeta amarilla para h2 (local): 1 amarilla(s) en el partido, infracción 1. "
      "(Regla 14 · Cada tarjeta: un penal)")),
    (yellow, nt.PenaltyAwarded,
     ("Penalty to Wellington Blue. (Rule 14 · Every card: a penalty)",
      "Penal a favor de Wellington Blue. (Regla 14 · Cada tarjeta: un penal)"),
     ("Penalty to away. (Rule 14 · Every card: a penalty)",
      "Penal a favor del visitante. (Regla 14 · Cada tarjeta: un penal)")),
    (red, nt.CardRecorded,
     ("Red card to #4 José Díaz (Aiken Arena), offense 1. (Rule 14 · Red card)",
      "Tarjeta roja para #4 José Díaz (Aiken Arena), infracción 1. (Regla 14 · Tarjeta roja)"),
     ("Red card to h2 (home), offense 1. (Rule 14 · Red card)",
      "Tarjeta roja para h2 (local), infracción 1. (Regla 14 · Tarjeta roja)")),
    (red, nt.SentOff,
     ("#4 José Díaz (Aiken Arena) sent off for the rest of the game; no substitute until the first "
      "stoppage after 4:00 of play. (Rule 14 · Red card)",
      "#4 José Díaz (Aiken Arena) expulsado el resto del partido; sin sustituto hasta la primera "
      "detención tras 4:00 de juego. (Regla 14 · Tarjeta roja)"),
     ("h2 (home) sent off for the rest of the game; no substitute until the first stoppage after 4:00 "
      "of play. (Rule 14 · Red card)",
      "h2 (local) expulsado el resto del partido; sin sustituto hasta la primera detención tras 4:00 "
      "de juego. (Regla 14 · Tarjeta roja)")),
    (away_goal, nt.GoalScored,
     ("Goal Wellington Blue by Ñandú Peña: 0-1. (Arena · Goals)",
      "Gol de Wellington Blue de Ñandú Peña: 0-1. (Arena · Goles)"),
     ("Goal away by a1: 0-1. (Arena · Goals)", "Gol del visitante de a1: 0-1. (Arena · Goles)")),
    (official, nt.OfficialCarded,
     ("Yellow card to the Aiken Arena coach (team organization). (Rule 14 · Unsportsmanlike conduct)",
      "Tarjeta amarilla al coach de Aiken Arena (organización del equipo). "
      "(Regla 14 · Conducta antideportiva)"),
     ("Yellow card to the home coach (team organization). (Rule 14 · Unsportsmanlike conduct)",
      "Tarjeta amarilla al coach del local (organización del equipo). (Regla 14 · Conducta antideportiva)")),
    (suspension, nt.ObligationCreated,
     ("#4 José Díaz (Aiken Arena): suspension carried to the next qualifying game. (Rule 14 · Red card)",
      "#4 José Díaz (Aiken Arena): suspensión para el siguiente partido válido. (Regla 14 · Tarjeta roja)"),
     ("h2: suspension carried to the next qualifying game. (Rule 14 · Red card)",
      "h2: suspensión para el siguiente partido válido. (Regla 14 · Tarjeta roja)")),
    (substitution, nt.SubstitutionMade,
     ("Substitution (Aiken Arena): h4 on for #4 José Díaz. (Arena · Teams and substitutes)",
      "Sustitución (Aiken Arena): entra h4 por #4 José Díaz. (Arena · Equipos y sustitutos)"),
     ("Substitution (home): h4 on for h2. (Arena · Teams and substitutes)",
      "Sustitución (local): entra h4 por h2. (Arena · Equipos y sustitutos)")),
]


@pytest.mark.parametrize(("play", "kind", "named", "ids"), CASES,
                         ids=[f"{c[0].__name__}-{c[1].__name__}" for c in CASES])
def test_a_notice_names_people_as_registered_and_ids_where_nothing_is(
        play: Play, kind: type, named: tuple[str, str], ids: tuple[str, str]) -> None:
    s = Script()
    registered(s)
    assert texts(s, play(s), kind) == named
    bare = Script()
    out = play(bare)
    assert texts(bare, out, kind) == ids
    (n,) = [cast(nt.Notice, n) for n in out if isinstance(n, kind)]
    assert describe(n) == describe(n, NO_NAMES) == describe(n, bare.engine.names())


def test_the_fields_keep_their_ids_and_the_fold_is_the_same() -> None:
    """The names change a notice's text only: the fold of a log with registrations gives
    the same notices (but for the text) as one where the names were never asked for."""
    s = Script()
    registered(s)
    out = yellow(s)
    card = next(n for n in out if isinstance(n, nt.CardRecorded))
    named = cast(nt.CardRecorded, render(card, s.engine.names()))
    assert (named.player, named.side) == ("h2", "home") and card.text is None
    assert msgspec.structs.replace(named, text=None) == card


def test_a_game_ready_names_both_teams_and_a_player_without_a_team_registered_keeps_the_side() -> None:
    s = Script()
    ready = next(n for n in s.notices if isinstance(n, nt.GameReady))
    assert describe(ready, s.engine.names()).en == "Game set up: home-team v away-team. " \
                                                   "(Arena · Teams and substitutes)"
    registered(s, players=False)
    t = describe(ready, s.engine.names())
    assert (t.en, t.es) == ("Game set up: Aiken Arena v Wellington Blue. (Arena · Teams and substitutes)",
                            "Partido preparado: Aiken Arena contra Wellington Blue. "
                            "(Arena · Equipos y sustitutos)")
    # A registered player of a team that is not: the name, and the side as before.
    bare = Script()
    registered(bare, teams=False)
    t = describe(next(n for n in yellow(bare) if isinstance(n, nt.CardRecorded)), bare.engine.names())
    assert t.en.startswith("Yellow card to #4 José Díaz (home):")
    assert t.es.startswith("Tarjeta amarilla para #4 José Díaz (local):")


def test_a_rename_changes_later_texts_only_in_a_fold_of_the_game_again() -> None:
    """L2: "a later registration changes the displays from that point on and never rewrites
    an earlier one": the game folded again (``fork_game``, as a resume after a restart and the
    game report do) reads each notice in the names as of its own event."""
    s = Script()
    registered(s)
    first = yellow(s)
    live_first = [render(n, s.engine.names()) for n in first]
    first_id = s.last_id()
    s.must("player.registered", player="h2", name="José María Díaz", number=4, team="home-team",
           revision=1)
    second = s.card("h2")
    live_second = [render(n, s.engine.names()) for n in second]
    second_id = s.last_id()
    assert "#4 José Díaz (Aiken Arena)" in live_first[0].text.en  # type: ignore[union-attr]
    assert "#4 José María Díaz (Aiken Arena)" in live_second[0].text.en  # type: ignore[union-attr]

    fork, along = s.engine.fork_game("g1"), s.engine.names_along("g1")
    again: dict[str, list[nt.Notice]] = {}
    for e in s.engine.game_events("g1"):
        names = along.at(e.id)
        again[e.id] = [render(n, names) for n in fork.feed(e)]  # type: ignore[arg-type]
    assert again[first_id] == live_first and again[second_id] == live_second


def test_an_obligation_names_the_game_it_comes_from_by_its_teams() -> None:
    """A notice about an obligation names the game it comes from as people do, by its
    teams' registered names ("from game Aiken Arena v Wellington Blue"); by its id where
    neither team is registered."""
    for named in (True, False):
        s = Script()
        if named:
            registered(s, players=False)
        suspension(s)
        s.send_raw(game_setup_body("g2"))
        s.game = "g2"
        (applied,) = s.of(nt.ObligationApplied, s.start())
        t = describe(applied, s.engine.names())
        origin = (("Aiken Arena v Wellington Blue", "Aiken Arena contra Wellington Blue") if named
                  else ("g1", "g1"))
        assert t.en.startswith(f"h2 begins this game suspended (from game {origin[0]})"), t.en
        assert t.es.startswith(f"h2 empieza este partido suspendido (del partido {origin[1]})"), t.es
