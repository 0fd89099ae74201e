"""Per-clause tests of corrections (L1): voids and late events.

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

import pytest

from stream.rules import notices as nt
from stream.rules.events import Goal

from .clause_helpers import (
    TWO_MIN,
    Case,
    box,
    check_cases,
    fresh_replay,
    one,
    second_yellow,
    state_bytes,
    table,
    tags,
)
from .script import T0, Script, game_setup

# ==========================================================================
# L1: corrections (void and late events)


def _two_yellows_then_whistle(s: Script) -> tuple[str, str]:
    s.start()
    s.run(10_000)
    s.card("h2")
    first = s.last_id()
    s.run(10_000)
    s.card("h2")
    second = s.last_id()
    s.run(5_000)
    s.whistle()
    return first, second


def l1_void_card_recomputes_as_if_never_shown(s: Script) -> None:
    """L1: "a void names an earlier event of the same game": voiding the first of
    two yellows gives exactly the state of a log without it (the second yellow
    becomes the first: no box)."""
    first, _ = _two_yellows_then_whistle(s)
    s.must("void", target=first)
    again = fresh_replay(s, skip={first, s.last_id()})
    assert state_bytes(s) == state_bytes(again)
    p = s.players["h2"]
    assert (p.yellows, p.offenses, p.box) == (1, 1, None)


def l1_void_card_emits_one_correction(s: Script) -> None:
    """L1: a void emits exactly one ``correction`` naming the display paths that
    changed."""
    _, second = _two_yellows_then_whistle(s)
    out = s.must("void", target=second)
    assert tags(out) == ["correction"]
    c = out[0]
    assert (c.target, c.reason, c.cause, c.clause) == (second, "void", s.last_id(), "L1")
    paths = {ch.path: (ch.before, ch.after) for ch in c.changes}
    assert paths["players.h2.yellows"] == (2, 1)
    assert paths["players.h2.offenses"] == (2, 1)
    assert "players.h2.box" in paths and paths["players.h2.box"][1] is None
    assert paths["teams.home.on_field"] == (2, 3)


def l1_void_goal_fixes_score(s: Script) -> None:
    """L1/A2: voiding a goal (disallowing it) takes its points off the score."""
    s.start()
    s.goal("home", points=2)
    g = s.last_id()
    s.start()
    s.goal("away")
    out = s.must("void", target=g)
    paths = {ch.path: (ch.before, ch.after) for ch in out[0].changes}
    assert paths["score.home"] == (2, 0)
    assert (s.view.score.home, s.view.score.away) == (0, 1)


def l1_void_refusals(s: Script) -> None:
    """L1: "a void names an earlier event of the same game": ``unknown_target``,
    ``cannot_void_void``, ``already_voided``, ``cannot_void_setup``,
    ``wrong_game``."""
    s.send_raw(game_setup("g2"))
    s.start()
    s.card("h1")
    card = s.last_id()
    r = s.refused("void", target="nope")
    assert (r.reason, r.clause) == ("unknown_target", "L1")
    s.must("void", target=card)
    void = s.last_id()
    r = s.refused("void", target=void)
    assert (r.reason, r.clause) == ("cannot_void_void", "L1")
    r = s.refused("void", target=card)
    assert (r.reason, r.clause) == ("already_voided", "L1")
    r = s.refused("void", target=f"{s.game}-setup")
    assert (r.reason, r.clause) == ("cannot_void_setup", "L1")
    s.card("h2")
    r = s.refused("void", target=s.last_id(), game="g2")
    assert (r.reason, r.clause) == ("wrong_game", "L1")


def l1_late_second_yellow_is_inserted_in_time_order(s: Script) -> None:
    """L1: an event stamped earlier than the game's latest is inserted in time
    order: a second yellow stamped 10 s before a whistle that was already
    recorded puts the player in the box from its own time, with its own
    notices and one ``correction``."""
    s.start()
    s.run(10_000)
    s.card("h2")
    s.t += 20_000
    s.whistle()                                     # play stops at 30 s
    out = s.send("card", at=s.t - 10_000, player="h2", color="yellow", conduct="arguing")
    late = s.last_id()
    assert tags(out) == ["card.recorded", "penalty.awarded", "box.enter", "correction"]
    assert all(n.cause == late for n in out)
    rec, c = one(out, nt.CardRecorded), one(out, nt.Correction)
    assert (rec.yellows, rec.clause, rec.at) == (2, "R3", s.t - 10_000)
    assert (c.target, c.reason) == (late, "late")
    paths = {ch.path for ch in c.changes}
    assert {"players.h2.yellows", "players.h2.box"} <= paths
    b = box(s)
    assert (b.served_ms, b.remaining_ms) == (10_000, TWO_MIN - 10_000)  # counted from 20 s of play
    s.start()
    assert s.run(TWO_MIN - 10_000 - 1) == []
    assert tags(s.run(1)) == ["box.eligible"]


def l1_late_event_same_state_as_in_order(s: Script) -> None:
    """L1: a late event leaves the state a log in time order would have."""
    s.start()
    s.run(10_000)
    s.goal("home")
    s.start()
    s.run(20_000)
    s.send("card", at=s.t - 5_000, player="a1", color="yellow", count=2, conduct="arguing")
    ordered = Script()
    bodies = sorted(s.log[1:], key=lambda b: b["at"])
    for b in bodies:
        ordered.send_raw(b)
    ordered.engine.advance(s.t)
    assert state_bytes(s) == state_bytes(ordered)


def l1_late_event_refused_in_place_changes_nothing(s: Script) -> None:
    """L1: a late event that is refused at its place in time (an ``arena.left``
    before the game began) is refused and changes nothing."""
    s.start()
    s.run(10_000)
    r = s.refused("arena.left", at=T0 - 1_000, player="h1")
    assert (r.reason, r.clause) == ("game_not_started", "A1")


def l1_refused_event_is_not_kept(s: Script) -> None:
    """L1: a refused event is never kept: not among the game's events, and its id
    is free for the official to enter it again."""
    s.start()
    s.n += 1
    body = {"type": "card", "id": "fix-1", "at": s.t, "game": s.game, "player": "h1",
            "color": "red", "count": 2, "conduct": "striking"}
    assert tags(s.send_raw(body)) == ["rejected"]
    assert "fix-1" not in [e.id for e in s.engine.game_events(s.game)]
    out = s.send_raw({**body, "count": 1})
    assert tags(out) == ["card.recorded", "penalty.awarded", "sent_off"]


def _late_send_off_refuses_later_yellow(s: Script) -> tuple[str, str, list[Any]]:
    """h2: yellow at 10 s, yellow at 30 s, then a late arena.left stamped 15 s."""
    s.start()
    s.run(10_000)
    s.card("h2")
    s.run(20_000)
    s.card("h2")
    dead = s.last_id()
    out = s.send("arena.left", at=s.t - 15_000, player="h2")
    return dead, s.last_id(), out


def l1_correction_reports_event_it_refuses(s: Script) -> None:
    """L1: a late ``arena.left`` (automatic red at 15 s) makes the yellow shown
    to the same player at 30 s impossible: the correction says so
    (``events.<id>.applied``: True -> False) and the yellow no longer counts."""
    dead, left, out = _late_send_off_refuses_later_yellow(s)
    assert tags(out) == ["card.recorded", "penalty.awarded", "sent_off", "correction", "alert"]
    alert = one(out, nt.Alert)
    assert (alert.code, alert.subject, alert.reason, alert.clause) == (
        "set_aside", dead, "player_sent_off", "R6")
    c = one(out, nt.Correction)
    assert (c.target, c.reason) == (left, "late")
    changes = {ch.path: (ch.before, ch.after) for ch in c.changes}
    assert changes[f"events.{dead}.applied"] == (True, False)
    assert changes["players.h2.yellows"] == (2, 1)
    p = s.players["h2"]
    assert (p.yellows, p.offenses, p.sent_off, p.box) == (1, 2, True, None)


def l1_event_set_aside_by_a_correction_returns_when_it_is_undone(s: Script) -> None:
    """L1: the state is the fold of the unvoided log in time order. A yellow
    that a late ``arena.left`` set aside (the player was off by then) was
    really shown; when that ``arena.left`` is voided as a mistake, the
    yellow counts again: second yellow, box."""
    shown, left, _ = _late_send_off_refuses_later_yellow(s)
    assert s.players["h2"].yellows == 1
    out = s.must("void", target=left)
    p = s.players["h2"]
    assert (p.yellows, p.offenses, p.sent_off) == (2, 2, False)
    assert p.box is not None and p.box.cause == shown
    assert shown in [e.id for e in s.engine.game_events(s.game)]
    (corr,) = s.of(nt.Correction, out)
    assert any(c.path == "players.h2.yellows" and (c.before, c.after) == (1, 2) for c in corr.changes)


def l1_disallowed_goal_keeps_its_stoppage(s: Script) -> None:
    """L1/R3: "the first play stoppage (including a goal)": a goal the umpires then
    disallow still stopped play. h2 (two yellows) is released at an away goal
    and scores; voiding the away goal takes its point off and nothing else: the
    release stands and h2's goal counts (1-0, not 0-0)."""
    second_yellow(s)                         # box until 10 s + 2:00 of play
    s.run(TWO_MIN)
    out = s.goal("away")
    away_goal = s.last_id()
    assert one(out, nt.BoxRelease).player == "h2"
    s.start()
    s.run(5_000)
    s.goal("home", player="h2")
    home_goal = s.last_id()
    out = s.must("void", target=away_goal)
    assert tags(out) == ["correction"]
    changes = {ch.path: (ch.before, ch.after) for ch in one(out, nt.Correction).changes}
    assert changes == {"score.away": (1, 0)}
    assert (s.view.score.home, s.view.score.away) == (1, 0)
    assert s.players["h2"].box is None and s.players["h2"].on_field is True
    goals = {e.id: e.disallowed for e in s.engine.game_events(s.game) if isinstance(e, Goal)}
    assert (goals[away_goal], goals[home_goal]) == (True, False)
    r = s.refused("void", target=away_goal)
    assert r.reason == "already_voided"


