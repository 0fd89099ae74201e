"""The one rule for applying a patch (docs/protocol-viewer.md, "Applying a patch"), in both
languages: clients/web/shared/patch.js, run in Chromium as the pages load it, and the Python
client's apply_patch take the same patches to the same views and refuse the same
paths. The browser's never changes the view it is given, so a page that must resync
still holds its last good view."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from playwright.async_api import Page

from ..live.conftest import Server
from ..sdk import sdk

VIEW: dict[str, Any] = {
    "score": {"home": 0, "away": 0},
    "clock": {"running": False, "at": 1},
    "teams": {"home": {"lineup": ["h1", "h2"], "short": [{"player": "h2", "reason": "box"}]}},
    "players": [{"id": "h1", "box": None, "yellows": 0},
                {"id": "h2", "box": {"owed_ms": 120000, "eligible": False}, "yellows": 2}],
    "postgame": [],
}

APPLIED: list[list[Any]] = [
    [["score.home", 1], ["clock.running", True]],
    [["players.h2.box.eligible", True], ["players.h2.box.owed_ms", 0]],
    [["players.h1.box", {"owed_ms": 1}]],                                  # null -> an object
    [["players.h3", {"id": "h3", "box": None, "yellows": 0}]],             # appended
    [["players.h2", None]],                                                # removed
    [["players.h2", {"id": "h2", "box": None, "yellows": 3}]],             # replaced
    [["teams.home.short", []], ["postgame", [{"player": "h1", "level": "red"}]]],  # lists: whole
    [["", {"score": {"home": 9}}], ["score.home", 10]],                    # the whole view, then a path in it
    [],
]

# (the patch, the path it fails on)
MISSING: list[tuple[list[Any], str]] = [
    ([["score.home", 3], ["players.ghost.box", None]], "players.ghost.box"),   # no such player
    ([["players.h1.box.eligible", True]], "players.h1.box.eligible"),          # through null
    ([["score.overtime", 1]], "score.overtime"),                               # no such field
    ([["score.home.x", 1]], "score.home.x"),                                   # through a number
    ([["teams.home.short.h2", None]], "teams.home.short.h2"),                  # a list without ids
    ([["teams.home.lineup.h1", {"id": "h1"}]], "teams.home.lineup.h1"),        # a list of strings
    ([["players.ghost", None]], "players.ghost"),                              # nothing to remove
    ([["players.h3", {"id": "h4"}]], "players.h3"),                            # the item's id is another
    ([["players.h3", 5]], "players.h3"),                                       # an item is an object
    ([["clock.running", True], ["nope.deeper", 1]], "nope.deeper"),
    ([["", None]], ""),                                                        # the view is an object
]

RUN = """async ([view, patches]) => {
  const { applyPatch } = await import("/clients/patch.js");
  return patches.map((patch) => {
    const before = JSON.stringify(view);
    const result = applyPatch(view, patch);
    return { ...result, untouched: JSON.stringify(view) === before };
  });
}"""


def python(view: dict[str, Any], patch: list[Any]) -> dict[str, Any]:
    try:
        out = sdk.apply_patch(copy.deepcopy(view), [sdk.pr.Patch(p, v) for p, v in patch])
    except sdk.PatchError as err:
        return {"ok": False, "path": err.path}
    return {"ok": True, "view": out}


@pytest.fixture
async def on_server(server: Server, page: Page) -> Page:
    await page.goto(f"{server.http}/healthz")       # any page of the service's origin
    return page


async def test_both_clients_apply_the_same_patches_alike(on_server: Page) -> None:
    results = await on_server.evaluate(RUN, [VIEW, APPLIED])
    for patch, js in zip(APPLIED, results, strict=True):
        assert js["ok"], (patch, js)
        assert js["untouched"], patch                  # a patched copy; the view given stays
        assert js["view"] == python(VIEW, patch)["view"], patch


async def test_both_clients_refuse_the_same_missing_paths(on_server: Page) -> None:
    results = await on_server.evaluate(RUN, [VIEW, [patch for patch, _ in MISSING]])
    for (patch, path), js in zip(MISSING, results, strict=True):
        assert (js["ok"], js["path"]) == (False, path), (patch, js)
        assert js["reason"], patch
        assert js["untouched"], patch                  # nothing applied, not even the entries before
        assert python(VIEW, patch) == {"ok": False, "path": path}, patch
