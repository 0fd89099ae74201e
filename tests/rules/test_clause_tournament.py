"""Rule 14 as tournaments run it: what officials and committees really do.

Each case is a function taking a fresh ``Season``; its docstring starts with
the clause it checks and quotes the rule's words. These are the regressions of
a tournament day (docs/rules.md, "Tournament operations"): a clock started
before the committee fixed a lineup, a team sheet that lists a suspended
player, a team that leaves him off one sheet, a red in a final, a shootout,
corrections after the next game was set up, the committee's own decisions,
cards to a coach. After every case its log is replayed through
``arena-stream replay`` (``stream.cli.replay``), which must give the same
state: the log is the record of the day.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from stream.cli import replay
from stream.rules import notices as nt
from stream.rules.text import describe

from .clause_helpers import FOUR_MIN, TWO_MIN, P, Season, check_cases, one, roster, tags

SeasonCase = Callable[[Season], None]

A_BENCH = roster("A", ["a4", "a2", "a3"], [P])
TEAM_C = roster("C", [P, "c2", "c3"], ["c4"])
TEAM_D = roster("D", ["d1", "d2", "d3"], ["d4"])


def alerts(out: list[Any]) -> list[tuple[str, str | None, str]]:
    return [(n.code, n.player, n.clause) for n in out if isinstance(n, nt.Alert)]


def applied(out: list[Any]) -> list[tuple[str, str, int, str]]:
    return [(n.player, n.kind, n.owed_ms, n.origin_game) for n in out if isinstance(n, nt.ObligationApplied)]


def refused(out: list[Any]) -> list[nt.Rejected]:
    return [n for n in out if isinstance(n, nt.Rejected)]


def red_in(s: Season, game: str = "g1", **setup: Any) -> str:
    """``game``: p shown a red after 10 s of play; the game ends 30 s later."""
    s.setup(game, **setup)
    s.start(game)
    s.run(10_000)
    s.card(game, P, "red")
    red = s.last_id()
    s.run(30_000)
    s.end(game)
    return red


# ==========================================================================
# Facts are never refused (house rule 6)


def a27_clock_start_with_a_suspended_starter_is_applied(s: Season) -> None:
    """R6/A1: "the player will remain suspended for the player's next game". g2 was
    set up before p's red in g1 with p starting; the timekeeper starts g2 anyway.
    The start is applied (p suspended, his team short, an alert asking for the
    substitute R6 allows), and the game is recorded from there on: whistles,
    goals, a second yellow and its release at the first stoppage after 2:00."""
    s.event("cup", teams=["A", "B"])
    s.setup("g2")
    red_in(s)
    out = s.start("g2")
    assert alerts(out) == [("suspended_in_lineup", P, "R6")]
    assert s.player("g2").suspended is True
    s.run(10_000)
    assert not refused(s.must("whistle", "g2"))
    s.start("g2")
    s.card("g2", "b1", count=2)
    s.run(TWO_MIN)
    out = s.must("goal", "g2", team="home", player="a2")
    assert one(out, nt.BoxRelease).player == "b1"
    assert (s.view("g2").score.home, s.view("g2").status) == (1, "live")


def a27_late_clock_start_begins_the_game(s: Season) -> None:
    """A1/R6: a game begins with its first clock start, even one that reaches the
    server late (stamped before a warm-up card already recorded): the correction
    that inserts it begins the game, which takes p's suspension there."""
    s.event("cup", teams=["A", "B"])
    red_in(s)
    s.setup("g2", home=A_BENCH)
    s.run(60_000)
    s.card("g2", "b1")                          # a warm-up card: the game is still scheduled
    out = s.must("clock.start", "g2", at=s.t - 30_000)
    assert applied(out) == [(P, "suspension", 0, "g1")]
    assert "correction" in tags(out)
    (ob,) = s.obligations()
    assert (ob.status, ob.applied_in) == ("serving", "g2")
    assert (s.view("g2").status, s.player("g2").suspended) == ("live", True)


def a3_team_with_no_alternate_starts_short(s: Season) -> None:
    """A3: "Three players a side [...] plus alternates"; a side with no eligible
    player starts with fewer ("All substitution rules apply"): A lists two, has
    no bench, and plays two; no alert (it has no one to bring on). With a bench
    player and two starters, the committee is told (``short_lineup``)."""
    out = s.setup("g1", home=roster("A", ["a2", "a3"]))
    assert alerts(out) == []
    s.start("g1")
    assert s.view("g1").teams.home.on_field == 2
    out = s.setup("g2", home=roster("A", ["a2", "a3"], ["a4"]))
    assert [(n.code, n.side, n.clause) for n in s.of(nt.Alert, out)] == [("short_lineup", "home", "A3")]


