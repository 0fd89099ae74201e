"""docs/rules.md is the clause map: every case it names exists, in the file it
names, and every case in a clause table is named there."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "rules.md").read_text()
# `tests/rules/x.py::name` starts a file's run; a bare `::name` continues it.
_REF = re.compile(r"`(tests/[\w/]+\.py)?::(\w+)(?:\[[^\]]*\])?`")


def _named() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for row in (line for line in DOC.splitlines() if line.startswith("| **")):
        current = None
        for path, name in _REF.findall(row):
            current = path or current
            assert current is not None, f"{name}: no file before it in its row"
            out.setdefault(current, set()).add(name)
    return out


def _defined(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def test_every_case_named_in_the_clause_map_exists() -> None:
    named = _named()
    assert named, "no case references found in docs/rules.md"
    for path, names in named.items():
        missing = names - _defined(path)
        assert not missing, f"docs/rules.md names cases that {path} lacks: {sorted(missing)}"


def test_every_clause_case_is_in_the_clause_map() -> None:
    named = _named()
    tables = [*sorted((ROOT / "tests" / "rules").glob("test_clause*.py")),
              ROOT / "tests" / "rules" / "test_ledger.py"]
    for path in tables:
        rel = str(path.relative_to(ROOT))
        cases = {n for n in _defined(rel) if re.match(r"[ral]\d+_", n)}
        unnamed = cases - named.get(rel, set())
        assert not unnamed, f"{rel}: cases missing from docs/rules.md: {sorted(unnamed)}"
