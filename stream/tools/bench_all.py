"""``arena-stream bench all``: every performance figure beside its goal, in one run.

One process tree, bounded in time, and it stops by itself. In order:

* **replay** (``bench replay``): the fold's rate and its time against a msgspec
  decode of the same synthetic season;
* **cold start**: a data directory whose SQLite log holds ``--cold-events``
  events (the synthetic season, folded once to keep what the rules accept, each
  written as the hub writes it: the pinned body, its game and seq, its dedup
  key), then ``python -m stream serve --no-demo`` on it, timed from process start
  until ``/readyz`` answers 200 and a viewer's ``/ws/watch`` has its snapshot.
  The first start folds the whole log (built in bulk, it has no snapshot) and
  writes a snapshot; the restarts decode it and fold the records after it
  (none). The goal is the restart's (best of two), the full fold is shown
  beside it; the page cache is warm for all. If the restart misses the goal,
  the full fold's phases are timed one by one (as ``Hub._load`` runs them);
* **group commit**: raw single commits (the service's SQLite settings, one
  log-sized INSERT per transaction, sequential) against ``SqliteStore.append``
  from ``--devices`` concurrent tasks, each awaiting its own append as a device
  awaits its ack; best of two interleaved rounds each;
* **end to end**: the service (``serve --no-demo``, its per-device rate limit
  lifted) with ``--devices`` device WebSockets, one game each, each sending its
  next event when the previous one is acked: acked events/s, against the same
  raw commits;
* **fan-out** (``bench fanout``, with the Node ``ws`` peer): viewer p99 against a
  bare websockets server and against Node ``ws``, ack p99 against a raw commit,
  memory per idle viewer, and with ``--nodes 2`` the cross-node p99.

It prints one table and writes it as Markdown (``--out``) with the date, the
machine and the command. Goals are printed, never asserted: a missed goal is a
figure; a section that could not run says so in its row and the exit status is 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import gc
import math
import os
import platform
import secrets
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import websockets

from ..errors import Refused
from ..live.hub import digest
from ..rules import codec
from ..rules import events as ev
from ..rules.engine import Engine
from ..store import START, Record
from ..store.sqlite import SCHEMA, SqliteStore
from ..store.sqlite import connect as sqlite_connect
from . import bench_fanout as bf
from .bench_replay import bench_replay, synthetic_season
from .device_client import Device

_dec = msgspec.json.Decoder(dict[str, Any])

#: A log-sized row body: a card, as the pinned log format writes it (about 120 bytes).
CARD = (b'{"type":"card","id":"%s","at":1780000000000,"game":"%s","player":"h1",'
        b'"color":"yellow","conduct":"arguing"}')


# ----------------------------------------------------------------- options


@dataclass
class AllOptions:
    events: int = 1_000_000           # bench replay's season
    viewers: int = 1000
    rate: float = 50.0
    seconds: float = 20.0
    idle_viewers: int = 10_000
    nodes: int = 2
    rounds: int = 2
    devices: int = 50
    commit_seconds: float = 2.0
    cold_events: int = 1_000_000
    cold_starts: int = 3  # the first folds the whole log; the others restart from its snapshot
    seed: int = 14
    settle: float = 3.0
    quick: bool = False

    def sizes(self) -> str:
        return (f"sizes: replay {self.events:,} events; cold start on {self.cold_events:,} logged events; "
                f"{self.devices} devices for {self.commit_seconds:g} s (store) and "
                f"{2.5 * self.commit_seconds:g} s (end to end); fan-out {self.viewers:,} viewers, "
                f"{self.rate:g} events/s for {self.seconds:g} s, {self.rounds} round(s) per server, "
                f"{self.idle_viewers:,} idle viewers, {self.nodes} node(s)")

    @classmethod
    def quick_sizes(cls, seed: int = 14) -> AllOptions:
        return cls(events=20_000, viewers=20, rate=20.0, seconds=2.0, idle_viewers=200, nodes=2,
                   rounds=1, devices=50, commit_seconds=0.5, cold_events=20_000, seed=seed,
                   settle=1.0, quick=True)


@dataclass
class Row:
    figure: str
    measured: str
    goal: str
    verdict: str  # "met", "missed", "—" (for reference) or "not measured"


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failed: bool = False

    def add(self, figure: str, measured: str, goal: str, met: bool | None) -> None:
        verdict = "—" if met is None else ("met" if met else "missed")
        self.rows.append(Row(figure, measured, goal, verdict))

    def not_measured(self, figure: str, goal: str, why: str) -> None:
        self.rows.append(Row(figure, f"not measured: {why}", goal, "—"))


def _ok(x: float, goal: Callable[[float], bool]) -> bool | None:
    return None if math.isnan(x) else goal(x)


def _f(x: float, spec: str = ".2f") -> str:
    return "n/a" if math.isnan(x) else format(x, spec)


def _why(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}".rstrip(": ")


# ----------------------------------------------------------------- machine


def _run_version(argv: list[str]) -> str:
    exe = shutil.which(argv[0])
    if exe is None:
        return "not found"
    try:
        res = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"? ({type(err).__name__})"
    return (res.stdout or res.stderr).strip().splitlines()[0] if (res.stdout or res.stderr).strip() else "?"


def machine() -> dict[str, str]:
    """What the figures were measured on."""
    cpu = "?"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "?"
    with contextlib.suppress(OSError, ValueError, IndexError), open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                break
    redis = _run_version(["redis-server", "--version"])
    if redis.startswith("Redis server v="):
        redis = redis.split("v=", 1)[1].split()[0]
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 0
    return {
        "CPU": cpu,
        "cores": f"{os.cpu_count()}" + (f" ({usable} usable by this process)"
                                         if usable != os.cpu_count() else ""),
        "memory": mem,
        "kernel": f"{platform.system()} {platform.release()}",
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "SQLite": sqlite3.sqlite_version,
        "redis-server": redis,
        "Node": _run_version(["node", "--version"]),
    }


# ------------------------------------------------------------ group commit


def raw_commit_rate(path: Path, seconds: float, max_commits: int = 1_000_000,
                    batch: int = 1) -> tuple[float, int]:
    """Sequential commits with the service's SQLite settings (WAL, synchronous=FULL), each of
    ``batch`` log-sized rows (one per game and device, as ``batch`` devices would send),
    inserted with one executemany, for ``seconds``: (rows/s, commits). With ``batch=1``:
    single commits, the baseline; with more, SQLite's own ceiling for group commit."""
    conn = sqlite_connect(path, synchronous="FULL")
    try:
        conn.executescript(SCHEMA)
        sql = ("INSERT INTO log (game, seq, device, client_id, official, digest, received_at, body)"
               " VALUES (?,?,?,?,?,?,?,?)")
        n = 0
        t0 = time.perf_counter()
        end = t0 + seconds
        while n < max_commits:
            n += 1
            rows = []
            for d in range(batch):
                cid = b"raw-%d-%d" % (d, n)
                body = CARD % (cid, b"raw-%d" % d)
                rows.append((f"raw-{d}", n, f"raw-{d}", cid.decode(), "bench", digest(body), n, body))
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(sql, rows)
            conn.execute("COMMIT")
            if time.perf_counter() >= end:
                break
        elapsed = time.perf_counter() - t0
    finally:
        conn.close()
    return n * batch / elapsed, n


