"""The pages' modules as a whole (clients/web/**/*.js), read from their sources:

* clients/web holds a folder per client and one for what they share (``shared/``), and few
  files beside them: a newcomer finds a page's modules in its folder;
* no module imports itself through others: the import graph of the pages has no circle;
  and no folder imports from one that imports from it (``shared/`` imports from no client);
* the helpers every page uses are written once: ``$`` (querySelector), ``byId``
  (getElementById), ``mmss`` (m:ss) and ``pickLang`` ("en" or "es") are each defined in
  exactly one module, which the pages import;
* the handheld's service worker keeps every module the handheld loads (sw.js's SHELL), so
  that the page opens with no network whatever module it grows.
"""

from __future__ import annotations

import posixpath
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "clients" / "web"

# A statement at the start of a line (not a comment's example): `import … from "./x.js"` (over
# several lines too), `export … from "../shared/x.js"`, `import "./x.js"`; and `import("./x.js")`.
_IMPORT = re.compile(r"""^(?:import|export)\b[^;'"]*?\bfrom\s*["'](\.\.?/[\w./-]+\.js)["']"""
                     r"""|^import\s*["'](\.\.?/[\w./-]+\.js)["']"""
                     r"""|(?<![\w.])import\(\s*["'](\.\.?/[\w./-]+\.js)["']""", re.M)


def _modules() -> dict[str, str]:
    """Every module of clients/web, by its path there (``shared/watch.js``)."""
    found = {p.relative_to(WEB).as_posix(): p.read_text(encoding="utf-8") for p in sorted(WEB.rglob("*.js"))}
    assert len(found) > 20, f"clients/web holds {len(found)} modules"
    return found


def _resolve(module: str, spec: str) -> str:
    """The path in clients/web of what ``module`` imports as ``spec`` ("../shared/watch.js")."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(module), spec))


def _graph() -> dict[str, list[str]]:
    return {name: sorted({_resolve(name, "".join(m)) for m in _IMPORT.findall(text)})
            for name, text in _modules().items()}


def _circles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Every circle found by a depth-first walk, each as the path that closes it."""
    circles: list[list[str]] = []
    done: set[str] = set()

    def walk(node: str, path: list[str]) -> None:
        if node in path:
            circles.append([*path[path.index(node):], node])
            return
        if node in done:
            return
        for nxt in graph.get(node, []):
            walk(nxt, [*path, node])
        done.add(node)

    for start in graph:
        walk(start, [])
    return circles


def test_the_import_reader_sees_a_circle() -> None:
    """The walk finds a circle where there is one (so that its silence below means none)."""
    assert _circles({"a.js": ["b.js"], "b.js": ["c.js"], "c.js": ["a.js"], "d.js": ["a.js"]})
    assert not _circles({"a.js": ["b.js", "c.js"], "b.js": ["c.js"], "c.js": []})


def test_no_module_of_the_pages_imports_itself_through_others() -> None:
    graph = _graph()
    imports = sum(len(v) for v in graph.values())
    assert imports > 40, f"only {imports} imports read from clients/web"
    missing = {f"{m} -> {t}" for m, ts in graph.items() for t in ts if t not in graph}
    assert not missing, f"modules imported but not in clients/web: {sorted(missing)}"
    circles = _circles(graph)
    assert not circles, "import circles: " + "; ".join(" -> ".join(c) for c in circles)


def _left_open(text: str) -> str | None:
    """What a plain reader of a script finds never closed: it knows comments and strings
    (quotes, backticks; a quoted string ends on its line) but not regular expressions."""
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            i = n if (j := text.find("\n", i)) < 0 else j + 1
        elif text.startswith("/*", i):
            if (j := text.find("*/", i + 2)) < 0:
                return f"the comment of line {text.count(chr(10), 0, i) + 1}"
            i = j + 2
        elif (q := text[i]) in "'\"`":
            j = i + 1
            while j < n and text[j] != q and (q == "`" or text[j] != "\n"):
                j += 2 if text[j] == "\\" else 1
            if j >= n or text[j] != q:
                return f"the {q} of line {text.count(chr(10), 0, i) + 1}"
            i = j + 1
        else:
            i += 1
    return None


def test_the_plain_reader_sees_what_is_left_open() -> None:
    assert _left_open("const m = /at `x/;\n") == "the ` of line 1"
    assert _left_open("/* a\n") == "the comment of line 1"
    assert _left_open("const s = '\\''; // it's\nconst t = `a\n${s}`;\n") is None


