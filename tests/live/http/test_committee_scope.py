"""The committee role (docs/protocol.md, "Tokens and roles"): a committee token runs one
tournament event. Each row: what a committee of ``cup`` sends, and whether
``auth.authorize`` lets it through, against a real engine holding two events."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from stream.errors import AuthError
from stream.live.wire import auth
from stream.rules import codec
from stream.rules.engine import Engine

SECRET = b"k" * 32
T0 = 1_796_000_000_000


def _engine() -> Engine:
    e = Engine()
    n = 0

    def send(**body: Any) -> None:
        nonlocal n
        n += 1
        out = e.apply(codec.decode_event(msgspec.json.encode({"id": f"s{n}", "at": T0 + n, **body})))
        assert not [x for x in out if type(x).__name__ == "Rejected"]

    for event, teams in (("cup", ["A", "B"]), ("open", ["C", "D"])):
        send(type="event.setup", event=event, **{"class": "club"}, handicap=8, teams=teams)
    for game, event, home, away in (("g1", "cup", "A", "B"), ("o1", "open", "C", "D")):
        send(type="game.setup", game=game, event=event, handicap=8, arena="north",
             teams={"home": {"team": home, "players": [f"{home}1"]},
                    "away": {"team": away, "players": [f"{away}1"]}})
    return e


ALLOWED = [
    ("event.setup", {"event": "cup"}),
    ("event.complete", {"event": "cup"}),
    ("team.eliminated", {"event": "cup", "team": "A"}),
    ("draw.made", {"event": "cup"}),
    ("game.setup", {"event": "cup", "game": "g9"}),
    ("team.registered", {"team": "A", "event": "cup"}),
    ("team.registered", {"team": "Z"}),
    ("team.registered", {"team": "Z", "event": "cup"}),
    ("player.registered", {"player": "A1"}),
    ("player.registered", {"player": "A1", "team": "B"}),
    ("player.registered", {"player": "Z1", "team": "Z"}),
    ("game.setup", {"event": "cup", "game": "g9", "teams": {"home": {"team": "A"}, "away": {"team": "Z"}}}),
    ("committee.increase", {"origin_game": "g1"}),
    ("game.scheduled", {"game": "g1"}),
    ("card", {"game": "g1"}),
    ("void", {"target": "nothing-yet", "game": "g1"}),
    ("clock.start", {"game": "g1"}),
]
REFUSED = [
    ("event.setup", {"event": "open"}),
    ("event.complete", {"event": "open"}),
    ("draw.made", {"event": "open"}),
    ("game.setup", {"event": "open", "game": "o9"}),
    ("team.registered", {"team": "C", "event": "open"}),
    # another event's team or player (docs/security.md): not renamed, moved or entered here
    ("team.registered", {"team": "C"}),
    ("team.registered", {"team": "C", "event": "cup"}),
    ("player.registered", {"player": "C1"}),
    ("player.registered", {"player": "C1", "team": "A"}),
    ("player.registered", {"player": "A1", "team": "C"}),
    ("player.registered", {"player": "Z1", "team": "D"}),
    ("game.setup", {"event": "cup", "game": "g9", "teams": {"home": {"team": "A"}, "away": {"team": "C"}}}),
    ("event.setup", {"event": "cup", "teams": ["A", "D"]}),
    ("committee.increase", {"origin_game": "o1"}),
    ("game.scheduled", {"game": "o1"}),     # another event's game: not rescheduled, nor re-officiated
    ("card", {"game": "o1"}),
    ("clock.start", {"game": "o1"}),
]


@pytest.fixture(scope="module")
def engine() -> Engine:
    return _engine()


def _committee() -> auth.Claims:
    token, _ = auth.issue(SECRET, sub="htc", role="committee", exp=2**40, event="cup")
    return auth.verify(SECRET, token, now_s=0, revoked=set())


@pytest.mark.parametrize(("etype", "fields"), ALLOWED)
def test_a_committee_acts_within_its_event(engine: Engine, etype: str, fields: dict[str, Any]) -> None:
    auth.authorize(engine, _committee(), etype, fields)


@pytest.mark.parametrize(("etype", "fields"), REFUSED)
def test_a_committee_never_acts_in_another_event(engine: Engine, etype: str, fields: dict[str, Any]) -> None:
    with pytest.raises(AuthError) as err:
        auth.authorize(engine, _committee(), etype, fields)
    assert err.value.code == "out_of_scope"


def test_a_committee_token_names_one_event_and_nothing_else() -> None:
    with pytest.raises(AuthError):
        auth.issue(SECRET, sub="htc", role="committee", exp=2**40)
    with pytest.raises(AuthError):
        auth.issue(SECRET, sub="htc", role="committee", exp=2**40, event="cup", game="g1")
    with pytest.raises(AuthError):
        auth.issue(SECRET, sub="ump", role="umpire", exp=2**40, game="g1", event="cup")
    assert _committee().event == "cup"
