"""Per-clause tests of the suspensions: R6 (red card), R8 (leaving the box early),
R13 (substitution can't avoid a suspension), R14 (leaving the arena).

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

import pytest

from stream.rules import notices as nt

from .clause_helpers import (
    FOUR_MIN,
    PERIOD,
    TWO_MIN,
    Case,
    box,
    check_cases,
    no_sub,
    one,
    red,
    second_yellow,
    sub,
    sub_refused,
    table,
    tags,
)
from .script import Script

# ==========================================================================
# R6: the red card


def r6_red_sends_off_and_team_plays_short(s: Script) -> None:
    """R6: "A red card in a game will result in suspension for the remainder of
    the game with no substitute allowed": sent off, the team plays two."""
    card = red(s)
    sent = one(s.notices, nt.SentOff)
    assert (sent.player, sent.cause, sent.clause, sent.no_sub_ms) == ("h1", card, "R6", FOUR_MIN)
    p = s.players["h1"]
    assert (p.sent_off, p.on_field, p.sub_allowed) == (True, False, False)
    assert p.no_sub is not None and (p.no_sub.kind, p.no_sub.remaining_ms) == ("no_sub", FOUR_MIN)
    home = s.view.teams.home
    assert (home.on_field, home.substitute_allowed) == (2, False)
    assert [(x.player, x.reason) for x in home.short] == [("h1", "sent_off")]


def r6_no_substitute_before_four_minutes(s: Script) -> None:
    """R6: "no substitute allowed until the first play stoppage [...] following the
    next four minutes of play": refused ``no_substitute_yet`` at a stoppage
    inside the four minutes."""
    red(s)
    s.run(FOUR_MIN - 10_000)
    s.whistle()
    r = sub_refused(s, "home", "h1", "h4")
    assert (r.reason, r.clause) == ("no_substitute_yet", "R6")


def r6_substitute_after_stoppage_following_four_minutes(s: Script) -> None:
    """R6: "After that, a substitute will be allowed for the balance of the game":
    ``sub.eligible`` at exactly 4:00 of play, ``sub.allowed`` at the next
    stoppage, then the substitution is accepted."""
    card = red(s)
    assert s.run(FOUR_MIN - 1) == []
    due = s.run(1)
    assert tags(due) == ["sub.eligible"]
    assert (due[0].player, due[0].cause, due[0].clause, due[0].at) == ("h1", card, "R6", s.t)
    assert no_sub(s).eligible is True
    r = sub_refused(s, "home", "h1", "h4")  # no stoppage yet
    assert r.reason == "no_substitute_yet"
    s.run(3_000)
    out = s.goal("away")
    allowed = one(out, nt.SubAllowed)
    assert (allowed.player, allowed.cause, allowed.stoppage) == ("h1", card, f"goal:{s.last_id()}")
    assert s.players["h1"].sub_allowed is True
    home = s.view.teams.home
    assert (home.on_field, home.substitute_allowed) == (2, True)
    made = one(sub(s, "home", "h1", "h4"), nt.SubstitutionMade)
    assert (made.out, made.in_, made.clause) == ("h1", "h4", "R6")
    home = s.view.teams.home
    assert (home.lineup, home.bench, home.on_field, home.short) == (["h4", "h2", "h3"], [], 3, [])


def r6_stoppage_one_ms_before_four_minutes_does_not_allow(s: Script) -> None:
    """R6: a stoppage 1 ms before four minutes of play does not "follow" them; the
    next stoppage after them does."""
    red(s)
    s.t += FOUR_MIN - 1
    assert tags(s.whistle()) == []
    assert no_sub(s).remaining_ms == 1
    s.start()
    assert tags(s.run(1)) == ["sub.eligible"]
    r = sub_refused(s, "home", "h1", "h4")
    assert r.reason == "no_substitute_yet"
    assert tags(s.whistle()) == ["sub.allowed"]
    sub(s, "home", "h1", "h4")


def r6_sent_off_player_never_returns(s: Script) -> None:
    """R6: "suspension for the remainder of the game": no further card
    (``player_sent_off``), and once replaced the player is not on the bench to
    come back."""
    red(s)
    r = s.refused("card", player="h1", color="yellow", conduct="arguing")
    assert (r.reason, r.clause) == ("player_sent_off", "R6")
    r = s.refused("arena.left", player="h1")
    assert (r.reason, r.clause) == ("player_sent_off", "R6")
    s.run(FOUR_MIN)
    s.whistle()
    sub(s, "home", "h1", "h4")
    assert "h1" not in s.view.teams.home.bench
    r = sub_refused(s, "home", "h4", "h1")
    assert (r.reason, r.clause) == ("not_on_bench", "A3")
    assert s.players["h1"].sent_off is True


