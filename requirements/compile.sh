#!/usr/bin/env bash
# Compile the lock files from pyproject.toml: every runtime and test dependency at one
# version, with the hashes of the files the package index publishes for it.
#
#   requirements/serve.lock  what `arena-stream serve` needs, and the build backend
#   requirements/test.lock   that, and everything the test command needs
#
# Usage: bash requirements/compile.sh [uv pip compile args]
#   e.g. --upgrade (everything to the newest versions pyproject.toml allows), or
#   --upgrade-package aiohttp (one package). With no argument it keeps every pin that
#   still satisfies pyproject.toml and adds only what changed there.
#
# The resolution is universal: one lock for every Python from 3.11.0 on, with markers
# where a dependency needs one (aiohttp and icalendar need typing-extensions before
# Python 3.13). It is made by `uv pip compile` at the test lock's own pin of
# uv, in a throwaway virtual environment, so that every refresh is made by the same
# tool; this machine's pip configuration (extra indexes, local wheel folders) is not
# read: the hashes are the index's own, the ones a fresh machine downloads. A refresh is
# a change like any other: commit the two files and let the test command run on them.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
uv=$(grep -E '^uv==' requirements/test.lock 2>/dev/null | cut -d' ' -f1 || true)
python3 -m venv "$work/venv"
env -u PIP_FIND_LINKS -u PIP_EXTRA_INDEX_URL -u PIP_INDEX_URL PIP_CONFIG_FILE=/dev/null \
    "$work/venv/bin/pip" install --quiet "${uv:-uv}"
# The build backend (pyproject.toml's build-system) is locked too: the README's commands
# build the package with it, --no-build-isolation.
python3 -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"]))' \
    > "$work/build.in"
compile() {
    local out=$1
    shift
    env -u PIP_FIND_LINKS -u PIP_EXTRA_INDEX_URL -u PIP_INDEX_URL -u UV_INDEX_URL -u UV_EXTRA_INDEX_URL \
        UV_NO_CONFIG=1 "$work/venv/bin/uv" pip compile --quiet --universal --python-version 3.11 \
        --generate-hashes --no-strip-markers --custom-compile-command "bash requirements/compile.sh" \
        --output-file "$out" "$@" pyproject.toml "$work/build.in"
    # The build.in file's throwaway path, in the lock's "via" lines, named for what it is.
    sed -i "s|$work/build.in|pyproject.toml (build-system)|" "$out"
}
compile requirements/serve.lock "$@"
compile requirements/test.lock --extra test "$@"
echo "requirements/serve.lock: $(grep -cE '^[a-z0-9]' requirements/serve.lock) packages"
echo "requirements/test.lock: $(grep -cE '^[a-z0-9]' requirements/test.lock) packages"
