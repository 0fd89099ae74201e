#!/usr/bin/env bash
# Install everything the tests need, then run every test: lint, types, pytest.
# Usage: bash tests/run.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'

# Debian's Chromium for the browser tests (Playwright drives it; it downloads
# no browser of its own), redis-server for the Redis store's tests, and
# redis-sentinel for the high-availability ones (a primary, a replica, three Sentinels).
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v redis-server >/dev/null || missing+=(redis-server)
command -v redis-sentinel >/dev/null || missing+=(redis-sentinel)
command -v node >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The Node `ws` peer of `arena-stream bench all` (its smoke test runs it): from
# the npm registry, into a cache outside the repository, before the tests run.
python3 -c "from stream.tools.bench_fanout import ensure_node_ws; print('bench peer:', ensure_node_ws()[1])"

python3 -m ruff check stream tests
python3 -m mypy
python3 -m pytest "$@"
