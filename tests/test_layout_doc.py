"""docs/overview.md's layout ("How it is built") against the tree: every folder of the
package has its row, every module of a folder is named in that row (or has a row of its
own), and every path a row names exists. A module added, moved or removed without the
table changing fails here."""

from __future__ import annotations

import re
from pathlib import Path

from .docs_text import ROOT, section

TABLE = section("overview.md", "## How it is built")


def rows() -> list[tuple[list[str], str]]:
    """Each row: the paths its first cell names (a path beside a bare name is in the same
    folder: "`stream/live/lifecycle.py`, `app.py`"), and the whole row's text."""
    out = []
    for line in TABLE.splitlines():
        cells = line.split(" | ")
        if not line.startswith("| `") or len(cells) < 2:
            continue
        names = re.findall(r"`([^`]+)`", cells[0])
        folder = names[0].rsplit("/", 1)[0] + "/" if "/" in names[0].rstrip("/") else ""
        out.append(([names[0], *(n if "/" in n else folder + n for n in names[1:])], line))
    return out


def folders() -> list[Path]:
    """Every folder of the package that holds modules."""
    return sorted({p.parent for p in (ROOT / "stream").rglob("*.py") if "__pycache__" not in p.parts})


def test_the_table_is_one_table() -> None:
    """Its rows follow its header with no blank line between (a row after one is no row)."""
    lines = TABLE.splitlines()
    start = lines.index("| path | what |")
    block = lines[start:]
    end = next((i for i, line in enumerate(block) if not line.startswith("|")), len(block))
    assert all(not line.startswith("| `") for line in block[end:]), "a blank line splits the table"


def test_every_path_a_row_names_exists() -> None:
    named = [p for paths, _ in rows() for p in paths]
    assert named, "the table is read"
    missing = [p for p in named if not (ROOT / p.split(" ")[0]).exists()]
    assert not missing, missing


def problems(table: list[tuple[list[str], str]]) -> list[str]:
    """What the table leaves out of the tree: a folder with no row, a module not named."""
    out = []
    for folder in folders():
        rel = folder.relative_to(ROOT).as_posix()
        mine = [text for paths, text in table if f"{rel}/" in paths]
        own = {Path(p).name for paths, _ in table for p in paths
               if p.startswith(f"{rel}/") and p.endswith(".py") and "/" not in p[len(rel) + 1:]}
        modules = sorted(p.name for p in folder.glob("*.py") if p.name != "__init__.py")
        if not mine and set(modules) - own:
            out.append(f"{rel}/: no row")
            continue
        out.extend(f"{rel}/{name}: not named in its folder's row" for name in modules
                   if name not in own and not any(f"`{name}`" in text for text in mine))
    return out


def test_every_folder_of_the_package_has_its_row_naming_each_of_its_modules() -> None:
    found = problems(rows())
    assert not found, "\n".join(found)


def test_a_module_the_table_leaves_out_is_caught() -> None:
    """The check can fail: a row without one of its folder's modules is seen."""
    table = [(paths, text.replace("`feeds.py`", "") if "stream/live/hub/" in paths else text)
             for paths, text in rows()]
    assert problems(table) == ["stream/live/hub/feeds.py: not named in its folder's row"]


def test_the_browser_pages_row_names_each_of_their_folders() -> None:
    """``clients/web/`` is a folder per client and one they share: its row names each."""
    text = next(t for paths, t in rows() if "clients/web/" in paths)
    folders = sorted(p.name for p in (ROOT / "clients" / "web").iterdir()
                     if p.is_dir() and p.name != "__pycache__")
    assert folders, "the pages are in folders"
    assert [f for f in folders if f"`{f}/`" not in text] == [], folders