def a3_team_handicap_checked_against_the_event_s_limits(s: Season) -> None:
    """A3: a side's three starters' handicaps, as registered when the game is set up, against
    the event's team handicap limits (its settings: the rulebook's figures are not at hand).
    A side over the limit, one under it, and one with a starter whose handicap is unknown are
    each told at the set-up; a side within them is not; a game of an event without limits
    checks nothing; limits that admit no team are refused."""
    s.must("event.setup", event="limits", **{"class": "club"}, handicap=8, teams=["A", "B"],
           team_handicap_min=6, team_handicap_max=8)
    s.must("team.registered", team="A", name="Aiken Arena", short="AIK",
           colors={"primary": "#123456", "secondary": "#ffffff"})
    for pid, hcp in (("p", 4), ("a2", 3), ("a3", 2), ("b1", 2), ("b2", 2), ("b3", 1)):
        s.must("player.registered", player=pid, name=pid.upper(), handicap=hcp)
    out = s.setup("g1", event="limits")                      # A: 4+3+2 = 9 > 8; B: 5 < 6
    assert [(n.code, n.side, n.clause, n.detail) for n in s.of(nt.Alert, out)] == [
        ("team_handicap_over", "home", "A3", "9 goals (limits 6–8)"),
        ("team_handicap_under", "away", "A3", "5 goals (limits 6–8)")]
    over = describe(s.of(nt.Alert, out)[0], s.engine.names())
    assert over.en.startswith("Aiken Arena's starters add up to 9 goals (limits 6–8), over the event's "
                              "team handicap")
    assert over.es.startswith("Los titulares de Aiken Arena suman 9 goles (límites 6–8), por encima")
    under = describe(s.of(nt.Alert, out)[1], s.engine.names())
    assert under.en.startswith("The away starters add up to 5 goals (limits 6–8), under")
    assert under.es.startswith("Los titulares del visitante suman 5 goles")
    s.must("player.registered", player="p", name="P", handicap=1)        # now 6: within
    s.must("player.registered", player="b3", name="B3", handicap=3)      # now 7: within
    assert alerts(s.setup("g2", event="limits")) == []
    s.must("player.registered", player="b4", name="B4")                  # no handicap registered
    out = s.setup("g3", event="limits", away=roster("B", ["b1", "b2", "b4"]))
    assert [(n.code, n.side, n.detail) for n in s.of(nt.Alert, out)] == [
        ("team_handicap_unknown", "away", "1 of 3 starters")]
    assert alerts(s.setup("g4")) == []                                   # "cup": no limits
    r = s.refused("event.setup", event="nobody", **{"class": "club"}, handicap=8, teams=[],
                  team_handicap_min=9, team_handicap_max=8)
    assert (r.reason, r.clause) == ("bad_limits", "A3")


def r11_shootout_excluded_at_the_end_of_regulation(s: Season) -> None:
    """R11: "a player with remaining time in the penalty box at the end of
    regulation play may not participate in any shootout, but if he or she is
    excluded from a shootout, he or she shall be deemed to have served his or
    her time": the horn that ends the last period with the score tied (5.c(2)
    chosen) excludes him there, when the officials need to know; a card shown
    during the shootout is new box time, carried to his next game (R10)."""
    s.setup("g1", shootout_option=True, periods=1)
    s.start("g1")
    s.run(420_000)
    s.card("g1", P, count=2)                     # owed until 420 s + 2:00 of play
    s.run(30_000)
    out = s.must("horn", "g1")                    # tied 0-0 at the end of regulation
    ex = one(out, nt.ShootoutExcluded)
    assert (ex.player, ex.owed_ms, ex.clause) == (P, TWO_MIN - 30_000, "R11")
    v = s.player("g1")
    assert (v.box, v.shootout_excluded) == (None, True)
    assert s.view("g1").shootout is True
    s.card("g1", "b1", count=2)                  # during the shootout
    out = s.end("g1", shootout=True)
    assert s.of(nt.ShootoutExcluded, out) == []
    created = [(n.player, n.kind, n.owed_ms, n.clause) for n in s.of(nt.ObligationCreated, out)]
    assert created == [("b1", "sit_out", TWO_MIN, "R10")]
    assert s.pending() == []