def r6_sent_off_substitute_cannot_come_in(s: Script) -> None:
    """R6: a substitute shown a red on the bench is suspended for the remainder of
    the game and can't come in (``player_sent_off``)."""
    s.start()
    s.card("h4", "red", conduct="team_member_behavior")
    s.whistle()
    r = sub_refused(s, "home", "h1", "h4")
    assert (r.reason, r.clause) == ("player_sent_off", "R6")


def r6_red_in_box_supersedes_box(s: Script) -> None:
    """R6: a red "will result in suspension for the remainder of the game": shown
    to a player in the box, it replaces the box trip with the send-off. (Here it
    is his third offense, so R4's window: "the next two minutes of play".)"""
    second_yellow(s)
    s.run(30_000)
    s.card("h2", "red", conduct="abusive_language")
    p = s.players["h2"]
    assert (p.box, p.sent_off, p.on_field) == (None, True, False)
    assert p.no_sub is not None and (p.no_sub.remaining_ms, p.no_sub.clause) == (TWO_MIN, "R4")
    assert [(x.player, x.reason) for x in s.view.teams.home.short] == [("h2", "sent_off")]
    s.run(TWO_MIN)  # the old box target passes: nothing about the box
    assert "box.release" not in tags(s.whistle())


def r6_four_minutes_count_only_play(s: Script) -> None:
    """R6: "the next four minutes of play": a stoppage and the interval between
    periods don't count."""
    red(s, lead_ms=PERIOD - 60_000)   # 60 s of the period left
    s.run(60_000)
    s.horn()
    assert s.run(600_000) == []        # a long interval
    assert no_sub(s).remaining_ms == FOUR_MIN - 60_000
    s.start()
    assert s.run(FOUR_MIN - 60_000 - 1) == []
    assert tags(s.run(1)) == ["sub.eligible"]


R6 = table(r6_red_sends_off_and_team_plays_short, r6_no_substitute_before_four_minutes,
           r6_substitute_after_stoppage_following_four_minutes,
           r6_stoppage_one_ms_before_four_minutes_does_not_allow, r6_sent_off_player_never_returns,
           r6_sent_off_substitute_cannot_come_in, r6_red_in_box_supersedes_box,
           r6_four_minutes_count_only_play)


@pytest.mark.parametrize("case", R6)
def test_r6(case: Case) -> None:
    case(Script())


# ==========================================================================
# R8: leaving the penalty box early


def r8_left_early_penalty_and_return_concurrent(_: Script) -> None:
    """R8: "an appropriate penalty will be assessed against that player's team and
    that player will be returned to the penalty box"; the event's reading
    ``left_early: "concurrent"``: the remainder (90 s) and the next two minutes
    both run from the return, so 2:00 is owed."""
    s = Script({"left_early": "concurrent"})
    card = second_yellow(s)
    s.run(30_000)  # 90 s of the trip remain
    out = s.must("box.left_early", player="h2", penalty="P2")
    assert tags(out) == ["penalty.awarded", "box.enter"]
    pen, entered = one(out, nt.PenaltyAwarded), one(out, nt.BoxEnter)
    assert (pen.to, pen.against, pen.reason, pen.severity, pen.clause) == (
        "away", "home", "left_box_early", "P2", "R8")
    assert (entered.kind, entered.owed_ms, entered.clause) == ("returned", TWO_MIN, "R8")
    b = box(s)
    assert (b.remaining_ms, b.clause, b.cause) == (TWO_MIN, "R8", s.last_id())
    assert b.cause != card
    assert s.run(TWO_MIN - 1) == []
    due = s.run(1)
    assert tags(due) == ["box.eligible"] and due[0].clause == "R8"


def r8_left_early_sequential(s: Script) -> None:
    """R8 (the default reading, ``left_early: "sequential"``): "the remainder of his
    or her original suspension and [then] until [...] the next two minutes of
    play": remainder + 2:00."""
    second_yellow(s)
    s.run(30_000)
    out = s.must("box.left_early", player="h2")
    assert one(out, nt.BoxEnter).owed_ms == 90_000 + TWO_MIN
    assert box(s).remaining_ms == 90_000 + TWO_MIN


