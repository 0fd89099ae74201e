"""Bytes to events and notices to bytes, with one decoder and encoder each.

Decoding never raises anything but ``MalformedEvent``: bad JSON, invalid
UTF-8, an unknown type, a missing or ill-typed field, and nesting deep
enough to exhaust the recursion limit (msgspec raises ``RecursionError``
for that, not a ``DecodeError``) all come out as one typed error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO, Any, cast

import msgspec

from ..errors import MalformedEvent
from .events import TYPE_NAMES, TYPES_BY_NAME, Event, EventBase
from .names import NO_NAMES, Names
from .notices import Notice
from .text import render

_json_event = msgspec.json.Decoder(Event)
_msgpack_event = msgspec.msgpack.Decoder(Event)
_json = msgspec.json.Encoder()
_probe = msgspec.json.Decoder(dict[str, Any])


def _type_in(data: bytes | str) -> object:
    try:
        return _probe.decode(data).get("type")
    except (msgspec.DecodeError, RecursionError):
        return None


def _explain(err: Exception, type_of: Callable[[], object]) -> MalformedEvent:
    if isinstance(err, RecursionError):
        return MalformedEvent("too_deep", "the JSON is nested too deeply")
    msg = str(err)
    if "Object missing required field `type`" in msg:
        return MalformedEvent("missing_type", 'every event needs a "type"')
    if msg.startswith("Invalid value") and "`$.type`" in msg:
        t = type_of()
        known = ", ".join(sorted(TYPE_NAMES))
        return MalformedEvent("unknown_type", f"unknown event type {t!r}; known types: {known}")
    if isinstance(err, msgspec.ValidationError):
        return MalformedEvent("invalid_field", msg)
    return MalformedEvent("malformed_json", msg)


def decode_event(data: bytes | str) -> Event:
    """One event from one JSON document, or ``MalformedEvent``."""
    try:
        return _json_event.decode(data)
    except (msgspec.DecodeError, RecursionError) as err:
        raise _explain(err, lambda: _type_in(data)) from None


def event_from_fields(fields: dict[str, object]) -> Event:
    """One event from its fields as a JSON document decoded them (what the live
    service receives), without encoding them again; or ``MalformedEvent``.

    A known ``type`` converts straight to its own Struct: msgspec caches what it
    knows of a Struct type, not of a union, which it would work out again for every
    event (tens of microseconds). The outcome, and any error, is the union's."""
    tag = fields.get("type")
    cls = TYPES_BY_NAME.get(tag) if isinstance(tag, str) else None
    try:
        event = cast(Event, msgspec.convert(fields, Event if cls is None else cls))
    except (msgspec.ValidationError, RecursionError) as err:
        raise _explain(err, lambda: fields.get("type")) from None
    return event


def decode_event_msgpack(data: bytes) -> Event:
    try:
        return _msgpack_event.decode(data)
    except (msgspec.DecodeError, RecursionError) as err:
        if isinstance(err, RecursionError):
            raise MalformedEvent("too_deep", "the message is nested too deeply") from None
        code = "invalid_field" if isinstance(err, msgspec.ValidationError) else "malformed_msgpack"
        raise MalformedEvent(code, str(err)) from None


def read_log(stream: IO[bytes]) -> Iterator[tuple[int, Event | MalformedEvent]]:
    """(line number, event or MalformedEvent) for each non-blank line of a JSON Lines log."""
    for lineno, line in enumerate(stream, 1):
        if not line.strip():
            continue
        try:
            yield lineno, decode_event(line)
        except MalformedEvent as err:
            yield lineno, err


def encode_event(e: EventBase) -> bytes:
    return _json.encode(e)


def encode_notice(n: Notice, names: Names = NO_NAMES) -> bytes:
    """A notice as JSON, with its bilingual text (in ``names``: the roster as of its event)."""
    return _json.encode(render(n, names) if n.text is None else n)