def l1_goal_entered_in_error_is_removed_entirely(s: Script) -> None:
    """L1/A3: a goal that never happened (``entered_in_error``) goes with its
    stoppage: h2 was never released by it, so his own goal is now credited to a
    player in the box. It still counts (a fact), the correction raises an alert
    asking the umpires to check it, and that goal is the stoppage that releases
    him; nothing is set aside."""
    second_yellow(s)
    s.run(TWO_MIN)
    s.goal("away")
    away_goal = s.last_id()
    s.start()
    restart = s.last_id()
    s.run(5_000)
    s.goal("home", player="h2")
    home_goal = s.last_id()
    out = s.must("void", target=away_goal, entered_in_error=True)
    changes = {ch.path: (ch.before, ch.after) for ch in one(out, nt.Correction).changes}
    assert changes["score.away"] == (1, 0)
    assert not any(p.endswith(".applied") for p in changes)
    # Without that goal the clock never stopped, so the restart after it finds it
    # running; and h2 scored from the box.
    assert [(n.code, n.player, n.subject, n.cause) for n in s.of(nt.Alert, out)] == [
        ("clock_already_running", None, restart, s.last_id()),
        ("scorer_not_on_field", "h2", home_goal, s.last_id())]
    assert (s.view.score.home, s.view.score.away) == (1, 0)
    assert s.players["h2"].box is None and s.players["h2"].on_field is True
    assert [e.id for e in s.engine.game_events(s.game)].count(away_goal) == 0
    r = s.refused("void", target=away_goal)
    assert r.reason == "already_voided"


