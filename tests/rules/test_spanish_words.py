"""A notice's Spanish text speaks Spanish (docs/log-format.md, "Notices"): every colour,
conduct, kind, level and status it names is a Spanish word, never the log's code for it.
Every notice type is rendered with every value its coded fields take, and its Spanish
text is searched for the codes of the log format's Literal types (``stream.rules.events``,
and the ledger's obligation kinds and statuses)."""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import msgspec

from stream.rules import events as ev
from stream.rules import ledger
from stream.rules import notices as nt
from stream.rules.names import NO_NAMES
from stream.rules.text import describe

DOCS = Path(__file__).resolve().parents[2] / "docs" / "log-format.md"

#: Codes that are Spanish words as they are (a "regular" game is "regular" in both).
SAME_IN_SPANISH = frozenset({"regular"})


def _values(t: Any) -> list[str]:
    """The strings of a Literal type."""
    assert typing.get_origin(t) is Literal, t
    return [str(v) for v in typing.get_args(t)]


def _hint(cls: type, field: str) -> Any:
    return typing.get_type_hints(cls)[field]


def coded() -> dict[str, list[str]]:
    """Each coded thing a Spanish text may name, with the log format's codes for it."""
    return {
        "side": _values(ev.Side), "color": _values(ev.Color), "conduct": _values(ev.Conduct),
        "game_kind": _values(ev.GameKind), "mount_reason": _values(ev.MountReason),
        "postgame_level": _values(ev.PostgameLevel), "draw_format": _values(_hint(ev.DrawMade, "format")),
        "obligation_kind": _values(ledger.Kind),
        "obligation_status": _values(_hint(ledger.Obligation, "status")),
    }


def forbidden() -> list[str]:
    return sorted({c for codes in coded().values() for c in codes} - SAME_IN_SPANISH)


def english_codes(text: str) -> list[str]:
    """The codes ``text`` says as they are (``rough_play``, or ``rough play``)."""
    found = []
    for code in forbidden():
        for form in {code, code.replace("_", " ")}:
            if re.search(rf"(?<![\w\-/.:]){re.escape(form)}(?![\w\-/:]|\.\w)", text, re.IGNORECASE):
                found.append(code)
    return found


def alert_codes() -> list[str]:
    """The alert codes docs/log-format.md lists (its "Alerts" table)."""
    part = DOCS.read_text().split("### Alerts", 1)[1].split("\n## ", 1)[0]
    codes = [c for c in re.findall(r"^\| `([a-z_]+)` \|", part, re.MULTILINE) if c != "code"]
    assert len(codes) > 10, codes
    return codes


def refusal_codes() -> list[str]:
    """The refusal codes docs/log-format.md lists (its "Refusals" table)."""
    part = DOCS.read_text().split("## Refusals", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in part.splitlines() if line.startswith("| `")]
    return [c for row in rows for c in re.findall(r"`([a-z_]+)`", row)]


def _candidates(cls: type, field: str, hint: Any) -> list[Any]:
    """The values a field of a notice is tried with."""
    c = coded()
    by_name: dict[str, list[Any]] = {
        "conduct": c["conduct"], "level": c["postgame_level"], "converted": ["fourth_offense", "left_arena"],
        "role": ["coach"], "code": alert_codes(),
        "detail": ["", "live", "2 starters", "9 goals (limits 6–8)"],
    }
    if field == "kind" and issubclass(cls, nt._ObligationNotice):
        values: list[Any] = c["obligation_kind"]
    elif field == "reason" and cls is nt.Alert:
        values = [*c["obligation_kind"], "unknown_player", None]
    elif field == "reason" and cls is nt.ObligationUpdated:
        values = ["mistaken identity", None]
    elif field in by_name:
        values = by_name[field]
    elif typing.get_origin(hint) is Literal:
        values = list(typing.get_args(hint))
    else:
        args = typing.get_args(hint)
        base = next((a for a in args if a is not type(None)), hint)
        values = ([True, False] if base is bool else [0, 60_000] if base is int else
                  [[]] if typing.get_origin(base) is list else ["p7"])
        if type(None) in args:
            values = [*values, None]
    if type(None) in typing.get_args(hint) and None not in values:
        values = [*values, None]
    return values


def every_notice() -> Iterator[nt.Notice]:
    """Every notice type, once with every value of each of its fields (the others at their
    first value); an alert so for each of its codes."""
    for cls in typing.get_args(nt.Notice):
        hints = typing.get_type_hints(cls)
        fields = [f.name for f in msgspec.structs.fields(cls) if f.name not in ("cause", "at", "game", "text",
                                                                                  "clause")]
        options = {f: _candidates(cls, f, hints[f]) for f in fields}
        modes = [{"code": code} for code in options["code"]] if cls is nt.Alert else [{}]
        for mode in modes:
            these = dict(options)
            if mode.get("code") == "set_aside":  # its reason: the refusal's code
                these["reason"] = refusal_codes()
            base: dict[str, Any] = {f: vs[0] for f, vs in these.items()}
            base.update(cause="c1", at=0, game="g1", clause="R6", **mode)
            for f, vs in these.items():
                for v in vs if f not in mode else ():
                    yield cls(**{**base, f: v})


def test_every_coded_thing_is_tried() -> None:
    notices = list(every_notice())
    assert {type(n) for n in notices} == set(typing.get_args(nt.Notice))
    tried = {str(getattr(n, f)) for n in notices for f in ("conduct", "level", "color", "kind", "reason")
             if isinstance(getattr(n, f, None), str)}
    for thing in ("color", "conduct", "postgame_level", "obligation_kind", "mount_reason"):
        assert set(coded()[thing]) <= tried, thing


def test_no_spanish_notice_text_says_a_code_in_english() -> None:
    said: dict[str, str] = {}
    for n in every_notice():
        es = describe(n, NO_NAMES).es
        for code in english_codes(es):
            said.setdefault(f"{type(n).__name__} {code}", es)
    assert said == {}