async def store_rate(path: Path, writers: int, seconds: float) -> tuple[float, int, int]:
    """``SqliteStore.append`` from ``writers`` concurrent tasks, each awaiting its own append
    before the next (a device waiting for its ack), for ``seconds``:
    (events/s, events, commits)."""
    store = SqliteStore(path)
    await store.open()
    loop = asyncio.get_running_loop()
    try:
        # A short warm-up, not counted: the writer thread and the file are running.
        for i in range(10):
            body = CARD % (b"warm-%d" % i, b"warm")
            await store.append(Record(game="warm", seq=i + 1, device="warm", client_id=f"warm-{i}",
                                      official="bench", digest=digest(body), received_at=i, body=body))
        commits0, records0 = store.commits, store.committed_records
        end = loop.time() + seconds

        async def writer(i: int) -> None:
            game, device = f"g{i}", f"device-{i}"
            seq = 0
            while loop.time() < end:
                seq += 1
                cid = f"{device}-{seq}"
                body = CARD % (cid.encode(), game.encode())
                await store.append(Record(game=game, seq=seq, device=device, client_id=cid,
                                          official="bench", digest=digest(body),
                                          received_at=seq, body=body))

        t0 = time.perf_counter()
        await asyncio.gather(*(writer(i) for i in range(writers)))
        elapsed = time.perf_counter() - t0
        events = store.committed_records - records0
        commits = store.commits - commits0
    finally:
        await store.close()
    return events / elapsed, events, commits


