"""Per-clause tests of Rule 14's card clauses: R1 (conduct), R2 (penalty), R3 (second
yellow: the box), R4 (third offense), R5 (fourth offense: red), R7 (umpire discretion).

Each case is a function taking a fresh ``Script`` (or building its own, for a
setting or a setup field); its docstring starts with the clause id and quotes
or paraphrases the clause. Cases are collected in one table per clause and run
through one ``parametrize`` each, ids = function names (see ``clause_helpers``;
docs/rules.md maps each clause to its cases). ``s.t += ms`` moves the next
event's time without letting the engine see the gap, so that a stoppage can
land exactly on a boundary; ``s.run(ms)`` lets time pass and returns the
deadlines that fell due.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from stream.errors import MalformedEvent
from stream.rules import codec
from stream.rules import notices as nt

from .clause_helpers import (
    FOUR_MIN,
    PERIOD,
    TWO_MIN,
    Case,
    box,
    check_cases,
    one,
    second_yellow,
    state_bytes,
    sub_refused,
    table,
    tags,
)
from .script import Script

# ==========================================================================
# R1: unsportsmanlike conduct; the card records its category


def r1_yellow_records_each_listed_conduct(s: Script) -> None:
    """R1: "Unsportsmanlike conduct, including but not limited to the following" -
    appealing, vulgar or abusive language, dangerous riding, hitting the ball
    after the whistle, deliberately striking: each card records its category."""
    s.start()
    listed = {"h1": "appealing", "h2": "abusive_language", "h3": "dangerous_riding",
              "a1": "hit_after_whistle", "a2": "striking"}
    for pid, conduct in listed.items():
        rec = one(s.card(pid, conduct=conduct), nt.CardRecorded)
        assert (rec.player, rec.conduct, rec.color, rec.clause) == (pid, conduct, "yellow", "R2")


def r1_red_records_its_conduct(s: Script) -> None:
    """R1: a red for "Deliberately striking another player or a mount" records
    the conduct "striking"."""
    s.start()
    rec = one(s.card("a3", "red", conduct="striking"), nt.CardRecorded)
    assert (rec.color, rec.conduct) == ("red", "striking")


def r1_appeal_forms_are_conducts(s: Script) -> None:
    """R1: "A demeaning comment or gesture is an appeal. The raising of the mallet
    [...] is an appeal": both forms are recorded as their own categories."""
    s.start()
    assert one(s.card("h1", conduct="appeal_demeaning"), nt.CardRecorded).conduct == "appeal_demeaning"
    assert one(s.card("h2", conduct="appeal_mallet_raised"),
               nt.CardRecorded).conduct == "appeal_mallet_raised"


def r1_unknown_conduct_is_a_decode_error(s: Script) -> None:
    """R1: the conduct is one of the listed categories (or "other"); a card naming
    an unknown conduct is not an event: ``decode_event`` raises
    ``MalformedEvent`` with code ``invalid_field`` and the engine never sees it."""
    s.start()
    before = state_bytes(s)
    body = {"type": "card", "id": "x1", "at": s.t, "game": s.game, "player": "h2",
            "color": "yellow", "conduct": "being_rude"}
    with pytest.raises(MalformedEvent) as err:
        codec.decode_event(msgspec.json.encode(body))
    assert err.value.code == "invalid_field"
    assert "$.conduct" in err.value.detail
    with pytest.raises(MalformedEvent):
        s.send("card", player="h2", color="yellow", conduct="being_rude")
    assert state_bytes(s) == before


def r1_a_card_is_recorded_before_its_conduct_is_named(s: Script) -> None:
    """R1: the umpire records the card first; its conduct may be named then or later,
    within the game, by a ``card.amended`` (``conduct.named`` notice, nothing else
    changes). An amendment names a card recorded in its game; a voided card is none."""
    s.start()
    rec = one(s.card("h2", conduct=None), nt.CardRecorded)
    card = s.last_id()
    assert (rec.conduct, rec.yellows) == (None, 1)
    before = state_bytes(s)
    out = s.must("card.amended", target=card, conduct="arguing")
    amended = one(out, nt.ConductNamed)
    assert (amended.target, amended.player, amended.conduct, amended.clause) == (card, "h2", "arguing", "R1")
    assert len(out) == 1
    assert state_bytes(s) == before  # the game's state, its players' cards included, is the same
    assert s.refused("card.amended", target="nope", conduct="arguing").reason == "not_a_card"
    s.must("whistle")
    assert s.refused("card.amended", target=s.last_id(), conduct="arguing").reason == "not_a_card"
    s.must("void", target=card, entered_in_error=True)
    assert s.refused("card.amended", target=card, conduct="other").reason == "not_a_card"


