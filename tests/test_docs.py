"""The docs as a contract: docs/log-format.md and the protocol pages (docs/protocol.md and
the pages it links, read together through ``docs_text``) list exactly the
events (and their fields), notices (and theirs), alert codes, refusal codes and HTTP
routes the code has, and the handheld knows every refusal code it may be answered.

The code side is read from the code itself: the tagged unions of
``stream/rules/events.py`` and ``notices.py``, the ``Refused`` and ``alert`` calls
in ``stream/rules/`` (by their syntax tree, string constants and the names
assigned them), the router of ``stream/live/app.py``, ``auth.ROLE_EVENTS``.

The wire itself (the protocol's frame types, error codes and close codes
against what ``stream/live/`` can send, and the AsyncAPI document) is checked
by ``test_protocol_doc.py``."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any, get_args

import msgspec
import pytest

from stream.live.app import build_app
from stream.live.ops.config import Config
from stream.live.wire import auth
from stream.rules import events as ev
from stream.rules import notices as nt
from stream.rules import view as vw
from stream.rules.ledger import Obligation
from stream.rules.text import REASONS_ES, describe
from stream.rules.tournaments import Tournament

from .ast_scan import call_name, local_values
from .docs_text import ROOT, protocol_section, section

RULES = ROOT / "stream" / "rules"
#: The refusal reasons the handheld (and the console) show.
HANDHELD = ROOT / "clients" / "web" / "shared" / "refusals.js"


# ------------------------------------------------------------------ reading the docs


def rows(text: str) -> list[list[str]]:
    """The cells of every table row (not a header) whose first cell names something in backticks."""
    lines = text.splitlines()
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line, after in zip(lines, [*lines[1:], ""], strict=True)
            if line.startswith("| `") and not after.startswith("|---")]


def ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def table(text: str) -> dict[str, list[str]]:
    """First-cell names (each backticked name in it) -> the row's other cells."""
    out: dict[str, list[str]] = {}
    for cells in rows(text):
        for name in ticked(cells[0]):
            assert name not in out, f"{name} is listed twice"
            out[name] = cells[1:]
    return out


def fields(cls: Any, *, skip: frozenset[str]) -> set[str]:
    return {f.encode_name for f in msgspec.structs.fields(cls)} - skip


# ------------------------------------------------------------------ reading the code






def _functions(tree: ast.AST) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]


def _code_param(fn: ast.FunctionDef) -> int | None:
    """If ``fn`` passes its own ``code`` parameter on as an alert's ``code``: that
    parameter's position (an alert helper, whatever it is called)."""
    params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    if "code" not in params:
        return None
    for call in [n for n in ast.walk(fn) if isinstance(n, ast.Call)]:
        for kw in call.keywords:
            if (call_name(call) == "Alert" and kw.arg == "code" and isinstance(kw.value, ast.Name)
                    and kw.value.id == "code"):
                return params.index("code")
    return None


def scan_rules() -> tuple[set[str], set[str]]:
    """(refusal codes, alert codes) the engine can produce: the first argument of every
    ``Refused(...)``; the ``code`` of every ``Alert(...)``, and the code argument of every
    call to a function that hands its ``code`` parameter to ``Alert``. A name is resolved
    to the constants assigned to it in the same function."""
    trees = [ast.parse(path.read_text(encoding="utf-8")) for path in sorted(RULES.glob("*.py"))]
    helpers = {fn.name: i for tree in trees for fn in _functions(tree)
               if (i := _code_param(fn)) is not None}
    refusals: set[str] = set()
    alerts: set[str] = set()
    for tree in trees:
        for fn in _functions(tree):
            values = local_values(fn)
            for call in [n for n in ast.walk(fn) if isinstance(n, ast.Call)]:
                name = call_name(call)
                if name == "Refused" and call.args:
                    refusals.update(values(call.args[0]))
                    continue
                if name != "Alert" and name not in helpers:
                    continue
                for kw in call.keywords:
                    if kw.arg == "code":
                        alerts.update(values(kw.value))
                if name in helpers and len(call.args) > helpers[name]:
                    alerts.update(values(call.args[helpers[name]]))
    return refusals, alerts


