"""Per-clause tests of R17 (protecting the horses).

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
    FIVE_MIN,
    Case,
    check_cases,
    mount,
    one,
    red,
    table,
    tags,
)
from .script import Script

# ==========================================================================
# R17: protecting the horses


def r17_unfit_mount_opens_five_minute_window(s: Script) -> None:
    """R17: "the Umpires should remove the mount from the game and allow a maximum
    of 5 minutes for its replacement": ``mount.deadline`` open, due at + 5:00."""
    s.start()
    s.run(20_000)
    at = s.t
    out = s.must("mount.removed", player="h2", reason="unfit")
    assert tags(out) == ["mount.deadline"]
    d = out[0]
    assert (d.status, d.deadline_at, d.reason, d.player, d.clause) == (
        "open", at + FIVE_MIN, "unfit", "h2", "R17")
    m = mount(s, "h2")
    assert (m.deadline_at, m.remaining_ms, m.expired) == (at + FIVE_MIN, FIVE_MIN, False)


def r17_window_expires_exactly_once(s: Script) -> None:
    """R17: "a maximum of 5 minutes": at the deadline ``mount.deadline`` says
    ``expired``, once."""
    s.start()
    s.whistle()
    at = s.t
    removed = s.must("mount.removed", player="a1", reason="unfit")[0].cause
    assert s.run(FIVE_MIN - 1) == []
    due = s.run(1)
    assert tags(due) == ["mount.deadline"]
    assert (due[0].status, due[0].at, due[0].deadline_at, due[0].cause) == (
        "expired", at + FIVE_MIN, at + FIVE_MIN, removed)
    assert mount(s, "a1").expired is True
    assert s.run(60_000) == []
    s.start()
    s.run(1_000)
    assert "mount.deadline" not in tags(s.whistle())
    assert len(s.of(nt.MountDeadline)) == 2  # open, expired


def r17_window_runs_on_wall_time_with_clock_stopped(s: Script) -> None:
    """R17: "5 minutes for its replacement" is wall time: the window expires while
    the game clock stays stopped."""
    s.start()
    s.run(10_000)
    s.whistle()
    play = s.view.clock.play_ms
    s.must("mount.removed", player="h3", reason="unfit")
    assert [n.status for n in s.run(FIVE_MIN)] == ["expired"]
    assert s.view.clock.play_ms == play
    assert s.view.clock.running is False


def r17_window_opened_before_first_start_expires(s: Script) -> None:
    """R17: "allow a maximum of 5 minutes for its replacement" runs on wall time:
    a window opened before the clock first starts (``mount.removed`` is accepted
    then) still announces ``expired`` once at its deadline."""
    at = s.t
    s.must("mount.removed", player="h2", reason="unfit")
    s.run(FIVE_MIN + 10_000)
    s.start()
    s.run(5_000)
    s.whistle()
    assert mount(s, "h2").expired is True
    expired = [n for n in s.of(nt.MountDeadline) if n.status == "expired"]
    assert [(n.player, n.at) for n in expired] == [("h2", at + FIVE_MIN)]


def r17_replacement_closes_window(s: Script) -> None:
    """R17: the mount is replaced within the window: ``mount.replaced``, the
    window closes, nothing expires."""
    s.start()
    s.must("mount.removed", player="h2", reason="unfit")
    s.run(60_000)
    out = s.must("mount.replaced", player="h2")
    assert tags(out) == ["mount.replaced"]
    assert (out[0].player, out[0].clause) == ("h2", "R17")
    assert s.players["h2"].mount is None
    assert s.run(FIVE_MIN) == []


def r17_replaced_without_window_is_refused(s: Script) -> None:
    """R17: a replacement answers a removal; with no window open it is refused
    ``no_mount_window``."""
    s.start()
    r = s.refused("mount.replaced", player="h2")
    assert (r.reason, r.clause) == ("no_mount_window", "R17")


def r17_second_removal_while_open_is_refused(s: Script) -> None:
    """R17: one window per player: removing again while one is open is refused
    ``mount_window_open``."""
    s.start()
    s.must("mount.removed", player="h2", reason="unfit")
    r = s.refused("mount.removed", player="h2", reason="abuse")
    assert (r.reason, r.clause) == ("mount_window_open", "R17")


def r17_abuse_awards_penalty(s: Script) -> None:
    """R17: "If any player abuses a mount, play should be stopped immediately and
    the appropriate penalty awarded": penalty reason ``mount_abuse``."""
    s.start()
    s.whistle()
    out = s.must("mount.removed", player="a3", reason="abuse", penalty="P1")
    assert tags(out) == ["mount.deadline", "penalty.awarded"]
    pen = one(out, nt.PenaltyAwarded)
    assert (pen.to, pen.against, pen.player, pen.reason, pen.severity, pen.clause) == (
        "home", "away", "a3", "mount_abuse", "P1", "R17")
    assert one(out, nt.MountDeadline).reason == "abuse"


def r17_sent_off_player_has_no_mount_to_remove(s: Script) -> None:
    """R17: removal concerns a mount in the game; a sent-off player rides no
    mount in it (``player_not_on_field``)."""
    red(s)
    r = s.refused("mount.removed", player="h1", reason="unfit")
    assert (r.reason, r.clause) == ("player_not_on_field", "R17")


R17 = table(r17_unfit_mount_opens_five_minute_window, r17_window_expires_exactly_once,
            r17_window_runs_on_wall_time_with_clock_stopped, r17_window_opened_before_first_start_expires,
            r17_replacement_closes_window,
            r17_replaced_without_window_is_refused, r17_second_removal_while_open_is_refused,
            r17_abuse_awards_penalty, r17_sent_off_player_has_no_mount_to_remove)


@pytest.mark.parametrize("case", R17)
def test_r17(case: Case) -> None:
    case(Script())


def test_cases_cite_their_clauses() -> None:
    check_cases([*R17])
