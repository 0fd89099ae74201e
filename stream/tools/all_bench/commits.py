"""The store's side of ``arena-stream bench all``: raw SQLite commits, the store's
group commit, and the service end to end with many devices each awaiting its ack."""

from __future__ import annotations

import asyncio
import math
import statistics
import time
from pathlib import Path
from typing import Any

from ...live.hub.dedup import digest
from ...store import Record
from ...store.sqlite import SCHEMA, SqliteStore
from ...store.sqlite import connect as sqlite_connect
from ..fanout_bench.phases import sqlite_commit_ms
from ..harness import Device, Processes, cpu_seconds, percentile, setup_game
from .report import Bench, fmt, ok

#: A log-sized row body: a card, as the pinned log format writes it (about 120 bytes).
CARD = (b'{"type":"card","id":"%s","at":1780000000000,"game":"%s","player":"h1",'
        b'"color":"yellow","conduct":"arguing"}')



def raw_commit_rate(path: Path, seconds: float, max_commits: int = 1_000_000,
                    batch: int = 1) -> tuple[float, int]:
    """Sequential commits with the service's SQLite settings and schema (``connect``,
    ``SCHEMA``: WAL, synchronous=FULL), each of ``batch`` log-sized rows (one per game and
    device, shaped as ``store_rate``'s, as ``batch`` devices would send), inserted with one
    executemany, for ``seconds``: (rows/s, commits). With ``batch=1``: single commits, the
    baseline; with more, SQLite's own ceiling for the store's group commit."""
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
                game, device = f"g{d}", f"device-{d}"
                cid = f"{device}-{n}"
                body = CARD % (cid.encode(), game.encode())
                rows.append((game, n, device, cid, "bench", digest(body), n, body))
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
        before = store.stats()
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
        after = store.stats()
        events, commits = after.records - before.records, after.commits - before.commits
    finally:
        await store.close()
    return events / elapsed, events, commits


async def end_to_end(group: Processes, devices: int, seconds: float, warmup: float) -> dict[str, float]:
    """The service with ``devices`` device sockets (one game and token each), each sending
    its next event when the previous one is acked: acked events/s over ``seconds`` after
    ``warmup``, and the service's share of a core meanwhile."""
    lifted = ["--device-rate", "1000000", "--device-burst", "1000000"]
    node = group.service(group.workdir / f"e2e-data-{devices}", name=f"e2e{devices}", args=lifted)
    await node.astart()
    tokens: list[tuple[str, str]] = []
    for i in range(devices):
        game = f"e2e-{i}"
        (token,) = await setup_game(node.http, node.admin, game=game, arena=f"arena-{i}",
                                    device_prefix=f"e2e-device-{i}")
        tokens.append((game, token))
    socks = [Device(node.device_url, token, prefix=f"e2e{i}") for i, (_, token) in enumerate(tokens)]
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
        cpu0[0] = cpu_seconds(node.pid)

    try:
        cpu_task = asyncio.create_task(mark_cpu())
        await asyncio.gather(*(device(i) for i in range(devices)))
        await cpu_task
        cpu = cpu_seconds(node.pid) - cpu0[0]
        if refused:
            print(f"  end to end: {len(refused)} event(s) refused, the first: {refused[0]}", flush=True)
    finally:
        await asyncio.gather(*(d.close() for d in socks), return_exceptions=True)
        await node.astop()
    total = sum(acked)
    ack_ms.sort()
    return {"eps": total / seconds, "acked": float(total), "refused": float(len(refused)),
            "server_core": cpu / seconds, "ack_p50_ms": percentile(ack_ms, 0.50),
            "ack_p99_ms": percentile(ack_ms, 0.99)}