async def end_to_end(children: bf.Children, work: Path, devices: int, seconds: float,
                     warmup: float) -> dict[str, float]:
    """The service with ``devices`` device sockets (one game and token each), each sending
    its next event when the previous one is acked: acked events/s over ``seconds`` after
    ``warmup``, and the service's share of a core meanwhile."""
    lifted = ["--device-rate", "1000000", "--device-burst", "1000000"]
    data = work / f"e2e-data-{devices}"
    node, = await bf.start_service_nodes(children, [f"e2e{devices}"], data, extra=lifted)
    admin = (data / "admin.token").read_text().strip()
    tokens: list[tuple[str, str]] = []
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {admin}"}) as http:
        for i in range(devices):
            game = f"e2e-{i}"
            body = {"id": f"setup-{game}", "game": game, "event": "bench", "class": "club", "handicap": 8,
                    "arena": f"arena-{i}",
                    "teams": {"home": {"team": f"home-{i}", "players": ["h1", "h2", "h3"], "subs": ["h4"]},
                              "away": {"team": f"away-{i}", "players": ["a1", "a2", "a3"], "subs": ["a4"]}}}
            async with http.post(f"{node.http}/api/games", json=body) as r:
                if r.status != 201:
                    raise RuntimeError(f"game setup refused: {r.status} {await r.text()}")
            req = {"role": "admin", "device": f"e2e-device-{i}", "official": "bench", "game": game}
            async with http.post(f"{node.http}/api/tokens", json=req) as r:
                if r.status != 201:
                    raise RuntimeError(f"token refused: {r.status} {await r.text()}")
                tokens.append((game, str((await r.json())["token"])))
    socks = [Device(node.device_url(), token, prefix=f"e2e{i}") for i, (_, token) in enumerate(tokens)]
    await asyncio.gather(*(d.connect() for d in socks))
    loop = asyncio.get_running_loop()
    start = loop.time() + warmup
    end = start + seconds
    acked = [0] * devices
    ack_ms: list[float] = []
    refused: list[dict[str, Any]] = []
    cpu0 = [0.0]

    async def device(i: int) -> None:
        d, game = socks[i], tokens[i][0]
        n = 0
        while (now := loop.time()) < end:
            event = {"type": "clock.start" if n % 2 == 0 else "whistle", "game": game, "id": d.new_id()}
            n += 1
            t = time.perf_counter()
            reply = await d.send_once(event, wait_s=30)
            took = time.perf_counter() - t
            if reply.get("type") != "ack":
                refused.append(reply)
                if len(refused) > 100:
                    raise RuntimeError(f"events refused, the first: {refused[0]}")
            elif now >= start and loop.time() < end:
                acked[i] += 1
                ack_ms.append(took * 1000)

    async def mark_cpu() -> None:
        await asyncio.sleep(max(0.0, start - loop.time()))
        cpu0[0] = bf.cpu_seconds(node.pid)

    try:
        cpu_task = asyncio.create_task(mark_cpu())
        await asyncio.gather(*(device(i) for i in range(devices)))
        await cpu_task
        cpu = bf.cpu_seconds(node.pid) - cpu0[0]
        if refused:
            print(f"  end to end: {len(refused)} event(s) refused, the first: {refused[0]}", flush=True)
    finally:
        await asyncio.gather(*(d.close() for d in socks), return_exceptions=True)
        await children.stop(node.proc)
    total = sum(acked)
    ack_ms.sort()
    return {"eps": total / seconds, "acked": float(total), "refused": float(len(refused)),
            "server_core": cpu / seconds, "ack_p50_ms": bf.percentile(ack_ms, 0.50),
            "ack_p99_ms": bf.percentile(ack_ms, 0.99)}


# -------------------------------------------------------------- cold start


