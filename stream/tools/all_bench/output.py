"""Where ``arena-stream bench all`` writes its report: nowhere unless asked.

``docs/performance.md`` is tracked: the figures docs/deployment.md quotes ("Sizing")
come from it, so only a full run writes it, and only with ``--write``. ``--out FILE``
writes the report elsewhere (a ``--quick`` run too: its figures mean nothing, and say
so). A ``--quick`` run never writes ``docs/performance.md``, however it is named."""

from __future__ import annotations

from pathlib import Path

#: The tracked report, relative to the repository (and to where ``bench all`` runs).
TRACKED_REPORT = Path("docs/performance.md")
_REPO_REPORT = Path(__file__).resolve().parents[3] / TRACKED_REPORT


class ReportRefused(Exception):
    """A report that may not be written where it was asked for."""


def is_tracked(path: Path) -> bool:
    """Whether ``path`` is the tracked report: ``docs/performance.md`` here, or the one of
    this checkout of the repository."""
    resolved = path.resolve()
    return resolved in (TRACKED_REPORT.resolve(), _REPO_REPORT)


def report_path(*, write: bool, out: Path | None, quick: bool) -> Path | None:
    """The file the report goes to, or None: nothing is written unless asked."""
    path = TRACKED_REPORT if write else out
    if path is not None and quick and is_tracked(path):
        raise ReportRefused(
            f"bench all --quick never writes {TRACKED_REPORT}: its tiny sizes make figures that mean "
            f"nothing. Run the full bench (bench all --write) to update it, or give --out FILE "
            f"for a smoke test's report")
    return path
