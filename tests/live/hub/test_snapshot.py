"""Snapshots, as the service uses them: a clean shutdown writes one of the whole
log; the restart decodes it and folds nothing, and serves exactly what a full
fold serves (state, views, seqs, and a device's retry of an event from before
the restart gets its first ack, as a duplicate). Without a snapshot, or with
one from other code, the service folds the whole log to the same state."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from stream.live.hub import snapshot as snap

from ..conftest import RunningServer, Server, Viewer

PLAY: list[dict[str, Any]] = [
    {"type": "clock.start"}, {"type": "card", "color": "yellow", "conduct": "arguing"},
    {"type": "goal", "team": "away", "player": "a1"}, {"type": "clock.start"}, {"type": "whistle"},
    {"type": "clock.start"}, {"type": "goal", "team": "home", "player": "h1", "points": 2},
    {"type": "whistle"},
]


async def play(server: Server, tag: str, rounds: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(event as sent, its ack) for ``rounds`` times the script, from the device ``desk``
    (an admin token: the timekeeper's events and the umpire's)."""
    ump = await server.device("admin", name="desk")
    out = []
    try:
        for r in range(rounds):
            for i, body in enumerate(PLAY):
                event = {**body, "game": "g1", "id": f"{tag}-{r}-{i}"}
                if body["type"] == "card":  # a yellow to each in turn: nobody is sent off
                    event["player"] = ["h2", "a2", "h3", "a3"][r % 4]
                out.append((event, await ump.send(dict(event))))
    finally:
        await ump.close()
    return out


async def seen(server: Server) -> tuple[Any, Any, Any]:
    """What the service serves: the state digest, the game, and a viewer's snapshot view."""
    _, state = await server.api("GET", "/api/state")
    _, game = await server.api("GET", "/api/games/g1")
    viewer = await Viewer.open(server.watch_url, game="g1")
    try:
        view = (await viewer.next("snapshot"))["view"]
    finally:
        await viewer.close()
    return state, game, view


def snapshot_row(data: Path) -> tuple[str, int] | None:
    with sqlite3.connect(data / "arena.sqlite") as c:
        row = c.execute("SELECT position, length(blob) FROM snapshot").fetchone()
    return None if row is None else (row[0], row[1])


async def test_a_restart_serves_from_the_snapshot_what_the_whole_log_says(tmp_path: Path) -> None:
    async with RunningServer(tmp_path) as s:
        await s.setup_game()
        sent = await play(s, "a", 5)
        before = await seen(s)
    found = snapshot_row(tmp_path)
    assert found is not None and found[0] == "41"  # the setup and 40 events: all of them

    async with RunningServer(tmp_path) as s:
        hub = s.svc.hub
        assert (hub.folded, hub.snapshots.position, hub.position) == (0, "41", "41")
        assert await seen(s) == before
        ump = await s.device("admin", name="desk")
        for event, ack in (sent[0], sent[17], sent[-1]):  # retries of events from before the restart
            again = await ump.send(dict(event))
            assert again == {**ack, "duplicate": True, "notices": []}
        await ump.close()
        more = await play(s, "b", 2)
        assert more[-1][1]["seq"] == 57
        after = await seen(s)

    # No snapshot: the whole log is folded, to the same state, and a new snapshot written.
    with sqlite3.connect(tmp_path / "arena.sqlite") as c:
        c.execute("DELETE FROM snapshot")
    async with RunningServer(tmp_path) as s:
        assert (s.svc.hub.folded, s.svc.hub.snapshots.position) == (57, None)
        assert await seen(s) == after
    found = snapshot_row(tmp_path)
    assert found is not None and found[0] == "57"


async def test_a_snapshot_from_other_code_is_ignored(tmp_path: Path, monkeypatch: Any) -> None:
    async with RunningServer(tmp_path) as s:
        await s.setup_game()
        await play(s, "a", 3)
        before = await seen(s)
    monkeypatch.setattr(snap, "FORMAT", snap.FORMAT + 1)  # the next build
    async with RunningServer(tmp_path) as s:
        assert (s.svc.hub.folded, s.svc.hub.snapshots.position) == (25, None)
        assert await seen(s) == before
    async with RunningServer(tmp_path) as s:  # its own snapshot, written at shutdown, is used
        assert (s.svc.hub.folded, s.svc.hub.snapshots.position) == (0, "25")
        assert await seen(s) == before
