"""The rooms of ``stream/live/`` and the rules each one's docstring states: what it may
import and who may import it (``Imports:`` and ``Imported by:``, read from the
docstring as written), held against the imports the code makes. A room is a
sub-package or a module at the top of ``stream/live/``; a room's imports are every
import of its modules, inside functions and under ``TYPE_CHECKING`` included."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

LIVE = Path(__file__).resolve().parents[2] / "stream" / "live"


def _module(path: Path) -> list[str]:
    parts = list(path.relative_to(LIVE.parents[1]).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _imported(path: Path, source: str | None = None) -> set[str]:
    """The dotted names ``path`` imports: a module where the name is one, else its package."""
    me = _module(path)
    package = me if path.name == "__init__.py" else me[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(source if source is not None else path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            stem = [*base, *(node.module.split(".") if node.module else [])]
            for alias in node.names:
                full = LIVE.parents[1].joinpath(*stem, alias.name)
                out.add(".".join([*stem, alias.name] if full.is_dir() or full.with_suffix(".py").exists()
                                 else stem))
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def rooms() -> list[str]:
    return sorted(p.stem if p.is_file() else p.name for p in LIVE.iterdir()
                  if (p.is_dir() and (p / "__init__.py").exists())
                  or (p.suffix == ".py" and p.name != "__init__.py"))


def _room_of(dotted: str) -> str | None:
    parts = dotted.split(".")
    return parts[2] if parts[:2] == ["stream", "live"] and len(parts) > 2 else None


def graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Each room's imports of other rooms, and of the rest of ``stream`` (by package)."""
    inside: dict[str, set[str]] = {r: set() for r in rooms()}
    outside: dict[str, set[str]] = {r: set() for r in rooms()}
    for path in LIVE.rglob("*.py"):
        room = _room_of(".".join(_module(path)))
        if room is None:
            continue
        for dotted in _imported(path):
            other = _room_of(dotted)
            if other is not None and other != room:
                inside[room].add(other)
            elif dotted.split(".")[0] == "stream" and other is None and dotted != "stream.live":
                outside[room].add(".".join(dotted.split(".")[:2]))
    return inside, outside


def stated(room: str) -> tuple[set[str], set[str], set[str]]:
    """What the room's docstring says it imports (rooms; packages outside) and who imports it."""
    doc = ast.get_docstring(ast.parse((LIVE / room / "__init__.py").read_text(encoding="utf-8"))) or ""
    imports = re.search(r"^Imports: (.*(?:\n  .*)*)$", doc, re.M)   # (a long line goes on indented)
    by = re.search(r"^Imported by: (.*)$", doc, re.M)
    assert imports and by, f"{room}/__init__.py: its docstring says what it imports and who imports it"
    mine, _, outer = " ".join(imports.group(1).split()).rstrip(".").partition("; outside stream.live: ")

    def names(text: str) -> set[str]:
        return {n.strip() for n in text.split(",") if n.strip() and n.strip() != "nothing"}

    return names(mine), names(outer), names(by.group(1).rstrip("."))


def packages() -> list[str]:
    return [r for r in rooms() if (LIVE / r).is_dir()]


def test_the_top_holds_at_most_twelve_rooms_and_only_wiring_beside_them() -> None:
    assert len(rooms()) <= 12, rooms()
    assert {r for r in rooms() if (LIVE / f"{r}.py").exists()} == {"app", "lifecycle", "service"}, rooms()


def test_no_room_imports_one_that_imports_it_back() -> None:
    inside, _ = graph()
    state: dict[str, int] = {}

    def visit(room: str, path: list[str]) -> None:
        state[room] = 1
        for other in sorted(inside[room]):
            assert state.get(other) != 1, f"a circle of rooms: {' -> '.join([*path, room, other])}"
            if other not in state:
                visit(other, [*path, room])
        state[room] = 2

    for room in rooms():
        if room not in state:
            visit(room, [])


@pytest.mark.parametrize("room", packages())
def test_each_room_imports_what_its_docstring_says_and_no_more(room: str) -> None:
    inside, outside = graph()
    mine, outer, _ = stated(room)
    assert inside[room] == mine, f"{room}: imports {sorted(inside[room])}, its docstring says {sorted(mine)}"
    assert outside[room] <= outer, f"{room}: imports {sorted(outside[room])}, allowed {sorted(outer)}"


@pytest.mark.parametrize("room", packages())
def test_each_room_is_imported_by_whom_its_docstring_says(room: str) -> None:
    inside, _ = graph()
    _, _, by = stated(room)
    importers = {other for other, imports in inside.items() if room in imports}
    assert importers == by, f"{room}: imported by {sorted(importers)}, its docstring says {sorted(by)}"


def test_the_reader_sees_an_import_inside_a_function() -> None:
    """The check can fail: an import written inside a function or under ``TYPE_CHECKING``,
    relative or absolute, counts like any other."""
    probe = LIVE / "hub" / "probe.py"
    seen = _imported(probe, "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                            "    from ..service import Service\n"
                            "def f():\n    from stream.live.viewers import watch\n    from . import feeds\n")
    assert {"stream.live.service", "stream.live.viewers.watch", "stream.live.hub.feeds"} <= seen, seen
    assert {_room_of(d) for d in seen} >= {"service", "viewers", "hub"}
