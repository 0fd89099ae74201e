"""The protocol pages (docs/protocol.md, protocol-device.md, protocol-viewer.md and
protocol-http.md, read together through ``docs_text``) as a contract with the server:
every error code, close code and frame type the service can send is in them, and
nothing they list is one the service can't send; the AsyncAPI document
(``stream/live/http/documents/asyncapi_doc.py``) agrees.

The code side is read from the code, not from a list: the syntax tree of
``stream/live/**/*.py`` and ``stream/errors.py`` gives the error codes (the code of
every ``Error(code=…)`` frame, every ``AuthError``/``MalformedEvent``/``Refused``/
``Conflict``/``ProtocolError(…)``, an error class that fixes its own code such as
``NotStored``, and every call of a helper that takes a ``code`` parameter, such as
``_malformed`` and ``problem``) and the close codes and reasons (every
``close(code=CloseCode.X, message=…)``, and aiohttp's 1009 where a socket sets
``max_msg_size``). Which socket can send a code is what is reachable, by the
names of the functions called, from its handler (``ingest.device_ws``,
``watch.watch_ws``) or from the HTTP handlers of the route table that
``app.build_app`` routes (``schemas.ROUTES``). The frame types are the tagged
unions of ``stream/live/wire/protocol.py``.

The rules' own refusals (``Refused`` in ``stream/rules/``) are documented in
log-format.md and checked by ``test_docs.py``; the error table here points to them."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, get_args

import aiohttp
import msgspec
import pytest

from stream.live.devices import ingest
from stream.live.http.documents import schemas
from stream.live.viewers import watch
from stream.live.wire import protocol as pr

from .ast_scan import call_name, constants, local_values
from .docs_text import ROOT, protocol_section, protocol_text
from .test_docs import REFUSED, rows, table, ticked

LIVE = ROOT / "stream" / "live"
ERRORS = ROOT / "stream" / "errors.py"
SOCKETS = ("device", "watch")
HANDLERS = {"device": "device_ws", "watch": "watch_ws"}
UNIONS = {("device", "in"): pr.DeviceIn, ("device", "out"): pr.DeviceOut,
          ("watch", "in"): pr.WatchIn, ("watch", "out"): pr.WatchOut}
FRAME_CLASSES = {c.__name__: c for c in vars(pr).values()
                 if isinstance(c, type) and issubclass(c, pr._Frame) and c is not pr._Frame}


# ------------------------------------------------------------------ reading the code


def _tag(cls: Any) -> str:
    return str(cls.__struct_config__.tag)






def _arg(call: ast.Call, index: int, keyword: str) -> ast.AST | None:
    if len(call.args) > index:
        return call.args[index]
    return next((kw.value for kw in call.keywords if kw.arg == keyword), None)


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    return [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _defs(tree: ast.AST) -> Iterator[tuple[str, Function]]:
    """(the name it is called by, the function) for every function of a module: a
    method by its name, a class's ``__init__`` by the class's name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == "__init__":
                    yield node.name, item
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name != "__init__":
            yield node.name, node


@dataclass
class Scanned:
    name: str
    path: Path
    codes: set[str] = field(default_factory=set)                # error codes it can make
    retry: set[str] = field(default_factory=set)                # of those, sent with `retry: true`
    calls: set[str] = field(default_factory=set)                # the names of what it calls
    # (close code, reason): "" no reason, "*" an error code (``message=err.code.encode()``)
    closes: set[tuple[int, str]] = field(default_factory=set)
    frames: set[str] = field(default_factory=set)               # protocol frames it constructs
    raw_closes: list[ast.AST] = field(default_factory=list)     # a close code not of CloseCode


def _error_classes(tree: ast.Module) -> tuple[set[str], dict[str, str]]:
    """The subclasses of ``ArenaStreamError`` in stream/errors.py, and the code of each
    that fixes its own (its ``__init__`` passes a constant to ``super().__init__``)."""
    classes = {"ArenaStreamError"}
    fixed: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for node in tree.body:
            if (isinstance(node, ast.ClassDef) and node.name not in classes
                    and any(isinstance(b, ast.Name) and b.id in classes for b in node.bases)):
                classes.add(node.name)
                changed = True
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in classes:
            for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
                if call_name(call) == "__init__" and (code := constants(_arg(call, 0, "code"))):
                    fixed[node.name] = code[0]
    return classes, fixed


