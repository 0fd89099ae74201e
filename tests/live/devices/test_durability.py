"""Acked means durable: a full disk answers "not stored, retry", and a server
killed with SIGKILL while devices send loses nothing it acked."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from pathlib import Path

import pytest

from stream.store.sqlite import SqliteStore
from stream.tools.harness import Device, ServiceProcess

from ...rules.script import AWAY, HOME
from ..conftest import Server


async def test_a_store_failure_is_answered_with_retry_and_nothing_is_lost(server: Server) -> None:
    """The disk fills up mid-game (SQLite's own SQLITE_FULL): the device hears
    "not stored, retry", nothing half-applied shows, and its retry lands once."""
    await server.setup_game()
    store = server.svc.hub.store
    assert isinstance(store, SqliteStore)
    tk = await server.device("timekeeper")
    ump = await server.device("umpire")
    await tk.send({"type": "clock.start", "game": "g1"})
    pages = await store._submit(lambda c: c.execute("PRAGMA page_count").fetchone()[0])
    await store._submit(lambda c: c.execute(f"PRAGMA max_page_count={pages}"))  # the disk is full
    goals = 0
    for n in range(500):
        reply = await ump.send_once({"type": "goal", "game": "g1", "team": "home", "id": f"g{n}"})
        if reply["type"] == "error":
            break
        goals += 1
    assert reply["type"] == "error"
    assert (reply["code"], reply["retry"], reply["id"]) == ("not_stored", True, f"g{n}")
    assert f"g{n}" not in [r[3] for r in server.log_rows()]
    async with asyncio.timeout(10):  # the service reloads its log before it takes events again
        await server.svc.hub.recovered()
    # The engine was reloaded from the log: the unstored goal left no trace.
    _, game = await server.api("GET", "/api/games/g1")
    assert game["view"]["score"]["home"] == goals
    await store._submit(lambda c: c.execute("PRAGMA max_page_count=1073741823"))  # space again
    ack = await ump.send({"type": "goal", "game": "g1", "team": "home", "id": f"g{n}"})
    assert ack["type"] == "ack" and not ack["duplicate"]
    assert [r[3] for r in server.log_rows()].count(f"g{n}") == 1
    _, game = await server.api("GET", "/api/games/g1")
    assert game["view"]["score"]["home"] == goals + 1
    await tk.close()
    await ump.close()


# --------------------------------------------------------------------- kill -9


@pytest.mark.slow
async def test_kill_9_while_three_devices_send_loses_no_acked_event(tmp_path: Path) -> None:
    srv = ServiceProcess(tmp_path)
    srv.start()
    try:
        srv.post("/api/games", {"id": "s1", "game": "g1", "event": "cup", "class": "club", "handicap": 8,
                                "teams": {"home": {"team": "h", "players": HOME},
                                          "away": {"team": "a", "players": AWAY}}})
        tokens = [srv.post("/api/tokens", {"role": "umpire", "device": f"ump{i}", "game": "g1"})["token"]
                  for i in range(3)]
        tk = srv.post("/api/tokens", {"role": "timekeeper", "device": "tk", "game": "g1"})["token"]
        url = srv.device_url
        timer = Device(url, tk, prefix="tk")
        await timer.send({"type": "clock.start", "game": "g1"})
        await timer.close()

        per_device = 150
        min_kills = 3
        kills = 0
        acked: dict[str, list[str]] = {f"ump{i}": [] for i in range(3)}
        sent: dict[str, list[str]] = {f"ump{i}": [] for i in range(3)}

        async def official(i: int) -> None:
            d = Device(url, tokens[i], prefix=f"u{i}")
            rng = random.Random(i)
            n = 0
            # At least per_device events, and on until the third kill: a fast service
            # would otherwise finish before it.
            while n < per_device or kills < min_kills:
                event = ({"type": "whistle", "game": "g1"} if rng.random() < 0.8 else
                         {"type": "goal", "game": "g1", "team": rng.choice(["home", "away"])})
                event["id"] = f"u{i}-{n}"
                sent[f"ump{i}"].append(event["id"])
                ack = await d.send(event, attempts=200)
                acked[f"ump{i}"].append(ack["id"])
                n += 1
            await d.close()

        async def killer() -> None:
            nonlocal kills
            rng = random.Random(99)
            while (any(len(a) < per_device for a in acked.values()) or kills < min_kills) and kills < 8:
                await asyncio.sleep(rng.uniform(0.05, 0.4))
                await asyncio.to_thread(srv.kill9)
                kills += 1
                await asyncio.to_thread(srv.start)

        async with asyncio.timeout(240):
            kill_task = asyncio.create_task(killer())
            await asyncio.gather(*(official(i) for i in range(3)))
            await kill_task
        assert kills >= min_kills
    finally:
        srv.stop()

    with sqlite3.connect(tmp_path / "arena.sqlite") as c:
        rows = c.execute("SELECT device, client_id, seq FROM log WHERE game = 'g1' ORDER BY seq").fetchall()
    seqs = [r[2] for r in rows]
    assert seqs == list(range(1, len(rows) + 1)), "one total order with no gap"
    for dev in acked:
        logged = [cid for d, cid, _ in rows if d == dev]
        assert logged == acked[dev] == sent[dev], f"{dev}: every acked event once, in order, none extra"