REFUSALS, ALERTS = scan_rules()


def test_the_scan_finds_the_engine_s_codes() -> None:
    assert {"duplicate_id", "unknown_game", "not_in_box", "card_target", "unknown_obligation"} <= REFUSALS
    assert {"clock_already_running", "scorer_not_on_field", "set_aside", "slot_held"} <= ALERTS


# ------------------------------------------------------------------ log-format.md


_events = section("log-format.md", "## Events (JSON Lines)")
EVENTS = table(_events[_events.index("| `type` | fields | who sends it |"):])
MALFORMED = table(section("log-format.md", "## Refusals").split("**Refused**")[0])
REFUSED = table(section("log-format.md", "## Refusals").split("**Refused**")[1])
NOTICES = table(section("log-format.md", "## Notices").split("### Alerts")[0])
ALERT_TABLE = table(section("log-format.md", "### Alerts"))
STATE = section("log-format.md", "## State")


def test_every_event_type_and_field_is_documented() -> None:
    assert set(EVENTS) == ev.TYPE_NAMES
    for cls in ev.EVENT_TYPES:
        tag = str(cls.__struct_config__.tag)
        described, who = EVENTS[tag]
        missing = fields(cls, skip=frozenset({"id", "at", "game"})) - set(ticked(described))
        assert not missing, f"{tag}: fields not documented: {sorted(missing)}"
        # who sends it: the roles of auth.ROLE_EVENTS (admin and a committee, who may send
        # anything, where only they may)
        roles = {r for r, types in auth.ROLE_EVENTS.items()
                 if tag in types and r not in ("admin", "committee")}
        named = set(re.findall(r"\b(umpire|referee|timekeeper|admin|committee)\b", who))
        if tag == "tick":
            assert who == "the service" and not any(tag in t for t in auth.ROLE_EVENTS.values())
        elif roles:
            assert named - {"admin", "committee"} == roles, (tag, who)
        else:
            assert named == {"admin", "committee"} and tag in auth.UNSCOPED_EVENTS, (tag, who)


def test_every_refusal_code_the_engine_produces_is_documented_and_no_other() -> None:
    # ``unknown_type``, if the engine still guards against it, is raised only for an event type
    # the decoder already refuses: it is a malformed event's code, not a refusal
    assert REFUSALS - set(REFUSED) <= {"unknown_type"} and "unknown_type" in MALFORMED
    assert set(REFUSED) - REFUSALS == set(), "documented refusals the engine no longer produces"
    for code, (clause, meaning) in REFUSED.items():
        assert clause and meaning, code


def test_every_notice_type_and_field_is_documented() -> None:
    tags = {str(c.__struct_config__.tag): c for c in get_args(nt.Notice)}
    assert set(NOTICES) == set(tags)
    common = frozenset({"type", "cause", "at", "game", "clause", "text"})
    base = NOTICES["obligation.created"][0]
    for tag, cls in tags.items():
        described = NOTICES[tag][0]
        if described.startswith("same"):  # the obligation notices share obligation.created's fields
            described = base + described
        missing = fields(cls, skip=common) - set(ticked(described))
        assert not missing, f"{tag}: fields not documented: {sorted(missing)}"
    assert all(n in section("log-format.md", "## Notices") for n in sorted(common - {"type"}))


def test_every_alert_code_is_documented_and_renders_in_both_languages() -> None:
    assert set(ALERT_TABLE) == ALERTS
    for code in ALERTS:
        text = describe(nt.Alert(cause="e1", at=0, game="g", clause="A1", code=code, player="p1",
                                 side="home", subject="e0", other="p2", origin_game="g0", owed_ms=60_000,
                                 reason="sit_out", detail="2 starters"))
        assert text.en.endswith("(Arena · Periods and the game clock)") and text.es, code


