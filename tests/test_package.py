"""The package as a user installs it: the lock files, and a wheel that serves every page
from a virtual environment outside the repository.

* ``requirements/serve.lock`` and ``requirements/test.lock`` pin every dependency that
  pyproject.toml declares (and the build backend), at a version its range admits, with
  hashes; the serve lock is the test lock's subset, at the same versions; the environment
  the tests run in holds exactly the test lock's versions (the test command installs it).
* ``python -m build`` makes an sdist and, from that sdist, a wheel. The wheel holds every
  file of clients/web that a page loads; installed into a new virtual environment in a
  temporary folder, ``arena-stream serve --no-demo``, run from there, serves each page
  and every script, style, font and icon the pages name. The new environment reaches the
  dependencies through a path file naming this environment's site-packages (the tests run
  without a network): that folder's own path files are not read, so the repository's
  editable install is not seen, and ``stream`` is imported from the wheel alone.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from collections.abc import Iterator
from html.parser import HTMLParser
from importlib import metadata
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import aiohttp
import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from stream.live.wire.api_types import PAGES
from stream.tools.harness.processes import HOST, ServiceProcess

ROOT = Path(__file__).resolve().parents[1]
LOCKS = ROOT / "requirements"
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def pins(lock: Path, *, here: bool = False) -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes) for each pinned line of a lock file; with
    ``here``, only the lines whose marker this interpreter meets."""
    out: dict[str, tuple[str, int]] = {}
    name = ""
    for line in lock.read_text().splitlines():
        m = PIN.match(line)
        if m:
            name = canonicalize_name(m[1])
            if here and m[3] and not Marker(m[3]).evaluate():
                name = ""
                continue
            out[name] = (m[2], 0)
        elif name and line.strip().startswith("--hash=sha256:"):
            version, hashes = out[name]
            out[name] = (version, hashes + 1)
    return out


def declared() -> tuple[list[Requirement], list[Requirement]]:
    """(what the service needs, what the tests need more), as pyproject.toml says."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    build = [Requirement(r) for r in project["build-system"]["requires"]]
    runtime = [Requirement(r) for r in project["project"]["dependencies"]]
    test = [Requirement(r) for r in project["project"]["optional-dependencies"]["test"]]
    return build + runtime, test


def applies(req: Requirement) -> bool:
    return req.marker is None or req.marker.evaluate()


def test_each_lock_pins_every_declared_dependency_in_its_range_with_hashes() -> None:
    service, test = declared()
    for lock, reqs in (("serve.lock", service), ("test.lock", service + test)):
        pinned = pins(LOCKS / lock)
        assert pinned, f"{lock} pins nothing"
        for req in filter(applies, reqs):
            name = canonicalize_name(req.name)
            assert name in pinned, f"{lock} does not pin {req.name} (pyproject.toml: {req})"
            version, _ = pinned[name]
            assert req.specifier.contains(version, prereleases=True), (
                f"{lock} pins {req.name}=={version}, outside pyproject.toml's {req}: "
                "run bash requirements/compile.sh")
        unhashed = sorted(n for n, (_, hashes) in pinned.items() if hashes == 0)
        assert not unhashed, f"{lock}: pins with no hash: {unhashed}"


def test_a_lock_holds_what_an_older_python_needs_more() -> None:
    """One lock for every Python from 3.11.0: a dependency only some need is there with its
    marker (aiohttp and icalendar need typing-extensions before Python 3.13)."""
    lines = (LOCKS / "serve.lock").read_text().splitlines()
    line = next(ln for ln in lines if ln.startswith("typing-extensions=="))
    m = PIN.match(line)
    assert m and m[3], line
    assert Marker(m[3]).evaluate({"python_full_version": "3.11.0"})
    assert not Marker(m[3]).evaluate({"python_full_version": "3.13.0"})


def test_the_serve_lock_is_the_test_locks_subset_at_the_same_versions() -> None:
    serve, test = pins(LOCKS / "serve.lock"), pins(LOCKS / "test.lock")
    differ = {n: (v, test.get(n, ("absent",))[0]) for n, (v, _) in serve.items()
              if test.get(n, ("",))[0] != v}
    assert not differ, f"serve.lock vs test.lock: {differ}"


def test_the_security_minimums_hold_in_the_lock() -> None:
    pinned = pins(LOCKS / "serve.lock")
    for req in ("aiohttp>=3.14.3", "websockets>=15"):
        r = Requirement(req)
        assert r.specifier.contains(pinned[r.name][0]), f"{r.name}=={pinned[r.name][0]} is below {req}"


def test_this_environment_holds_exactly_the_test_lock() -> None:
    """The test command installed the lock: every pin is what is installed here."""
    wrong = {}
    for name, (version, _) in pins(LOCKS / "test.lock", here=True).items():
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = "not installed"
        if canonicalize_name(have) != canonicalize_name(version) and have != version:
            wrong[name] = (version, have)
    assert not wrong, f"locked vs installed: {wrong}"


# ------------------------------------------------------------------ the wheel


class _Assets(HTMLParser):
    """The same-site addresses a page loads: scripts, styles, icons, the manifest."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        ref = a.get("src") if tag in ("script", "img") else a.get("href") if tag == "link" else None
        if ref and not urlsplit(ref).scheme and not ref.startswith("//"):
            self.found.append(ref)


