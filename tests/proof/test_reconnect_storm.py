"""Proof: a reconnect storm. 1,000 viewers follow a game while the officials'
device sends events; every connection is reset at the same moment (the viewer
workers abort them all: an RST each, as a network that goes away leaves them);
events keep coming during the outage; then every viewer reconnects at once
with the ``since``/``epoch`` it last saw, as a display does.

Pass: every viewer's ``seq`` runs on without a gap or a repeat from its first
snapshot, across the cut, to the last event, with no reset snapshot (a resume
is served exactly); the last viewer has caught up with live (it has been sent
everything it missed: the ``presence`` frame that follows the catch-up) within
5 s of the cut; and afterwards the live state hash equals a fresh replay of
the log.

The service runs as a subprocess; the viewers live in worker processes
(``storm_worker``) on the harness's Sans-I/O viewer (``TimedViewer``).
"""

from __future__ import annotations

import asyncio
import math
import os
import sys
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from stream.tools.harness import GAME, EventStream, LineWorkers, Processes, percentile

from .conftest import Figures, scale
from .determinism import live_equals_replay
from .storm_worker import DELTA, RESET

ROOT = Path(__file__).resolve().parents[2]
RATE = 40.0          # events per second from the device, all through
OUTAGE = 1.0         # seconds between the cut and the reconnect (a display waits about that)
WINDOW = 5.0         # seconds from the cut to the last viewer caught up


class StormWorkers(LineWorkers):
    """``storm_worker`` processes, driven a line at a time on their stdin."""

    async def start(self, url: str, count: int, workers: int) -> int:
        """Start the workers; wait until each has opened its viewers. Returns how many opened."""
        for w in range(workers):
            n = count // workers + (w < count % workers)
            out = self.group.workdir / f"storm-w{w}.msgpack"
            self.spawn(f"storm-w{w}", out, "-m", "tests.proof.storm_worker", "--url", url, "--count", str(n),
                       "--out", str(out))
        opened = 0
        for line in await self.read("ready", 60 + count / 20):
            words = line.split()
            assert words[2] == "0", f"viewers failed to open: {line}"
            opened += int(words[1])
        return opened


def listen_overflows() -> int:
    """The kernel's count of connections dropped because a listen queue was full (all sockets)."""
    with open("/proc/net/netstat") as f:
        lines = [line.split() for line in f if line.startswith("TcpExt:")]
    return int(dict(zip(lines[0], lines[1], strict=True)).get("ListenOverflows", 0))


def check_viewer(v: dict[str, Any], last: int) -> tuple[int, int, int]:
    """(missing seqs, repeated seqs, reset snapshots) of one viewer's whole stream, which
    must start with a snapshot and end at ``last``."""
    seqs, kinds = array("q"), array("b")
    seqs.frombytes(v["seqs"])
    kinds.frombytes(v["kinds"])
    gaps = dups = resets = 0
    prev: int | None = None
    for s, k in zip(seqs, kinds, strict=True):
        if prev is None:
            assert k != DELTA, "a delta before the first snapshot"
            prev = s
        elif k != DELTA:
            resets += 1  # a snapshot after the first: the resume was not served exactly
            assert k == RESET
            prev = max(prev, s)
        elif s <= prev:
            dups += 1
        else:
            gaps += s - prev - 1
            prev = s
    assert prev is not None, "the viewer got nothing"
    return gaps + max(0, last - prev), dups, resets


@dataclass
class Storm:
    """One cut-and-resume, as the test saw it (``time.time_ns()``)."""

    cut: int
    resume: int
    failed: int = 0
    overflows: int = 0
    resync: list[float] = field(default_factory=list)    # s from the cut, per viewer, sorted
    after: list[float] = field(default_factory=list)     # s from the reconnect, per viewer, sorted