def r8_left_after_eligible_owes_two_minutes(_: Script) -> None:
    """R8 (concurrent): leaving after the two minutes were served but before the
    stoppage that releases: remainder 0, so "the next two minutes" are owed."""
    s = Script({"left_early": "concurrent"})
    second_yellow(s)
    s.run(TWO_MIN + 5_000)
    assert box(s).eligible is True
    out = s.must("box.left_early", player="h2")
    assert one(out, nt.BoxEnter).owed_ms == TWO_MIN
    b = box(s)
    assert (b.remaining_ms, b.eligible, b.release) == (TWO_MIN, False, "after_play")
    assert "box.release" not in tags(s.whistle())


def r8_left_after_eligible_sequential(s: Script) -> None:
    """R8 (sequential, the default): remainder 0 + 2:00 also owes exactly two minutes."""
    second_yellow(s)
    s.run(TWO_MIN + 5_000)
    assert one(s.must("box.left_early", player="h2"), nt.BoxEnter).owed_ms == TWO_MIN


def r8_not_in_box_is_refused(s: Script) -> None:
    """R8: "If a player leaves the penalty box": a player not in the box can't
    leave it (``not_in_box``)."""
    s.start()
    s.card("h2")
    r = s.refused("box.left_early", player="h2")
    assert (r.reason, r.clause) == ("not_in_box", "R8")


def r8_leaving_is_not_itself_an_offense(s: Script) -> None:
    """R8: the sanction for leaving is a team penalty and the return; no card, so
    the offense and yellow counts don't move."""
    second_yellow(s)
    out = s.must("box.left_early", player="h2")
    assert "card.recorded" not in tags(out)
    p = s.players["h2"]
    assert (p.yellows, p.offenses) == (2, 2)


def r8_deliberate_departure_yellow_counts(s: Script) -> None:
    """R8: "A yellow card may also be assessed that player if the Umpire(s) [...]
    determine that he or she deliberately left the penalty box prematurely": a
    separate card event that counts as the third offense."""
    second_yellow(s)
    s.run(30_000)
    s.must("box.left_early", player="h2")
    s.run(10_000)
    out = s.card("h2", conduct="left_box_deliberately")
    rec = one(out, nt.CardRecorded)
    assert (rec.conduct, rec.offense, rec.yellows, rec.clause) == ("left_box_deliberately", 3, 3, "R4")
    assert one(out, nt.PenaltyAwarded).reason == "card"
    # R4 counts from the card; the R8 return (90 s left + 2:00, 10 s served) ends later.
    assert box(s).remaining_ms == 90_000 + TWO_MIN - 10_000


def r8_no_substitute_after_return(s: Script) -> None:
    """R8: returned to the box "with no substitute": substitution refused."""
    second_yellow(s)
    s.must("box.left_early", player="h2")
    r = sub_refused(s, "home", "h2", "h4")
    assert (r.reason, r.clause) == ("sitting_out", "R13")


R8 = table(r8_left_early_penalty_and_return_concurrent, r8_left_early_sequential,
           r8_left_after_eligible_owes_two_minutes, r8_left_after_eligible_sequential,
           r8_not_in_box_is_refused, r8_leaving_is_not_itself_an_offense,
           r8_deliberate_departure_yellow_counts, r8_no_substitute_after_return)


@pytest.mark.parametrize("case", R8)
def test_r8(case: Case) -> None:
    case(Script())


# ==========================================================================
# R13: substitution can't avoid a suspension


def r13_substitute_does_not_inherit_yellows(s: Script) -> None:
    """R13: "substitutes do not acquire the yellow card status of the player for
    whom they are substituting": h4 on for h1 (one yellow); h4's first yellow
    is a first offense, no box."""
    s.start()
    s.card("h1")
    s.whistle()
    made = one(sub(s, "home", "h1", "h4"), nt.SubstitutionMade)
    assert made.clause == "R13"
    s.start()
    out = s.card("h4")
    assert tags(out) == ["card.recorded", "penalty.awarded"]
    rec = one(out, nt.CardRecorded)
    assert (rec.yellows, rec.offense, rec.clause) == (1, 1, "R2")
    assert (s.players["h4"].yellows, s.players["h1"].yellows) == (1, 1)
    assert s.view.teams.home.bench == ["h1"]


