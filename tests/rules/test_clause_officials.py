"""The moments the officials must be told: a departure from the arena in an interval
(R14), a player the team sheet lists to start while the game's obligations keep
him off the field (R6, R9, R10, R14), a card or correction that reaches the log
after the game it suspends a player from has begun (R9, R16), and the committee's
decrease, which goes beyond Rule 14 and always carries its reason.

Each case is a function taking a fresh ``Season``; its docstring starts with the
clause it checks and quotes the rule. After each case its log is written out as
JSON Lines and folded again by the ``arena-stream replay`` command: the replay
must raise the same alerts and reach the same state hash as the live engine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from stream.rules import codec
from stream.rules import notices as nt
from stream.rules.engine import Engine

from .clause_helpers import FOUR_MIN, TWO_MIN, P, Season, check_cases, one, roster, tags

SeasonCase = Callable[[Season], None]

#: p's team with p on the bench, and a third game's opponent.
A_BENCH = roster("A", ["a4", "a2", "a3"], [P])


def alerts(out: list[Any], code: str | None = None) -> list[nt.Alert]:
    return [n for n in out if isinstance(n, nt.Alert) and (code is None or n.code == code)]


def ended_with_p_owing_nothing(s: Season, game: str = "g1") -> None:
    """``game`` is set up, played for a minute and ended; p leaves it owing nothing."""
    s.setup(game)
    s.play(game)


# ==========================================================================
# R14: "during the course of a period"


def r14_leaving_in_an_interval_is_no_card(s: Season) -> None:
    """R14: "A player may not leave the arena during the course of a period without
    the permission of the Umpires": after the horn that ends a period, before the
    next period's start, a departure is no offense and no card. It is recorded and
    the umpires are asked whether he had their permission; he plays on."""
    s.setup("g1")
    s.start("g1")
    s.run(450_000)
    s.must("horn", "g1")                       # the first period ends: the interval
    out = s.must("arena.left", "g1", player=P, penalty=4)
    assert tags(out) == ["alert"]
    a = one(out, nt.Alert)
    assert (a.code, a.clause, a.player, a.side, a.subject) == (
        "left_arena_in_interval", "R14", P, "home", s.last_id())
    v = s.player("g1")
    assert (v.sent_off, v.offenses, v.on_field) == (False, 0, True)
    s.run(240_000)
    s.start("g1")                              # the second period
    s.run(60_000)
    s.end("g1")
    assert s.obligations() == []               # no suspension for his next game


def r14_leaving_after_the_last_horn_is_no_card(s: Season) -> None:
    """R14: "during the course of a period": the horn that ends the last period ends
    play; a departure before ``game.end`` is recorded with the alert, no red."""
    s.setup("g1", periods=1)
    s.start("g1")
    s.run(450_000)
    s.must("horn", "g1")
    out = s.must("arena.left", "g1", player=P)
    assert [a.code for a in alerts(out)] == ["left_arena_in_interval"]
    assert s.of(nt.CardRecorded, out) == []
    s.end("g1")
    assert s.obligations() == []


def r14_leaving_at_a_stoppage_within_a_period_is_the_red(s: Season) -> None:
    """R14: "Unauthorized departure from the arena (automatic red card)": a period is
    in its course from its start to its horn, whistles and clock stops included."""
    s.setup("g1")
    s.start("g1")
    s.run(30_000)
    s.must("whistle", "g1")                    # play stopped, the period goes on
    out = s.must("arena.left", "g1", player=P)
    red = one(out, nt.CardRecorded)
    assert (red.color, red.converted, red.clause) == ("red", "left_arena", "R14")
    assert alerts(out) == []
    s.end("g1")
    assert [(o.kind, o.clause) for o in s.obligations()] == [("suspension", "R14")]


def r14_an_interval_departure_then_one_in_the_next_period(s: Season) -> None:
    """R14: the interval's departure counts for nothing, so a departure in the next
    period is his first offense: the automatic red, offense 1."""
    s.setup("g1")
    s.start("g1")
    s.run(450_000)
    s.must("horn", "g1")
    s.must("arena.left", "g1", player=P)
    s.run(240_000)
    s.start("g1")
    s.run(10_000)
    red = one(s.must("arena.left", "g1", player=P), nt.CardRecorded)
    assert (red.offense, red.converted) == (1, "left_arena")


def r14_a_late_departure_stamped_in_the_interval_is_no_card(s: Season) -> None:
    """R14/L1: a departure that reaches the log late is judged at its own time: stamped
    in the interval, it is the alert, whatever the clock does by the time it arrives."""
    s.setup("g1")
    s.start("g1")
    s.run(450_000)
    s.must("horn", "g1")
    interval = s.t + 60_000
    s.run(240_000)
    s.start("g1")
    s.run(30_000)
    out = s.must("arena.left", "g1", player=P, at=interval)
    assert [a.code for a in alerts(out)] == ["left_arena_in_interval"]
    assert s.of(nt.CardRecorded, out) == []
    assert s.player("g1").sent_off is False


# ==========================================================================
# A player listed to start whom the game's obligations keep off the field


def _origin(s: Season, how: str) -> None:
    """g1: p leaves it owing something, by ``how``."""
    s.setup("g1")
    s.start("g1")
    s.run(10_000)
    if how == "red":
        s.card("g1", P, "red")
    elif how == "arena_left":
        s.must("arena.left", "g1", player=P)
    elif how == "box":
        s.card("g1", P, count=2)
    s.run(30_000)
    s.end("g1")
    if how in ("2y", "3y", "postgame_red"):
        s.postgame("g1", "red" if how == "postgame_red" else how)


#: how p comes to owe -> (clause, kind, owed_ms) of the alert for g2, where he is listed to start.
_ORIGINS = {"red": ("R6", "suspension", 0), "arena_left": ("R14", "suspension", 0),
            "box": ("R10", "sit_out", TWO_MIN - 30_000), "2y": ("R9", "sit_out", TWO_MIN),
            "3y": ("R9", "sit_out", FOUR_MIN), "postgame_red": ("R9", "suspension", FOUR_MIN)}


def r9_every_origin_listed_to_start_is_told(_: Season) -> None:
    """R9/R6/R10/R14: whatever keeps him off the field ("suspended for the player's
    next game", "sit out until the first play stoppage [...] following the first two
    minutes of play in his or her next game", "begin his or her next game [...] in the
    penalty box"), a team sheet that lists him to start raises ``suspended_in_lineup``
    at the set-up and again when the game begins, naming the obligation."""
    for how, (clause, kind, owed) in _ORIGINS.items():
        s = Season()
        _origin(s, how)
        setup = s.setup("g2")
        start = s.start("g2")
        for out in (setup, start):
            (a,) = alerts(out, "suspended_in_lineup")
            assert (a.player, a.clause, a.reason, a.owed_ms, a.origin_game, a.game) == (
                P, clause, kind, owed, "g1", "g2"), how
        v = s.player("g2")
        assert not v.on_field, how
        replayed_alike(s)


def r9_on_the_bench_the_slot_is_held_not_listed_to_start(s: Season) -> None:
    """R9/R13: a post-game red's player on the bench is not listed to start: he takes
    a slot (``slot_held``), and no ``suspended_in_lineup`` is raised for him."""
    _origin(s, "postgame_red")
    out = s.begin("g2", home=A_BENCH)
    assert {a.code for a in alerts(out)} == {"slot_held"}


# ==========================================================================
# A card or correction that reaches the log after his next game began


def r9_a_late_postgame_red_while_the_next_game_is_played(s: Season) -> None:
    """R9: "suspended for the entirety of his or her next game of equal or higher
    handicap for the same team": the umpire's post-game red reaches the log while g2,
    that next game, is being played with p on the field. The card stands; nothing is
    taken back from g2 (A25), the suspension waits for his following qualifying game,
    and g2's officials are told at once: ``next_game_begun`` in g2, naming p."""
    ended_with_p_owing_nothing(s)
    s.begin("g2")
    s.run(30_000)
    out = s.postgame("g1", "red")
    (a,) = alerts(out, "next_game_begun")
    assert (a.game, a.player, a.side, a.clause, a.origin_game, a.reason, a.owed_ms, a.detail) == (
        "g2", P, "home", "R9", "g1", "suspension", FOUR_MIN, "live")
    assert a.subject == s.last_id()            # the card that created it
    assert s.player("g2").on_field             # g2 is not changed under the officials
    assert s.pending() == [("suspension", FOUR_MIN, "g1")]
    s.run(30_000)
    s.end("g2")
    out = s.begin("g3")
    assert [(n.player, n.origin_game) for n in s.of(nt.ObligationApplied, out)] == [(P, "g1")]


def r9_a_late_postgame_card_after_the_next_game_was_played(s: Season) -> None:
    """R9: a post-game 2y entered after g2 was played: the alert names g2 as played
    (``detail`` ``ended``); the sit-out waits for g3."""
    ended_with_p_owing_nothing(s)
    s.setup("g2")
    s.play("g2")
    (a,) = alerts(s.postgame("g1", "2y"), "next_game_begun")
    assert (a.game, a.reason, a.owed_ms, a.detail) == ("g2", "sit_out", TWO_MIN, "ended")


def r16_a_late_correction_to_an_ended_game(s: Season) -> None:
    """R16/L1: a red shown in g1 whose record reaches the log only while g2 is played
    (stamped before g1's end) derives g1's obligations again: the new suspension's
    game has begun, and g2's officials are told in the same breath as the correction."""
    s.setup("g1")
    s.start("g1")
    s.run(20_000)
    shown = s.t
    s.run(40_000)
    s.end("g1")
    s.begin("g2")
    s.run(5_000)
    out = s.must("card", "g1", at=shown, player=P, color="red", conduct="striking")
    assert "correction" in tags(out)
    (a,) = alerts(out, "next_game_begun")
    assert (a.game, a.player, a.clause, a.reason, a.detail) == ("g2", P, "R6", "suspension", "live")


def r16_no_alert_before_the_next_game_begins(s: Season) -> None:
    """R16: set up but not begun, g2 is still his next game: it takes the suspension
    when it begins, and no one needs telling that it began without him serving it."""
    ended_with_p_owing_nothing(s)
    s.setup("g2")
    assert alerts(s.postgame("g1", "red"), "next_game_begun") == []
    out = s.start("g2")
    assert [(n.player, n.origin_game) for n in s.of(nt.ObligationApplied, out)] == [(P, "g1")]


def r16_only_a_game_that_would_have_served_it(s: Season) -> None:
    """R16: "his or her next game of equal or higher handicap": a game of lower handicap,
    or of other teams, under way meanwhile is not his next game: no alert."""
    ended_with_p_owing_nothing(s)
    s.begin("low", handicap=4)
    s.begin("other", home=roster("C", ["c1", "c2", "c3"]), away=roster("D", ["d1", "d2", "d3"]))
    assert alerts(s.postgame("g1", "red"), "next_game_begun") == []


def r16_a_game_begun_before_the_origin_ended_is_not_next(s: Season) -> None:
    """R16: "his next game" follows the one the card was shown after: a game that
    began before g1 ended (an earlier round) is not it."""
    s.setup("g0")
    s.start("g0")
    s.run(10_000)
    ended_with_p_owing_nothing(s)
    assert alerts(s.postgame("g1", "red"), "next_game_begun") == []


# ==========================================================================
# The committee's decrease: beyond Rule 14, with its reason


def r6_a_decrease_keeps_who_and_why(s: Season) -> None:
    """R6: "This penalty may be increased by the Host Tournament Committee and/or the
    Association": the rule grants no decrease. A ``committee.decrease`` is a committee
    correction beyond it, and the record keeps who decided, why, and what was owed
    before, in the ledger, the notice and a replay; a correction that derives g1's
    obligations again keeps it."""
    ended_with_p_owing_nothing(s)
    s.postgame("g1", "3y")
    (ob,) = s.obligations()
    out = s.must("committee.decrease", obligation=ob.id, owed_ms=TWO_MIN, by="Committee chair",
                 reason="video review: the second foul was not his")
    n = one(out, nt.ObligationUpdated)
    assert (n.owed_ms, n.by, n.reason, n.clause) == (
        TWO_MIN, "Committee chair", "video review: the second foul was not his", "R9")
    (ob,) = s.obligations()
    d = ob.decreased
    assert d is not None and (d.by, d.reason, d.cause, d.from_ms, ob.owed_ms) == (
        "Committee chair", "video review: the second foul was not his", s.last_id(), FOUR_MIN, TWO_MIN)
    s.postgame("g1", "2y", player="a2")      # g1's obligations derived again
    (ob,) = s.obligations()
    assert ob.decreased == d and ob.owed_ms == TWO_MIN


OFFICIALS = [
    pytest.param(f, id=f.__name__) for f in (
        r14_leaving_in_an_interval_is_no_card, r14_leaving_after_the_last_horn_is_no_card,
        r14_leaving_at_a_stoppage_within_a_period_is_the_red,
        r14_an_interval_departure_then_one_in_the_next_period,
        r14_a_late_departure_stamped_in_the_interval_is_no_card,
        r9_every_origin_listed_to_start_is_told, r9_on_the_bench_the_slot_is_held_not_listed_to_start,
        r9_a_late_postgame_red_while_the_next_game_is_played,
        r9_a_late_postgame_card_after_the_next_game_was_played, r16_a_late_correction_to_an_ended_game,
        r16_no_alert_before_the_next_game_begins, r16_only_a_game_that_would_have_served_it,
        r16_a_game_begun_before_the_origin_ended_is_not_next, r6_a_decrease_keeps_who_and_why)]


def test_cases_cite_their_clause() -> None:
    check_cases(OFFICIALS)


def replayed_alike(s: Season) -> None:
    """The season's log, folded by ``arena-stream replay``: the same alerts, in the same
    games, and the state hash of the log's fold, which is the live engine's once time
    has passed alike."""
    with tempfile.TemporaryDirectory() as where:
        log = Path(where) / "season.jsonl"
        log.write_text("".join(json.dumps(b) + "\n" for b in s.log))
        cmd = [sys.executable, "-m", "stream", "replay"]
        out = subprocess.run([*cmd, str(log)], capture_output=True, text=True, timeout=120, check=True)
        digest = subprocess.run([*cmd, "--hash", str(log)], capture_output=True, text=True, timeout=120,
                                check=True).stdout.strip()
    replayed = [json.loads(x) for x in out.stdout.splitlines()]
    live = sorted((a.cause, a.game, a.code, a.player) for a in s.of(nt.Alert))
    assert sorted((n["cause"], n["game"], n["code"], n["player"])
                  for n in replayed if n["type"] == "alert") == live
    # The command folds what an engine folds; advanced to the season's time, that is the live state.
    fresh = Engine()
    for body in s.log:
        fresh.feed(codec.decode_event(msgspec.json.encode(body)))
    assert digest == fresh.state_hash()
    fresh.advance(s.t)
    assert fresh.state_hash() == s.engine.state_hash()


@pytest.mark.parametrize("case", OFFICIALS)
def test_officials(case: SeasonCase) -> None:
    s = Season()
    case(s)
    replayed_alike(s)