R1 = table(r1_yellow_records_each_listed_conduct, r1_red_records_its_conduct,
           r1_appeal_forms_are_conducts, r1_unknown_conduct_is_a_decode_error,
           r1_a_card_is_recorded_before_its_conduct_is_named)


@pytest.mark.parametrize("case", R1)
def test_r1(case: Case) -> None:
    case(Script())


# ==========================================================================
# R2: every card results in a penalty


def r2_first_yellow_awards_penalty_with_given_severity(s: Script) -> None:
    """R2: "The player's first yellow card (offense) in a game will result in a
    penalty": awarded to the other side, with the severity the umpire gave."""
    s.start()
    out = s.card("h2", penalty="P4")
    assert tags(out) == ["card.recorded", "penalty.awarded"]
    pen = one(out, nt.PenaltyAwarded)
    assert (pen.to, pen.against, pen.player, pen.severity, pen.reason, pen.clause, pen.cause) == (
        "away", "home", "h2", "P4", "card", "R2", s.last_id())


def r2_away_card_awards_home(s: Script) -> None:
    """R2: the penalty goes against the carded player's team, to the other side."""
    s.start()
    pen = one(s.card("a1", penalty=2), nt.PenaltyAwarded)
    assert (pen.to, pen.against, pen.severity) == ("home", "away", 2)


def r2_severity_absent_is_none(s: Script) -> None:
    """R2: the penalty "may increase or decrease an existing penalty's severity";
    with no severity given the notice carries None (no table is invented)."""
    s.start()
    assert one(s.card("h1"), nt.PenaltyAwarded).severity is None


def r2_every_subsequent_yellow_awards_a_penalty(s: Script) -> None:
    """R2: "Any subsequent yellow card [...] will also result in a penalty": one
    penalty per card, each with its own severity."""
    s.start()
    sev = ["P5", 4, None]
    got = [one(s.card("h3", penalty=v), nt.PenaltyAwarded).severity for v in sev]
    assert got == sev


def r2_red_awards_penalty(s: Script) -> None:
    """R2: "Any subsequent yellow card or red card will also result in a penalty"."""
    s.start()
    out = s.card("a2", "red", conduct="rough_play", penalty="P2")
    pen = one(out, nt.PenaltyAwarded)
    assert (pen.to, pen.severity, pen.reason, pen.clause) == ("home", "P2", "card", "R2")


def r2_converted_fourth_offense_awards_penalty(s: Script) -> None:
    """R2: a yellow converted to red at the fourth offense is still a card, and
    results in a penalty with the severity the card carried."""
    s.start()
    for _ in range(3):
        s.card("h1")
    pen = one(s.card("h1", penalty="P3"), nt.PenaltyAwarded)
    assert (pen.against, pen.severity, pen.reason) == ("home", "P3", "card")


def r2_arena_left_automatic_red_awards_penalty(s: Script) -> None:
    """R2: the automatic red of leaving the arena is a red card, so it "will also
    result in a penalty" (reason ``left_arena``)."""
    s.start()
    out = s.must("arena.left", player="a3", penalty="P2")
    pen = one(out, nt.PenaltyAwarded)
    assert (pen.to, pen.against, pen.player, pen.severity, pen.reason, pen.clause) == (
        "home", "away", "a3", "P2", "left_arena", "R2")


R2 = table(r2_first_yellow_awards_penalty_with_given_severity, r2_away_card_awards_home,
           r2_severity_absent_is_none, r2_every_subsequent_yellow_awards_a_penalty,
           r2_red_awards_penalty, r2_converted_fourth_offense_awards_penalty,
           r2_arena_left_automatic_red_awards_penalty)


@pytest.mark.parametrize("case", R2)
def test_r2(case: Case) -> None:
    case(Script())