def r13_boxed_player_cannot_be_substituted_out(s: Script) -> None:
    """R13: "the suspension of any player [...] may not be avoided by the
    substitution of another player for that player"."""
    second_yellow(s, player="a2")
    s.whistle()
    r = sub_refused(s, "away", "a2", "a4")
    assert (r.reason, r.clause) == ("sitting_out", "R13")


def r13_boxed_bench_player_cannot_come_in(s: Script) -> None:
    """R13: a player sitting out a suspension can't come on as a substitute: h1
    is carded a second time on the bench, then can't replace h4."""
    s.start()
    s.card("h1")
    s.whistle()
    sub(s, "home", "h1", "h4")
    s.card("h1", conduct="appealing")
    assert s.players["h1"].box is not None
    assert s.view.teams.home.on_field == 3  # he holds no slot: the team is not short
    r = sub_refused(s, "home", "h4", "h1")
    assert (r.reason, r.clause) == ("sitting_out", "R13")


def r13_teammate_of_boxed_player_can_be_substituted(s: Script) -> None:
    """R13: the suspension "may not be avoided by the substitution of another
    player for that player": only a substitution for the boxed player is
    refused; a teammate may still be changed, and the team stays short."""
    second_yellow(s)
    s.whistle()
    made = one(sub(s, "home", "h1", "h4"), nt.SubstitutionMade)
    assert (made.out, made.in_, made.clause) == ("h1", "h4", "R13")
    home = s.view.teams.home
    assert (home.lineup, home.on_field, home.substitute_allowed) == (["h4", "h2", "h3"], 2, False)


def r13_released_player_can_be_substituted(s: Script) -> None:
    """R13: once the suspension is served, ordinary substitution rules apply."""
    second_yellow(s)
    s.run(TWO_MIN)
    s.whistle()
    made = one(sub(s, "home", "h2", "h4"), nt.SubstitutionMade)
    assert (made.out, made.in_) == ("h2", "h4")
    assert s.view.teams.home.lineup == ["h1", "h4", "h3"]


R13 = table(r13_substitute_does_not_inherit_yellows, r13_boxed_player_cannot_be_substituted_out,
            r13_boxed_bench_player_cannot_come_in, r13_teammate_of_boxed_player_can_be_substituted,
            r13_released_player_can_be_substituted)


@pytest.mark.parametrize("case", R13)
def test_r13(case: Case) -> None:
    case(Script())


# ==========================================================================
# R14: leaving the arena


def r14_arena_left_is_automatic_red(s: Script) -> None:
    """R14: "Unauthorized departure from the arena (automatic red card)": a red
    recorded as ``left_arena``, counted as an offense, the player sent off."""
    s.start()
    s.run(5_000)
    s.card("a2")
    out = s.must("arena.left", player="a2", penalty=4)
    assert tags(out) == ["card.recorded", "penalty.awarded", "sent_off"]
    rec = one(out, nt.CardRecorded)
    assert (rec.color, rec.converted, rec.conduct, rec.offense, rec.yellows, rec.clause) == (
        "red", "left_arena", "left_arena", 2, 1, "R14")
    assert one(out, nt.PenaltyAwarded).severity == 4
    p = s.players["a2"]
    assert (p.sent_off, p.offenses, p.on_field) == (True, 2, False)
    assert p.no_sub is not None and p.no_sub.remaining_ms == FOUR_MIN
    assert s.view.teams.away.on_field == 2


def r14_arena_left_from_box_supersedes_box(s: Script) -> None:
    """R14: a boxed player who leaves the arena gets the automatic red; the
    send-off replaces the box trip."""
    second_yellow(s)
    s.must("arena.left", player="h2")
    p = s.players["h2"]
    assert (p.box, p.sent_off, p.offenses) == (None, True, 3)


def r14_arena_left_needs_a_period_in_progress(s: Script) -> None:
    """R14: "leave the arena during the course of a period": before the clock
    first starts it is refused ``game_not_started``."""
    r = s.refused("arena.left", player="h1")
    assert (r.reason, r.clause) == ("game_not_started", "A1")


R14 = table(r14_arena_left_is_automatic_red, r14_arena_left_from_box_supersedes_box,
            r14_arena_left_needs_a_period_in_progress)


@pytest.mark.parametrize("case", R14)
def test_r14(case: Case) -> None:
    case(Script())


def test_cases_cite_their_clauses() -> None:
    check_cases([*R6, *R8, *R13, *R14])