def r11_not_tied_at_the_end_of_regulation_excludes_nobody(s: Season) -> None:
    """R11/A4: the exclusion is for a shootout; regulation that ends with a winner
    has none, so the box time still owed is carried (R10)."""
    s.setup("g1", shootout_option=True, periods=1)
    s.start("g1")
    s.must("goal", "g1", team="away")
    s.start("g1")
    s.run(400_000)
    s.card("g1", P, count=2)                     # owed until 400 s + 2:00 of play
    s.run(50_000)                                # the period's 450 s are played
    out = s.must("horn", "g1")
    assert s.of(nt.ShootoutExcluded, out) == [] and s.view("g1").shootout is False
    s.end("g1")
    assert s.pending() == [("sit_out", 400_000 + TWO_MIN - 450_000, "g1")]


# ==========================================================================
# R15: completion and elimination


def r15_red_in_a_final_then_event_complete(s: Season) -> None:
    """R15: "whose team [...] is not at the time officially entered or participating
    in an as-yet uncompleted event [...] shall be served during the player's next
    game [...] for any team". A red in the cup's final: when the final ends the
    cup is not yet marked complete; when the committee marks it, p's pending
    suspension turns any-team (``obligation.updated``) and his next game for
    team C serves it."""
    s.event("cup", teams=["A", "B"])
    s.event("league", teams=["C", "D"])
    red_in(s)
    (ob,) = s.obligations()
    assert ob.any_team is False
    out = s.complete("cup")
    upd = one(out, nt.ObligationUpdated)
    assert (upd.obligation, upd.any_team, upd.clause, upd.cause) == (ob.id, True, "R15", s.last_id())
    out = s.begin("g2", event="league", home=roster("C", ["c4", "c2", "c3"], [P]), away=TEAM_D)
    assert applied(out) == [(P, "suspension", 0, "g1")]


def r15_team_eliminated(s: Season) -> None:
    """R15: "not [...] participating in an as-yet uncompleted event": a team knocked
    out (``team.eliminated``) no longer participates, so what its players still
    owe turns any-team; the event's other teams are not affected; a team not
    entered, or eliminated twice, is refused."""
    s.event("cup", teams=["A", "B"])
    red_in(s)
    s.postgame("g1", "2y", player="b1")
    out = s.must("team.eliminated", event="cup", team="A")
    assert [(n.player, n.any_team) for n in s.of(nt.ObligationUpdated, out)] == [(P, True)]
    assert s.obligations("b1")[0].any_team is False
    r = s.refused("team.eliminated", event="cup", team="A")
    assert (r.reason, r.clause) == ("already_eliminated", "R15")
    r = s.refused("team.eliminated", event="cup", team="Z")
    assert (r.reason, r.clause) == ("unknown_team", "R15")
    r = s.refused("team.eliminated", event="nope", team="A")
    assert r.reason == "unknown_event"


def r15_games_already_played_never_change(s: Season) -> None:
    """R15: the completion changes only what is still owed: an obligation already
    served stays where it was served."""
    s.event("cup", teams=["A", "B"])
    red_in(s)
    s.begin("g2", home=A_BENCH)
    s.play("g2")
    (ob,) = s.obligations()
    assert s.complete("cup") == []
    (after,) = s.obligations()
    assert (after.status, after.applied_in, after.any_team) == ("served", "g2", False) == (
        ob.status, ob.applied_in, ob.any_team)


# ==========================================================================
# The committee's decisions