async def test_reconnect_storm_resumes_every_viewer_exactly(
        tmp_path: Path, figures: Figures, monkeypatch: pytest.MonkeyPatch) -> None:
    viewers = scale(1000, 1000)
    storms = scale(1, 3)
    workers = 2  # one per core
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH"))
                                                     if p))
    data = tmp_path / "data"
    stream: EventStream | None = None
    done: list[Storm] = []
    async with Processes(tmp_path) as group:
        try:
            node = group.service(data, args=["--device-rate", "1000000", "--device-burst", "1000000"])
            await node.astart()
            stream = await EventStream.for_game(node, RATE)
            pool = StormWorkers(group)
            t_open = time.monotonic()
            assert await pool.start(node.watch(GAME), viewers, workers) == viewers
            open_s = time.monotonic() - t_open

            stop = asyncio.Event()
            sending = asyncio.create_task(stream.run(stop=stop))
            for _ in range(storms):
                await asyncio.sleep(1.5)                   # live
                t_cut = time.time_ns()
                await pool.say("cut", "cut", 30)
                await asyncio.sleep(OUTAGE)                # events go on; nobody watches
                storm = Storm(t_cut, time.time_ns())
                storm.overflows = -listen_overflows()
                resumed = await pool.say("resume", "resumed", 60)
                storm.overflows += listen_overflows()
                storm.failed = sum(int(line.split()[2]) for line in resumed)
                done.append(storm)
            await asyncio.sleep(1.0)                       # live again
            stop.set()
            await sending
            assert not stream.refused, stream.refused[:3]
            last = max(stream.sends)
            reports = await pool.finish(last, 15)
            state = await asyncio.to_thread(live_equals_replay, node.http, token=node.admin)
        finally:
            if stream is not None:
                await stream.close()

    rows = [v for rep in reports for v in rep["viewers"]]
    assert len(rows) == viewers
    gaps = dups = resets = 0
    for v in rows:
        g, d, r = check_viewer(v, last)
        gaps, dups, resets = gaps + g, dups + d, resets + r
    for k, storm in enumerate(done, 1):
        # per viewer, one presence per connection ([0]: the first); none: it never got back
        caught = [array("q", v["caught_up"]) for v in rows]
        storm.resync = sorted((c[k] - storm.cut) / 1e9 if len(c) > k else math.inf for c in caught)
        storm.after = sorted((c[k] - storm.resume) / 1e9 if len(c) > k else math.inf for c in caught)
    during = [sum(1 for t in stream.sends.values() if st.cut <= t < st.resume) for st in done]
    worst = max(done, key=lambda st: st.resync[-1])
    failed = sum(st.failed for st in done)
    overflows = sum(st.overflows for st in done)
    retries = sum(v["retries"] for v in rows)

    figures(f"{viewers} viewers in {workers} worker processes (opened in {open_s:.1f} s), "
            f"{RATE:g} events/s; {storms} storm(s): all cut at once (RST), reconnect {OUTAGE:g} s later "
            "with since/epoch", viewers=viewers, rate=RATE, outage_s=OUTAGE, storms=storms)
    figures(f"events during the outage: {', '.join(map(str, during))}; last seq {last}",
            events_during_outage=min(during), last_seq=last)
    for k, st in enumerate(done, 1):
        figures(f"storm {k}: from the cut to caught up with live: max {st.resync[-1]:.2f} s, "
                f"p99 {percentile(st.resync, 0.99):.2f} s, p50 {percentile(st.resync, 0.5):.2f} s "
                f"(goal <= {WINDOW:g} s); from the reconnect: max {st.after[-1]:.2f} s, "
                f"p99 {percentile(st.after, 0.99):.2f} s; accept queue overflows {st.overflows}")
    figures("(accept queue overflows: the kernel's ListenOverflows, machine-wide; each one a SYN "
            "retried a second later)", resync_max_s=worst.resync[-1],
            resync_p99_s=percentile(worst.resync, 0.99), reconnect_max_s=worst.after[-1],
            listen_overflows=overflows)
    figures(f"gaps {gaps}, dups {dups}, resets {resets}, failed resumes {failed}, "
            f"reconnect attempts retried {retries}",
            gaps=gaps, dups=dups, resets=resets, failed_resumes=failed, retries=retries)
    figures(f"state hash after the storm: live == replay ({state[:12]})", state_hash=state)
    print(*figures.lines, sep="\n", file=sys.stderr)

    assert failed == 0
    assert (gaps, dups, resets) == (0, 0, 0)
    assert min(during) > 0, "no event fell in an outage"
    assert worst.resync[-1] <= WINDOW, f"the last viewer caught up {worst.resync[-1]:.2f} s after the cut"
