"""The package's shape, read from its source: no import circle among its modules, and no
private name of another object or library used (an aiohttp or websockets release may
change those without a word)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "stream"

#: Private names used on something other than ``self``, each for a reason of its own.
ALLOWED_PRIVATE = {
    ("stream/live/http/documents/asyncapi_doc.py", "pr._Frame"),     # the service's own protocol module
    ("stream/rules/engine.py", "fork._takes"),        # an Engine copying one of its own
}


def _module(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules ``path`` imports at run time (not under ``TYPE_CHECKING``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    here = _module(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            stem = ".".join([*base, *(node.module.split(".") if node.module else [])])
            for alias in node.names:
                full = f"{stem}.{alias.name}"
                out.add(full if full in modules else stem)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m in modules and m != _module(path)}


def test_no_module_of_the_package_imports_itself_in_a_circle() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    modules = {_module(p) for p in files}
    graph = {_module(p): _imports(p, modules) for p in files}
    # A package imports its own modules through __init__: only module -> module arrows count.
    graph = {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}
    circles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                circles.append([*stack[stack.index(d):], d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not circles, "import circles: " + "; ".join(" -> ".join(c) for c in circles)


def test_no_private_name_of_another_object_is_used() -> None:
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__")
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                found.add((path.relative_to(PACKAGE.parent).as_posix(), ast.unparse(node)))
    unexpected = sorted(found - ALLOWED_PRIVATE)
    assert not unexpected, f"private names of other objects: {unexpected}"


def _own_names(cls: ast.ClassDef) -> set[str]:
    """The names a class defines itself: its methods, class attributes and ``self.x = ...``."""
    names: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]:
                if isinstance(target, ast.Name):
                    names.add(target.id)
                elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                    names.add(target.attr)
    return names


def test_no_class_reaches_into_a_private_name_it_inherits_from_a_library() -> None:
    """A subclass of a library's class (aiohttp's sites, say) that reads ``self._x`` it never
    set depends on that library's insides."""
    classes = {node.name: node for path in PACKAGE.rglob("*.py")
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.ClassDef)}
    found = set()
    for name, cls in classes.items():
        own = set().union(*(_own_names(c) for c in _lineage(cls, classes)))
        for node in ast.walk(cls):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "self" and node.attr.startswith("_")
                    and not node.attr.startswith("__") and node.attr not in own):
                found.add(f"{name}.{node.attr}")
    assert not found, f"private names inherited from a library: {sorted(found)}"


def _lineage(cls: ast.ClassDef, classes: dict[str, ast.ClassDef]) -> list[ast.ClassDef]:
    """``cls`` and the package's own classes it derives from."""
    out, todo = [], [cls]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(classes[b.id] for b in c.bases if isinstance(b, ast.Name) and b.id in classes)
    return out
