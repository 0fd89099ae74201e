"""The store stands below the service (README, "Where things are"): ``stream/store/``
imports nothing from ``stream.live`` (the service) nor ``stream.rules`` (the engine), and
its tests need no service either: every module they reach, following imports through the
repository, is outside ``stream.live``. Read from the source (``ast``), imports inside
functions included."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_file(name: str) -> Path | None:
    """The repository's file of module ``name`` (``stream...`` or ``tests...``), if any."""
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every module the file ``path`` imports."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return imports_in(path.read_text(encoding="utf-8"), package)


def imports_in(source: str, package: str) -> set[str]:
    """Every module ``source`` (a module of ``package``) imports, as absolute names, with
    each ``from m import x`` also as ``m.x`` where that is a module of the repository."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                source_name = ".".join(parts + ([node.module] if node.module else []))
            else:
                source_name = node.module or ""
            out.add(source_name)
            out.update(f"{source_name}.{alias.name}" for alias in node.names
                       if module_file(f"{source_name}.{alias.name}") is not None)
    return out


def reached(start: list[Path]) -> dict[str, str]:
    """Every repository module reached from ``start`` by imports: name -> who imported it."""
    seen: dict[str, str] = {module_name(p): "" for p in start}
    todo = list(start)
    while todo:
        path = todo.pop()
        for name in imported(path):
            parts = name.split(".")
            # A module is reached with every package above it (its __init__ runs first).
            for k in range(1, len(parts) + 1):
                sub = ".".join(parts[:k])
                found = module_file(sub) if parts[0] in ("stream", "tests") else None
                if found is not None and sub not in seen:
                    seen[sub] = module_name(path)
                    todo.append(found)
    return seen


def importers_of(prefix: str, modules: dict[str, str]) -> list[str]:
    return sorted(f"{name} (from {by})" for name, by in modules.items()
                  if name == prefix or name.startswith(prefix + "."))


def test_the_store_imports_neither_the_service_nor_the_engine() -> None:
    store = sorted((ROOT / "stream" / "store").glob("*.py"))
    assert len(store) > 3
    for path in store:
        bad = sorted(n for n in imported(path) if n.startswith(("stream.live", "stream.rules")))
        assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"


def test_the_store_tests_reach_nothing_of_the_service() -> None:
    tests = sorted((ROOT / "tests" / "store").glob("*.py"))
    modules = reached(tests)
    assert "stream.store.etcd" in modules and "stream.store.sqlite" in modules
    assert importers_of("stream.live", modules) == []


def test_the_scan_sees_the_service_where_it_is_imported() -> None:
    """The checks can fail: an import of the service, relative, absolute or inside a
    function, is seen; so is the service a service test reaches through its helpers."""
    probe = "from ..live.hub.hub import Hub\ndef f():\n    from stream.live.hub import snapshot\n"
    seen = imports_in(probe, "stream.store")
    assert {"stream.live.hub.hub", "stream.live.hub", "stream.live.hub.snapshot"} <= seen
    assert imports_in("from . import etcd", "stream.store") >= {"stream.store", "stream.store.etcd"}
    service = reached([ROOT / "tests" / "live" / "hub" / "test_snapshot.py"])
    assert "stream.live.hub.hub" in service and "tests.live.conftest" in service
