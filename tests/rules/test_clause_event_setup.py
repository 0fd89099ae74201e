"""An event's time zone and privacy, set with the event (docs/log-format.md, ``event.setup``).

Each case is a function taking a fresh ``Season`` and cites its clause first. After every
case its log is folded again by a fresh engine, and the fold's image restored, which must
give the same state: what an event keeps is in the log and in the snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from stream.rules import codec
from stream.rules.engine import Engine
from stream.rules.records import EngineImage

from .clause_helpers import Season, check_cases

SeasonCase = Callable[[Season], None]


def setup_event(s: Season, event: str = "cup", **fields: Any) -> list[Any]:
    return s.must("event.setup", event=event, **{"class": "uspa"}, handicap=8, teams=["A", "B"], **fields)


def l1_an_event_keeps_its_time_zone_and_privacy(s: Season) -> None:
    """L1: ``timezone`` (an IANA name) and ``private`` are the event's, as its set-up gives them,
    in the fold and in the state document."""
    setup_event(s, "cup", timezone="America/Chicago", private=True)
    setup_event(s, "plate", timezone="Europe/London")
    cup, plate = s.engine.tournament("cup"), s.engine.tournament("plate")
    assert cup is not None and plate is not None
    assert (cup.timezone, cup.private) == ("America/Chicago", True)
    assert (plate.timezone, plate.private) == ("Europe/London", False)
    state = msgspec.to_builtins(s.engine.state())
    assert {k: (v["timezone"], v["private"]) for k, v in state["events"].items()} == {
        "cup": ("America/Chicago", True), "plate": ("Europe/London", False)}


def l1_an_unknown_time_zone_is_refused_with_nothing_applied(s: Season) -> None:
    """L1: a ``timezone`` the zone database does not know is refused ``bad_timezone``, and
    nothing of the set-up is applied: the same event set up again with a good one is accepted."""
    for name in ("Mars/Olympus_Mons", "America", "../../etc/passwd", "/usr/share/zoneinfo/UTC",
                 "America/Chicago "):
        r = s.refused("event.setup", event="cup", **{"class": "uspa"}, handicap=8, teams=["A", "B"],
                      timezone=name, private=True)
        assert (r.reason, r.clause) == ("bad_timezone", "L1"), name
        assert name in r.detail, r.detail
        assert not s.engine.has_event("cup")
    setup_event(s, "cup", timezone="UTC")
    t = s.engine.tournament("cup")
    assert t is not None and (t.timezone, t.private) == ("UTC", False)


def l1_a_set_up_without_them_folds_as_before(s: Season) -> None:
    """L1: a log written before events had a time zone and privacy folds as it did: no time
    zone, not private; the same as a set-up that says so."""
    setup_event(s, "old")
    setup_event(s, "new", timezone=None, private=False)
    old, new = s.engine.tournament("old"), s.engine.tournament("new")
    assert old is not None and new is not None
    assert (old.timezone, old.private) == (None, False)
    assert msgspec.structs.replace(old, id="new") == new


def l1_an_event_is_set_up_once_its_time_zone_and_privacy_too(s: Season) -> None:
    """L1: an ``event.setup`` for an event already set up is refused ``duplicate_event``,
    whatever it says: the time zone and privacy stay those of the first set-up."""
    setup_event(s, "cup", timezone="America/Chicago")
    r = s.refused("event.setup", event="cup", **{"class": "uspa"}, handicap=8, teams=["A", "B"],
                  timezone="America/New_York", private=True)
    assert r.reason == "duplicate_event"
    t = s.engine.tournament("cup")
    assert t is not None and (t.timezone, t.private) == ("America/Chicago", False)


CASES = [pytest.param(f, id=f.__name__) for f in (
    l1_an_event_keeps_its_time_zone_and_privacy, l1_an_unknown_time_zone_is_refused_with_nothing_applied,
    l1_a_set_up_without_them_folds_as_before, l1_an_event_is_set_up_once_its_time_zone_and_privacy_too,
)]


@pytest.mark.parametrize("case", CASES)
def test_event_setup(case: SeasonCase) -> None:
    s = Season()
    case(s)
    again = Engine()
    for body in s.log:
        again.feed(codec.decode_event(msgspec.json.encode(body)))
    image = msgspec.msgpack.decode(msgspec.msgpack.encode(s.engine.image()), type=EngineImage)
    restored = Engine.from_image(image)
    assert again.state_hash() == s.engine.state_hash() == restored.state_hash()


def test_cases_cite_their_clauses() -> None:
    check_cases(CASES)