# ==========================================================================
# R3: the second yellow sits the player out


def r3_second_yellow_enters_box(s: Script) -> None:
    """R3: "A second offense will be a second yellow card and the player will sit
    out": box.enter owing two minutes of play, the team plays short."""
    s.start()
    s.run(10_000)
    assert "box.enter" not in tags(s.card("h2"))
    out = s.card("h2")
    assert tags(out) == ["card.recorded", "penalty.awarded", "box.enter"]
    rec, entered = one(out, nt.CardRecorded), one(out, nt.BoxEnter)
    assert (rec.yellows, rec.offense, rec.clause) == (2, 2, "R3")
    assert (entered.player, entered.owed_ms, entered.kind, entered.clause, entered.cause) == (
        "h2", TWO_MIN, "card", "R3", s.last_id())
    p = s.players["h2"]
    assert p.on_field is False
    assert p.box is not None and p.box.remaining_ms == TWO_MIN and p.box.release == "after_play"
    home = s.view.teams.home
    assert (home.on_field, home.substitute_allowed) == (2, False)
    assert [(x.player, x.reason) for x in home.short] == [("h2", "box")]


def r3_no_substitute_while_in_box(s: Script) -> None:
    """R3/R13: the player sits out and the team plays short; substituting the
    boxed player is refused ``sitting_out`` (clause R13)."""
    second_yellow(s)
    s.whistle()
    r = sub_refused(s, "home", "h2", "h4")
    assert (r.reason, r.clause) == ("sitting_out", "R13")


def r3_eligible_exactly_at_two_minutes_of_play(s: Script) -> None:
    """R3: "following the next two minutes of play": box.eligible falls due when
    120 000 ms of play are served, not 1 ms before."""
    card = second_yellow(s)
    assert s.run(TWO_MIN - 1) == []
    assert box(s).remaining_ms == 1
    due = s.run(1)
    assert tags(due) == ["box.eligible"]
    el = due[0]
    assert (el.player, el.cause, el.clause, el.at) == ("h2", card, "R3", s.t)
    b = box(s)
    assert (b.eligible, b.remaining_ms, b.release) == (True, 0, "next_stoppage")
    assert s.run(30_000) == []  # eligible once; the box stays until a stoppage
    assert s.players["h2"].box is not None


def r3_card_during_stoppage_counts_from_next_start(s: Script) -> None:
    """R3: "two minutes of play": a second yellow shown during a stoppage starts
    counting only when the clock starts again."""
    s.start()
    s.run(10_000)
    s.whistle()
    s.card("h2")
    s.card("h2")
    assert s.run(300_000) == []  # a long stoppage serves nothing
    assert box(s).remaining_ms == TWO_MIN
    s.start()
    assert s.run(TWO_MIN - 1) == []
    assert tags(s.run(1)) == ["box.eligible"]


def r3_card_before_first_start_counts_from_first_start(s: Script) -> None:
    """R3: "the next two minutes of play": a second yellow shown before the clock
    first starts (cards are accepted then) owes two minutes counted from the
    first clock start."""
    s.card("h2")
    out = s.card("h2")
    assert one(out, nt.BoxEnter).owed_ms == TWO_MIN
    assert s.run(60_000) == []
    assert box(s).remaining_ms == TWO_MIN
    s.start()
    assert s.run(TWO_MIN - 1) == []
    assert tags(s.run(1)) == ["box.eligible"]


def r3_stoppage_before_two_minutes_does_not_release(s: Script) -> None:
    """R3: the player sits out until the first stoppage *following* the two
    minutes; a stoppage inside them releases nothing, and play then resumes
    counting where it stopped."""
    second_yellow(s)
    s.run(60_000)
    out = s.whistle()
    assert "box.release" not in tags(out)
    assert box(s).remaining_ms == TWO_MIN - 60_000
    s.start()
    assert s.run(TWO_MIN - 60_000 - 1) == []
    assert tags(s.run(1)) == ["box.eligible"]


def _release_check(s: Script, out: list[Any], card: str, stoppage: str) -> None:
    rel = one(out, nt.BoxRelease)
    assert (rel.player, rel.cause, rel.clause) == ("h2", card, "R3")
    assert rel.stoppage == f"{stoppage}:{s.last_id()}"
    assert s.players["h2"].box is None
    assert s.players["h2"].on_field is True
    assert s.view.teams.home.on_field == 3