def l1_refused_void_names_its_game(s: Script) -> None:
    """L1: a refused ``void`` that names no game carries the game of its target."""
    s.start()
    s.card("h1")
    card = s.last_id()
    s.must("void", target=card)
    out = s.send_raw({"type": "void", "id": "v2", "at": s.t, "target": card})
    assert (one(out, nt.Rejected).reason, one(out, nt.Rejected).game) == ("already_voided", None)
    s.card("h1")
    out = s.send_raw({"type": "void", "id": "v3", "at": s.t, "target": "v-nothing"})
    assert one(out, nt.Rejected).game is None
    out = s.send_raw({"type": "void", "id": "v4", "at": s.t, "target": s.last_id(), "game": "other"})
    assert (one(out, nt.Rejected).reason, one(out, nt.Rejected).game) == ("wrong_game", "other")
    s.start()
    s.goal("home")
    goal = s.last_id()
    s.must("void", target=goal)
    out = s.send_raw({"type": "void", "id": "v5", "at": s.t, "target": goal})
    assert (one(out, nt.Rejected).reason, one(out, nt.Rejected).game) == ("already_voided", "g1")


CORRECTIONS = table(
    l1_void_card_recomputes_as_if_never_shown,
    l1_void_card_emits_one_correction,
    l1_void_goal_fixes_score,
    l1_void_refusals,
    l1_late_second_yellow_is_inserted_in_time_order,
    l1_late_event_same_state_as_in_order,
    l1_late_event_refused_in_place_changes_nothing,
    l1_refused_event_is_not_kept,
    l1_correction_reports_event_it_refuses,
    l1_event_set_aside_by_a_correction_returns_when_it_is_undone,
    l1_disallowed_goal_keeps_its_stoppage,
    l1_goal_entered_in_error_is_removed_entirely,
    l1_refused_void_names_its_game,
)


@pytest.mark.parametrize("case", CORRECTIONS)
def test_corrections(case: Case) -> None:
    case(Script())


def test_cases_cite_their_clauses() -> None:
    check_cases([*CORRECTIONS])