def test_a_plain_reader_reads_every_module_to_its_end() -> None:
    """A backtick or a quote in a regular expression is written \\x60, \\x22, \\x27, so that a
    reader that knows no regular expressions reads each module whole."""
    open_ = {name: found for name, text in _modules().items() if (found := _left_open(text))}
    assert not open_, f"left open: {open_}"


def test_the_import_reader_follows_imports_across_folders() -> None:
    graph = _graph()
    assert "shared/watch.js" in graph["handheld/handheld-feed.js"], graph["handheld/handheld-feed.js"]
    assert "shared/patch.js" in graph["shared/watch.js"], graph["shared/watch.js"]
    assert "displays/live.js" in graph["displays/scoreboard.js"], graph["displays/scoreboard.js"]


def test_the_folder_holds_a_folder_per_client_and_few_files() -> None:
    """As the repository holds it (a page an operator saves there, as docs/protocol.md's
    thirty-line scoreboard says, is not the repository's)."""
    tracked = subprocess.run(["git", "ls-files", "clients/web"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    top = {Path(p).relative_to("clients/web").parts[0] for p in tracked}
    assert len(top) <= 12, f"clients/web holds {len(top)} files and folders: {sorted(top)}"
    assert {"shared", "displays", "handheld", "committee"} <= top, sorted(top)
    loose = sorted(p for p in top if p.endswith(".js") and p != "sw.js")
    assert not loose, f"modules outside the folders: {loose}"


def test_no_folder_imports_from_one_that_imports_from_it() -> None:
    folder = posixpath.dirname
    uses = {(folder(m), folder(t)) for m, ts in _graph().items() for t in ts if folder(m) != folder(t)}
    assert uses, "no import across folders read"
    both = sorted(f"{a} <-> {b}" for a, b in uses if (b, a) in uses)
    assert not both, f"folders that import from each other: {both}"
    from_shared = sorted(t for s, t in uses if s == "shared")
    assert not from_shared, f"shared/ imports from {from_shared}"


def _definitions(name: str) -> dict[str, str]:
    """The modules that define `name` (const/let/var or function, exported or not): the
    definition's line in each."""
    n = re.escape(name)
    pattern = re.compile(rf"^[ \t]*(?:export\s+)?"
                         rf"(?:(?:const|let|var)\s+{n}\s*=|(?:async\s+)?function\s*\*?\s*{n}\s*\().*$", re.M)
    return {module: m.group(0) for module, text in _modules().items() if (m := pattern.search(text))}


def test_each_shared_helper_is_written_in_one_module() -> None:
    means = {"$": "querySelector", "byId": "getElementById", "mmss": "", "pickLang": ""}
    owners: dict[str, str] = {}
    for name, api in means.items():
        found = _definitions(name)
        assert len(found) == 1, f"{name} is defined in {sorted(found) or 'no module'}"
        [(owner, line)] = found.items()
        assert api in line, f"{owner}'s {name} is not {api}: {line.strip()}"
        owners[name] = owner
    # the pages take them from that module
    for name, owner in owners.items():
        users = [m for m, text in _modules().items() if m != owner and re.search(
            rf"(?<![\w$.]){re.escape(name)}\(", text)]
        assert users, f"no page uses {name}"
        taken = re.compile(rf"""import\s*\{{[^}}]*(?<![\w$]){re.escape(name)}(?![\w$])[^}}]*\}}"""
                           rf"""\s*from\s*["'](\.\.?/[\w./-]+)["']""")
        for user in users:
            imported = [m for m in taken.finditer(_modules()[user]) if _resolve(user, m.group(1)) == owner]
            assert imported, f"{user} uses {name} without importing it from {owner}"


def _closure(graph: dict[str, list[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(graph.get(m, []))
    return seen


def test_the_service_worker_keeps_every_module_the_handheld_loads() -> None:
    html = (WEB / "handheld" / "handheld.html").read_text(encoding="utf-8")
    entries = re.findall(r"""<script[^>]*\bsrc=["']/clients/([\w./-]+\.js)["']""", html)
    assert "handheld/handheld-main.js" in entries, entries
    graph = _graph()
    loaded = set().union(*(_closure(graph, e) for e in entries))
    assert len(loaded) > 10, loaded
    shell = set(re.findall(r"""["']/clients/([\w./-]+)["']""", (WEB / "sw.js").read_text(encoding="utf-8")))
    assert not loaded - shell, f"sw.js's SHELL lacks {sorted(loaded - shell)}"