async def group_commit_section(b: Bench) -> None:
    opts, report, work, n = b.opts, b.report, b.work, b.opts.devices
    gc_label = f"group commit, {n} devices (SqliteStore)"
    alone_label = f"group commit vs SQLite alone, {n} rows a commit"
    alone_goal = f"≥ 0.9× SQLite alone at {n} rows a commit"

    async def group_commit() -> None:
        # ``rounds`` rounds, interleaved (raw, store, SQLite alone; raw, store, ...): the
        # machine is shared; each round's ratios, the median round and the worst are reported.
        raws: list[tuple[float, int]] = []
        stores: list[tuple[float, int, int]] = []
        alones: list[tuple[float, int]] = []
        rounds = max(1, opts.rounds)
        for k in range(1, rounds + 1):
            cps, commits = await asyncio.to_thread(raw_commit_rate, work / f"raw{k}.sqlite",
                                                   opts.commit_seconds)
            print(f"  raw single commits (WAL, synchronous=FULL, one INSERT each): {commits:,} in "
                  f"{commits / cps:.1f} s: {cps:,.0f} commits/s", flush=True)
            raws.append((cps, commits))
            eps, events, batches = await store_rate(work / f"store{k}.sqlite", n,
                                                    opts.commit_seconds)
            print(f"  SqliteStore, {n} concurrent writers: {events:,} events in {batches:,} "
                  f"commits ({events / max(1, batches):.1f} per commit): {eps:,.0f} events/s; "
                  f"round {k}: {eps / cps:.1f}× raw", flush=True)
            stores.append((eps, events, batches))
            ceiling, alone_commits = await asyncio.to_thread(
                raw_commit_rate, work / f"alone{k}.sqlite", opts.commit_seconds, batch=n)
            print(f"  SQLite alone, {n} rows a commit (one per game and device), executemany: "
                  f"{ceiling:,.0f} rows/s; round {k}: the store at {eps / ceiling:.2f}× it",
                  flush=True)
            alones.append((ceiling, alone_commits))
        ratios = [s[0] / r[0] for r, s in zip(raws, stores, strict=True)]
        ratio, worst = statistics.median(ratios), min(ratios)
        of_alone = [s[0] / a[0] for a, s in zip(alones, stores, strict=True)]
        cps = statistics.median(r[0] for r in raws)
        eps = statistics.median(s[0] for s in stores)
        ceiling = statistics.median(a[0] for a in alones)
        commits = sum(r[1] for r in raws)
        events, batches = sum(s[1] for s in stores), sum(s[2] for s in stores)
        b.raw_cps = cps
        report.add(gc_label, f"{ratio:.1f}× median of {rounds} (worst {worst:.1f}×; {eps:,.0f} events/s vs "
                   f"{cps:,.0f} single commits/s; SQLite alone at {n} rows a commit: {ceiling / cps:.1f}×)",
                   "≥ 10× raw single commits", ratio >= 10)
        report.add(alone_label, f"{statistics.median(of_alone):.2f}× median of {rounds} (worst "
                   f"{min(of_alone):.2f}×; {eps:,.0f} events/s vs {ceiling:,.0f} rows/s)",
                   alone_goal, statistics.median(of_alone) >= 0.9)
        report.notes.append(f"Group commit: raw, sequential single-row commits "
                            f"(WAL, synchronous=FULL, a {len(CARD % (b'device-1-1', b'g1'))}-byte "
                            f"body), {commits:,} over all rounds; the store, {n} asyncio tasks each "
                            f"awaiting its own `SqliteStore.append`: {events:,} events in {batches:,} "
                            f"commits ({events / max(1, batches):.1f} a commit) over all rounds; "
                            f"'SQLite alone': {n} rows of the same shape (one per game and device, "
                            "so each commit dirties a leaf page of each UNIQUE index per device) "
                            "in one executemany and one COMMIT, on the store's own schema and "
                            "settings, with no asyncio, thread or future around it: the ceiling for "
                            f"any store on this disk and schema, {sum(a[1] for a in alones):,} "
                            f"commits over all rounds. {opts.commit_seconds:g} s each, {rounds} "
                            "interleaved rounds (raw, store, SQLite alone), the ratio of each "
                            "round's pair, the median and the worst.")

    def not_measured(why: str) -> None:
        report.not_measured(gc_label, "≥ 10× raw single commits", why)
        report.not_measured(alone_label, alone_goal, why)

    await b.section("group commit", 180, group_commit, not_measured)


