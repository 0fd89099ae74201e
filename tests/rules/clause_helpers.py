"""Shared pieces of the per-clause tables (``test_clauses.py`` and ``test_clause_*.py``).

A *case* is a function taking a fresh ``Script``; its docstring starts with the
clause id(s) it checks (``R3:``, ``A1/R9:``) and quotes or paraphrases the
clause. ``table(*cases)`` turns cases into ``pytest.param``s whose ids are the
function names; ``@engine_bug(reason)`` marks a case that shows a suspected
engine bug as a strict xfail.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from stream.rules.clauses import CLAUSES
from stream.rules.view import MountView, SitoutView

from .script import Script

Case = Callable[[Script], None]

# Rule quantities, written from the rule text (not read from the engine).
TWO_MIN = 120_000      # R3, R4, R8: "the next two minutes of play"
FOUR_MIN = 240_000     # R6: "the next four minutes of play"
FIVE_MIN = 300_000     # R17: "a maximum of 5 minutes for its replacement"
PERIOD = 450_000       # the Script's setup: period_ms (7½ minutes)

_XFAIL: dict[str, str] = {}


def engine_bug(reason: str) -> Callable[[Case], Case]:
    """Mark a case as showing a suspected engine bug (strict xfail)."""

    def mark(f: Case) -> Case:
        _XFAIL[f.__name__] = reason
        return f

    return mark


def table(*cases: Case) -> list[Any]:
    """Cases as pytest params, ids = function names, engine bugs as strict xfails."""
    out = []
    for f in cases:
        reason = _XFAIL.get(f.__name__)
        marks = [] if reason is None else [pytest.mark.xfail(strict=True, reason=reason)]
        out.append(pytest.param(f, id=f.__name__, marks=marks))
    return out


_CITE = re.compile(r"((?:[RAL]\d+)(?:/[RAL]\d+)*)(?: \([^)]*\))?:")


def check_cases(params: list[Any]) -> None:
    """Every case cites a known clause id first in its docstring; names are unique."""
    names = [p.id for p in params]
    assert len(names) == len(set(names)), names
    for p in params:
        f = p.values[0]
        m = _CITE.match(f.__doc__ or "")
        assert m is not None, f"{f.__name__}: docstring must start with a clause id"
        for cid in m.group(1).split("/"):
            assert cid in CLAUSES, (f.__name__, cid)


# --------------------------------------------------------------------------
# Reading notices and views


def tags(out: list[Any]) -> list[str]:
    """The ``type`` tags of notices, in order."""
    return [str(type(n).__struct_config__.tag) for n in out]


def one(out: list[Any], cls: type) -> Any:
    """The single notice of type ``cls`` in ``out`` (fails if none or several)."""
    xs = [n for n in out if isinstance(n, cls)]
    assert len(xs) == 1, out
    return xs[0]


def state_bytes(s: Script) -> bytes:
    return msgspec.json.encode(s.engine.state())


def box(s: Script, pid: str = "h2") -> SitoutView:
    b = s.players[pid].box
    assert b is not None, f"{pid} is not in the box"
    return b


def no_sub(s: Script, pid: str = "h1") -> SitoutView:
    w = s.players[pid].no_sub
    assert w is not None, f"{pid} has no no-substitute window"
    return w


def mount(s: Script, pid: str) -> MountView:
    m = s.players[pid].mount
    assert m is not None, f"{pid} has no mount window"
    return m


def sub(s: Script, team: str, out: str, in_: str) -> list[Any]:
    """Send an accepted substitution."""
    return s.must("substitution", team=team, out=out, **{"in": in_})


def sub_refused(s: Script, team: str, out: str, in_: str) -> Any:
    """Send a substitution that must be refused; returns the ``rejected`` notice."""
    return s.refused("substitution", team=team, out=out, **{"in": in_})


# --------------------------------------------------------------------------
# Getting into position


def second_yellow(s: Script, player: str = "h2", lead_ms: int = 10_000) -> str:
    """Start the clock, let ``lead_ms`` of play pass, give ``player`` two yellows
    (clock running, so the box is owed until ``lead_ms`` + 2:00 of play);
    returns the second card's id."""
    s.start()
    s.run(lead_ms)
    s.card(player)
    s.card(player)
    return s.last_id()


def red(s: Script, player: str = "h1", lead_ms: int = 10_000) -> str:
    """Start the clock, let ``lead_ms`` of play pass, show ``player`` a red;
    returns its id."""
    s.start()
    s.run(lead_ms)
    s.card(player, "red", conduct="striking")
    return s.last_id()


def fresh_replay(s: Script, skip: set[str]) -> Script:
    """A new Script fed the same bodies as ``s`` (after its setup), minus the ids
    in ``skip``, and advanced to the same moment."""
    r = Script()
    for body in s.log[1:]:
        if body["id"] not in skip:
            r.send_raw(body)
    r.engine.advance(s.t)
    return r
