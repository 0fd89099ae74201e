#!/usr/bin/env bash
# Install everything the tests need, then run every test: lint, types, pytest.
# Usage: bash tests/run.sh [--quick] [pytest args]
#   --quick   the quick lane: every test but those marked slow, browser, etcd or proof
#             (a few minutes, for working on one part); the full run is the README's and CI's
#
# What it installs, each said before it is done:
#   * Python: exactly the locked versions (requirements/test.lock, hash-checked), then the
#     package itself (editable, no dependency of its own resolved), into the active virtual
#     environment; with none active, into ./.venv, which it creates if it is not there
#     (the README's first command makes the same one).
#   * Debian packages, only those missing: chromium (the browser tests; Playwright
#     downloads no browser of its own), etcd-server and etcd-client (etcd and
#     etcdctl: the etcd store's three-member cluster, the multi-node tests and the
#     operations' tests),
#     nodejs and npm (the Node peer of `arena-stream bench all`), valgrind (callgrind
#     counts the benchmarks' instructions where perf cannot), python3-venv (if ./.venv
#     must be made without it).
#     apt-get needs root: run as root, or with sudo at hand (it asks).
#   * The Node `ws` package (ws@8), from the npm registry, into ~/.cache/arena-stream/node-ws
#     (outside the repository), once.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'tests/run.sh: %s\n' "$*"; }

quick=no
if [ "${1:-}" = --quick ]; then
    quick=yes
    shift
fi

# ------------------------------------------------------------------ which Python
make_venv=no
if [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
    venv="$VIRTUAL_ENV"
    say "Python: the active virtual environment, $venv"
else
    venv="$PWD/.venv"
    [ -x .venv/bin/python ] || make_venv=yes
    say "Python: the repository's virtual environment, .venv"
fi
py="$venv/bin/python"

# ------------------------------------------------------------------ Debian packages
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v etcd >/dev/null || missing+=(etcd-server)
command -v etcdctl >/dev/null || missing+=(etcd-client)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
command -v valgrind >/dev/null || missing+=(valgrind)
if [ "$make_venv" = yes ] && ! python3 -c 'import ensurepip' 2>/dev/null; then
    missing+=(python3-venv)
fi
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        sudo=()
    elif command -v sudo >/dev/null; then
        sudo=(sudo)
    else
        say "missing Debian packages: ${missing[*]}; installing them needs root (or sudo):"
        say "  apt-get install ${missing[*]}"
        exit 1
    fi
    say "installing Debian packages with apt-get${sudo:+ (through sudo)}: ${missing[*]}"
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# ------------------------------------------------------------------ Python packages
if [ "$make_venv" = yes ]; then
    say "creating .venv (python3 -m venv .venv)"
    python3 -m venv .venv
fi
export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH"   # the venv's own commands come first
say "installing the locked test dependencies: pip install --require-hashes -r requirements/test.lock"
"$py" -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements/test.lock
say "installing the package: pip install --no-deps --no-build-isolation -e ."
"$py" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .

# ------------------------------------------------------------------ the Node peer
# The Node `ws` peer of `arena-stream bench all` (its smoke test runs it): from
# the npm registry, into a cache outside the repository, before the tests run.
say "the Node ws package for bench all's peer (npm install ws@8 into ~/.cache/arena-stream/node-ws, if not there)"
"$py" -c "from stream.tools.bench_fanout import ensure_node_ws; print('bench peer:', ensure_node_ws()[1])"

say "lint: ruff, deptry (every import declared in pyproject.toml), mypy --strict"
"$py" -m ruff check stream tests
"$py" -m deptry .
"$py" -m mypy
if [ "$quick" = yes ]; then
    say "the quick lane: pytest -m 'not (slow or browser or etcd or proof)'"
    "$py" -m pytest -m "not (slow or browser or etcd or proof)" "$@"
    exit 0
fi
"$py" -m pytest "$@"
if [ $# -eq 0 ]; then
    # Every test above ran on the loop `arena-stream serve` runs on (uvloop where it installs);
    # the proof suites run again on asyncio's own loop, which `serve --loop asyncio` uses.
    say "the proof suites again on asyncio's own loop (ARENA_STREAM_LOOP=asyncio)"
    ARENA_STREAM_LOOP=asyncio "$py" -m pytest -q tests/proof tests/test_loop.py
    # A viewer is served by the task-free endpoint on a fresh connection, by aiohttp's upgrade
    # on one that served HTTP first: the viewer protocol's tests run again on the second.
    say "the viewer protocol's tests again on connections that served HTTP first (ARENA_VIEWER_AFTER_HTTP=1)"
    ARENA_VIEWER_AFTER_HTTP=1 "$py" -m pytest -q tests/live/test_live.py tests/live/viewers/test_resume.py \
        tests/live/viewers/test_event_watch.py \
        tests/live/broadcast/test_slow_viewer.py tests/live/http/test_rosters.py tests/live/test_alerts.py \
        tests/live/test_notice_names.py tests/live/http/test_committee_feed.py tests/live/hub/test_snapshot.py
fi