def r6_committee_rescinds_a_red_shown_to_the_wrong_player(s: Season) -> None:
    """R6/R16: a red shown to the wrong player, noticed after the next game was set
    up: the committee rescinds the suspension (``committee.rescind``, with who
    and why): ``obligation.withdrawn``, and the next game takes nothing. The next
    game's set-up said he must sit out; the rescind tells that game he no longer owes
    it (``no_longer_owed``), and tells no game that never planned it. It stays in the
    ledger, marked rescinded; a later correction of the origin game keeps it so."""
    s.event("cup", teams=["A", "B"])
    red_in(s)
    before = s.setup("g2")
    s.setup("g3", home=roster("C", ["c1", "c2", "c3"]))   # another team's game: nothing for it
    assert [a.code for a in s.of(nt.Alert, before) if a.player == P] == ["suspended_in_lineup"]
    (ob,) = s.obligations()
    out = s.must("committee.rescind", obligation=ob.id, by="HTC", reason="shown to the wrong player")
    w = one(out, nt.ObligationWithdrawn)
    assert (w.obligation, w.cause, w.game) == (ob.id, s.last_id(), "g1")
    told = s.of(nt.Alert, out)
    assert [(a.code, a.game, a.player, a.side, a.origin_game) for a in told] == [
        ("no_longer_owed", "g2", P, "home", "g1")]
    assert "no longer owes his suspension" in describe(told[0], s.engine.names()).en
    assert s.pending() == [] and [o.status for o in s.obligations()] == ["rescinded"]
    assert s.engine.obligation_event(ob.id) == "cup"  # whose rescind it was, for a committee
    s.postgame("g1", "2y", player="b1")          # the ledger of g1 is derived again
    assert s.pending() == [] and [o.status for o in s.obligations()] == ["rescinded"]
    assert [a for a in applied(s.start("g2")) if a[0] == P] == []
    r = s.refused("committee.rescind", obligation=ob.id, by="HTC", reason="again")
    assert (r.reason, r.clause) == ("unknown_obligation", "R16")


def r6_committee_decisions_refused_once_the_serving_game_began(s: Season) -> None:
    """R16: once the game that serves it has begun, an obligation is part of that
    game's record: a rescind or a decrease is refused ``record_closed``."""
    s.event("cup", teams=["A", "B"])
    red_in(s)
    s.begin("g2", home=A_BENCH)
    (ob,) = s.obligations()
    decisions: list[tuple[str, dict[str, Any]]] = [("committee.rescind", {}),
                                                   ("committee.decrease", {"owed_ms": 0})]
    for kind, extra in decisions:
        r = s.refused(kind, None, obligation=ob.id, by="HTC", reason="late appeal", **extra)
        assert (r.reason, r.clause) == ("record_closed", "R16")


def r9_committee_decreases_a_sit_out(s: Season) -> None:
    """R6/R9: the committee lowers what a post-game 3y owes (4:00 to 1:00 of play):
    ``obligation.updated``; the next game takes the lower figure. A decrease must
    owe less (``not_a_decrease``), and a whole-game suspension or a yellow status
    owes no play time to decrease (``not_decreasable``)."""
    s.event("cup", teams=["A", "B"])
    s.setup("g1")
    s.play("g1")
    s.postgame("g1", "3y")
    (ob,) = s.obligations()
    r = s.refused("committee.decrease", obligation=ob.id, owed_ms=FOUR_MIN, by="HTC", reason="x")
    assert r.reason == "not_a_decrease"
    out = s.must("committee.decrease", obligation=ob.id, owed_ms=60_000, by="HTC", reason="appeal upheld")
    upd = one(out, nt.ObligationUpdated)
    assert (upd.owed_ms, upd.kind, upd.any_team) == (60_000, "sit_out", False)
    assert applied(s.begin("g2")) == [(P, "sit_out", 60_000, "g1")]
    s2 = Season()
    s2.event("cup", teams=["A", "B"])
    red_in(s2)
    (ob,) = s2.obligations()
    r = s2.refused("committee.decrease", obligation=ob.id, owed_ms=0, by="HTC", reason="x")
    assert (r.reason, r.clause) == ("not_decreasable", "R6")


# ==========================================================================
# Smaller


def r16_game_setup_naming_an_unknown_event(s: Season) -> None:
    """R16: which games count depends on "a Club Event or a USPA Event": a game
    naming an event never set up is refused ``unknown_event`` (a typo must not
    turn a USPA red into a Club one), unless it says it is a Club game; a class
    that contradicts its event is refused ``class_mismatch``."""
    s.event("open", cls="uspa")
    body = s.setup_body("g1", event="opne")
    del body["class"]
    r = refused(s.send_raw(body))[0]
    assert (r.reason, r.clause) == ("unknown_event", "R16")
    body = s.setup_body("g1", event="open")
    body["class"] = "club"
    r = refused(s.send_raw(body))[0]
    assert (r.reason, r.clause) == ("class_mismatch", "R16")
    assert "g1" not in s.engine.games
    s.setup("g1", event="friendly")              # says "class": "club"
    assert s.engine._info(s.engine.games["g1"].game).event_class == "club"


