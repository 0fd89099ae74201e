"""The proof suites (docs/reliability.md): faults, attacks and load, each test
printing the figures it measured.

CI runs the bounded sizes. ``arena-stream proof --full`` sets
``ARENA_PROOF_FULL=1`` and every test takes its long size (``scale``).
The figures are printed at the end of the run, under "proof figures", and
appended as JSON lines to ``$ARENA_PROOF_REPORT`` when that is set.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

FULL = os.environ.get("ARENA_PROOF_FULL") == "1"


def scale(bounded: int, full: int) -> int:
    """The size for this run: ``bounded`` in CI, ``full`` under ``proof --full``."""
    return full if FULL else bounded


class Figures:
    """What one proof test measured, printed at the end of the run."""

    def __init__(self, test: str) -> None:
        self.test = test
        self.lines: list[str] = []
        self.values: dict[str, Any] = {}

    def __call__(self, line: str, **values: Any) -> None:
        self.lines.append(line)
        self.values.update(values)


_ALL: list[Figures] = []


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Iterator[Figures]:
    f = Figures(request.node.nodeid.split("::", 1)[-1])
    yield f
    _ALL.append(f)
    out = os.environ.get("ARENA_PROOF_REPORT")
    if out:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"test": f.test, "full": FULL, "lines": f.lines, "values": f.values},
                                default=str) + "\n")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _ALL:
        return
    terminalreporter.section(f"proof figures ({'full' if FULL else 'bounded'} run)")
    for f in _ALL:
        terminalreporter.write_line(f"{f.test}")
        for line in f.lines:
            terminalreporter.write_line(f"    {line}")
