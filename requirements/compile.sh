#!/usr/bin/env bash
# Compile the lock files from pyproject.toml: every runtime and test dependency at one
# version, with the hashes of the files the package index publishes for it.
#
#   requirements/serve.lock  what `arena-stream serve` needs, and the build backend
#   requirements/test.lock   that, and everything the test command needs
#
# Usage: bash requirements/compile.sh [pip-compile args]
#   e.g. --upgrade (everything to the newest versions pyproject.toml allows), or
#   --upgrade-package aiohttp (one package). With no argument it keeps every pin that
#   still satisfies pyproject.toml and adds only what changed there.
#
# pip-compile comes from the test lock's own pin (pip-tools), in a throwaway virtual
# environment, so that every refresh is made by the same tool. This machine's pip
# configuration (extra indexes, local wheel folders) is ignored: the hashes are the
# index's own, the ones a fresh machine downloads. A refresh is a change like any other:
# commit the two files and let the test command run on them.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$(mktemp -d)/pip-tools"
trap 'rm -rf "$(dirname "$venv")"' EXIT
tools=$(grep -E '^pip-tools==' requirements/test.lock 2>/dev/null | cut -d' ' -f1 || true)
python3 -m venv "$venv"
env -u PIP_FIND_LINKS -u PIP_EXTRA_INDEX_URL -u PIP_INDEX_URL PIP_CONFIG_FILE=/dev/null \
    "$venv/bin/pip" install --quiet "${tools:-pip-tools}"
compile() {
    env -u PIP_FIND_LINKS -u PIP_EXTRA_INDEX_URL -u PIP_INDEX_URL PIP_CONFIG_FILE=/dev/null \
        CUSTOM_COMPILE_COMMAND="bash requirements/compile.sh" \
        "$venv/bin/pip-compile" --quiet --resolver=backtracking --generate-hashes --allow-unsafe \
        --strip-extras --all-build-deps --no-emit-index-url --no-emit-find-links "$@"
}
compile -o requirements/serve.lock "$@" pyproject.toml
compile --extra test -o requirements/test.lock "$@" pyproject.toml
echo "requirements/serve.lock: $(grep -c '==' requirements/serve.lock) packages"
echo "requirements/test.lock: $(grep -c '==' requirements/test.lock) packages"