def r3_released_by_whistle(s: Script) -> None:
    """R3: "until the first play stoppage": a whistle after the two minutes releases."""
    card = second_yellow(s)
    s.run(TWO_MIN + 5_000)
    _release_check(s, s.whistle(), card, "whistle")


def r3_released_by_goal(s: Script) -> None:
    """R3: "the first play stoppage (including a goal)": a goal releases."""
    card = second_yellow(s)
    s.run(TWO_MIN + 5_000)
    _release_check(s, s.goal("away"), card, "goal")


def r3_released_by_period_horn(s: Script) -> None:
    """R3: the horn that ends the period is a play stoppage and releases an
    eligible player."""
    card = second_yellow(s)
    s.run(PERIOD - 10_000)  # to the end of the period
    _release_check(s, s.horn(), card, "horn")


def r3_released_by_split_horn(s: Script) -> None:
    """R3: the split-period horn ("a horn at the first stoppage after 3½
    minutes") is a play stoppage and releases an eligible player."""
    card = second_yellow(s)
    s.run(TWO_MIN + 5_000)
    out = s.horn(split=True)
    _release_check(s, out, card, "horn")
    assert (s.view.clock.period_over, s.view.clock.running) == (False, True)


def r3_released_by_clock_stop(s: Script) -> None:
    """R3: the timekeeper stops the clock only when play stops, so
    ``clock.stop`` is a play stoppage and releases an eligible player."""
    card = second_yellow(s)
    s.run(TWO_MIN + 5_000)
    _release_check(s, s.must("clock.stop"), card, "clock.stop")


def r3_released_by_game_end(s: Script) -> None:
    """R3: the end of the game stops play and releases an eligible player."""
    card = second_yellow(s)
    s.run(TWO_MIN + 5_000)
    out = s.must("game.end")
    _release_check(s, out, card, "game.end")
    assert tags(out)[-1] == "game.ended"


def r3_stoppage_exactly_at_boundary_releases(s: Script) -> None:
    """R3: "the first play stoppage [...] that occurs following the next two
    minutes": a stoppage at exactly 2:00 of play releases (eligible, then out)."""
    card = second_yellow(s)
    s.t += TWO_MIN
    out = s.whistle()
    assert tags(out) == ["box.eligible", "box.release"]
    assert out[0].cause == card
    assert s.players["h2"].box is None


def r3_stoppage_one_ms_early_does_not_release(s: Script) -> None:
    """R3: a stoppage 1 ms before the two minutes of play are served is not
    "following" them: no release, 1 ms still owed."""
    second_yellow(s)
    s.t += TWO_MIN - 1
    out = s.whistle()
    assert tags(out) == []
    b = box(s)
    assert (b.remaining_ms, b.eligible) == (1, False)


def r3_time_across_period_break_counts_only_play(s: Script) -> None:
    """R3: "two minutes of play": the interval between periods is not play; the
    trip resumes counting when the next period starts."""
    second_yellow(s, lead_ms=PERIOD - 60_000)  # 60 s left in the period
    assert s.run(60_000) == []
    out = s.horn()
    assert "box.release" not in tags(out)
    assert s.run(240_000) == []  # the interval
    assert box(s).remaining_ms == TWO_MIN - 60_000
    s.start()
    assert s.view.clock.period == 2
    assert s.run(TWO_MIN - 60_000 - 1) == []
    assert tags(s.run(1)) == ["box.eligible"]
    assert tags(s.whistle())[-1] == "box.release"


def r3_late_horn_caps_play_at_period_end(s: Script) -> None:
    """R3/A1: "the ball is dead at the horn", and a period is period_ms long:
    running past the period end (horn pressed late) counts no extra play."""
    second_yellow(s, lead_ms=PERIOD - 60_000)
    assert s.run(130_000) == []  # 70 s past the end of the period: nothing falls due
    assert (s.view.clock.play_ms, s.view.clock.remaining_ms) == (PERIOD, 0)
    assert box(s).remaining_ms == TWO_MIN - 60_000
    out = s.horn()
    clock = one(out, nt.ClockChanged)
    assert (clock.play_ms, clock.remaining_ms, clock.period_over) == (PERIOD, 0, True)
    assert box(s).remaining_ms == TWO_MIN - 60_000
    s.run(240_000)
    s.start()
    assert s.run(TWO_MIN - 60_000 - 1) == []
    assert tags(s.run(1)) == ["box.eligible"]


