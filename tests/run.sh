#!/usr/bin/env bash
# Install everything the tests need, then run every test: lint, types, pytest.
# Usage: bash tests/run.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'

python3 -m ruff check stream tests
python3 -m mypy
python3 -m pytest "$@"