def test_the_state_document_names_every_field() -> None:
    for cls in (vw.GameView, vw.ClockView, vw.TeamView, vw.ShortView, vw.PlayerView, vw.SitoutView,
                vw.MountView, vw.CarriedView, vw.PostgameView, vw.OfficialView, Obligation, Tournament):
        missing = {f for f in fields(cls, skip=frozenset()) if not re.search(rf"\b{f}\b", STATE)}
        assert not missing, f"{cls.__name__}: not in the State section: {sorted(missing)}"
    short = re.search(r"reason: ([^}]*)\}", STATE)
    assert short is not None
    assert set(re.findall(r'"(\w+)"', short.group(1))) == {"box", "sent_off", "suspended"}


# ------------------------------------------------------------------ the protocol pages


def test_the_admin_row_lists_exactly_the_unscoped_events() -> None:
    roles = protocol_section("## Tokens and roles")
    admin = next(cells for cells in rows(roles) if ticked(cells[0]) == ["admin"])[1]
    listed = set(ticked(re.sub(r"\(.*?\)", "", admin)))   # "everything above, plus …"
    assert listed == auth.UNSCOPED_EVENTS
    assert auth.ROLE_EVENTS["admin"] == auth.ROLE_EVENTS["umpire"] | auth.ROLE_EVENTS["timekeeper"] \
        | auth.UNSCOPED_EVENTS


def _documented_routes() -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for line in protocol_section("## HTTP API").splitlines():
        m = re.match(r"^\| (GET|POST) \| (.+?) \|", line)
        if m is None:
            continue
        last = ""
        for path in ticked(m.group(2)):
            if path.startswith("."):      # `/games/{game}/report` (`.json`, `.csv`)
                out.add((m.group(1), last + path))
                continue
            last = path.split("?")[0]
            out.add((m.group(1), last))
    return out


def test_the_http_api_table_lists_every_route(tmp_path: Path) -> None:
    app = build_app(Config(data_dir=tmp_path, demo=False), secret=b"x" * 32)
    routed = set()
    for route in app.router.routes():
        resource = route.resource
        path = resource.canonical if resource is not None else ""
        if route.method == "HEAD" or path.startswith(("/ws/", "/clients")):
            continue
        routed.add((route.method, path))
    documented = _documented_routes()
    assert routed - documented == set(), "routes missing from docs/protocol-http.md, HTTP API"
    assert documented - routed == set(), "documented routes the app does not have"


# ------------------------------------------------------------------ the handheld


def handheld_reasons() -> dict[str, tuple[str, str]]:
    js = HANDHELD.read_text(encoding="utf-8")
    block = js[js.index("const REASONS = {"):]
    block = block[:block.index("\n  };")]
    return {m.group(1): (json.loads(f'"{m.group(2)}"'), json.loads(f'"{m.group(3)}"'))
            for m in re.finditer(r'^\s+(\w+): \["((?:[^"\\]|\\.)*)", "((?:[^"\\]|\\.)*)"\],$', block, re.M)}


@pytest.mark.parametrize("code", sorted(REFUSALS - {"unknown_type"}))
def test_the_handheld_explains_every_refusal(code: str) -> None:
    reasons = handheld_reasons()
    assert code in reasons, f"clients/web/shared/refusals.js REASONS lacks {code}"
    if code in REASONS_ES:
        assert reasons[code][1] == REASONS_ES[code], code


def test_the_handheld_knows_no_code_the_service_does_not_send() -> None:
    protocol = {c for cells in rows(protocol_section("## Error codes")) for c in ticked(cells[0])}
    known = set(REFUSED) | set(MALFORMED) | protocol
    assert set(handheld_reasons()) - known == set()