def r3_whistle_that_does_not_stop_clock_still_releases(_: Script) -> None:
    """R3: a whistle is a play stoppage even where the game's clock does not stop
    on whistles (``clock_stops_on_whistle: false``): it releases; the clock runs on."""
    s = Script(clock_stops_on_whistle=False)
    card = second_yellow(s)
    s.run(TWO_MIN + 1_000)
    out = s.whistle()
    assert tags(out) == ["box.release"]
    assert out[0].cause == card
    assert s.view.clock.running is True


R3 = table(r3_second_yellow_enters_box, r3_no_substitute_while_in_box,
           r3_eligible_exactly_at_two_minutes_of_play, r3_card_during_stoppage_counts_from_next_start,
           r3_card_before_first_start_counts_from_first_start,
           r3_stoppage_before_two_minutes_does_not_release, r3_released_by_whistle,
           r3_released_by_goal, r3_released_by_period_horn, r3_released_by_split_horn,
           r3_released_by_clock_stop, r3_released_by_game_end, r3_stoppage_exactly_at_boundary_releases,
           r3_stoppage_one_ms_early_does_not_release, r3_time_across_period_break_counts_only_play,
           r3_late_horn_caps_play_at_period_end, r3_whistle_that_does_not_stop_clock_still_releases)


@pytest.mark.parametrize("case", R3)
def test_r3(case: Case) -> None:
    case(Script())


# ==========================================================================
# R4: the third offense


def r4_third_yellow_is_another_box_trip(s: Script) -> None:
    """R4: "A third offense will result in a third yellow card and the player will
    sit out until the first play stoppage [...] following the next two minutes"."""
    second_yellow(s)
    s.run(TWO_MIN)
    s.whistle()
    assert s.players["h2"].box is None
    s.start()
    s.run(5_000)
    out = s.card("h2")
    rec, entered = one(out, nt.CardRecorded), one(out, nt.BoxEnter)
    assert (rec.color, rec.yellows, rec.offense, rec.clause) == ("yellow", 3, 3, "R4")
    assert (entered.owed_ms, entered.clause, entered.kind) == (TWO_MIN, "R4", "card")
    assert s.run(TWO_MIN - 1) == []
    assert tags(s.run(1)) == ["box.eligible"]


def r4_third_yellow_in_box_restarts_two_minutes(s: Script) -> None:
    """R4: a third yellow while still in the box: "sit out [...] following the next
    two minutes of play" from the third card; the later target (now + 2:00) wins
    over what was left of the second-yellow trip."""
    second_yellow(s)
    s.run(30_000)
    assert box(s).remaining_ms == TWO_MIN - 30_000
    out = s.card("h2")
    assert one(out, nt.BoxEnter).owed_ms == TWO_MIN
    b = box(s)
    assert (b.remaining_ms, b.clause) == (TWO_MIN, "R4")
    assert s.run(TWO_MIN - 1) == []
    assert tags(s.run(1)) == ["box.eligible"]


def r4_third_yellow_in_box_keeps_later_existing_target(_: Script) -> None:
    """R4: a third yellow while in the box keeps the later of the current target
    and now + 2:00; here the current (an R8 sequential return owing
    remainder + 2:00) is later, so it stands."""
    s = Script({"left_early": "sequential"})
    second_yellow(s)             # box until 10 s + 2:00 of play
    s.run(30_000)                # 90 s remain
    s.must("box.left_early", player="h2")
    owed = 90_000 + TWO_MIN
    assert box(s).remaining_ms == owed
    s.run(10_000)
    out = s.card("h2", conduct="left_box_deliberately")
    assert one(out, nt.BoxEnter).owed_ms == owed - 10_000
    assert box(s).remaining_ms == owed - 10_000