def build_cold_data(data: Path, n_events: int, seed: int) -> tuple[int, str, float]:
    """A data directory whose SQLite log holds ``n_events`` events of the synthetic season,
    each stored as the hub stores it (the rules' accepted events only, the pinned body, the
    game and per-game seq, the dedup key), written in one bulk transaction:
    (records, a game to watch, seconds taken)."""
    t0 = time.perf_counter()
    log = synthetic_season(n_events + n_events // 50 + 500, seed)  # a margin for refusals
    engine = Engine()
    seqs: dict[str, int] = {}
    rows: list[tuple[Any, ...]] = []
    for line in log.splitlines():
        e = codec.decode_event(line)
        try:
            engine.apply(e)
        except Refused:
            continue  # the generator's own mistakes: never in a real log
        game: str | None = getattr(e, "game", None)
        if isinstance(e, ev.Void):
            game = engine.owner.get(e.id)
        seq = None
        if game is not None:
            seq = seqs[game] = seqs.get(game, 0) + 1
        body = codec.encode_event(e)
        rows.append((game, seq, "bench-device", e.id, "bench", digest(body), e.at, body))
        if len(rows) >= n_events:
            break
    del log
    watch = max(seqs, key=lambda g: (seqs[g], g))  # the longest game
    data.mkdir(parents=True, exist_ok=True)
    conn = sqlite_connect(data / "arena.sqlite", synchronous="OFF")
    try:
        conn.executescript(SCHEMA)
        conn.execute("BEGIN")
        conn.execute("INSERT INTO meta VALUES ('epoch', ?)", (secrets.token_hex(6),))
        conn.executemany("INSERT INTO log (game, seq, device, client_id, official, digest, received_at,"
                         " body) VALUES (?,?,?,?,?,?,?,?)", rows)
        conn.execute("COMMIT")
    finally:
        conn.close()  # the last connection checkpoints the WAL into the database
    return len(rows), watch, time.perf_counter() - t0


async def cold_start(children: bf.Children, data: Path, game: str, name: str) -> tuple[float, float]:
    """``serve --no-demo`` on ``data``, timed from process start: (until /readyz answers
    200, until a viewer of ``game`` has its snapshot), in seconds."""
    port = bf.free_port()
    base = f"http://{bf.HOST}:{port}"
    t0 = time.perf_counter()
    proc = await children.start(name, "-m", "stream", "serve", "--no-demo", "--data", str(data),
                                "--port", str(port))
    try:
        async with aiohttp.ClientSession() as http:
            while True:
                if proc.returncode is not None:
                    raise RuntimeError(f"the service exited ({proc.returncode}):\n{children.tail(name)}")
                with contextlib.suppress(aiohttp.ClientError, OSError):
                    async with http.get(f"{base}/readyz") as r:
                        if r.status == 200:
                            break
                if time.perf_counter() - t0 > 300:
                    raise RuntimeError(f"not ready in 300 s:\n{children.tail(name)}")
                await asyncio.sleep(0.01)
        ready = time.perf_counter() - t0
        async with websockets.connect(f"ws://{bf.HOST}:{port}/ws/watch?game={game}", max_size=2**24,
                                      compression=None, open_timeout=30) as viewer:
            first = _dec.decode(await asyncio.wait_for(viewer.recv(decode=False), 30))
        snapshot = time.perf_counter() - t0
        if first.get("type") != "snapshot" or first.get("game") != game:
            raise RuntimeError(f"the viewer's first frame was not {game}'s snapshot: {str(first)[:200]}")
    finally:
        await children.stop(proc)
    return ready, snapshot


def _interpreter_start() -> float:
    """Seconds for a new interpreter to import the service (``stream.live.app``) and exit."""
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import stream.live.app, stream.serve"], check=True, timeout=120,
                   capture_output=True)
    return time.perf_counter() - t


async def cold_breakdown(data: Path) -> list[tuple[str, float]]:
    """The start-up's phases timed one by one, as ``Hub._load`` runs them (read the log, decode,
    fold, the dedup keys, the games' views), on a copy of the data directory."""
    phases: list[tuple[str, float]] = [
        ("interpreter start and imports", await asyncio.to_thread(_interpreter_start))]
    with tempfile.TemporaryDirectory(prefix="arena-bench-cold-") as d:
        copy = Path(d) / "arena.sqlite"
        await asyncio.to_thread(shutil.copyfile, data / "arena.sqlite", copy)
        store = SqliteStore(copy)
        t = time.perf_counter()
        await store.open()
        phases.append(("open the store", time.perf_counter() - t))
        t = time.perf_counter()
        _, records = await store.rows_after(START)
        phases.append((f"read {len(records):,} records (SQLite rows)", time.perf_counter() - t))
        await store.close()

        def fold() -> list[tuple[str, float]]:
            out = []
            t = time.perf_counter()
            events = [codec.decode_event(r[5]) for r in records]
            out.append(("decode the bodies", time.perf_counter() - t))
            engine = Engine()
            t = time.perf_counter()
            for e in events:
                engine.feed(e)
            out.append(("fold (Engine.feed)", time.perf_counter() - t))
            t = time.perf_counter()
            keys = {(r[2], r[3]): (r[4], e.id, r[0], r[1], e.at)
                    for r, e in zip(records, events, strict=True)}
            out.append((f"dedup keys ({len(keys):,})", time.perf_counter() - t))
            t = time.perf_counter()
            for gid in engine.games:
                msgspec.to_builtins(engine.view(gid))
            out.append((f"views of {len(engine.games):,} games", time.perf_counter() - t))
            return out

        phases += await asyncio.to_thread(fold)
    gc.collect()
    return phases


