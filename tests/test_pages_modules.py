"""The pages' modules as a whole (clients/web/*.js), read from their sources:

* no module imports itself through others: the import graph of the pages has no circle;
* the helpers every page uses are written once: ``$`` (querySelector), ``byId``
  (getElementById), ``mmss`` (m:ss) and ``pickLang`` ("en" or "es") are each defined in
  exactly one module, which the pages import;
* the handheld's service worker keeps every module the handheld loads (sw.js's SHELL), so
  that the page opens with no network whatever module it grows.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "clients" / "web"

# A statement at the start of a line (not a comment's example): `import … from "./x.js"` (over
# several lines too), `export … from "./x.js"`, `import "./x.js"`; and `import("./x.js")`.
_IMPORT = re.compile(r"""^(?:import|export)\b[^;'"]*?\bfrom\s*["']\./([\w.-]+\.js)["']"""
                     r"""|^import\s*["']\./([\w.-]+\.js)["']"""
                     r"""|(?<![\w.])import\(\s*["']\./([\w.-]+\.js)["']""", re.M)


def _modules() -> dict[str, str]:
    found = {p.name: p.read_text(encoding="utf-8") for p in sorted(WEB.glob("*.js"))}
    assert len(found) > 20, f"clients/web holds {len(found)} modules"
    return found


def _graph() -> dict[str, list[str]]:
    return {name: sorted({"".join(m) for m in _IMPORT.findall(text)}) for name, text in _modules().items()}


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
                           rf"""\s*from\s*["']\./{re.escape(owner)}["']""")
        for user in users:
            imported = taken.search(_modules()[user])
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
    html = (WEB / "handheld.html").read_text(encoding="utf-8")
    entries = re.findall(r"""<script[^>]*\bsrc=["'](?:/clients/|\./)?([\w.-]+\.js)["']""", html)
    assert "handheld-main.js" in entries, entries
    graph = _graph()
    loaded = set().union(*(_closure(graph, e) for e in entries))
    assert len(loaded) > 10, loaded
    shell = set(re.findall(r"""["']/clients/([\w./-]+)["']""", (WEB / "sw.js").read_text(encoding="utf-8")))
    assert not loaded - shell, f"sw.js's SHELL lacks {sorted(loaded - shell)}"
