"""The committee's decisions as the ledger keeps them (docs/rules.md, "The committee's
decisions"): a rescinded obligation stays listed, marked ``rescinded`` with who, when
and why, and no game ever takes it; a decrease keeps when it was made and from what;
an increase keeps who, when and why. Each case is a function taking a fresh ``Season``,
its docstring citing the clause first. After every case the log is replayed (the
ledger must be the same), and the fold is cached as a snapshot and restored (the same
again): the trail is part of the state, never of one process's memory.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import msgspec
import pytest

from stream.cli import replay
from stream.live.hub import snapshot as snap
from stream.rules import notices as nt
from stream.rules.ledger import Decision, Decrease

from .clause_helpers import FOUR_MIN, TEAM_A, P, Season, check_cases, one, roster

SeasonCase = Callable[[Season], None]
A_BENCH = roster("A", ["a4", "a2", "a3"], [P])


def red_in_g1(s: Season) -> None:
    s.event("cup", teams=["A", "B"])
    s.setup("g1")
    s.start("g1")
    s.run(10_000)
    s.card("g1", P, "red")
    s.run(30_000)
    s.end("g1")


def taken(out: list[object]) -> list[str]:
    return [n.obligation for n in out if isinstance(n, nt.ObligationApplied)]


def r6_a_rescind_stays_listed_with_who_when_and_why(s: Season) -> None:
    """R6/R16: the committee rescinds p's suspension: the ledger keeps it, status
    ``rescinded``, with the decision's ``by``, ``reason``, event and ``at``; nothing
    is owed, so his team's next game takes nothing and he plays."""
    red_in_g1(s)
    (ob,) = s.obligations()
    s.run(5_000)
    s.must("committee.rescind", obligation=ob.id, by="M. Pérez", reason="shown to the wrong player")
    (kept,) = s.obligations()
    assert kept.id == ob.id and kept.status == "rescinded" and kept.applied_in is None
    assert kept.rescinded == Decision(by="M. Pérez", reason="shown to the wrong player", cause=s.last_id(),
                                      at=s.t)
    assert s.engine.all_obligations(status="pending") == []
    assert [o.id for o in s.engine.all_obligations(status="rescinded")] == [ob.id]
    assert taken(s.begin("g2", home=TEAM_A)) == []
    assert s.player("g2").suspended is False
    s.play("g2")
    (after,) = s.obligations()
    assert (after.status, after.applied_in) == ("rescinded", None)


def r16_a_correction_of_the_origin_game_keeps_it_rescinded(s: Season) -> None:
    """R16: a late event in the ended origin game derives its obligations again: the
    rescinded one comes back rescinded (same who, when and why), with no
    ``obligation.created`` or ``obligation.withdrawn`` for it, and is still not taken."""
    red_in_g1(s)
    (ob,) = s.obligations()
    s.must("committee.rescind", obligation=ob.id, by="HTC", reason="appeal upheld")
    before = s.obligations()[0].rescinded
    out = s.postgame("g1", "2y", player="b1")
    b1 = f"{s.last_id()}:b1:sit_out"
    assert [n.obligation for n in out if isinstance(n, nt.ObligationCreated | nt.ObligationWithdrawn)] == [b1]
    (kept,) = s.obligations()
    assert (kept.status, kept.rescinded) == ("rescinded", before)
    assert taken(s.begin("g2", home=A_BENCH)) == [b1]   # b1's sit-out, not p's rescinded suspension


def r6_a_rescinded_obligation_is_not_rescinded_or_decreased_again(s: Season) -> None:
    """R16: a rescinded obligation owes nothing: a second rescind or a decrease of it is
    refused ``unknown_obligation``, saying who rescinded it, and nothing changes."""
    red_in_g1(s)
    s.postgame("g1", "3y", player="b1")
    (sit,) = s.obligations("b1")
    s.must("committee.rescind", obligation=sit.id, by="HTC", reason="wrong player")
    for kind, extra in (("committee.rescind", {}), ("committee.decrease", {"owed_ms": 1_000})):
        r = s.refused(kind, None, obligation=sit.id, by="HTC", reason="again", **extra)
        assert (r.reason, r.clause) == ("unknown_obligation", "R16") and "rescinded by HTC" in r.detail


def r9_a_decrease_then_a_rescind_keeps_both(s: Season) -> None:
    """R9/R6: a post-game 3y (4:00 of play) decreased to 1:00, then rescinded: the ledger
    keeps both decisions, each with its ``at``; a correction of g1 keeps both."""
    red_in_g1(s)
    s.postgame("g1", "3y", player="b1")
    (sit,) = s.obligations("b1")
    s.run(1_000)
    s.must("committee.decrease", obligation=sit.id, owed_ms=60_000, by="A", reason="appeal")
    dec = Decrease(by="A", reason="appeal", cause=s.last_id(), at=s.t, from_ms=FOUR_MIN)
    s.run(1_000)
    s.must("committee.rescind", obligation=sit.id, by="B", reason="wrong player")
    res = Decision(by="B", reason="wrong player", cause=s.last_id(), at=s.t)
    for _ in range(2):
        (o,) = s.obligations("b1")
        assert (o.status, o.owed_ms, o.decreased, o.rescinded) == ("rescinded", 60_000, dec, res)
        s.postgame("g1", "2y", player="a2")   # derived again: both kept


def r6_an_increase_keeps_who_when_and_why(s: Season) -> None:
    """R6: "This penalty may be increased": each obligation an increase adds keeps
    ``increased`` {by, reason, cause, at}; rescinded, it stays listed with both."""
    red_in_g1(s)
    s.run(2_000)
    out = s.must("committee.increase", player=P, origin_game="g1", games=1, sit_out_ms=60_000,
                 by="J. Soto", reason="struck a mount")
    inc = Decision(by="J. Soto", reason="struck a mount", cause=s.last_id(), at=s.t)
    added = [o for o in s.obligations() if o.cause == inc.cause]
    assert len(added) == 2 == len([n for n in out if isinstance(n, nt.ObligationCreated)])
    assert {o.increased for o in added} == {inc}
    s.must("committee.rescind", obligation=added[0].id, by="HTC", reason="too harsh")
    o = next(o for o in s.obligations() if o.id == added[0].id)
    assert (o.status, o.increased, o.rescinded is not None) == ("rescinded", inc, True)
    one(s.begin("g2", home=A_BENCH), nt.ObligationApplied)   # g1's own suspension, not the rescinded one


CASES = [pytest.param(f, id=f.__name__) for f in (
    r6_a_rescind_stays_listed_with_who_when_and_why, r16_a_correction_of_the_origin_game_keeps_it_rescinded,
    r6_a_rescinded_obligation_is_not_rescinded_or_decreased_again, r9_a_decrease_then_a_rescind_keeps_both,
    r6_an_increase_keeps_who_when_and_why,
)]


@pytest.mark.parametrize("case", CASES)
def test_the_committees_decisions(case: SeasonCase) -> None:
    s = Season()
    case(s)
    log = b"".join(msgspec.json.encode(b) + b"\n" for b in s.log)
    out = io.BytesIO()
    assert replay(io.BytesIO(log), out, state=True) == 0
    replayed = msgspec.json.decode(out.getvalue())
    assert replayed["ledger"] == msgspec.to_builtins(s.engine.state().ledger)
    blob = snap.capture(s.engine, {}, {}, epoch="e", position="p")
    restored, _, _ = snap.restore(blob, epoch="e", position="p")
    assert restored.image() == s.engine.image()
    assert restored.state_hash() == s.engine.state_hash()


def test_cases_cite_their_clauses() -> None:
    check_cases(CASES)