def _subclasses(tree: ast.Module, name: str) -> set[str]:
    """``name`` and every class of stream/errors.py derived from it."""
    family = {name}
    changed = True
    while changed:
        changed = False
        for node in tree.body:
            if (isinstance(node, ast.ClassDef) and node.name not in family
                    and any(isinstance(b, ast.Name) and b.id in family for b in node.bases)):
                family.add(node.name)
                changed = True
    return family


def _close_code(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name | ast.Attribute):
        owner = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
        if owner == "CloseCode":
            return int(pr.CloseCode[node.attr])
    return None


def scan_service() -> dict[str, list[Scanned]]:
    """Every function of stream/live (and stream/errors.py), by the name it is called by."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8"))
             for path in [*sorted(LIVE.rglob("*.py")), ERRORS]}
    error_classes, fixed = _error_classes(trees[ERRORS])
    defs = [(name, fn, path) for path, tree in trees.items() for name, fn in _defs(tree)]
    # Helpers that take a ``code`` (``_malformed``, ``_problem``): its position, and the
    # constants it defaults to. The error classes themselves are read apart.
    helpers: dict[str, int] = {}
    defaults: dict[int, list[str]] = {}
    for name, fn, _ in defs:
        params = _params(fn)
        if "code" in params and name not in error_classes:
            helpers[name] = params.index("code") - (1 if params[:1] == ["self"] else 0)
            first_default = len(params) - len(fn.args.defaults)
            if params.index("code") >= first_default:
                defaults[id(fn)] = constants(fn.args.defaults[params.index("code") - first_default])
    out: dict[str, list[Scanned]] = {}
    for name, fn, path in defs:
        s = Scanned(name, path)
        s.codes.update(defaults.get(id(fn), []))
        values = local_values(fn)
        for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
            called = call_name(call)
            s.calls.add(called)
            if called in FRAME_CLASSES:
                s.frames.add(called)
            if called == "Error":                          # an error frame: pr.Error(code=…)
                codes = values(_arg(call, 99, "code"))
                s.codes.update(codes)
                retry = _arg(call, 99, "retry")
                if isinstance(retry, ast.Constant) and retry.value is True:
                    s.retry.update(codes)
                elif (isinstance(retry, ast.Call) and call_name(retry) == "isinstance"
                      and isinstance(retry.args[1], ast.Name) and retry.args[1].id in fixed):
                    s.retry.add(fixed[retry.args[1].id])   # retry=isinstance(err, NotStored)
                    # ``code=err.code`` with ``retry=isinstance(err, NotStored)``: the error may be
                    # any subclass of it (WriteUnknown, raised by the store), sent with its own code.
                    passed = _arg(call, 99, "code")
                    if isinstance(passed, ast.Attribute) and passed.attr == "code":
                        family = {fixed[c] for c in _subclasses(trees[ERRORS], retry.args[1].id)
                                  if c in fixed}
                        s.codes |= family
                        s.retry |= family
            elif ((called == "close" and any(kw.arg == "code" for kw in call.keywords))
                  or called == "close_soon"
                  or (called == "call_later" and len(call.args) == 4
                      and isinstance(call.args[1], ast.Attribute) and call.args[1].attr == "close_soon")):
                # ``close(code=…, message=…)``; ``close_soon(code, reason)``, also as a timer's
                # ``call_later(delay, x.close_soon, code, reason)``
                if called == "close":
                    passed, message = _arg(call, 99, "code"), _arg(call, 99, "message")
                else:
                    passed, message = call.args[-2], call.args[-1]
                own = [*_params(fn), *(a.arg for a in fn.args.kwonlyargs)]
                if isinstance(passed, ast.Name) and passed.id in own:
                    continue   # it passes on its caller's code: the caller is scanned
                code = _close_code(passed)
                if code is None:
                    s.raw_closes.append(call)
                    continue
                if isinstance(message, ast.Constant) and isinstance(message.value, bytes):
                    reason = message.value.decode()
                elif (isinstance(message, ast.Call) and call_name(message) == "encode"
                      and isinstance(message.func, ast.Attribute)
                      and isinstance(message.func.value, ast.Attribute)
                      and message.func.value.attr == "code"):
                    reason = "*"                            # message=err.code.encode()
                else:
                    reason = "" if message is None else "?"
                s.closes.add((code, reason))
            elif called in fixed:
                s.codes.add(fixed[called])
            elif called in error_classes:
                s.codes.update(values(_arg(call, 0, "code")))
            elif called in helpers:
                s.codes.update(values(_arg(call, helpers[called], "code")))
            elif called in ("WebSocketResponse", "ServerProtocol"):
                # aiohttp, and websockets' protocol, close a frame that breaks RFC 6455 with
                # 1002, and a bigger one than their limit with 1009
                s.closes.add((int(pr.CloseCode.PROTOCOL_ERROR), ""))
                limit = "max_msg_size" if called == "WebSocketResponse" else "max_size"
                if _arg(call, 99, limit) is not None:
                    s.closes.add((int(pr.CloseCode.TOO_BIG), ""))
        out.setdefault(name, []).append(s)
    return out


SCAN = scan_service()


def reachable(*entries: str) -> list[Scanned]:
    seen: set[int] = set()
    todo = [s for e in entries for s in SCAN[e]]
    found: list[Scanned] = []
    while todo:
        s = todo.pop()
        if id(s) in seen:
            continue
        seen.add(id(s))
        found.append(s)
        todo.extend(t for name in s.calls for t in SCAN.get(name, []))
    return found


def http_handlers() -> list[str]:
    """The handlers of the route table ``app.build_app`` routes (``schemas.ROUTES``), but
    the two WebSocket ones; and the token check that runs before a route's handler when the
    route takes a token (``route.Route.who``)."""
    names = {route.handler.__name__ for route in schemas.ROUTES if route.handler is not None}
    guard = {"guarded"} if any(route.who != "anyone" for route in schemas.ROUTES) else set()
    return sorted(names - set(HANDLERS.values()) | guard)


CODES = {place: set().union(*(s.codes for s in reachable(*entries)))
         for place, entries in (("device", ["device_ws"]), ("watch", ["watch_ws"]),
                                ("http", http_handlers()))}
RETRY = set().union(*(s.retry for ss in SCAN.values() for s in ss))


#: The sockets a close in each module can close: a handler's module, its own; the
#: fan-out, viewers' (only /ws/watch makes a ``Watcher``); the service and the app,
#: both (they close what both handlers register: ``svc.sockets``, ``svc.track``).
CLOSERS = {"ingest.py": {"device"}, "watch.py": {"watch"}, "viewer_socket.py": {"watch"},
           "fanout.py": {"watch"},
           "service.py": {"device", "watch"}, "app.py": {"device", "watch"}}


def _sockets_of(path: Path) -> set[str]:
    return CLOSERS.get(path.name, set())


def closes_by_socket() -> dict[str, set[tuple[int, str]]]:
    out: dict[str, set[tuple[int, str]]] = {s: set() for s in SOCKETS}
    for ss in SCAN.values():
        for s in ss:
            for close in s.closes:
                for socket in _sockets_of(s.path):
                    out[socket].add(close)
    return out


CLOSES = closes_by_socket()


def test_the_scan_finds_the_service_s_codes() -> None:
    assert {"auth_required", "bad_token", "too_many_connections", "malformed_json", "unknown_type",
            "not_stored", "id_conflict", "rate_limited", "out_of_scope"} <= CODES["device"]
    assert {"invalid_frame", "unknown_game", "auth_required", "out_of_scope", "revoked"} <= CODES["watch"]
    assert {"unknown_game", "unscoped", "invalid_field", "not_stored"} <= CODES["http"]
    assert {"rate_limited", "not_stored", "unknown"} <= RETRY
    assert {"not_stored", "unknown"} <= CODES["device"] & CODES["http"]
    assert {"healthz", "post_token", "revoke_token", "preview_game", "pairing"} <= set(http_handlers())
    assert (int(pr.CloseCode.AUTH), "authenticate first") in CLOSES["device"]
    assert (int(pr.CloseCode.TOO_SLOW), "too slow") in CLOSES["watch"]


def test_the_close_code_attribution_holds() -> None:
    """``CLOSERS``: only /ws/watch makes viewers, and both handlers register their
    socket where the service and the app close them (shutdown, revocation)."""
    made = {s.path.name for ss in SCAN.values() for s in ss if "Watcher" in s.calls}
    assert made == {"watch.py", "viewer_socket.py"}   # aiohttp's viewer endpoint, and the task-free one
    for handler in HANDLERS.values():
        calls = set().union(*(s.calls for s in reachable(handler)))
        assert {"add", "track"} <= calls, handler
    modules = {s.path.name for ss in SCAN.values() for s in ss if s.closes}
    assert modules - set(CLOSERS) == set(), "a module that closes sockets: add to CLOSERS which ones"


def test_every_close_names_a_close_code() -> None:
    raw = [(s.path.name, ast.unparse(c)) for ss in SCAN.values() for s in ss for c in s.raw_closes]
    assert not raw, f"close with a code that is not a protocol.CloseCode: {raw}"
    unread = [(s.path.name, c) for ss in SCAN.values() for s in ss for c in s.closes if c[1] == "?"]
    assert not unread, f"close reasons the scan can't read: {unread}"


# ------------------------------------------------------------------ the error table


ERROR_TABLE = table(protocol_section("## Error codes"))


def places(cell: str) -> set[str]:
    """``both``, ``device``, ``watch``, ``HTTP …`` in a "where" cell."""
    out = {"device", "watch"} if re.search(r"\bboth\b", cell) else set()
    out |= {p for p in SOCKETS if re.search(rf"\b{p}\b", cell)}
    return out | ({"http"} if "HTTP" in cell else set())


def test_every_error_code_the_service_can_send_is_in_the_table_and_no_other() -> None:
    sent = CODES["device"] | CODES["watch"] | CODES["http"]
    assert sent - set(ERROR_TABLE) == set(), "codes the service sends that docs/protocol.md lacks"
    assert set(ERROR_TABLE) - sent == set(), "documented codes the service never sends"


def test_the_error_table_says_on_which_socket_each_code_comes() -> None:
    for code, (where, meaning, _) in ERROR_TABLE.items():
        assert meaning, code
        on = {p for p in SOCKETS if code in CODES[p]}
        assert places(where) & set(SOCKETS) == on, f"{code}: documented {where!r}, sent on {sorted(on)}"


def test_the_error_table_names_only_http_codes_the_api_can_answer() -> None:
    documented = {code for code, (where, _, _) in ERROR_TABLE.items() if "http" in places(where)}
    assert documented - CODES["http"] == set(), "documented on HTTP, never answered there"
    # The submitting routes share the device's path (``submit_fields``), but the route gives
    # the event's ``type``: these two are the only codes of that path the API can't answer.
    assert CODES["http"] - documented == {"missing_type", "unknown_type"}


def test_the_retry_column_is_exactly_the_codes_sent_with_retry_true() -> None:
    yes = {code for code, (_, _, retry) in ERROR_TABLE.items() if "yes" in retry}
    assert yes == RETRY


def test_the_rule_refusals_are_referred_to_log_format() -> None:
    text = protocol_section("## Error codes")
    row = next(line for line in text.splitlines() if line.startswith("| rule refusals |"))
    assert "log-format.md#refusals" in row and {"device", "http"} <= places(row.split("|")[2])
    named = set(ticked(row.split("|")[3])) - {"clause"}
    assert named and named <= set(REFUSED), sorted(named - set(REFUSED))


def test_every_error_frame_shown_has_a_documented_code() -> None:
    text = protocol_text()
    shown = set(re.findall(r'"type": ?"error", ?"code": ?"(\w+)"', text))
    assert shown, "no error frames found"
    assert shown - set(ERROR_TABLE) - set(REFUSED) == set()


# ------------------------------------------------------------------ close codes


def close_table() -> list[tuple[int, set[str], list[str], list[str]]]:
    """(code, sockets, the reasons named, the rest of the row) of each row of the table."""
    out = []
    for line in protocol_section("## Close codes").splitlines():
        m = re.match(r"^\| (\d{4}) \| (\w+) \| (.+) \| (.+) \|$", line)
        if m:
            reason = m.group(4)
            out.append((int(m.group(1)), places(m.group(2)),
                        [""] if reason.startswith("none") else ticked(reason),
                        [m.group(3)]))
    return out


def test_the_close_code_table_is_exactly_the_close_codes_of_each_socket() -> None:
    documented = {(code, socket) for code, sockets, _, _ in close_table() for socket in sockets}
    closed = {(code, socket) for socket, closes in CLOSES.items() for code, _ in closes}
    assert documented == closed
    assert {code for code, _ in documented} == {int(c) for c in pr.CloseCode}


def test_the_close_code_table_names_every_close_reason() -> None:
    rows_ = close_table()
    for socket, closes in CLOSES.items():
        for code, reason in closes:
            mine = [r for c, sockets, r, _ in rows_ if c == code and socket in sockets]
            if reason == "*":   # the error code: the reason cell names codes of the error table
                assert any(r and set(r) <= set(ERROR_TABLE) for r in mine), (code, socket)
            else:
                assert any(reason in r for r in mine), f"{code} on {socket}: reason {reason!r} not documented"
    literal = {(code, socket, reason) for socket, closes in CLOSES.items() for code, reason in closes}
    for code, sockets, reasons, _ in rows_:
        for socket in sockets:
            for reason in reasons:
                assert (code, socket, reason) in literal or (
                    reason in ERROR_TABLE and (code, socket, "*") in literal), (code, socket, reason)


def test_the_asyncapi_close_codes_are_the_table_s() -> None:
    doc = schemas.asyncapi()
    for socket in SOCKETS:
        listed = doc["channels"][socket]["x-close-codes"]
        assert {int(c) for c in listed} == {c for c, sockets, _, _ in close_table() if socket in sockets}
        assert {int(c) for c in listed} == {code for code, _ in CLOSES[socket]}
        for code, reason in CLOSES[socket]:
            if reason not in ("", "*"):
                assert f"`{reason}`" in listed[str(code)], (socket, code, reason)
    assert set(schemas.CLOSE_CODES) == set(SOCKETS)
    assert set().union(*(set(c) for c in schemas.CLOSE_CODES.values())) == set(pr.CloseCode)
    for code in pr.CloseCode:
        assert f"`{int(code)}`" in doc["info"]["description"], code


def test_aiohttp_closes_a_frame_too_big_with_the_documented_code() -> None:
    assert int(aiohttp.WSCloseCode.MESSAGE_TOO_BIG) == int(pr.CloseCode.TOO_BIG) == 1009


# ------------------------------------------------------------------ frame types


def frame_table() -> set[tuple[str, str, str, str]]:
    """(socket, "in"/"out", type, message name) of each row of the frame type table."""
    out = set()
    for cells in rows(protocol_section("## Framing")):
        if cells[0].startswith("`/ws/"):
            [path], sender, [tag, name] = ticked(cells[0]), cells[1], ticked(cells[2])
            socket = path.removeprefix("/ws/")
            out.add((socket, "out" if sender == "server" else "in", tag, name))
    return out


def union_frames() -> set[tuple[str, str, str, str]]:
    return {(socket, way, _tag(c), c.__name__) for (socket, way), union in UNIONS.items()
            for c in get_args(union)}


def test_the_frame_table_is_exactly_the_protocol_unions() -> None:
    assert frame_table() == union_frames()


def test_every_frame_class_is_in_a_union_and_decoded_as_one() -> None:
    in_unions = {c for union in UNIONS.values() for c in get_args(union)}
    assert set(FRAME_CLASSES.values()) == in_unions, "a frame type outside the protocol unions"
    decoded: dict[str, Any] = {"device": pr.device_in.type, "json": pr.watch_in_json.type,
                               "msgpack": pr.watch_in_msgpack.type}
    assert decoded == {"device": pr.DeviceIn, "json": pr.WatchIn, "msgpack": pr.WatchIn}


def test_the_service_constructs_exactly_the_frames_it_may_send() -> None:
    made = {name for ss in SCAN.values() for s in ss if s.path.name != "protocol.py" for name in s.frames}
    outs = {c.__name__ for socket in SOCKETS for c in get_args(UNIONS[(socket, "out")])}
    assert made == outs


def classes_named(module: ModuleType) -> set[type]:
    """The classes ``module``'s code refers to, however it imported them: a name bound
    to the class, or an attribute of a name bound to the module that holds it."""
    bound = vars(module)
    found: set[type] = set()
    for n in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(n, ast.Name):
            obj = bound.get(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            holder = bound.get(n.value.id)
            obj = getattr(holder, n.attr, None) if isinstance(holder, ModuleType) else None
        else:
            continue
        if isinstance(obj, type):
            found.add(obj)
    return found


def test_each_socket_reads_every_frame_of_its_union() -> None:
    for socket, module in (("device", ingest), ("watch", watch)):
        named = classes_named(module)
        for cls in get_args(UNIONS[(socket, "in")]):
            assert cls in named, f"{module.__name__} never names {cls.__name__}"


def test_the_sequence_diagrams_show_every_frame() -> None:
    for socket, heading in (("device", "## Device protocol"), ("watch", "## Viewer protocol")):
        diagram = protocol_section(heading).split("```")[1]
        for way in ("in", "out"):
            for cls in get_args(UNIONS[(socket, way)]):
                assert re.search(rf"\b{re.escape(_tag(cls))}\b", diagram), (socket, _tag(cls))


def test_every_frame_shown_is_a_frame_of_the_protocol() -> None:
    text = protocol_text()
    shown = set(re.findall(r'^\{"type": ?"([\w.]+)"', text, re.M))
    assert shown and shown <= {tag for _, _, tag, _ in union_frames()}, sorted(shown)


def test_the_asyncapi_messages_are_exactly_the_unions() -> None:
    doc = schemas.asyncapi()
    names = {way: {c.__name__ for c in get_args(u)} for way, u in UNIONS.items()}
    assert set(doc["components"]["messages"]) == set().union(*names.values())
    for socket in SOCKETS:
        assert set(doc["channels"][socket]["messages"]) == names[(socket, "in")] | names[(socket, "out")]
    cap = {"device": "Device", "watch": "Watch"}
    for (socket, way), expected in names.items():
        op = doc["operations"][f"{'receive' if way == 'in' else 'send'}{cap[socket]}Frames"]
        assert {r["$ref"].rsplit("/", 1)[-1] for r in op["messages"]} == expected, (socket, way)
    for name, message in doc["components"]["messages"].items():
        schema = doc["components"]["schemas"][message["payload"]["$ref"].rsplit("/", 1)[-1]]
        assert schema["properties"]["type"]["enum"] == [_tag(FRAME_CLASSES[name])], name


def test_the_doc_lists_every_asyncapi_message() -> None:
    text = protocol_section("## Machine-readable descriptions")
    listed = text[text.index("a message per frame type"):text.index("their payload schemas")]
    assert set(ticked(listed)) == set(schemas.asyncapi()["components"]["messages"])


# ------------------------------------------------------------------ the module split


#: The modules that make the two documents, as ``stream.live.<module>``.
SCHEMA_MODULES = ["http.documents.schemas", "wire.schema_gen", "http.documents.openapi_doc",
                  "http.documents.asyncapi_doc"]


def test_schemas_keeps_its_public_face_and_imports_no_app() -> None:
    for name in ("openapi", "asyncapi", "openapi_json", "asyncapi_json", "REQUEST_BODIES"):
        assert hasattr(schemas, name), name
    assert msgspec.json.decode(schemas.asyncapi_json()) == msgspec.json.decode(
        msgspec.json.encode(schemas.asyncapi()))
    # Imported alone, in a fresh interpreter, no schema module brings the app in, however
    # it would import it (directly or through another module).
    modules = [f"stream.live.{m}" for m in SCHEMA_MODULES]
    code = "import importlib, sys\n" + "".join(
        f"importlib.import_module({m!r}); print({m!r}, 'stream.live.app' in sys.modules)\n" for m in modules)
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            cwd=ROOT).stdout.split()
    assert loaded == [x for m in modules for x in (m, "False")], loaded


@pytest.mark.parametrize("module", SCHEMA_MODULES)
def test_each_schema_module_is_under_500_lines(module: str) -> None:
    assert len((LIVE / f"{module.replace('.', '/')}.py").read_text(encoding="utf-8").splitlines()) <= 500
