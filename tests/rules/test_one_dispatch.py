"""A game's event is applied one way, live and folded again alike: ``game.apply``
reads its row of ``game.TRANSITIONS`` (the phases that accept it, its handler),
and nothing else in the engine does (the service reaches a game's events only through
the engine). Read from the syntax tree, so that it holds whatever a module names its
imports."""

from __future__ import annotations

import ast

from ..docs_text import ROOT

RULES = ROOT / "stream" / "rules"


def readers_of(attrs: set[str]) -> set[tuple[str, str]]:
    """(module, function) for each function of stream/rules/ that reads one of ``attrs`` of
    anything (a row of the table, the only thing in the engine with them)."""
    found: set[tuple[str, str]] = set()
    for path in sorted(RULES.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                name = getattr(fn, "name", "<lambda>")
                for node in ast.walk(fn):
                    if isinstance(node, ast.Attribute) and node.attr in attrs:
                        found.add((path.relative_to(ROOT).as_posix(), name))
        # A row read outside any function (a module-level copy of the table) counts too.
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Attribute) and sub.attr in attrs:
                        found.add((path.relative_to(ROOT).as_posix(), "<module>"))
    return found


def test_only_game_apply_calls_a_handler_of_the_table() -> None:
    assert readers_of({"handler"}) == {("stream/rules/game.py", "apply")}


def test_only_game_transition_reads_the_phases_a_row_accepts() -> None:
    assert readers_of({"phases"}) == {("stream/rules/game.py", "transition")}
