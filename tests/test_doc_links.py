"""The docs hold together: every relative link of README.md and docs/*.md reaches a file,
and its ``#anchor`` a heading there (GitHub's slugs); each protocol page opens with a
contents list of its own sections, and the index lists every page's; the code names the
protocol's sections where they are."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .docs_text import (
    DOCS,
    PROTOCOL_PAGES,
    README,
    ROOT,
    anchors,
    contents_block,
    doc_text,
    headings,
    is_external,
    links,
    slug,
)

PAGES = [README, *sorted(DOCS.glob("*.md"))]


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize(("title", "anchor"), [
    ("Device protocol (`/ws/device`)", "device-protocol-wsdevice"),
    ("Clock sync: `ping`, `pong` and `at`", "clock-sync-ping-pong-and-at"),
    ("State (`arena-stream replay LOG --state`)", "state-arena-stream-replay-log---state"),
    ("A tournament day: the committee's console", "a-tournament-day-the-committees-console"),
    ("Clause → behaviour → test", "clause--behaviour--test"),
    ("Restarts at random, run after run: `arena-stream bench nodes`",
     "restarts-at-random-run-after-run-arena-stream-bench-nodes"),
    ("test_kill_9_soak_loses_nothing_acked", "test_kill_9_soak_loses_nothing_acked"),
])
def test_anchors_are_github_s(title: str, anchor: str) -> None:
    assert slug(title) == anchor


def test_a_heading_inside_a_code_block_is_no_heading() -> None:
    text = "# Page\n\n```sh\n# a comment\n```\n\n## Real\n"
    assert [h.title for h in headings(text)] == ["Page", "Real"]
    assert anchors("## A\n\n## A\n") == {"a", "a-1"}


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_relative_link_reaches_a_file_and_a_heading(page: Path) -> None:
    broken = []
    for link in links(page.read_text(encoding="utf-8")):
        if is_external(link.target):
            continue
        path, _, anchor = link.target.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"line {link.line}: {link.target}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target.read_text(encoding="utf-8")):
            broken.append(f"line {link.line}: {link.target}: no such heading in {_name(target)}")
    assert not broken, f"{_name(page)}: " + "; ".join(broken)


def test_the_protocol_pages_are_the_ones_the_tests_read() -> None:
    assert sorted(p.name for p in DOCS.glob("protocol*.md")) == sorted(PROTOCOL_PAGES)


def _sections(page: str) -> set[str]:
    return {slug(h.title) for h in headings(doc_text(page)) if h.level in (2, 3)}


def _listed(block: str, page: str, on: str) -> set[str]:
    """The anchors of ``page`` that links in ``block`` (written on page ``on``) point to."""
    out = set()
    for link in links(block):
        path, _, anchor = link.target.partition("#")
        if anchor and (path or on) == page:
            out.add(anchor)
    return out


@pytest.mark.parametrize("page", PROTOCOL_PAGES)
def test_each_protocol_page_opens_with_a_contents_list_of_its_sections(page: str) -> None:
    block = contents_block(doc_text(page))
    assert "Contents:" in block, f"{page}: no contents list before its first section"
    missing = _sections(page) - _listed(block, page, page)
    assert not missing, f"{page}: sections missing from its contents list: {sorted(missing)}"


def test_the_protocol_index_lists_every_page_and_its_sections() -> None:
    block = contents_block(doc_text("protocol.md"))
    for page in PROTOCOL_PAGES:
        missing = _sections(page) - _listed(block, page, "protocol.md")
        assert not missing, f"protocol.md's contents lack {page}'s {sorted(missing)}"


def test_the_scoreboard_in_30_lines_comes_first_in_the_index() -> None:
    first = next(h for h in headings(doc_text("protocol.md")) if h.level == 2)
    assert first.title == "Write a scoreboard in 30 lines"


def _code_files() -> list[Path]:
    return [p for folder in ("stream", "tests", "clients") for p in sorted((ROOT / folder).rglob("*"))
            if p.suffix in (".py", ".js") and p.is_file()]


def test_the_code_names_each_protocol_section_on_the_page_that_holds_it() -> None:
    """``docs/protocol-viewer.md, "Applying a patch"`` in a docstring or a comment: the
    page has a heading that begins with the name."""
    wrong = []
    for path in _code_files():
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r'docs/(protocol(?:-\w+)?\.md)(?:,\s+|\s+\()"([A-Z][^"\n]*)"', text):
            page, name = m.groups()
            if page not in PROTOCOL_PAGES:
                wrong.append(f"{_name(path)}: {page}: no such page")
            elif not any(h.title.startswith(name) for h in headings(doc_text(page))):
                wrong.append(f"{_name(path)}: {page} has no section {name!r}")
    assert not wrong, wrong