# --------------------------------------------------------------------- run


async def _section(report: Report, name: str, seconds: float, work: Callable[[], Awaitable[None]],
                   on_error: Callable[[str], None]) -> None:
    """Run one section, bounded in time; a failure becomes its rows' "not measured"."""
    print(f"\n== {name}", flush=True)
    try:
        async with asyncio.timeout(seconds):
            await work()
    except Exception as err:  # the other sections still run; the exit status says it
        why = "timed out" if isinstance(err, TimeoutError) else _why(err)
        print(f"  {name}: not measured: {why}", flush=True)
        report.failed = True
        on_error(why)


async def bench_all(opts: AllOptions) -> Report:
    report = Report()
    n = opts.devices
    cold_label = f"cold start, {opts.cold_events:,} events logged"
    gc_label = f"group commit, {n} devices (SqliteStore)"
    e2e_label = f"end to end, {n} devices (the service)"
    ack_alone_label = "ack p99, one device alone, vs raw commit p99"
    fan_rows = ("viewer p99 vs bare websockets", "viewer p99 vs Node ws",
                "ack p99 under fan-out vs raw commit p99",
                "memory per idle viewer", "cross-node p99 vs single node")
    fan_goals = ("≤ 1.25×", "≤ 1.25×", "≤ raw + 2 ms", "≤ 12 KiB", "≤ 1.5×")

    with tempfile.TemporaryDirectory(prefix="arena-bench-all-") as d:
        work = Path(d)
        children = bf.Children(work)
        try:
            # -- replay
            async def replay() -> None:
                fig = await asyncio.to_thread(bench_replay, opts.events, opts.seed)
                report.add(f"fold rate ({int(fig['events']):,} events)",
                           f"{fig['fold_eps']:,.0f} events/s (worst {fig['fold_eps_worst']:,.0f})",
                           "≥ 200,000 events/s", fig["fold_eps_worst"] >= 200_000)
                report.add("fold / decode time", f"{fig['ratio']:.2f}× (worst {fig['ratio_worst']:.2f}×)",
                           "≤ 3×", fig["ratio"] <= 3)

            def replay_failed(why: str) -> None:
                report.not_measured("fold rate", "≥ 200,000 events/s", why)
                report.not_measured("fold / decode time", "≤ 3×", why)

            await _section(report, "replay: fold against a msgspec decode", 600, replay, replay_failed)
            gc.collect()

            # -- cold start
            async def cold() -> None:
                data = work / "cold-data"  # built once, reused by every start of this run
                count, game, built = await asyncio.to_thread(build_cold_data, data, opts.cold_events,
                                                             opts.seed)
                size = (data / "arena.sqlite").stat().st_size / 2**20
                print(f"  data directory: {count:,} records ({size:.0f} MiB of SQLite) built in "
                      f"{built:.1f} s; the viewer watches {game}", flush=True)
                gc.collect()
                starts = []
                for k in range(max(2, opts.cold_starts)):
                    ready, snap = await cold_start(children, data, game, f"cold{k + 1}")
                    what = "full fold" if k == 0 else "restart, snapshot + tail"
                    print(f"  start {k + 1} ({what}): /readyz 200 after {ready:.2f} s, the viewer's "
                          f"snapshot after {snap:.2f} s", flush=True)
                    starts.append((snap, ready))
                    if k == 0:
                        with contextlib.closing(sqlite3.connect(data / "arena.sqlite")) as c:
                            row = c.execute("SELECT position, length(blob) FROM snapshot").fetchone()
                        print("  snapshot written by start 1: " + (
                            f"at position {row[0]}, {row[1] / 2**20:.0f} MiB" if row else "none"), flush=True)
                (full, full_ready), (snap, ready) = starts[0], min(starts[1:])
                report.add(cold_label, f"{snap:.2f} s restart (/readyz at {ready:.2f} s); first start, "
                           f"full fold: {full:.2f} s", "≤ 5 s (restart)", snap <= 5)
                report.notes.append(f"Cold start: `serve --no-demo` on a log of {count:,} events "
                                    f"({size:.0f} MiB), from process start to /readyz 200 and then a "
                                    f"viewer's snapshot of {game}. The first start folds the whole log "
                                    f"(it has no snapshot): {full:.2f} s (/readyz at {full_ready:.2f} s), "
                                    f"and writes a snapshot; the restart decodes it and folds the records "
                                    f"after it: best of {len(starts) - 1} "
                                    f"({', '.join(f'{s:.2f}' for s, _ in starts[1:])} s; page cache warm).")
                if snap > 5:
                    phases = await cold_breakdown(data)
                    phases.append(("the rest (web app, GC, first requests; the start less the above)",
                                   snap - sum(secs for _, secs in phases)))
                    print("  where the start-up's time goes (each phase alone, in this process):",
                          flush=True)
                    for what, secs in phases:
                        print(f"    {what:66} {secs:6.2f} s", flush=True)
                    report.notes.append("Cold start missed its goal; where the time goes, each phase "
                                        "timed alone as `Hub._load` runs it: " + "; ".join(
                                            f"{what} {secs:.2f} s" for what, secs in phases) + ".")

            await _section(report, "cold start", 900, cold,
                           lambda why: report.not_measured(cold_label, "≤ 5 s", why))
            gc.collect()

            # -- group commit
            raw = [math.nan]

            async def group_commit() -> None:
                # Best of two rounds each, interleaved (raw, store, raw, store): the machine is shared.
                raws: list[tuple[float, int]] = []
                stores: list[tuple[float, int, int]] = []
                for k in range(1, 3):
                    cps, commits = await asyncio.to_thread(raw_commit_rate, work / f"raw{k}.sqlite",
                                                           opts.commit_seconds)
                    print(f"  raw single commits (WAL, synchronous=FULL, one INSERT each): {commits:,} in "
                          f"{commits / cps:.1f} s: {cps:,.0f} commits/s", flush=True)
                    raws.append((cps, commits))
                    eps, events, batches = await store_rate(work / f"store{k}.sqlite", n,
                                                            opts.commit_seconds)
                    print(f"  SqliteStore, {n} concurrent writers: {events:,} events in {batches:,} "
                          f"commits ({events / max(1, batches):.1f} per commit): {eps:,.0f} events/s",
                          flush=True)
                    stores.append((eps, events, batches))
                ceiling, _ = await asyncio.to_thread(raw_commit_rate, work / "raw-batched.sqlite",
                                                     opts.commit_seconds, batch=n)
                print(f"  SQLite alone, {n} rows a commit (one per game and device), executemany: "
                      f"{ceiling:,.0f} rows/s", flush=True)
                cps, commits = max(raws)
                eps, events, batches = max(stores)
                raw[0] = cps
                report.add(gc_label, f"{eps / cps:.1f}× ({eps:,.0f} events/s vs {cps:,.0f} single "
                           f"commits/s; SQLite alone at {n} rows a commit: {ceiling / cps:.1f}×)",
                           "≥ 10× raw single commits", eps / cps >= 10)
                report.notes.append(f"Group commit: raw, {commits:,} sequential single-row commits "
                                    f"(WAL, synchronous=FULL, a {len(CARD % (b'raw-1', b'raw'))}-byte "
                                    f"body); the store, {n} asyncio tasks each awaiting its own "
                                    f"`SqliteStore.append`: {events:,} events in {batches:,} commits "
                                    f"({events / max(1, batches):.1f} a commit); {opts.commit_seconds:g} s "
                                    "each, best of two interleaved rounds each. 'SQLite alone' is the "
                                    f"ceiling for any store on this disk and schema: {n} rows (one per "
                                    "game and device, so each commit dirties a leaf page of each "
                                    "UNIQUE index per device) in one executemany and one COMMIT, "
                                    f"with no Python around it: {ceiling:,.0f} rows/s.")

            await _section(report, "group commit", 120, group_commit,
                           lambda why: report.not_measured(gc_label, "≥ 10× raw single commits", why))

            # -- end to end
            async def e2e() -> None:
                seconds = 2.5 * opts.commit_seconds
                fig = await end_to_end(children, work, n, seconds, warmup=min(1.0, seconds / 4))
                print(f"  the service, {n} devices each waiting for its ack: {int(fig['acked']):,} "
                      f"acked in {seconds:g} s: {fig['eps']:,.0f} events/s; the service at "
                      f"{100 * fig['server_core']:.0f} % of a core", flush=True)
                versus = (f" = {fig['eps'] / raw[0]:.2f}× raw single commits ({raw[0]:,.0f}/s)"
                          if not math.isnan(raw[0]) else "")
                report.add(e2e_label, f"{fig['eps']:,.0f} acked events/s{versus}",
                           "for reference (the store's goal is ≥ 10× raw)", None)
                report.notes.append(f"End to end: `serve --no-demo` with its per-device rate limit "
                                    f"lifted, {n} device WebSockets (one game and token each, "
                                    "`clock.start`/`whistle`), each sending its next event when the "
                                    f"previous is acked; {seconds:g} s after a warm-up; the service at "
                                    f"{100 * fig['server_core']:.0f} % of a core, the devices in the "
                                    "benchmark's own process on the same machine"
                                    + (" (the service short of a full core: the devices' process, "
                                       "not the service, may bound this figure)."
                                       if fig["server_core"] < 0.9 else "."))

            await _section(report, "end to end", 180, e2e,
                           lambda why: report.not_measured(e2e_label, "for reference", why))

            # -- the ack of one device on an otherwise idle service, against a raw commit
            async def lone_ack() -> None:
                seconds = 2.5 * opts.commit_seconds
                raw_ms = sorted(await asyncio.to_thread(bf.sqlite_commit_ms, work / "raw-ack.sqlite", 1000))
                fig = await end_to_end(children, work, 1, seconds, warmup=min(1.0, seconds / 4))
                raw_p99 = bf.percentile(raw_ms, 0.99)
                ack = fig["ack_p99_ms"]
                print(f"  one device alone: {int(fig['acked']):,} acks, p50 {fig['ack_p50_ms']:.2f} ms, "
                      f"p99 {ack:.2f} ms; raw commit p50 {bf.percentile(raw_ms, 0.5):.2f} ms, "
                      f"p99 {raw_p99:.2f} ms", flush=True)
                report.add(ack_alone_label, f"{_f(ack)} ms vs {_f(raw_p99)} ms (p50 "
                           f"{_f(fig['ack_p50_ms'])} vs {_f(bf.percentile(raw_ms, 0.5))} ms)",
                           "≤ raw + 2 ms", _ok(ack - raw_p99, lambda x: x <= 2))
                report.notes.append(f"Ack, one device alone: the service with no viewers, one device "
                                    f"sending its next event when the previous is acked, {seconds:g} s; "
                                    "the ack is timed in the device (send to ack received), the raw "
                                    "commit is one log-sized INSERT and COMMIT (WAL, synchronous=FULL) "
                                    "on the same disk, 1,000 times. Under the fan-out's load the ack "
                                    "is the row 'ack p99 under fan-out'.")

            await _section(report, "ack, one device alone", 120, lone_ack,
                           lambda why: report.not_measured(ack_alone_label, "≤ raw + 2 ms", why))

            # -- fan-out
            async def fanout() -> None:
                ws_module, note = await asyncio.to_thread(bf.ensure_node_ws)
                print(f"  Node ws peer: {note}", flush=True)
                nodes = opts.nodes
                if nodes > 1 and shutil.which("redis-server") is None:
                    nodes = 1
                fopts = bf.FanoutOptions(viewers=opts.viewers, rate=opts.rate, seconds=opts.seconds,
                                         idle_viewers=opts.idle_viewers, nodes=nodes, rounds=opts.rounds,
                                         settle=opts.settle, node_ws=ws_module)
                fig = await bf.bench_fanout(fopts)
                if fig.get("lost") or fig.get("dup") or fig.get("cluster_lost") or fig.get("cluster_dup") \
                        or fig.get("cluster_misordered"):
                    report.failed = True
                    report.notes.append("Fan-out: frames were lost, repeated or out of order (see the "
                                        "output): a failure, whatever the latencies.")
                r = fig["ratio"]
                report.add(fan_rows[0], f"{_f(r)}× ({_f(fig['svc_p99_ms'])} vs {_f(fig['bare_p99_ms'])} ms)",
                           fan_goals[0], _ok(r, lambda x: x <= 1.25))
                if ws_module is None:
                    report.not_measured(fan_rows[1], fan_goals[1], note.removeprefix("not measured: "))
                else:
                    r = fig["node_ratio"]
                    report.add(fan_rows[1], f"{_f(r)}× ({_f(fig['svc_p99_ms'])} vs "
                               f"{_f(fig['node_p99_ms'])} ms)", fan_goals[1], _ok(r, lambda x: x <= 1.25))
                    report.notes.append(f"Node peer: {note} (`stream/tools/bench_peers/ws_peer.js`).")
                ack, raw_p99 = fig["ack_p99_ms"], fig["raw_commit_p99_ms"]
                report.add(fan_rows[2], f"{_f(ack)} ms vs {_f(raw_p99)} ms", fan_goals[2],
                           _ok(ack - raw_p99, lambda x: x <= 2))
                kib = fig["idle_kib"]
                report.add(fan_rows[3], f"{_f(kib, '.1f')} KiB ({int(fig['idle_opened']):,} viewers; bare "
                           f"websockets {_f(fig['bare_idle_kib'], '.1f')} KiB)", fan_goals[3],
                           _ok(kib, lambda x: x <= 12))
                if "cross_ratio" in fig:
                    r = fig["cross_ratio"]
                    report.add(fan_rows[4], f"{_f(r)}× ({_f(fig['cross_p99_ms'])} vs "
                               f"{_f(fig['svc_p99_ms'])} ms)", fan_goals[4], _ok(r, lambda x: x <= 1.5))
                else:
                    why = "redis-server not found" if opts.nodes > 1 else "--nodes 1"
                    report.not_measured(fan_rows[4], fan_goals[4], why)
                report.notes.append(f"Fan-out: {opts.viewers:,} viewers, one device at {opts.rate:g} "
                                    f"events/s for {opts.seconds:g} s, best of {opts.rounds} interleaved "
                                    f"round(s) per server; delta {fig['delta_bytes']:.0f} bytes; "
                                    f"{opts.idle_viewers:,} idle viewers for memory.")

            def fanout_failed(why: str) -> None:
                for label, goal in zip(fan_rows, fan_goals, strict=True):
                    report.not_measured(label, goal, why)

            budget = 1200 + 10 * opts.seconds * opts.rounds + opts.idle_viewers / 10
            await _section(report, "fan-out", budget, fanout, fanout_failed)
        finally:
            await children.kill_all()
    return report


