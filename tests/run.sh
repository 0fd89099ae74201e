#!/usr/bin/env bash
# Install everything the tests need, then run every test: lint, types, pytest.
# Usage: bash tests/run.sh [pytest args]
#
# What it installs, each said before it is done:
#   * Python: the package and its test extras (pip install -e '.[test]'), into the active
#     virtual environment; with none active, into ./.venv if it exists (the README's
#     first command makes it), else into python3 itself unless that Python is managed
#     by the system (PEP 668: Debian's, which refuses pip), in which case ./.venv is
#     created for them.
#   * Debian packages, only those missing: chromium (the browser tests; Playwright
#     downloads no browser of its own), redis-server and redis-sentinel (the Redis
#     store and its high-availability tests), nodejs and npm (the Node peer of
#     `arena-stream bench all`), python3-venv (if ./.venv must be made without it).
#     apt-get needs root: run as root, or with sudo at hand (it asks).
#   * The Node `ws` package (ws@8), from the npm registry, into ~/.cache/arena-stream/node-ws
#     (outside the repository), once.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'tests/run.sh: %s\n' "$*"; }

# ------------------------------------------------------------------ which Python
# A Python that refuses pip outside a virtual environment (PEP 668) has the
# EXTERNALLY-MANAGED marker beside its standard library.
externally_managed() {
    "$1" - <<'EOF'
import os, sys, sysconfig
marker = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
sys.exit(0 if sys.prefix == sys.base_prefix and os.path.exists(marker) else 1)
EOF
}

make_venv=no
if [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
    py="$VIRTUAL_ENV/bin/python"
    say "Python: the active virtual environment, $VIRTUAL_ENV"
elif [ -x .venv/bin/python ]; then
    py=.venv/bin/python
    say "Python: the repository's virtual environment, .venv"
elif externally_managed python3; then
    py=.venv/bin/python
    make_venv=yes
    say "Python: $(command -v python3) is managed by the system (PEP 668): the tests get a virtual environment, .venv"
else
    py=python3
    say "Python: $(command -v python3) (no virtual environment active; it takes pip installs)"
fi

# ------------------------------------------------------------------ Debian packages
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v redis-server >/dev/null || missing+=(redis-server)
command -v redis-sentinel >/dev/null || missing+=(redis-sentinel)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
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
if [ "$py" != python3 ]; then  # the venv's own commands (ruff, arena-stream) come first on PATH
    VIRTUAL_ENV="$(cd "$(dirname "$py")/.." && pwd)"
    export VIRTUAL_ENV PATH="$VIRTUAL_ENV/bin:$PATH"
fi
say "installing the package and its test dependencies: pip install -e '.[test]'"
"$py" -m pip install --quiet --disable-pip-version-check -e '.[test]'

# ------------------------------------------------------------------ the Node peer
# The Node `ws` peer of `arena-stream bench all` (its smoke test runs it): from
# the npm registry, into a cache outside the repository, before the tests run.
say "the Node ws package for bench all's peer (npm install ws@8 into ~/.cache/arena-stream/node-ws, if not there)"
"$py" -c "from stream.tools.bench_fanout import ensure_node_ws; print('bench peer:', ensure_node_ws()[1])"

"$py" -m ruff check stream tests
"$py" -m mypy
"$py" -m pytest "$@"
if [ $# -eq 0 ]; then
    # Every test above ran on the loop `arena-stream serve` runs on (uvloop where it installs);
    # the proof suites run again on asyncio's own loop, which `serve --loop asyncio` uses.
    say "the proof suites again on asyncio's own loop (ARENA_STREAM_LOOP=asyncio)"
    ARENA_STREAM_LOOP=asyncio "$py" -m pytest -q tests/proof tests/test_loop.py
fi
