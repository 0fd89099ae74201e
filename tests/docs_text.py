"""The docs as the tests read them: a page, a section of a page, the protocol pages
together, and the headings and links of a page as GitHub renders them.

The protocol is documented on four pages: ``docs/protocol.md`` (the index and the
parts both sockets and the HTTP API share), ``protocol-device.md``,
``protocol-viewer.md`` and ``protocol-http.md``. A test that looks for a code, a
frame or a section of the protocol reads them through :func:`protocol_text` and
:func:`protocol_section`, whichever page holds it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
#: The protocol's pages, the index first.
PROTOCOL_PAGES = ("protocol.md", "protocol-device.md", "protocol-viewer.md", "protocol-http.md")


def doc_text(name: str) -> str:
    """The text of ``docs/<name>``."""
    return (DOCS / name).read_text(encoding="utf-8")


def protocol_text() -> str:
    """Every protocol page's text, one after the other."""
    return "\n".join(doc_text(page) for page in PROTOCOL_PAGES)


# ------------------------------------------------------------------ headings


@dataclass(frozen=True)
class Heading:
    level: int
    title: str
    start: int     # where its line starts in the page's text


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(offset, line) of every line outside fenced code blocks (a fence's own lines excluded)."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        m = re.match(r"(`{3,}|~{3,})", stripped)
        if fence is None and m:
            fence = m.group(1)[0] * len(m.group(1))
        elif fence is not None and stripped.startswith(fence) and stripped.strip(fence[0]) == "":
            fence = None
        elif fence is None:
            out.append((offset, line.rstrip("\n")))
        offset += len(line)
    return out


def headings(text: str) -> list[Heading]:
    """The page's ATX headings (``#`` to ``######``), code blocks' lines not counted."""
    out = []
    for offset, line in prose_lines(text):
        m = re.match(r"^(#{1,6}) +(.+?) *#* *$", line)
        if m:
            out.append(Heading(len(m.group(1)), m.group(2), offset))
    return out


def section_of(text: str, heading: str) -> str:
    """From the heading whose line starts with ``heading`` (``"## Limits"``) to the next
    heading of the same or a higher level, or the end of the page."""
    level = len(heading.split(" ", 1)[0])
    found = [h for h in headings(text) if h.level == level and f"{'#' * level} {h.title}".startswith(heading)]
    assert found, f"no heading {heading!r}"
    start = found[0].start
    ends = [h.start for h in headings(text) if h.start > start and h.level <= level]
    return text[start:ends[0]] if ends else text[start:]


def section(doc: str, heading: str) -> str:
    """A section of ``docs/<doc>``: :func:`section_of` its text."""
    return section_of(doc_text(doc), heading)


def protocol_page(heading: str) -> str:
    """The one protocol page that holds the heading ``heading`` (``"## Error codes"``)."""
    level = len(heading.split(" ", 1)[0])
    pages = [page for page in PROTOCOL_PAGES
             if any(h.level == level and f"{'#' * level} {h.title}".startswith(heading)
                    for h in headings(doc_text(page)))]
    assert len(pages) == 1, f"{heading!r} is a heading of {pages or 'no protocol page'}"
    return pages[0]


def protocol_section(heading: str) -> str:
    """A section of the protocol, from whichever of its pages holds it."""
    return section(protocol_page(heading), heading)


# ------------------------------------------------------------------ anchors and links


def slug(title: str) -> str:
    """The anchor GitHub gives a heading: its rendered text, lower-cased, with every
    character but letters, digits, ``_``, ``-`` and spaces dropped, spaces made ``-``."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", title)      # a link: its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")
    text = re.sub(r"(\*+|(?<!\w)_+|_+(?!\w))", "", text)          # emphasis, not snake_case
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor on a page; a repeated one gets ``-1``, ``-2``, … as on GitHub."""
    seen: dict[str, int] = {}
    out = set()
    for h in headings(text):
        base = slug(h.title)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


@dataclass(frozen=True)
class Link:
    line: int       # 1-based
    target: str     # as written: "protocol-viewer.md#resume", "#limits", "../stream/cli.py"


#: ``[text](target)`` or ``![alt](target "title")``; the text may hold one level of brackets.
LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')


def links(text: str) -> list[Link]:
    """The inline links and images of a page's prose (code blocks and code spans left out)."""
    line_starts = [m.start() for m in re.finditer(r"^", text, re.M)]
    out = []
    for offset, line in prose_lines(text):
        number = line_starts.index(offset) + 1
        plain = re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)
        for m in LINK.finditer(plain):
            out.append(Link(number, m.group(1)))
    return out


def is_external(target: str) -> bool:
    return re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) is not None


def contents_block(text: str) -> str:
    """What a page says before its first ``##`` heading: its title, intro and contents list."""
    later = [h.start for h in headings(text) if h.level >= 2]
    return text[:later[0]] if later else text