# ------------------------------------------------------------------ output


def table(rows: list[Row]) -> str:
    heads = ("figure", "measured", "goal", "")
    widths = [max(len(h), *(len(getattr(r, a)) for r in rows)) if rows else len(h)
              for h, a in zip(heads, ("figure", "measured", "goal", "verdict"), strict=True)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        cells = (r.figure, r.measured, r.goal, r.verdict)
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
    return "\n".join(lines)


def markdown(report: Report, when: datetime.datetime, command: str, box: dict[str, str],
             elapsed: float, quick: bool) -> str:
    def cell(s: str) -> str:
        return s.replace("|", "\\|")

    out = ["# Performance", "",
           f"Measured {when:%Y-%m-%d %H:%M} UTC with `{command}` in {elapsed / 60:.1f} min "
           "(one run; each figure beside its reference, measured moments apart).", ""]
    if quick:
        out += ["**--quick**: tiny sizes, a smoke test; these figures mean nothing.", ""]
    out += ["| machine | |", "|---|---|"]
    out += [f"| {k} | {cell(v)} |" for k, v in box.items()]
    out += ["", "| figure | measured | goal | |", "|---|---|---|---|"]
    out += [f"| {cell(r.figure)} | {cell(r.measured)} | {cell(r.goal)} | {r.verdict} |" for r in report.rows]
    if report.notes:
        out += [""] + [f"- {note}" for note in report.notes]
    return "\n".join(out) + "\n"


def options_from(args: argparse.Namespace) -> AllOptions:
    if args.quick:
        return AllOptions.quick_sizes(seed=args.seed)
    return AllOptions(events=args.events, viewers=args.viewers, rate=args.rate, seconds=args.seconds,
                      idle_viewers=args.idle_viewers, nodes=args.nodes, rounds=args.rounds,
                      devices=args.devices, commit_seconds=args.commit_seconds,
                      cold_events=args.cold_events, seed=args.seed)


def run(args: argparse.Namespace) -> int:
    opts = options_from(args)
    if min(opts.events, opts.viewers, opts.idle_viewers, opts.rounds, opts.devices, opts.cold_events) < 1 \
            or min(opts.rate, opts.seconds, opts.commit_seconds) <= 0:
        raise SystemExit("bench all: every size must be positive")
    command = shlex.join(["arena-stream", *sys.argv[1:]])
    when = datetime.datetime.now(datetime.UTC)
    box = machine()
    print(f"bench all{' --quick' if opts.quick else ''}: {when:%Y-%m-%d %H:%M} UTC on {box['CPU']}, "
          f"{box['cores']} cores, {box['memory']}; load average {os.getloadavg()[0]:.2f}", flush=True)
    print(f"  {opts.sizes()}", flush=True)
    t0 = time.perf_counter()
    report = asyncio.run(bench_all(opts))
    elapsed = time.perf_counter() - t0
    print(f"\nbench all: every figure and its goal ({elapsed:.0f} s)\n")
    print(table(report.rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(markdown(report, when, command, box, elapsed, opts.quick))
    print(f"\nwritten to {args.out}", flush=True)
    return 1 if report.failed else 0
