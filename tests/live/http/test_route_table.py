"""The HTTP layer is written one way: one route table (``schemas.ROUTES``, a table per
resource under stream/live/http/), which the app routes and the OpenAPI document lists;
one ``send`` and one ``problem`` for every handler; no route registered anywhere else."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from aiohttp import web

from stream.live.app import build_app
from stream.live.http.documents import schemas
from stream.live.ops.config import Config

LIVE = Path(__file__).resolve().parents[3] / "stream" / "live"
REGISTERS = {"add_routes", "add_route", "add_get", "add_post", "add_static", "add_resource"}


def _served(app: web.Application) -> list[tuple[str, str]]:
    out = []
    for route in app.router.routes():
        path = route.resource.canonical if route.resource is not None else ""
        if isinstance(route.resource, web.StaticResource):
            path = f"{path.rstrip('/')}/{{filename}}"
        if route.method != "HEAD":
            out.append((route.method, path))
    return out


def test_the_app_serves_exactly_the_route_table(tmp_path: Path) -> None:
    table = [(r.method, r.path) for r in schemas.ROUTES]
    assert len(table) == len(set(table)), "a route is in the table twice"
    served = _served(build_app(Config(data_dir=tmp_path, demo=False), secret=b"x" * 32))
    assert sorted(served) == sorted(table)


def test_the_openapi_paths_are_the_route_table_in_its_order() -> None:
    doc = json.loads(schemas.openapi_json())
    listed = [(method.upper(), path) for path, ops in doc["paths"].items() for method in ops]
    table = [(r.method, r.path) for r in schemas.ROUTES]
    assert sorted(listed) == sorted(table)
    assert list(doc["paths"]) == list(dict.fromkeys(r.path for r in schemas.ROUTES))


def test_the_openapi_description_lists_every_route_the_app_serves(tmp_path: Path) -> None:
    """The description's list of routes is the one a reader skims: every route served is in it,
    a line each, and nothing else is."""
    listed = json.loads(schemas.openapi_json())["info"]["description"].split("Routes:\n\n", 1)[1]
    lines = [line.split() for line in listed.split("\n\n", 1)[0].splitlines()]
    served = _served(build_app(Config(data_dir=tmp_path, demo=False), secret=b"x" * 32))
    assert sorted((words[0], words[1]) for words in lines) == sorted(served)


def test_routes_are_registered_and_answered_in_one_place_only() -> None:
    """Only ``http/route.py`` registers routes; only ``http/responses.py`` defines the JSON
    answer and the problem (no module keeps a copy of its own)."""
    registering, answering = set(), set()
    for path in LIVE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        name = path.relative_to(LIVE).as_posix()
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in REGISTERS):
                registering.add(name)
            if (isinstance(node, ast.FunctionDef) and node.name.lstrip("_") in ("send", "problem")
                    and "status" in [a.arg for a in node.args.args]):    # an HTTP answer's
                answering.add(name)
    assert registering == {"http/route.py"}
    assert answering == {"http/responses.py"}
