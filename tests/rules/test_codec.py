"""Malformed input gets a typed error, never a traceback."""

from __future__ import annotations

import random

import msgspec
import pytest

from stream.errors import ArenaStreamError, MalformedEvent
from stream.rules import codec
from stream.rules.events import Card, Event, GameSetup
from stream.tools.bench_replay import game_events

GOOD_CARD = {"type": "card", "id": "c1", "at": 1, "game": "g", "player": "p",
             "color": "yellow", "conduct": "arguing"}


def enc(obj: object) -> bytes:
    return msgspec.json.encode(obj)


@pytest.mark.parametrize(("data", "code", "says"), [
    (b"{not json", "malformed_json", "malformed"),
    (b"\xff\xfe{}", "malformed_json", "malformed"),
    (b"", "malformed_json", ""),
    (b"[1, 2]", "invalid_field", "object"),
    (enc({"id": "x", "at": 1}), "missing_type", "type"),
    (enc({"type": "penalty.shootout", "id": "x", "at": 1}), "unknown_type", "penalty.shootout"),
    (enc({**GOOD_CARD, "at": "1"}), "invalid_field", "$.at"),
    (enc({**GOOD_CARD, "at": -5}), "invalid_field", "$.at"),
    (enc({**GOOD_CARD, "at": 10**30}), "invalid_field", "$.at"),
    (enc({**GOOD_CARD, "count": 4}), "invalid_field", "$.count"),
    (enc({**GOOD_CARD, "color": "green"}), "invalid_field", "$.color"),
    (enc({**GOOD_CARD, "conduct": "singing"}), "invalid_field", "$.conduct"),
    (enc({**GOOD_CARD, "id": ""}), "invalid_field", "$.id"),
    (enc({**GOOD_CARD, "id": "x" * 129}), "invalid_field", "$.id"),
    (enc({k: v for k, v in GOOD_CARD.items() if k != "color"}), "invalid_field", "color"),
    (enc({k: v for k, v in GOOD_CARD.items() if k != "game"}), "invalid_field", "game"),
    (b'{"type":"card","id":"x","at":1,"deep":' + b"[" * 200_000 + b"]" * 200_000 + b"}",
     "too_deep", "nested"),
])
def test_malformed_input_is_a_typed_error(data: bytes, code: str, says: str) -> None:
    with pytest.raises(MalformedEvent) as info:
        codec.decode_event(data)
    assert info.value.code == code
    assert says in info.value.detail
    assert isinstance(info.value, ArenaStreamError)


def test_unknown_fields_are_ignored_for_forward_compatibility() -> None:
    e = codec.decode_event(enc({**GOOD_CARD, "added_in_a_later_version": [1, 2, 3]}))
    assert isinstance(e, Card) and e.player == "p" and e.count == 1


def test_reserved_words_keep_their_wire_names() -> None:
    setup = {"type": "game.setup", "id": "s", "at": 0, "game": "g", "event": "e", "handicap": 8,
             "teams": {"home": {"team": "a", "players": ["1", "2", "3"]},
                       "away": {"team": "b", "players": ["4", "5", "6"], "subs": ["7"]}}}
    g = codec.decode_event(enc(setup))
    assert isinstance(g, GameSetup) and g.periods == 4 and g.period_ms == 450_000
    sub = codec.decode_event(enc({"type": "substitution", "id": "s2", "at": 1, "game": "g",
                                  "team": "home", "out": "1", "in": "7"}))
    assert msgspec.json.decode(codec.encode_event(sub))["in"] == "7"


def test_msgpack_decodes_the_same_events() -> None:
    e = codec.decode_event_msgpack(msgspec.msgpack.encode(GOOD_CARD))
    assert e == codec.decode_event(enc(GOOD_CARD))
    with pytest.raises(MalformedEvent) as info:
        codec.decode_event_msgpack(b"\xc1")
    assert info.value.code == "malformed_msgpack"


def test_read_log_reports_line_numbers_and_carries_on(tmp_path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(enc(GOOD_CARD) + b"\n\n{oops\n" + enc({**GOOD_CARD, "id": "c2"}) + b"\n")
    with path.open("rb") as f:
        items = list(codec.read_log(f))
    assert [n for n, _ in items] == [1, 3, 4]
    assert isinstance(items[1][1], MalformedEvent)
    assert [x.id for _, x in items if isinstance(x, Card)] == ["c1", "c2"]


def _union_convert(fields: dict[str, object]) -> object:
    """What ``event_from_fields`` answered when it converted to the whole union."""
    try:
        return msgspec.json.encode(msgspec.convert(fields, Event))
    except msgspec.ValidationError as err:
        m = codec._explain(err, lambda: fields.get("type"))
        return m.code, m.detail


def _from_fields(fields: dict[str, object]) -> object:
    try:
        return msgspec.json.encode(codec.event_from_fields(fields))
    except MalformedEvent as err:
        return err.code, err.detail


def test_fields_convert_to_their_own_type_as_to_the_union() -> None:
    """A known type converts straight to its Struct: the same event, or the same error
    (code and text), as converting to the union, for every field of every type
    taken away or given a value of another kind."""
    good: list[dict[str, object]] = [
        *game_events(random.Random(3), "g", "ev", 1_780_000_000_000, 120),
        {"type": "event.setup", "id": "e", "at": 1, "event": "ev", "class": "club", "handicap": 8,
         "teams": [], "completed": False},
        {"type": "void", "id": "v", "at": 2, "target": "x"},
        {"type": "tick", "id": "t", "at": 3, "game": "g"},
    ]
    values: list[object] = [None, -1, 2**70, 1.5, "", "x" * 200, [], {}, True, "home", "red", "a.b"]
    cases: list[dict[str, object]] = [{"id": "x", "at": 1}, {"type": ["card"], "id": "x", "at": 1},
                                      {"type": "penalty", "id": "x", "at": 1}]
    for e in good:
        cases.append(e)
        for k in [*e, "added_later"]:
            cases.append({f: v for f, v in e.items() if f != k})
            cases.extend({**e, k: v} for v in values)
    types = {c.get("type") for c in cases if isinstance(c.get("type"), str)}
    assert types >= {"game.setup", "card", "goal", "whistle", "void", "mount.removed"}
    for fields in cases:
        assert _from_fields(dict(fields)) == _union_convert(dict(fields)), fields