def _css_urls(css: str) -> list[str]:
    return [u.strip("'\"") for u in re.findall(r"url\(([^)]+)\)", css) if not u.startswith("data:")]


def _js_imports(js: str) -> list[str]:
    """The modules a script imports (``import … from "./x.js"``, ``import("./x.js")``)."""
    return re.findall(r"""(?:\bfrom|\bimport)\s*\(?\s*["']((?:\.{1,2}/|/)[^"']+)["']""", js)


WEB = ROOT / "clients" / "web"


def _page_files() -> list[Path]:
    """The files of clients/web that ship (its Python, the package's marker and the icons'
    drawing script, does not)."""
    tracked = subprocess.run(["git", "ls-files", "clients/web"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    return [ROOT / p for p in tracked if not p.endswith(".py")]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(the sdist, the wheel) that ``python -m build`` makes of the repository."""
    out = tmp_path_factory.mktemp("dist")
    run = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"python -m build failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    [sdist] = out.glob("arena_stream-*.tar.gz")
    [wheel] = out.glob("arena_stream-*.whl")
    yield sdist, wheel


@pytest.mark.slow
def test_the_wheel_holds_every_file_of_the_pages(built: tuple[Path, Path]) -> None:
    _, wheel = built
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = _page_files()
    assert len(shipped) > 10, f"git ls-files lists {len(shipped)} files in clients/web"
    missing = [p for p in shipped if f"stream/web/{p.relative_to(WEB).as_posix()}" not in names]
    assert not missing, f"the wheel lacks {missing}"
    assert "stream/examples/demo-game.jsonl" in names and "stream/py.typed" in names


@pytest.fixture(scope="module")
def installed(built: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a new virtual environment outside the repository with the wheel installed, a folder
    outside the repository where ``stream`` is imported from that wheel)."""
    _, wheel = built
    here = tmp_path_factory.mktemp("installed")
    venv = here / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--no-deps", "--no-index", str(wheel)], check=True, timeout=300)
    where = here / "elsewhere"
    where.mkdir()
    found = subprocess.run([str(python), "-c", "import stream.web, stream; print(stream.__file__)"],
                           cwd=where, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(found).is_relative_to(site), f"stream is imported from {found}, not the wheel"
    return venv, where


@pytest.mark.slow
async def test_a_wheel_installed_outside_the_repository_serves_every_page(
        installed: tuple[Path, Path], tmp_path: Path) -> None:
    venv, where = installed

    class Installed(ServiceProcess):
        def command(self) -> list[str]:
            return [str(venv / "bin" / "arena-stream"), *super().command()[3:]]

    service = Installed(tmp_path / "data", log=tmp_path / "service.log", cwd=where)
    await service.astart()
    try:
        async with aiohttp.ClientSession() as http:
            base = f"http://{HOST}:{service.port}"
            assets: set[str] = set()
            for route in PAGES:
                async with http.get(base + route) as r:
                    body = await r.text()
                    assert r.status == 200, f"{route}: {r.status} {body[:200]}"
                    assert r.content_type == "text/html"
                parser = _Assets()
                parser.feed(body)
                assert parser.found, f"{route} loads nothing from the service"
                assets |= {urljoin(base + route, ref) for ref in parser.found}
            fetched: set[str] = set()
            while assets - fetched:
                url = sorted(assets - fetched)[0]
                fetched.add(url)
                async with http.get(url) as r:
                    data = await r.read()
                    assert r.status == 200, f"{url}: {r.status}"
                    assert data, f"{url} is empty"
                    kind = r.content_type
                if kind in ("application/javascript", "text/javascript"):
                    assets |= {urljoin(url, u) for u in _js_imports(data.decode())}
                elif kind == "text/css":
                    assets |= {urljoin(url, u) for u in _css_urls(data.decode())}
                elif url.endswith(".webmanifest"):
                    assets |= {urljoin(url, icon["src"]) for icon in json.loads(data)["icons"]}
            kinds = {Path(urlsplit(u).path).suffix for u in fetched}
            assert {".js", ".css", ".woff2", ".png", ".webmanifest"} <= kinds, kinds
            # Every file written in clients/web, as written there.
            for path in _page_files():
                async with http.get(f"{base}/clients/{path.relative_to(WEB).as_posix()}") as r:
                    assert r.status == 200, f"{path}: {r.status}"
                    assert await r.read() == path.read_bytes(), f"{path} is served otherwise"
    finally:
        await asyncio.to_thread(service.stop)


def test_every_package_of_the_source_is_listed_for_the_wheel() -> None:
    """``[tool.setuptools] packages`` names every folder of ``stream/`` with an ``__init__.py``:
    one left out is missing from an installed wheel, which then can't start."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
                 ["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "stream").rglob("__init__.py")
             if "__pycache__" not in p.parts}
    assert found - listed == set(), sorted(found - listed)
