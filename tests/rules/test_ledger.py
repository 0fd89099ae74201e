"""Per-clause tests of the carry-over ledger: what follows a player out of a game
into his next ones (R6 and R14's next-game suspension, R9 cards after the game,
R10 box time carried, R11 the shootout exclusion, R12 the carried yellow status,
R13, R15 team not entered in a further event, R16 which game counts as the
next, and the committee's increase).

Each case is a function taking a fresh ``Season`` (several events and games on
one engine, ``clause_helpers.Season``); its docstring starts with the clause id
and quotes the words of the rule it checks. Cases are collected in one table per
clause and run through one ``parametrize`` each, ids = function names
(docs/rules.md maps each clause to its cases). The player followed is ``p``, of
team A (``p, a2, a3 | a4``) unless a case says otherwise; team B is the usual
opponent. Cases that show the engine contradicting the rule are marked
``@bug(reason)``: a strict xfail.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from stream.errors import Refused
from stream.rules import codec
from stream.rules import notices as nt
from stream.rules.events import GameSetup

from .clause_helpers import (
    FOUR_MIN,
    TEAM_A,
    TWO_MIN,
    P,
    Season,
    check_cases,
    one,
    roster,
    tags,
)

SeasonCase = Callable[[Season], None]

#: p's team with p on the bench, and without him at all.
A_BENCH = roster("A", ["a4", "a2", "a3"], [P])
A_WITHOUT_P = roster("A", ["a4", "a2", "a3"])
#: Another team p can play for, and its opponent.
TEAM_C = roster("C", [P, "c2", "c3"], ["c4"])
C_BENCH = roster("C", ["c4", "c2", "c3"], [P])
TEAM_D = roster("D", ["d1", "d2", "d3"], ["d4"])

_BUGS: dict[str, str] = {}


def bug(reason: str) -> Callable[[SeasonCase], SeasonCase]:
    """Mark a case as showing a suspected engine bug (strict xfail)."""

    def mark(f: SeasonCase) -> SeasonCase:
        _BUGS[f.__name__] = reason
        return f

    return mark


def table(*cases: SeasonCase) -> list[Any]:
    return [pytest.param(f, id=f.__name__,
                         marks=[pytest.mark.xfail(strict=True, reason=_BUGS[f.__name__])]
                         if f.__name__ in _BUGS else [])
            for f in cases]


# --------------------------------------------------------------------------
# Origin games: how p comes to owe something


def red_in(s: Season, game: str = "g1", *, how: str = "red", **setup: Any) -> None:
    """``game``: p is sent off after 10 s of play (a red card, or ``arena.left``),
    and the game ends 30 s later."""
    s.setup(game, **setup)
    s.start(game)
    s.run(10_000)
    if how == "red":
        s.card(game, P, "red")
    else:
        s.must("arena.left", game, player=P)
    s.run(30_000)
    s.end(game)


def box_at_end(s: Season, game: str = "g1", *, end: dict[str, Any] | None = None, **setup: Any) -> int:
    """``game``: p's second yellow after 10 s of play; the game ends 30 s later
    with p still owing 1:30 of play. Returns what he owes."""
    s.setup(game, **setup)
    s.start(game)
    s.run(10_000)
    s.card(game, P, count=2)
    s.run(30_000)
    s.end(game, **(end or {}))
    return TWO_MIN - 30_000


def three_yellows(s: Season, game: str = "g1", **setup: Any) -> None:
    """``game``: p receives three yellows on three offenses, serves both box trips
    and ends the game on the field, never shown a red."""
    s.setup(game, **setup)
    s.start(game)
    s.run(10_000)
    s.card(game)
    s.card(game)                   # second yellow: the box
    s.run(TWO_MIN)
    s.must("whistle", game)        # released
    s.start(game)
    s.card(game)                   # third yellow: the box again
    s.run(TWO_MIN)
    s.must("whistle", game)        # released
    s.end(game)


def applied(out: list[Any]) -> list[tuple[str, str, int, str]]:
    """``(player, kind, owed_ms, origin_game)`` of the ``obligation.applied`` notices."""
    return [(n.player, n.kind, n.owed_ms, n.origin_game) for n in out if isinstance(n, nt.ObligationApplied)]


def sub(s: Season, game: str, out: str, into: str, team: str = "home") -> list[Any]:
    return s.must("substitution", game, team=team, out=out, **{"in": into})


def sub_refused(s: Season, game: str, out: str, into: str, team: str = "home") -> nt.Rejected:
    return s.refused("substitution", game, team=team, out=out, **{"in": into})


def decoded_setup(s: Season, game: str, **kw: Any) -> GameSetup:
    e = codec.decode_event(msgspec.json.encode(s.setup_body(game, **kw)))
    assert isinstance(e, GameSetup)
    return e


def alerts(out: list[Any]) -> list[tuple[str, str | None, str]]:
    """``(code, player, clause)`` of the ``alert`` notices."""
    return [(n.code, n.player, n.clause) for n in out if isinstance(n, nt.Alert)]


def assert_suspended_in(s: Season, game: str, clause: str, **setup: Any) -> None:
    """p may not play ``game`` ("suspended for the player's next game [...] with a
    substitute allowed"). Listed to start, the set-up is accepted with an alert
    (``suspended_in_lineup`` citing ``clause``); when the game begins he is
    suspended, his slot empty, and a substitute may take it at once."""
    home = setup.pop("home", TEAM_A)
    setup.pop("bench", None)
    out = s.setup(game, home=home, **setup)
    assert alerts(out) == [("suspended_in_lineup", P, clause)]
    out = s.start(game)
    assert [(k, o) for _, k, _, o in applied(out)] == [("suspension", "g1")]
    assert alerts(out) == [("suspended_in_lineup", P, clause)]
    v = s.player(game)
    assert (v.suspended, v.on_field, v.sub_allowed) == (True, False, True)
    team = s.view(game).teams.home
    assert (team.on_field, [(x.player, x.reason) for x in team.short]) == (2, [(P, "suspended")])
    bench = next(x for x in team.bench)
    sub(s, game, P, bench)
    team = s.view(game).teams.home
    assert (team.on_field, team.short, P in team.bench) == (3, [], False)
    r = sub_refused(s, game, bench, P)
    assert (r.reason, r.clause) == ("not_on_bench", "A3")


def assert_suspended_on_bench(s: Season, game: str, **setup: Any) -> None:
    """p, on the bench of ``game``, is suspended when it begins; his team plays three,
    and the officials are told he may not come on (``suspended_on_bench``), at the set-up
    and when the game begins."""
    out = s.begin(game, home=setup.pop("home", A_BENCH), **setup)
    assert [(k, o) for _, k, _, o in applied(out)] == [("suspension", "g1")]
    assert [code for code, player, _ in alerts(out)] == ["suspended_on_bench"] * 2
    assert {player for _, player, _ in alerts(out)} == {P}
    v = s.player(game)
    assert (v.suspended, v.on_field) == (True, False)
    assert s.view(game).teams.home.on_field == 3


def assert_nothing_applied_in(s: Season, game: str, **setup: Any) -> None:
    """p begins ``game`` with nothing from earlier games."""
    out = s.begin(game, **setup)
    assert applied(out) == [] and alerts(out) == []
    v = s.player(game)
    assert (v.on_field, v.suspended, v.box, v.carried_yellow) == (True, False, None, False)
    assert s.view(game).carried == []


# ==========================================================================
# R6, R14: the next-game suspension of a player sent off


def r6_red_suspends_next_game(s: Season) -> None:
    """R6: "the player will remain suspended for the player's next game of equal or
    higher handicap for the same team with a substitute allowed": starting him is
    refused ``suspended_player`` (R6); listed on the bench he is suspended and his
    team plays three."""
    red_in(s)
    (created,) = s.of(nt.ObligationCreated)
    assert (created.player, created.kind, created.owed_ms, created.clause, created.origin_game) == (
        P, "suspension", 0, "R6", "g1")
    assert s.pending() == [("suspension", 0, "g1")]
    assert_suspended_in(s, "g2", "R6")
    home = s.view("g2").teams.home
    assert (home.on_field, home.short) == (3, [])
    (c,) = s.view("g2").carried
    assert (c.player, c.kind, c.clause, c.origin_game) == (P, "suspension", "R6", "g1")


def r6_suspended_player_on_bench_cannot_come_in(s: Season) -> None:
    """R6/R13: "the suspension of any player [...] may not be avoided by the
    substitution": a suspended player on the bench is refused ``player_suspended``
    at every stoppage of the game."""
    red_in(s)
    s.setup("g2", home=A_BENCH)
    s.start("g2")
    s.run(10_000)
    s.must("whistle", "g2")
    r = sub_refused(s, "g2", "a2", P)
    assert (r.reason, r.clause) == ("player_suspended", "R13")
    s.run(FOUR_MIN)
    s.start("g2")
    s.run(FOUR_MIN)
    s.must("whistle", "g2")
    r = sub_refused(s, "g2", "a2", P)
    assert (r.reason, r.clause) == ("player_suspended", "R13")


def r6_suspension_served_at_end_of_serving_game(s: Season) -> None:
    """R6: "suspended for the player's next game": the obligation stays ``pending``
    while that game is only set up, is ``serving`` (with ``applied_in``) once it
    begins, and ``served`` (``obligation.served``) when it ends; the game after it
    owes nothing."""
    red_in(s)
    s.setup("g2", home=A_BENCH)
    (ob,) = s.obligations()
    assert (ob.status, ob.applied_in) == ("pending", None)
    s.start("g2")
    (ob,) = s.obligations()
    assert (ob.status, ob.applied_in) == ("serving", "g2")
    out = s.play("g2")
    served = one(out, nt.ObligationServed)
    assert (served.obligation, served.game, served.player, served.origin_game, served.clause) == (
        ob.id, "g2", P, "g1", "R6")
    (ob,) = s.obligations()
    assert (ob.status, ob.applied_in) == ("served", "g2")
    assert s.engine.state().ledger[P][0].status == "served"
    assert_nothing_applied_in(s, "g3")


def r14_left_arena_suspends_next_game(s: Season) -> None:
    """R14: "Unauthorized departure from the arena (automatic red card) will result
    in suspension for the next game of equal or higher handicap for the same
    team": the suspension and its refusal cite R14."""
    red_in(s, how="arena")
    assert s.pending() == [("suspension", 0, "g1")]
    assert one(s.notices, nt.ObligationCreated).clause == "R14"
    assert_suspended_in(s, "g2", "R14")


def r6_red_on_bench_player_suspends_next_game(s: Season) -> None:
    """R6: a red card shown to a bench player ("any member of a team organization")
    is a red in the game: he too is suspended for his next game, and listed to
    start it he is suspended with an alert."""
    s.setup("g1")
    s.start("g1")
    s.run(10_000)
    s.card("g1", "a4", "red")
    s.end("g1")
    assert s.pending("a4") == [("suspension", 0, "g1")]
    out = s.begin("g2", home=roster("A", ["a4", "a2", "a3"], [P]))
    assert alerts(out) == [("suspended_in_lineup", "a4", "R6")] * 2   # at set-up, and as it begins
    assert s.player("g2", "a4").suspended is True


def r9_postgame_2y_sits_out_two_minutes(s: Season) -> None:
    """R9: "two yellow cards [...] after the game ends, he or she must sit out until
    the first play stoppage [...] following the first two minutes of play in his
    or her next game of equal or higher handicap for the same team"."""
    s.setup("g1")
    s.play("g1")
    out = s.postgame("g1", "2y")
    assert tags(out) == ["postgame.recorded", "obligation.created"]
    created = one(out, nt.ObligationCreated)
    assert (created.kind, created.owed_ms, created.clause, created.cause) == ("sit_out", TWO_MIN, "R9",
                                                                              s.last_id())
    out = s.begin("g2")
    assert applied(out) == [(P, "sit_out", TWO_MIN, "g1")]
    enter = one(out, nt.BoxEnter)
    assert (enter.player, enter.kind, enter.owed_ms, enter.clause) == (P, "carried", TWO_MIN, "R9")


def r9_postgame_3y_sits_out_four_minutes(s: Season) -> None:
    """R9: "three yellow cards [...] after the game ends, he or she must sit out
    until the first play stoppage [...] following the first four minutes of play
    in his or her next game"."""
    s.setup("g1")
    s.play("g1")
    s.postgame("g1", "3y")
    out = s.begin("g2")
    assert applied(out) == [(P, "sit_out", FOUR_MIN, "g1")]
    s.start("g2")
    s.run(FOUR_MIN - 1)
    s.must("whistle", "g2")
    assert s.player("g2").box is not None
    s.start("g2")
    s.run(1)
    out = s.must("whistle", "g2")
    assert one(out, nt.BoxRelease).player == P


def r9_postgame_cards_are_separate_from_in_game_cards(s: Season) -> None:
    """R9: "Yellow or red cards assessed [...] after the game ends are separate
    from, and not to be added to, yellow or red cards assessed during the game":
    two yellows in the game and a post-game 2y are not three yellows (no R12
    status), only the post-game sit-out."""
    s.setup("g1")
    s.start("g1")
    s.run(10_000)
    s.card("g1")
    s.card("g1")
    s.run(TWO_MIN)
    s.must("whistle", "g1")        # the box trip is served in the game
    s.end("g1")
    s.postgame("g1", "2y")
    assert s.pending() == [("sit_out", TWO_MIN, "g1")]
    assert s.player("g1").yellows == 2


def r9_postgame_red_lineup_rule(s: Season) -> None:
    """R9: "a red card [...] after the game ends, he or she shall be suspended for
    the entirety of his or her next game [...] with no substitute allowed until
    the first play stoppage [...] following the first four minutes of play in
    that game": listed to start, he is suspended, his slot stays empty, and a
    substitute comes on only after that stoppage."""
    s.setup("g1")
    s.play("g1")
    s.postgame("g1", "red")
    assert s.pending() == [("suspension", FOUR_MIN, "g1")]
    out = s.begin("g2")
    assert applied(out) == [(P, "suspension", FOUR_MIN, "g1")]
    # Listed to start: the officials are told he may not play, at the set-up and at the start.
    assert alerts(out) == [("suspended_in_lineup", P, "R9")] * 2
    assert {(n.reason, n.owed_ms) for n in s.of(nt.Alert, out)} == {("suspension", FOUR_MIN)}
    v = s.player("g2")
    assert (v.suspended, v.on_field, v.sub_allowed) == (True, False, False)
    home = s.view("g2").teams.home
    assert (home.on_field, home.substitute_allowed) == (2, False)
    assert [(x.player, x.reason) for x in home.short] == [(P, "suspended")]
    s.run(FOUR_MIN - 1)
    s.must("whistle", "g2")
    r = sub_refused(s, "g2", P, "a4")
    assert (r.reason, r.clause) == ("no_substitute_yet", "R9")
    s.start("g2")
    eligible = s.run(1)
    assert [(type(n), n.player) for n in eligible] == [(nt.SubEligible, P)]
    out = s.must("whistle", "g2")
    assert one(out, nt.SubAllowed).player == P
    sub(s, "g2", P, "a4")
    home = s.view("g2").teams.home
    assert (home.lineup, home.on_field) == (["a4", "a2", "a3"], 3)
    assert s.player("g2").suspended is True   # still out for the whole game


def r9_postgame_red_team_short_whether_listed_or_not(_: Season) -> None:
    """R9/R13: "no substitute allowed until the first play stoppage [...] following
    the first four minutes of play", and a suspension "may not be avoided by the
    substitution of another player": on the bench, or left off the team sheet,
    he still holds a slot (the last listed starter goes to the bench) and his
    team plays short; an alert says so (``slot_held``)."""
    for home in (A_BENCH, A_WITHOUT_P):
        s = Season()
        s.event("cup", teams=["A", "B"])
        s.setup("g1")
        s.play("g1")
        s.postgame("g1", "red")
        out = s.setup("g2", home=home)
        assert alerts(out) == [("slot_held", P, "R9")]
        out = s.start("g2")
        assert applied(out) == [(P, "suspension", FOUR_MIN, "g1")]
        (alert,) = s.of(nt.Alert, out)
        assert (alert.code, alert.other, alert.reason, alert.owed_ms) == (
            "slot_held", "a3", "suspension", FOUR_MIN)
        team = s.view("g2").teams.home
        assert (team.lineup, team.on_field, "a3" in team.bench) == (["a4", "a2", P], 2, True)
        r = sub_refused(s, "g2", P, "a3")
        assert (r.reason, r.clause) == ("no_substitute_yet", "R9")
        sub(s, "g2", "a2", "a3")    # the team chooses who sits: an ordinary change
        assert s.view("g2").teams.home.on_field == 2
        s.run(FOUR_MIN)
        assert one(s.must("whistle", "g2"), nt.SubAllowed).player == P
        sub(s, "g2", P, "a2")
        assert s.view("g2").teams.home.on_field == 3
        s.end("g2")
        (ob,) = s.obligations()
        assert (ob.status, ob.applied_in) == ("served", "g2")


def r9_postgame_red_window_notices_cite_r9(s: Season) -> None:
    """R9: "no substitute allowed until the first play stoppage [...] following the
    first four minutes of play in that game": the window is R9's, so its notices
    cite R9 (house rule 4: every notice cites the clause it applies)."""
    s.setup("g1")
    s.play("g1")
    s.postgame("g1", "red")
    s.setup("g2")
    s.start("g2")
    (eligible,) = s.run(FOUR_MIN)
    allowed = one(s.must("whistle", "g2"), nt.SubAllowed)
    assert (eligible.clause, allowed.clause) == ("R9", "R9")


def r9_sequence_in_game_red_then_postgame_3y(s: Season) -> None:
    """R9: "the two suspensions shall be served in sequence with the most severe one
    to be served first, even if that requires partial or full suspension from
    the player's next two games of equal or higher handicap": a red in the game
    and a post-game 3y: the next qualifying game suspended, the one after it
    4:00 in the box; a lower-handicap game in between counts for neither."""
    red_in(s)
    s.postgame("g1", "3y")
    assert s.pending() == [("suspension", 0, "g1"), ("sit_out", FOUR_MIN, "g1")]
    assert_nothing_applied_in(s, "g2", handicap=6)
    s.play("g2")
    out = s.begin("g3", home=A_BENCH)
    assert applied(out) == [(P, "suspension", 0, "g1")]
    s.play("g3")
    out = s.begin("g4")
    assert applied(out) == [(P, "sit_out", FOUR_MIN, "g1")]
    assert one(out, nt.BoxEnter).owed_ms == FOUR_MIN
    s.play("g4", FOUR_MIN)
    assert [(o.kind, o.status, o.applied_in) for o in s.obligations()] == [
        ("suspension", "served", "g3"), ("sit_out", "served", "g4")]


def r9_sequence_postgame_red_before_box_remainder(s: Season) -> None:
    """R9/R10: "served in sequence with the most severe one to be served first": box
    time owed at the end (R10) and a post-game red: the red's full suspension in
    the next game, the box remainder in the one after."""
    owed = box_at_end(s)
    s.postgame("g1", "red")
    assert s.pending() == [("suspension", FOUR_MIN, "g1"), ("sit_out", owed, "g1")]
    out = s.begin("g2")
    assert applied(out) == [(P, "suspension", FOUR_MIN, "g1")]
    s.play("g2")
    out = s.begin("g3")
    assert applied(out) == [(P, "sit_out", owed, "g1")]


def r9_sequence_postgame_red_before_in_game_red(s: Season) -> None:
    """R9: "the most severe one to be served first": a post-game red (the whole
    game, no substitute for 4:00) before an in-game red (the whole game, a
    substitute allowed)."""
    red_in(s)
    s.postgame("g1", "red")
    assert s.pending() == [("suspension", FOUR_MIN, "g1"), ("suspension", 0, "g1")]
    out = s.begin("g2")
    assert applied(out) == [(P, "suspension", FOUR_MIN, "g1")]
    s.play("g2")
    assert_suspended_in(s, "g3", "R6")


def r9_sequence_longer_sit_out_first(s: Season) -> None:
    """R9/R10: "the most severe one to be served first": 1:30 of box time owed at
    the end and a post-game 3y: the 4:00 sit-out first, the 1:30 next."""
    owed = box_at_end(s)
    s.postgame("g1", "3y")
    assert s.pending() == [("sit_out", FOUR_MIN, "g1"), ("sit_out", owed, "g1")]
    assert applied(s.begin("g2")) == [(P, "sit_out", FOUR_MIN, "g1")]
    s.play("g2", FOUR_MIN)
    assert applied(s.begin("g3")) == [(P, "sit_out", owed, "g1")]


def r9_sequence_full_suspension_before_long_box_remainder(_: Season) -> None:
    """R9: "served in sequence with the most severe one to be served first": a
    post-game red (suspended for the entirety of the next game) is more severe
    than any sit-out, however long the box time carried (R10)."""
    s = Season()  # the default R8 reading: sequential
    s.setup("g1")
    s.start("g1")
    s.run(10_000)
    s.card("g1", P, count=2)
    for _trip in range(3):                  # remainder + 2:00 each time: 8:00 owed
        s.must("box.left_early", "g1", player=P)
    s.run(1_000)
    s.end("g1")
    s.postgame("g1", "red")
    assert [k for k, _, _ in s.pending()] == ["suspension", "sit_out"]


# ==========================================================================
# R10, R11: box time carried into the next game; the 5.c(2) shootout


def r10_box_remainder_carried(s: Season) -> None:
    """R10: "A player who is in the penalty box at the end of a game [...] shall
    begin his or her next game of equal or higher handicap for the same team in
    the penalty box for the unexpired time": ``box.enter`` kind ``carried`` when
    that game begins; the team plays short and he can't be substituted (R13)."""
    owed = box_at_end(s)
    created = one(s.notices, nt.ObligationCreated)
    assert (created.kind, created.owed_ms, created.clause) == ("sit_out", owed, "R10")
    out = s.begin("g2")
    # Listed to start, he is kept off the field: told at the set-up and when g2 begins.
    assert tags(out) == ["game.ready", "alert", "obligation.applied", "box.enter", "alert", "clock"]
    assert alerts(out) == [("suspended_in_lineup", P, "R10")] * 2
    assert {(n.reason, n.owed_ms, n.origin_game) for n in s.of(nt.Alert, out)} == {("sit_out", owed, "g1")}
    enter = one(out, nt.BoxEnter)
    assert (enter.player, enter.kind, enter.owed_ms, enter.clause) == (P, "carried", owed, "R10")
    b = s.player("g2").box
    assert b is not None and (b.owed_ms, b.remaining_ms, b.clause) == (owed, owed, "R10")
    home = s.view("g2").teams.home
    assert (home.on_field, home.substitute_allowed) == (2, False)
    assert [(x.player, x.reason) for x in home.short] == [(P, "box")]
    s.run(5_000)
    s.must("whistle", "g2")
    r = sub_refused(s, "g2", P, "a4")
    assert (r.reason, r.clause) == ("sitting_out", "R13")


def r10_carried_box_counts_from_first_clock_start(s: Season) -> None:
    """R10: "for the unexpired time of his or her original suspension", in play:
    the game takes it when it begins, and time before its first ``clock.start``
    doesn't count; ``box.eligible`` at exactly the owed play, released at the
    first stoppage at or after it, not 1 ms before."""
    owed = box_at_end(s)
    s.setup("g2")
    assert s.run(10 * 60_000) == []             # warm-up: no play, nothing taken yet
    assert s.player("g2").box is None and s.pending() == [("sit_out", owed, "g1")]
    s.start("g2")
    assert s.player("g2").box.remaining_ms == owed  # type: ignore[union-attr]
    assert s.run(owed - 1) == []
    out = s.must("whistle", "g2")               # 1 ms early: no release
    assert not s.of(nt.BoxRelease, out)
    s.start("g2")
    due = s.run(1)
    assert [(type(n), n.player, n.at) for n in due] == [(nt.BoxEligible, P, s.t)]
    out = s.must("goal", "g2", team="home")
    release = one(out, nt.BoxRelease)
    assert (release.player, release.stoppage) == (P, f"goal:{s.last_id()}")
    assert s.player("g2").on_field is True
    sub(s, "g2", P, "a4")                       # an ordinary substitution again


def r10_box_still_owed_at_next_end_carries_again(s: Season) -> None:
    """R10: "A player who is in the penalty box at the end of a game": a carried
    trip still running when the serving game ends is served there (``served``),
    and what is left of it is carried again, from that game."""
    owed = box_at_end(s)
    s.setup("g2")
    s.start("g2")
    s.run(60_000)
    out = s.end("g2")
    assert one(out, nt.ObligationServed).origin_game == "g1"
    created = one(out, nt.ObligationCreated)
    assert (created.origin_game, created.kind, created.owed_ms, created.clause) == (
        "g2", "sit_out", owed - 60_000, "R10")
    assert applied(s.begin("g3")) == [(P, "sit_out", owed - 60_000, "g2")]


def r10_box_served_before_end_is_not_carried(s: Season) -> None:
    """R10: only a player "in the penalty box at the end of a game" carries box
    time: a trip served at the end (``game.end`` is a stoppage) carries nothing."""
    s.setup("g1")
    s.start("g1")
    s.run(10_000)
    s.card("g1", P, count=2)
    s.run(TWO_MIN)
    out = s.end("g1")
    assert tags(out) == ["box.release", "game.ended"]
    assert s.obligations() == []
    assert_nothing_applied_in(s, "g2")


def r10_sit_out_cannot_be_avoided_by_benching(s: Season) -> None:
    """R10/R13: "shall begin his or her next game [...] in the penalty box"; "the
    suspension of any player from all or part of any game [...] may not be
    avoided by the substitution of another player for that player": listed on
    the bench so that an alternate starts in his place, he still takes a slot
    (the alternate goes back to the bench) and sits out; an alert says so."""
    s.event("cup", teams=["A", "B"])
    owed = box_at_end(s)
    out = s.setup("g2", home=A_BENCH)
    assert alerts(out) == [("slot_held", P, "R10")]
    out = s.start("g2")
    (alert,) = s.of(nt.Alert, out)
    assert (alert.code, alert.other, alert.reason, alert.owed_ms) == ("slot_held", "a3", "sit_out", owed)
    team = s.view("g2").teams.home
    assert (team.lineup, team.on_field) == (["a4", "a2", P], 2)
    assert s.player("g2").box is not None


def r11_shootout_excludes_and_carries_nothing(s: Season) -> None:
    """R11: "If the Host Tournament Committee has chosen the Arena Rule 5.c(2)
    option, a player with remaining time in the penalty box at the end of
    regulation play may not participate in any shootout, but if he or she is
    excluded from a shootout, he or she shall be deemed to have served his or
    her time": ``shootout.excluded``, no obligation."""
    box_at_end(s, shootout_option=True, end={"shootout": True})
    ex = one(s.notices, nt.ShootoutExcluded)
    assert (ex.player, ex.owed_ms, ex.clause) == (P, TWO_MIN - 30_000, "R11")
    assert s.of(nt.ObligationCreated) == [] and s.obligations() == []
    assert_nothing_applied_in(s, "g2")


def r11_option_without_shootout_carries_box(s: Season) -> None:
    """R11/R10: the 5.c(2) option chosen but the game decided without a shootout:
    no exclusion, the box time is carried (R10)."""
    owed = box_at_end(s, shootout_option=True)
    assert s.of(nt.ShootoutExcluded) == []
    assert s.pending() == [("sit_out", owed, "g1")]
    assert applied(s.begin("g2")) == [(P, "sit_out", owed, "g1")]


def r11_carried_box_excluded_by_shootout_is_served(s: Season) -> None:
    """R11: a carried trip still running when a 5.c(2) game goes to a shootout is
    "deemed to have served": the obligation is served, nothing is carried on."""
    owed = box_at_end(s)
    s.setup("g2", shootout_option=True)
    s.start("g2")
    s.run(30_000)
    out = s.end("g2", shootout=True)
    assert one(out, nt.ShootoutExcluded).owed_ms == owed - 30_000
    assert one(out, nt.ObligationServed).origin_game == "g1"
    assert s.of(nt.ObligationCreated, out) == []
    assert s.pending() == []


# ==========================================================================
# R12: three yellows carry a yellow into the next game


def r12_three_yellows_carry_yellow_status(s: Season) -> None:
    """R12: "A player who receives three yellow cards during a game without
    receiving a red card shall begin his or her next game of equal or higher
    handicap for the same team with the status of a player who has already
    received a yellow card": his first yellow there is a second yellow (R3)."""
    three_yellows(s)
    created = one(s.notices, nt.ObligationCreated)
    assert (created.kind, created.clause) == ("yellow_status", "R12")
    out = s.begin("g2")
    assert applied(out) == [(P, "yellow_status", 0, "g1")]
    assert s.of(nt.BoxEnter, out) == []
    v = s.player("g2")
    assert (v.yellows, v.offenses, v.carried_yellow, v.on_field) == (1, 1, True, True)
    s.start("g2")
    s.run(5_000)
    out = s.card("g2")
    rec = one(out, nt.CardRecorded)
    assert (rec.yellows, rec.offense, rec.clause) == (2, 2, "R3")
    assert one(out, nt.BoxEnter).owed_ms == TWO_MIN


def r12_three_yellows_in_one_card_count(s: Season) -> None:
    """R12/R7: "receives three yellow cards during a game": three given at once
    (R7: "two or three yellow cards [...] for a player's first [...] offense")
    count too."""
    s.setup("g1")
    s.start("g1")
    s.run(5_000)
    s.card("g1", count=3)
    s.run(TWO_MIN)
    s.end("g1")
    assert s.pending() == [("yellow_status", 0, "g1")]


def r12_substitute_does_not_acquire_yellow_status(s: Season) -> None:
    """R12/R13: "substitutes do not acquire the yellow card status of the player for
    whom they are substituting": the substitute starts with no yellow; the player
    keeps his."""
    three_yellows(s)
    s.setup("g2")
    s.start("g2")
    s.run(5_000)
    s.must("whistle", "g2")
    sub(s, "g2", P, "a4")
    a4, p = s.player("g2", "a4"), s.player("g2")
    assert (a4.yellows, a4.offenses, a4.carried_yellow) == (0, 0, False)
    assert (p.yellows, p.carried_yellow) == (1, True)
    rec = one(s.card("g2", "a4"), nt.CardRecorded)
    assert (rec.yellows, rec.clause) == (1, "R2")


def r12_carried_yellow_does_not_count_toward_three(s: Season) -> None:
    """R12: "receives three yellow cards during a game": the carried yellow was not
    received in this game; it and two more are not three received, so nothing is
    carried on."""
    three_yellows(s)
    s.setup("g2")
    s.start("g2")
    s.run(5_000)
    s.card("g2")                   # yellows 2: the box
    s.run(TWO_MIN)
    s.must("whistle", "g2")
    s.start("g2")
    s.card("g2")                   # yellows 3, two of them received here
    s.run(TWO_MIN)
    s.must("whistle", "g2")
    out = s.end("g2")
    assert s.player("g2").yellows == 3
    assert s.of(nt.ObligationCreated, out) == []
    assert s.pending() == []


def r12_red_cancels_yellow_status(s: Season) -> None:
    """R12: "three yellow cards during a game without receiving a red card": three
    yellows and then a red leave a suspension and no yellow status."""
    s.setup("g1")
    s.start("g1")
    s.run(5_000)
    s.card("g1", count=3)
    s.card("g1", P, "red")
    s.end("g1")
    assert s.pending() == [("suspension", 0, "g1")]


def r12_yellow_status_needs_a_qualifying_game(s: Season) -> None:
    """R12/R16: the status is for "his or her next game of equal or higher handicap
    for the same team": a lower-handicap game and a game for another team don't
    take it; the next qualifying game does."""
    s.event("cup", teams=["A", "B"])
    s.event("league", teams=["C", "D"])
    three_yellows(s)
    assert_nothing_applied_in(s, "g2", handicap=6)
    s.play("g2")
    assert_nothing_applied_in(s, "g3", event="league", home=TEAM_C, away=TEAM_D)
    s.play("g3")
    assert applied(s.begin("g4")) == [(P, "yellow_status", 0, "g1")]


# ==========================================================================
# R15: a team entered in no further event


def r15_team_in_no_further_event_serves_with_any_team(s: Season) -> None:
    """R15: "a player whose team [...] is not at the time officially entered or
    participating in an as-yet uncompleted event [...] of equal or higher
    handicap [...] shall be served during the player's next game [...] for any
    team": the cup's final; p's suspension is served with team C."""
    s.event("cup", teams=["A", "B"])
    s.event("league", teams=["C", "D"])
    s.setup("g1")
    s.start("g1")
    s.run(10_000)
    s.card("g1", P, "red")
    s.complete("cup")              # the final: the cup is over when it ends
    s.end("g1")
    (ob,) = s.obligations()
    assert ob.any_team is True
    assert_suspended_in(s, "g2", "R6", event="league", home=TEAM_C, bench=C_BENCH, away=TEAM_D)


def r15_team_still_entered_serves_with_same_team(s: Season) -> None:
    """R15/R6: "for the same team", unless the team is entered in no further event:
    with the cup still running, a game for team C doesn't serve it; the next game
    for team A does."""
    s.event("cup", teams=["A", "B"])
    s.event("league", teams=["C", "D"])
    red_in(s)
    (ob,) = s.obligations()
    assert ob.any_team is False
    assert_nothing_applied_in(s, "g2", event="league", home=TEAM_C, away=TEAM_D)
    s.play("g2")
    assert s.pending() == [("suspension", 0, "g1")]
    assert_suspended_in(s, "g3", "R6")


def r15_entered_only_in_lower_handicap_event(s: Season) -> None:
    """R15: "an as-yet uncompleted event or series of events of equal or higher
    handicap": a team entered only in a lower-handicap event serves with any
    team."""
    s.event("cup", handicap=8, teams=["A", "B"], completed=True)
    s.event("low", handicap=4, teams=["A", "D"])
    s.event("league", handicap=8, teams=["C", "D"])
    red_in(s)
    assert s.obligations()[0].any_team is True
    assert_suspended_in(s, "g2", "R6", event="league", home=TEAM_C, bench=C_BENCH, away=TEAM_D)


def r15_at_the_time_of_the_origin_game_end(s: Season) -> None:
    """R15: "is not at the time officially entered": judged when the game ends
    (for its post-game cards too), and again when an event completes: the cup
    completing afterwards leaves A in the "open" (handicap 10, uncompleted), so
    nothing changes."""
    s.event("cup", teams=["A", "B"])
    s.event("open", handicap=10, teams=["A", "D"])
    s.event("league", teams=["C", "D"])
    red_in(s)
    assert s.complete("cup") == []
    s.postgame("g1", "2y")
    assert [o.any_team for o in s.obligations()] == [False, False]
    assert_nothing_applied_in(s, "g2", event="league", home=TEAM_C, away=TEAM_D)


def r15_yellow_status_with_any_team(s: Season) -> None:
    """R15/R12: "The same is true with respect to a player's yellow card status":
    with the team's events over, the yellow status goes with him to team C."""
    s.event("cup", teams=["A", "B"], completed=True)
    s.event("league", teams=["C", "D"])
    three_yellows(s)
    out = s.begin("g2", event="league", home=TEAM_C, away=TEAM_D)
    assert applied(out) == [(P, "yellow_status", 0, "g1")]
    assert s.player("g2").carried_yellow is True


# ==========================================================================
# R16: which game counts as the next; keeping the record


def r16_lower_handicap_does_not_serve(s: Season) -> None:
    """R16: "the player's next game [...] of equal or higher handicap": a game of
    lower handicap doesn't serve the suspension; he plays it."""
    red_in(s)
    assert_nothing_applied_in(s, "g2", handicap=6)
    s.play("g2")
    assert s.pending() == [("suspension", 0, "g1")]
    assert_suspended_in(s, "g3", "R6")


def r16_equal_handicap_serves(s: Season) -> None:
    """R16: "of equal or higher handicap": the same handicap serves."""
    red_in(s, handicap=8)
    assert_suspended_in(s, "g2", "R6", handicap=8)


def r16_higher_handicap_serves(s: Season) -> None:
    """R16: "of equal or higher handicap": a higher handicap serves."""
    red_in(s, handicap=8)
    assert_suspended_in(s, "g2", "R6", handicap=12)


def _excluded_kind_is_skipped(s: Season, kind: str) -> None:
    red_in(s)
    assert_nothing_applied_in(s, "g2", kind=kind)
    s.play("g2")
    assert s.pending() == [("suspension", 0, "g1")]
    assert_suspended_in(s, "g3", "R6")
    assert s.obligations()[0].applied_in == "g3"


def r16_consolation_game_skipped(s: Season) -> None:
    """R16: "that is not a consolation game": served in the next regular game after it."""
    _excluded_kind_is_skipped(s, "consolation")


def r16_subsidiary_first_round_skipped(s: Season) -> None:
    """R16: "that is not [...] the first round game in a subsidiary event": served
    in the next regular game after it."""
    _excluded_kind_is_skipped(s, "subsidiary_first_round")


def r16_shootout_game_skipped(s: Season) -> None:
    """R16: "that is not [...] a shootout": served in the next regular game after it."""
    _excluded_kind_is_skipped(s, "shootout")


def r16_club_obligation_served_in_uspa_event(s: Season) -> None:
    """R16: issued "during or after a Club Event, [...] must be served [...] in a
    Club Event or a USPA Event"."""
    s.event("cup", cls="club")
    s.event("nat", cls="uspa")
    red_in(s)
    assert s.obligations()[0].origin_class == "club"
    assert_suspended_in(s, "g2", "R6", event="nat")


def r16_uspa_obligation_not_served_in_club_event(s: Season) -> None:
    """R16: issued "during or after a USPA Event, [...] may only be served [...] in
    a USPA Event": a Club game doesn't serve it; the next USPA game does."""
    s.event("cup", cls="club")
    s.event("nat", cls="uspa")
    red_in(s, event="nat")
    assert s.obligations()[0].origin_class == "uspa"
    assert_nothing_applied_in(s, "g2", event="cup")
    s.play("g2")
    assert_suspended_in(s, "g3", "R6", event="nat")


def r16_event_never_set_up_counts_as_club(s: Season) -> None:
    """R16: "may only be served [...] in a USPA Event": a game whose event was
    never set up is taken as a Club event, so it doesn't serve a USPA
    obligation (and does serve a Club one)."""
    s.event("nat", cls="uspa")
    red_in(s, event="nat")
    assert_nothing_applied_in(s, "g2", event="friendly")
    s.play("g2")
    assert s.pending() == [("suspension", 0, "g1")]
    s.postgame("g2", "2y")                       # a Club obligation from the friendly
    out = s.begin("g3", event="friendly", home=TEAM_A)
    assert applied(out) == [(P, "sit_out", TWO_MIN, "g2")]


def r16_only_games_he_is_rostered_in_count(s: Season) -> None:
    """R16/R15: "the player's next game [...] for any team": an any-team obligation
    (his team in no further event) goes to the next game he is listed in; a game
    his old team plays without him is not his."""
    red_in(s)                      # the cup was never set up: A is in no further event
    assert s.obligations()[0].any_team is True
    out = s.begin("g2", home=A_WITHOUT_P)
    assert applied(out) == []
    s.play("g2")
    assert s.pending() == [("suspension", 0, "g1")]
    assert_suspended_in(s, "g3", "R6")


def r16_his_teams_next_game_listed_or_not(s: Season) -> None:
    """R16/R13: "suspended for the player's next game [...] for the same team", and
    the suspension "may not be avoided by the substitution of another player":
    the team's next qualifying game serves it whether or not he is listed, so a
    team can't move it to a later game (the final) by leaving him off one sheet."""
    s.event("cup", teams=["A", "B"])
    red_in(s)
    assert s.obligations()[0].any_team is False
    out = s.begin("g2", home=A_WITHOUT_P)
    assert applied(out) == [(P, "suspension", 0, "g1")]
    assert alerts(out) == []
    assert s.player("g2").suspended is True
    assert s.view("g2").teams.home.on_field == 3
    s.play("g2")
    assert s.pending() == []
    assert_nothing_applied_in(s, "g3")     # the final: he plays


def r16_void_postgame_card_withdraws(s: Season) -> None:
    """R16/R9: the record follows the log: a ``void`` of the post-game card before
    the next game withdraws its obligation (``obligation.withdrawn``)."""
    s.setup("g1")
    s.play("g1")
    s.postgame("g1", "3y")
    card = s.last_id()
    out = s.must("void", "g1", target=card)
    w = one(out, nt.ObligationWithdrawn)
    assert (w.cause, w.player, w.kind, w.owed_ms, w.origin_game) == (s.last_id(), P, "sit_out", FOUR_MIN,
                                                                      "g1")
    assert tags(out)[-1] == "correction"
    assert s.obligations() == [] and P not in s.engine.state().ledger
    assert_nothing_applied_in(s, "g2")


def r16_late_event_rederives(s: Season) -> None:
    """R16/R6: a red card entered late in a game that has ended (before the next
    game is set up) creates the suspension it implies."""
    s.setup("g1")
    s.start("g1")
    s.run(60_000)
    s.end("g1")
    out = s.must("card", "g1", at=s.t - 30_000, player=P, color="red", conduct="striking")
    created = one(out, nt.ObligationCreated)
    assert (created.kind, created.owed_ms, created.origin_game) == ("suspension", 0, "g1")
    assert tags(out)[-1] == "correction"
    assert_suspended_in(s, "g2", "R6")


def r16_correction_after_obligation_taken_is_record_closed(s: Season) -> None:
    """R16: once the next game has begun serving an obligation, a correction to the
    game it came from that would change it is refused ``record_closed`` and
    nothing changes: a void of the red, a void of the post-game card, a late
    stop that changes the box time owed. Before it begins, the correction
    stands (a void of the red withdraws the suspension)."""
    red_in(s)
    red_card = next(n.cause for n in s.of(nt.SentOff))
    s.setup("g2", home=A_BENCH)
    s.start("g2")
    r = s.refused("void", "g1", target=red_card)
    assert (r.reason, r.clause) == ("record_closed", "R16")

    s2 = Season()
    box_at_end(s2)
    s2.postgame("g1", "3y")
    pg = s2.last_id()
    s2.begin("g2")                               # takes the 3y (the longer) first
    r = s2.refused("void", "g1", target=pg)
    assert (r.reason, r.clause) == ("record_closed", "R16")
    ok = s2.must("clock.stop", "g1", at=s2.t - 10_000)   # changes the 1:30 still pending: accepted
    assert tags(ok)[0] == "correction"
    assert s2.pending() == [("sit_out", TWO_MIN - 20_000, "g1")]

    s3 = Season()
    box_at_end(s3)
    s3.begin("g2")
    r = s3.refused("clock.stop", "g1", at=s3.t - 10_000)
    assert (r.reason, r.clause) == ("record_closed", "R16")

    s4 = Season()
    red_in(s4)
    red_card = next(n.cause for n in s4.of(nt.SentOff))
    s4.setup("g2", home=A_BENCH)                 # set up, not begun: the void stands
    out = s4.must("void", "g1", target=red_card)
    assert [(n.kind, n.origin_game) for n in s4.of(nt.ObligationWithdrawn, out)] == [("suspension", "g1")]
    assert applied(s4.start("g2")) == []


def r16_postgame_card_after_next_game_set_up(s: Season) -> None:
    """R16/R9: a post-game card entered after the next game began serving the box
    time is not lost: it waits for the following qualifying game."""
    owed = box_at_end(s)
    s.begin("g2")
    s.postgame("g1", "2y")
    assert s.pending() == [("sit_out", TWO_MIN, "g1")]
    s.play("g2", owed)
    assert applied(s.begin("g3")) == [(P, "sit_out", TWO_MIN, "g1")]


def r16_game_set_up_before_the_origin_ended(s: Season) -> None:
    """R16/R6: "the player will remain suspended for the player's next game": a game
    scheduled (set up) in advance but played after the red is that next game: he
    may not play it unpunished."""
    s.setup("g2")                  # the day's schedule: g2 is set up first ...
    red_in(s)                      # ... g1 is played, p sent off
    out = s.send("clock.start", "g2")
    started = not s.of(nt.Rejected, out)
    if started:
        s.run(60_000)
        s.send("game.end", "g2")
    (ob,) = s.obligations()
    assert not started or ob.applied_in == "g2"


def r16_game_set_up_in_advance_takes_the_suspension_at_its_start(s: Season) -> None:
    """R16/R6: "the player will remain suspended for the player's next game":
    g2 was set up (with p starting) before p's red in g1. Its first clock.start
    is a fact and is never refused (house rule 6): g2 begins with p suspended,
    his slot empty, and an alert asks for the substitute R6 allows; g2 serves
    the suspension (docs/rules.md, register A27)."""
    s.setup("g2")
    red_in(s)
    out = s.must("clock.start", "g2")
    assert [(n.player, n.kind, n.origin_game) for n in s.of(nt.ObligationApplied, out)] == [
        (P, "suspension", "g1")]
    assert alerts(out) == [("suspended_in_lineup", P, "R6")]
    assert s.player("g2").suspended is True
    assert s.view("g2").teams.home.on_field == 2
    s.run(10_000)
    s.must("whistle", "g2")
    s.must("substitution", "g2", team="home", out=P, **{"in": "a4"})
    assert s.view("g2").teams.home.on_field == 3
    s.run(60_000)
    s.must("game.end", "g2")
    (ob,) = s.obligations()
    assert (ob.status, ob.applied_in) == ("served", "g2")


def r16_preview_setup_changes_nothing(s: Season) -> None:
    """R16: ``preview_setup`` tells what a game would take if it began now, without
    taking it; the set-up never refuses a team sheet for it."""
    red_in(s)
    s.postgame("g1", "3y")
    before = msgspec.msgpack.encode(s.engine.state())
    preview = s.engine.preview_setup(decoded_setup(s, "g2", home=A_BENCH))
    assert [(o.kind, o.status) for o in preview] == [("suspension", "pending")]
    assert msgspec.msgpack.encode(s.engine.state()) == before
    assert "g2" not in s.engine.games
    out = s.begin("g2", home=A_BENCH)
    assert [n.obligation for n in s.of(nt.ObligationApplied, out)] == [o.id for o in preview]
    # g2 holds the suspension: a g3 would take the next in sequence, a lower one nothing.
    assert [(o.kind, o.owed_ms) for o in s.engine.preview_setup(decoded_setup(s, "g3"))] == [
        ("sit_out", FOUR_MIN)]
    assert s.engine.preview_setup(decoded_setup(s, "g3", handicap=6)) == []
    with pytest.raises(Refused) as r:
        s.engine.preview_setup(decoded_setup(s, "g2"))
    assert r.value.code == "duplicate_game"


def r6_committee_increase_adds_suspensions(s: Season) -> None:
    """R6: "This penalty may be increased by the Host Tournament Committee and/or
    the Association": ``committee.increase`` adds games and a sit-out, each
    carrying ``by`` and ``reason``, served after the game's own."""
    red_in(s)
    out = s.must("committee.increase", player=P, origin_game="g1", games=1, sit_out_ms=60_000,
                 by="HTC", reason="struck an umpire's mount")
    assert [(n.kind, n.owed_ms, n.clause, n.origin_game) for n in out] == [
        ("suspension", 0, "R6", "g1"), ("sit_out", 60_000, "R6", "g1")]
    added = [o for o in s.obligations() if o.by is not None]
    why = "struck an umpire's mount"
    assert [(o.by, o.reason, o.cause) for o in added] == [("HTC", why, s.last_id())] * 2
    assert s.pending() == [("suspension", 0, "g1"), ("suspension", 0, "g1"), ("sit_out", 60_000, "g1")]
    assert_suspended_in(s, "g2", "R6")
    s.play("g2")
    s2_out = s.begin("g3", home=A_BENCH)
    assert applied(s2_out) == [(P, "suspension", 0, "g1")]
    assert s.view("g3").carried[0].id == added[0].id
    s.play("g3")
    out = s.begin("g4")
    assert applied(out) == [(P, "sit_out", 60_000, "g1")]
    assert one(out, nt.BoxEnter).owed_ms == 60_000


def r6_committee_increase_refused_before_game_end(s: Season) -> None:
    """R6: the increase is of a penalty already imposed: for a game not yet ended
    (or never set up) it is refused ``game_not_over``; one that adds nothing,
    ``nothing_to_add``; a player not in the game, ``unknown_player``."""
    s.setup("g1")
    s.start("g1")
    for game in ("g1", "g9"):
        r = s.refused("committee.increase", player=P, origin_game=game, by="HTC", reason="x")
        assert (r.reason, r.clause) == ("game_not_over", "R6")
    s.end("g1")
    r = s.refused("committee.increase", player=P, origin_game="g1", games=0, by="HTC", reason="x")
    assert (r.reason, r.clause) == ("nothing_to_add", "R6")
    r = s.refused("committee.increase", player="x9", origin_game="g1", by="HTC", reason="x")
    assert r.reason == "unknown_player"
    assert s.obligations() == []


R6_R14 = table(r6_red_suspends_next_game, r6_suspended_player_on_bench_cannot_come_in,
               r6_suspension_served_at_end_of_serving_game, r14_left_arena_suspends_next_game,
               r6_red_on_bench_player_suspends_next_game, r6_committee_increase_adds_suspensions,
               r6_committee_increase_refused_before_game_end)
R9 = table(r9_postgame_2y_sits_out_two_minutes, r9_postgame_3y_sits_out_four_minutes,
           r9_postgame_cards_are_separate_from_in_game_cards, r9_postgame_red_lineup_rule,
           r9_postgame_red_team_short_whether_listed_or_not,
           r9_postgame_red_window_notices_cite_r9, r9_sequence_in_game_red_then_postgame_3y,
           r9_sequence_postgame_red_before_box_remainder, r9_sequence_postgame_red_before_in_game_red,
           r9_sequence_longer_sit_out_first, r9_sequence_full_suspension_before_long_box_remainder)
R10_R11 = table(r10_box_remainder_carried, r10_carried_box_counts_from_first_clock_start,
                r10_box_still_owed_at_next_end_carries_again, r10_box_served_before_end_is_not_carried,
                r10_sit_out_cannot_be_avoided_by_benching, r11_shootout_excludes_and_carries_nothing,
                r11_option_without_shootout_carries_box, r11_carried_box_excluded_by_shootout_is_served)
R12 = table(r12_three_yellows_carry_yellow_status, r12_three_yellows_in_one_card_count,
            r12_substitute_does_not_acquire_yellow_status, r12_carried_yellow_does_not_count_toward_three,
            r12_red_cancels_yellow_status, r12_yellow_status_needs_a_qualifying_game)
R15 = table(r15_team_in_no_further_event_serves_with_any_team, r15_team_still_entered_serves_with_same_team,
            r15_entered_only_in_lower_handicap_event, r15_at_the_time_of_the_origin_game_end,
            r15_yellow_status_with_any_team)
R16 = table(r16_lower_handicap_does_not_serve, r16_equal_handicap_serves, r16_higher_handicap_serves,
            r16_consolation_game_skipped, r16_subsidiary_first_round_skipped, r16_shootout_game_skipped,
            r16_club_obligation_served_in_uspa_event, r16_uspa_obligation_not_served_in_club_event,
            r16_event_never_set_up_counts_as_club, r16_only_games_he_is_rostered_in_count,
            r16_his_teams_next_game_listed_or_not,
            r16_void_postgame_card_withdraws, r16_late_event_rederives,
            r16_correction_after_obligation_taken_is_record_closed, r16_postgame_card_after_next_game_set_up,
            r16_game_set_up_before_the_origin_ended,
            r16_game_set_up_in_advance_takes_the_suspension_at_its_start, r16_preview_setup_changes_nothing)


@pytest.mark.parametrize("case", R6_R14)
def test_r6_r14(case: SeasonCase) -> None:
    case(Season())


@pytest.mark.parametrize("case", R9)
def test_r9(case: SeasonCase) -> None:
    case(Season())


@pytest.mark.parametrize("case", R10_R11)
def test_r10_r11(case: SeasonCase) -> None:
    case(Season())


@pytest.mark.parametrize("case", R12)
def test_r12(case: SeasonCase) -> None:
    case(Season())


@pytest.mark.parametrize("case", R15)
def test_r15(case: SeasonCase) -> None:
    case(Season())


@pytest.mark.parametrize("case", R16)
def test_r16(case: SeasonCase) -> None:
    case(Season())


def test_cases_cite_their_clauses() -> None:
    check_cases([*R6_R14, *R9, *R10_R11, *R12, *R15, *R16])
