"""Proof 1, the kill -9 soak: three devices send with retries while the server
is SIGKILLed again and again, from outside at random moments and from inside
between commit and ack (``stream/live/ops/failpoints.py``).

Pass: no acked event lost, none logged twice, none logged that wasn't sent,
each device's order kept, one gap-free ``seq``; and the restarted service's
state hash equals a fresh replay of its log.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
from pathlib import Path

from stream.tools.harness import Device, ServiceProcess

from .conftest import Figures, scale
from .determinism import live_equals_replay
from .officials import umpires_game

DEVICES = 3


async def test_kill_9_soak_loses_nothing_acked(tmp_path: Path, figures: Figures) -> None:
    per_device = scale(400, 10_000)
    outside_kills = scale(8, 40)        # SIGKILL from this test, at random moments
    inside_rate = scale(12, 30) / (DEVICES * per_device)  # failpoint draws per new ack
    srv = ServiceProcess(tmp_path, args=["--device-rate", "1000000", "--device-burst", "1000000"],
                         env={"ARENA_FAILPOINTS": f"after_commit={inside_rate:.6f}"},
                         log=tmp_path / "service.log")
    starts = 0

    def start() -> None:
        """Start again; a failpoint may kill it before it is seen ready: then again."""
        nonlocal starts
        while True:
            starts += 1
            srv.env["ARENA_FAILPOINTS_SEED"] = str(starts)  # a new draw after every restart
            try:
                srv.start()
                return
            except RuntimeError:
                assert srv.proc is not None
                if srv.proc.poll() != -9:
                    raise RuntimeError(f"the service did not start; its log ends:\n{srv.tail(40)}") from None
                kills["between commit and ack"] += 1

    kills = {"outside": 0, "between commit and ack": 0}
    start()
    sent: dict[str, list[str]] = {f"ump{i}": [] for i in range(DEVICES)}
    acked: dict[str, list[str]] = {f"ump{i}": [] for i in range(DEVICES)}
    duplicates = 0      # acks that said "already stored": the retry of an event whose ack was lost
    t0 = time.monotonic()
    try:
        tokens = await umpires_game(srv, DEVICES)
        done = asyncio.Event()

        async def official(i: int) -> None:
            nonlocal duplicates
            name = f"ump{i}"
            d = Device(srv.device_url, tokens[i], prefix=f"u{i}")
            rng = random.Random(i)
            n = 0
            # At least per_device events, and on until every outside kill has
            # happened: a service fast enough to finish first would skip kills.
            while n < per_device or kills["outside"] < outside_kills:
                event = ({"type": "whistle", "game": "g1"} if rng.random() < 0.8 else
                         {"type": "goal", "game": "g1", "team": rng.choice(["home", "away"])})
                event["id"] = f"u{i}-{n}"
                sent[name].append(event["id"])
                ack = await d.send(event, attempts=400)
                acked[name].append(ack["id"])
                duplicates += bool(ack["duplicate"])
                n += 1
            await d.close()

        async def supervisor() -> None:
            """Restart the server whenever it dies; kill it from outside now and then."""
            rng = random.Random(99)
            events_total = DEVICES * per_device
            while not done.is_set():
                progress = sum(map(len, acked.values())) / events_total
                # Spread the outside kills over the first two thirds of the events;
                # the devices go on sending until the last one has happened.
                due = (kills["outside"] < outside_kills
                       and progress > kills["outside"] / (1.5 * outside_kills))
                await asyncio.sleep(rng.uniform(0.02, 0.3))
                assert srv.proc is not None
                if srv.proc.poll() is not None:             # the failpoint fired
                    assert srv.proc.returncode == -9, f"the server died on its own: {srv.proc.returncode}"
                    kills["between commit and ack"] += 1
                    await asyncio.to_thread(start)
                elif due:
                    await asyncio.to_thread(srv.kill9)
                    kills["outside"] += 1
                    await asyncio.to_thread(start)

        async def officials() -> None:
            try:
                await asyncio.gather(*(official(i) for i in range(DEVICES)))
            finally:
                done.set()

        # If either side fails, the task group cancels the other at once.
        async with asyncio.timeout(scale(240, 3000)), asyncio.TaskGroup() as tg:
            tg.create_task(officials())
            tg.create_task(supervisor())
        assert srv.proc is not None and srv.proc.poll() is None
        state_hash = live_equals_replay(srv.http, token=srv.admin)
    finally:
        srv.stop()
    elapsed = time.monotonic() - t0

    with sqlite3.connect(tmp_path / "arena.sqlite") as c:
        rows = c.execute("SELECT device, client_id, seq FROM log WHERE game = 'g1' ORDER BY seq").fetchall()
        integrity = c.execute("PRAGMA integrity_check").fetchone()[0]
    seqs = [r[2] for r in rows]
    logged = {dev: [cid for d, cid, _ in rows if d == dev] for dev in acked}
    lost = sum(len(set(acked[d]) - set(logged[d])) for d in acked)
    doubled = sum(len(logged[d]) - len(set(logged[d])) for d in acked)
    unsent = sum(len(set(logged[d]) - set(sent[d])) for d in acked)
    total_kills = sum(kills.values())
    figures(f"kill -9 soak: {sum(map(len, acked.values())):,} events acked from {DEVICES} devices, "
            f"{total_kills} kills ({kills['outside']} from outside, {kills['between commit and ack']} "
            f"between commit and ack), lost {lost}, duplicates in the log {doubled}, logged but never "
            f"sent {unsent}; {duplicates} retries answered 'already stored'; {elapsed:.0f} s",
            events=sum(map(len, acked.values())), kills=total_kills, outside=kills["outside"],
            inside=kills["between commit and ack"], lost=lost, duplicates=doubled, unsent=unsent,
            retried_duplicates=duplicates, seconds=round(elapsed, 1))
    figures(f"after the last restart: integrity_check {integrity}; live state hash = replay hash "
            f"{state_hash[:16]}…")
    assert integrity == "ok"
    assert seqs == list(range(1, len(rows) + 1)), "one total order with no gap"
    for dev in acked:
        assert logged[dev] == acked[dev] == sent[dev], f"{dev}: every acked event once, in order, none extra"
    assert (lost, doubled, unsent) == (0, 0, 0)
    assert kills["outside"] >= outside_kills
    assert kills["between commit and ack"] >= scale(2, 10)
    assert total_kills >= scale(10, 50)