def r4_red_at_third_offense(s: Script) -> None:
    """R4: "a third offense may, if sufficiently severe, result in a red card and
    suspension for the remainder of the game with no substitute allowed until the
    first play stoppage (including a goal) that occurs following the next two
    minutes of play": clause R4, sent off, the window two minutes (the default
    reading)."""
    s.start()
    s.card("a1")
    s.card("a1")
    out = s.card("a1", "red", conduct="rough_play")
    assert tags(out) == ["card.recorded", "penalty.awarded", "sent_off"]
    rec = one(out, nt.CardRecorded)
    assert (rec.color, rec.offense, rec.clause, rec.converted) == ("red", 3, "R4", None)
    assert (one(out, nt.SentOff).no_sub_ms, one(out, nt.SentOff).clause) == (TWO_MIN, "R4")
    p = s.players["a1"]
    assert (p.sent_off, p.box, p.on_field) == (True, None, False)
    assert p.no_sub is not None and (p.no_sub.remaining_ms, p.no_sub.clause) == (TWO_MIN, "R4")
    assert s.run(TWO_MIN - 1) == []
    assert tags(s.run(1)) == ["sub.eligible"]
    assert one(s.whistle(), nt.SubAllowed).player == "a1"


def r4_third_offense_red_window_as_the_event_reads(_: Script) -> None:
    """R4/R6: the third-offense paragraph says "the next two minutes of play", the
    red-card paragraph "the next four minutes": an event that reads four
    (``rules.third_offense_red_no_sub_ms: 240000``) gets four; a red at the
    first offense is R6's four either way."""
    s = Script({"third_offense_red_no_sub_ms": 240_000})
    s.start()
    s.card("a1", count=2)
    s.card("a1")
    out = s.card("a1", "red", conduct="rough_play")
    assert (one(out, nt.SentOff).no_sub_ms, one(out, nt.SentOff).clause) == (FOUR_MIN, "R4")
    out = s.card("h1", "red", conduct="rough_play")
    assert (one(out, nt.SentOff).no_sub_ms, one(out, nt.SentOff).clause) == (FOUR_MIN, "R6")


R4 = table(r4_third_yellow_is_another_box_trip, r4_third_yellow_in_box_restarts_two_minutes,
           r4_third_yellow_in_box_keeps_later_existing_target, r4_red_at_third_offense,
           r4_third_offense_red_window_as_the_event_reads)


@pytest.mark.parametrize("case", R4)
def test_r4(case: Case) -> None:
    case(Script())


# ==========================================================================
# R5: the fourth offense is red without exception


def r5_fourth_yellow_card_event_is_red(s: Script) -> None:
    """R5: "A player's fourth offense shall, without exception, be a red card": a
    yellow shown as the fourth card event is recorded red (``fourth_offense``)."""
    s.start()
    for _ in range(3):
        s.card("h3")
    out = s.card("h3")
    assert tags(out) == ["card.recorded", "penalty.awarded", "sent_off"]
    rec = one(out, nt.CardRecorded)
    assert (rec.color, rec.converted, rec.offense, rec.count, rec.clause) == (
        "red", "fourth_offense", 4, 1, "R5")
    p = s.players["h3"]
    assert (p.sent_off, p.on_field, p.box, p.yellows, p.offenses) == (True, False, None, 3, 4)


def r5_fourth_yellow_by_count_is_red(s: Script) -> None:
    """R5: two yellows at the first offense and two more at the second would be
    the fourth yellow: recorded red (``fourth_offense``) and sent off."""
    s.start()
    s.card("h2", count=2)
    out = s.card("h2", count=2)
    rec = one(out, nt.CardRecorded)
    assert (rec.color, rec.converted, rec.offense, rec.count) == ("red", "fourth_offense", 2, 1)
    assert one(out, nt.SentOff).player == "h2"
    p = s.players["h2"]
    assert (p.sent_off, p.yellows, p.box) == (True, 2, None)


def r5_three_then_one_is_red(s: Script) -> None:
    """R5: three yellows at one offense, then a yellow: the fourth yellow is red."""
    s.start()
    s.card("a1", count=3)
    rec = one(s.card("a1"), nt.CardRecorded)
    assert (rec.color, rec.converted) == ("red", "fourth_offense")
    assert s.players["a1"].sent_off is True