def r1_card_to_a_team_official(s: Season) -> None:
    """R1/R2: "Inappropriate behavior by any member of a team organization": a card
    may name a team official (``official: {team, role}``); it awards the penalty
    ("Any subsequent yellow card or red card will also result in a penalty") and
    sends no one to the box. A card naming both a player and an official, or
    neither, is refused ``card_target``."""
    s.setup("g1")
    s.start("g1")
    out = s.must("card", "g1", official={"team": "home", "role": "coach"}, color="yellow",
                 conduct="team_member_behavior", penalty="P3")
    assert tags(out) == ["official.carded", "penalty.awarded"]
    c, pen = one(out, nt.OfficialCarded), one(out, nt.PenaltyAwarded)
    assert (c.side, c.role, c.color, c.clause) == ("home", "coach", "yellow", "R1")
    assert (pen.to, pen.against, pen.player, pen.severity, pen.clause) == ("away", "home", None, "P3", "R2")
    s.must("card", "g1", official={"team": "home", "role": "coach"}, color="red", conduct="disrespect")
    (o,) = s.view("g1").officials
    assert (o.side, o.role, o.yellows, o.reds) == ("home", "coach", 1, 1)
    assert all(p.box is None for p in s.view("g1").players)
    for fields in ({"player": P, "official": {"team": "home", "role": "groom"}}, {}):
        r = s.refused("card", "g1", color="yellow", conduct="disrespect", **fields)
        assert (r.reason, r.clause) == ("card_target", "R1")


def r8_rules_travel_with_the_event(s: Season) -> None:
    """R8: "the remainder of his or her original suspension and until the first play
    stoppage [...] following the next two minutes of play": the event's
    ``rules.left_early`` says how it reads, so one log folds one way; two events
    in one log each keep their own reading."""
    s.event("cup", teams=["A", "B"])
    s.must("event.setup", event="open", **{"class": "club"}, handicap=8, teams=["C", "D"],
           rules={"left_early": "concurrent"})
    for game, kw, owed in (("g1", {}, 90_000 + TWO_MIN), ("g2", {"event": "open", "home": TEAM_C,
                                                                  "away": TEAM_D}, TWO_MIN)):
        s.setup(game, **kw)
        s.start(game)
        s.run(10_000)
        s.card(game, P, count=2)
        s.run(30_000)
        out = s.must("box.left_early", game, player=P)
        assert one(out, nt.BoxEnter).owed_ms == owed, game
        s.end(game)


CASES = [pytest.param(f, id=f.__name__) for f in (
    a27_clock_start_with_a_suspended_starter_is_applied, a27_late_clock_start_begins_the_game,
    a3_team_with_no_alternate_starts_short, a3_team_handicap_checked_against_the_event_s_limits,
    r11_shootout_excluded_at_the_end_of_regulation, r11_not_tied_at_the_end_of_regulation_excludes_nobody,
    r15_red_in_a_final_then_event_complete, r15_team_eliminated, r15_games_already_played_never_change,
    r6_committee_rescinds_a_red_shown_to_the_wrong_player,
    r6_committee_decisions_refused_once_the_serving_game_began, r9_committee_decreases_a_sit_out,
    r16_game_setup_naming_an_unknown_event, r1_card_to_a_team_official, r8_rules_travel_with_the_event,
)]


@pytest.mark.parametrize("case", CASES)
def test_tournament_day(case: SeasonCase) -> None:
    s = Season()
    case(s)
    # The log is the record of the day: replaying it gives the same state.
    log = b"".join(msgspec.json.encode(b) + b"\n" for b in s.log)
    out = io.BytesIO()
    assert replay(io.BytesIO(log), out, state=True) == 0
    s.engine.advance(s.t)
    replayed = msgspec.json.decode(out.getvalue())
    live = msgspec.to_builtins(s.engine.state())
    for gid in live["games"]:      # a replay stops at its last event; the live cursor ran on
        for doc in (live, replayed):
            doc["games"][gid].pop("clock")
            for p in doc["games"][gid]["players"]:
                for k in ("box", "no_sub", "mount"):
                    p[k] = None if p[k] is None else {"cause": p[k]["cause"], "owed_ms": p[k]["owed_ms"]}
    assert replayed == live


def test_cases_cite_their_clauses() -> None:
    check_cases(CASES)