#: Acked events a second, end to end, with ``--devices`` devices each awaiting its ack.
E2E_GOAL = 15_000


async def end_to_end_section(b: Bench) -> None:
    opts, report, n = b.opts, b.report, b.opts.devices
    e2e_label = f"end to end, {n} devices (the service)"

    async def e2e() -> None:
        seconds = 2.5 * opts.commit_seconds
        fig = await end_to_end(b.group, n, seconds, warmup=min(1.0, seconds / 4))
        print(f"  the service, {n} devices each waiting for its ack: {int(fig['acked']):,} "
              f"acked in {seconds:g} s: {fig['eps']:,.0f} events/s; the service at "
              f"{100 * fig['server_core']:.0f} % of a core", flush=True)
        versus = (f" = {fig['eps'] / b.raw_cps:.2f}× raw single commits ({b.raw_cps:,.0f}/s)"
                  if not math.isnan(b.raw_cps) else "")
        report.add(e2e_label, f"{fig['eps']:,.0f} acked events/s{versus}",
                   f"≥ {E2E_GOAL:,} acked events/s", fig["eps"] >= E2E_GOAL)
        report.notes.append(f"End to end: `serve --no-demo` with its per-device rate limit "
                            f"lifted, {n} device WebSockets (one game and token each, "
                            "`clock.start`/`whistle`), each sending its next event when the "
                            f"previous is acked; {seconds:g} s after a warm-up; the service at "
                            f"{100 * fig['server_core']:.0f} % of a core, the devices in the "
                            "benchmark's own process on the same machine"
                            + (" (the service short of a full core: the devices' process, "
                               "not the service, may bound this figure)."
                               if fig["server_core"] < 0.9 else "."))

    await b.section("end to end", 180, e2e,
                   lambda why: report.not_measured(e2e_label, f"≥ {E2E_GOAL:,} acked events/s", why))


async def lone_ack_section(b: Bench) -> None:
    """The ack of one device on an otherwise idle service, against a raw commit."""
    opts, report, work = b.opts, b.report, b.work
    ack_alone_label = "ack p99, one device alone, vs raw commit p99"

    async def lone_ack() -> None:
        seconds = 2.5 * opts.commit_seconds
        raw_ms = sorted(await asyncio.to_thread(sqlite_commit_ms, work / "raw-ack.sqlite", 1000))
        fig = await end_to_end(b.group, 1, seconds, warmup=min(1.0, seconds / 4))
        raw_p99 = percentile(raw_ms, 0.99)
        ack = fig["ack_p99_ms"]
        print(f"  one device alone: {int(fig['acked']):,} acks, p50 {fig['ack_p50_ms']:.2f} ms, "
              f"p99 {ack:.2f} ms; raw commit p50 {percentile(raw_ms, 0.5):.2f} ms, "
              f"p99 {raw_p99:.2f} ms", flush=True)
        report.add(ack_alone_label, f"{fmt(ack)} ms vs {fmt(raw_p99)} ms (p50 "
                   f"{fmt(fig['ack_p50_ms'])} vs {fmt(percentile(raw_ms, 0.5))} ms)",
                   "≤ raw + 2 ms", ok(ack - raw_p99, lambda x: x <= 2))
        report.notes.append(f"Ack, one device alone: the service with no viewers, one device "
                            f"sending its next event when the previous is acked, {seconds:g} s; "
                            "the ack is timed in the device (send to ack received), the raw "
                            "commit is one log-sized INSERT and COMMIT (WAL, synchronous=FULL) "
                            "on the same disk, 1,000 times. Under the fan-out's load the ack "
                            "is the row 'ack p99 under fan-out'.")

    await b.section("ack, one device alone", 120, lone_ack,
                   lambda why: report.not_measured(ack_alone_label, "≤ raw + 2 ms", why))