def r5_converted_fourth_yellow_cites_r5(s: Script) -> None:
    """R5: the conversion applies "A player's fourth offense shall, without
    exception, be a red card", so the converted card cites R5 whatever the
    offense number."""
    s.start()
    s.card("h2", count=2)
    rec = one(s.card("h2", count=2), nt.CardRecorded)
    assert rec.converted == "fourth_offense"
    assert rec.clause == "R5"


def r5_red_shown_at_fourth_offense(s: Script) -> None:
    """R5: a red shown as the fourth offense is the fourth-offense red (clause
    R5), not a conversion."""
    s.start()
    for _ in range(3):
        s.card("a2")
    rec = one(s.card("a2", "red", conduct="striking"), nt.CardRecorded)
    assert (rec.color, rec.converted, rec.offense, rec.clause) == ("red", None, 4, "R5")


R5 = table(r5_fourth_yellow_card_event_is_red, r5_fourth_yellow_by_count_is_red, r5_three_then_one_is_red,
           r5_converted_fourth_yellow_cites_r5, r5_red_shown_at_fourth_offense)


@pytest.mark.parametrize("case", R5)
def test_r5(case: Case) -> None:
    case(Script())


# ==========================================================================
# R7: umpire discretion


def r7_two_yellows_at_first_offense(s: Script) -> None:
    """R7: "The Umpire(s), in their sole discretion, may assess two [...] yellow
    cards [...] for a player's first [...] offense": one event, two yellows, box."""
    s.start()
    out = s.card("h1", count=2)
    assert tags(out) == ["card.recorded", "penalty.awarded", "box.enter"]
    rec = one(out, nt.CardRecorded)
    assert (rec.count, rec.yellows, rec.offense, rec.clause) == (2, 2, 1, "R7")
    assert (one(out, nt.BoxEnter).owed_ms, one(out, nt.BoxEnter).clause) == (TWO_MIN, "R7")
    assert box(s, "h1").remaining_ms == TWO_MIN


def r7_three_yellows_at_first_offense(s: Script) -> None:
    """R7: "[...] may assess [...] three yellow cards [...] with imposed penalties
    as described above": three yellows at once, one box trip."""
    s.start()
    out = s.card("a2", count=3)
    rec = one(out, nt.CardRecorded)
    assert (rec.count, rec.yellows, rec.offense, rec.color) == (3, 3, 1, "yellow")
    assert one(out, nt.BoxEnter).owed_ms == TWO_MIN
    p = s.players["a2"]
    assert (p.yellows, p.offenses, p.sent_off) == (3, 1, False)


def r7_red_at_first_offense(s: Script) -> None:
    """R7/R6: "[...] or a red card [...] for a player's first [...] offense"; the card
    cites what a red card is (R6), as its sending off does."""
    s.start()
    out = s.card("h3", "red", conduct="striking")
    rec = one(out, nt.CardRecorded)
    assert (rec.color, rec.offense, rec.yellows, rec.clause) == ("red", 1, 0, "R6")
    assert one(out, nt.SentOff).clause == "R6" and one(out, nt.PenaltyAwarded).clause == "R2"
    assert s.players["h3"].sent_off is True


def r7_two_yellows_at_second_offense(s: Script) -> None:
    """R7: two yellows "for a player's [...] second [...] offense": the third
    yellow, a box trip."""
    s.start()
    s.card("h1")
    rec = one(s.card("h1", count=2), nt.CardRecorded)
    assert (rec.yellows, rec.offense, rec.clause) == (3, 2, "R7")
    assert box(s, "h1").remaining_ms == TWO_MIN


def r7_red_with_count_is_refused(s: Script) -> None:
    """R7: "two or three yellow cards or a red card": a count applies to yellows;
    a red with count 2 is refused ``bad_count``."""
    s.start()
    r = s.refused("card", player="h1", color="red", count=2, conduct="striking")
    assert (r.reason, r.clause) == ("bad_count", "R7")


R7 = table(r7_two_yellows_at_first_offense, r7_three_yellows_at_first_offense, r7_red_at_first_offense,
           r7_two_yellows_at_second_offense, r7_red_with_count_is_refused)


@pytest.mark.parametrize("case", R7)
def test_r7(case: Case) -> None:
    case(Script())


def test_cases_cite_their_clauses() -> None:
    check_cases([*R1, *R2, *R3, *R4, *R5, *R7])
