"""``arena-stream bench etcd-size``: what the log costs in etcd, measured on a real cluster.

Three etcd members (the production settings: ``stream/tools/harness/etcd.py``) are started
in a temporary directory. Their database is measured (``/v3/maintenance/status``'s
``dbSize``, the file the quota counts, and ``dbSizeInUse``), compacted and defragmented
empty; then ``--events`` records are appended through the store (``EtcdStore``, one
transaction each, the games' appends at once: a realistic log, the demo's event mix played
again and again, ``live_log.demo_season``), and the database measured again; then compacted
to the current revision (``etcdctl compact``) and defragmented (``etcdctl defrag``) and
measured once more; and a snapshot (``etcdctl snapshot save``) taken, whose size a backup
is. Bytes per event, and how many events the 2 GiB quota (``--quota-backend-bytes``, the
deploy files') and an 8 GiB one hold, are worked out from the compacted size: what the
log itself takes, which auto-compaction (the last 10,000 revisions kept) and a defrag bring
the database back to.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import math
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import msgspec

from ..migrate.records import records_of
from ..store import Record
from .harness import EtcdCluster, Processes
from .harness.etcd import QUOTA_BYTES, prefix_end
from .live_log import demo_season, jsonl

__all__ = ["Sizing", "add_arguments", "measure", "run"]

GIB = 1024**3
#: Records an event of the demo's mix logs (``demo_season``), to make enough of them.
PER_EVENT = 120
#: Games appended at once (each game's records one after the other, as the hub sends them).
AT_ONCE = 16


class Sizing(msgspec.Struct, frozen=True, kw_only=True):
    """The figures, in bytes (``db_*``: the largest member's ``dbSize``)."""

    events: int
    body_bytes: int          # the records' JSON bodies alone, summed
    keys: int                # keys under the prefix after the appends
    db_empty: int            # compacted and defragmented, before any append
    db_after: int            # after the appends
    in_use_after: int        # dbSizeInUse after the appends
    db_compacted: int        # after compact + defrag
    snapshot: int            # ``etcdctl snapshot save``'s file
    seconds: float           # the appends' time

    @property
    def per_event_raw(self) -> float:
        return (self.db_after - self.db_empty) / self.events

    @property
    def per_event(self) -> float:
        return (self.db_compacted - self.db_empty) / self.events

    def holds(self, quota: int) -> int:
        """Events a database of ``quota`` bytes holds, compacted and defragmented."""
        return math.floor((quota - self.db_empty) / self.per_event)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--events", type=int, default=20_000, help="records appended (default %(default)s)")
    p.add_argument("--work", type=Path, default=None,
                   help="where the members' data directories go (default: a temporary directory)")


def _largest(cluster: EtcdCluster, field: str) -> int:
    sizes = []
    for m in cluster.members:
        s = cluster.status(m)
        if s is None:
            raise RuntimeError(f"{m.name} gave no status")
        sizes.append(int(s.get(field, 0)))
    return max(sizes)


def _count(cluster: EtcdCluster, prefix: bytes) -> int:
    """The keys under ``prefix`` (a range that counts only)."""
    body = {"key": base64.b64encode(prefix).decode(), "count_only": True,
            "range_end": base64.b64encode(prefix_end(prefix)).decode()}
    return int(cluster.members[0].call("kv/range", body).get("count", 0))


def _compact_and_defrag(cluster: EtcdCluster) -> None:
    revision = int(cluster.members[0].call("kv/range", {"key": "AA=="})["header"]["revision"])
    cluster.ctl("compact", str(revision), "--physical")
    cluster.ctl("defrag", "--cluster", timeout=120.0)


async def _append(url: str, records: list[Record]) -> float:
    """All of ``records`` through one store: each game's in order, ``AT_ONCE`` games at once."""
    from ..store.etcd import EtcdStore  # aiohttp and all: only when measuring

    by_game: dict[str | None, list[Record]] = defaultdict(list)
    for r in records:
        by_game[r.game].append(r)
    store = EtcdStore(url, budget=10.0)
    await store.open()
    gate = asyncio.Semaphore(AT_ONCE)

    async def one_game(rs: list[Record]) -> None:
        async with gate:
            for r in rs:
                await store.append(r)

    started = time.perf_counter()
    try:
        await one_game(by_game.pop(None, []))   # the set-ups and registrations first
        await asyncio.gather(*(one_game(rs) for rs in by_game.values()))
    finally:
        await store.close()
    return time.perf_counter() - started


def measure(events: int, work: Path, say: Any = print) -> Sizing:
    """Start a cluster in ``work``, append ``events`` records and measure (the docstring)."""
    log = work / "season.jsonl"
    log.write_bytes(jsonl(demo_season(max(1, math.ceil(events / PER_EVENT)))))
    records = records_of(log)[:events]
    with Processes(work) as group:
        cluster = EtcdCluster(work / "etcd", group=group)
        cluster.start()
        try:
            _compact_and_defrag(cluster)
            empty = _largest(cluster, "dbSize")
            say(f"bench etcd-size: 3 members started; database {empty:,} bytes empty; appending "
                f"{len(records):,} records ({AT_ONCE} games at once)")
            seconds = asyncio.run(_append(cluster.url("arena/"), records))
            after, in_use = _largest(cluster, "dbSize"), _largest(cluster, "dbSizeInUse")
            keys = _count(cluster, b"arena/")
            _compact_and_defrag(cluster)
            compacted = _largest(cluster, "dbSize")
            snap = work / "snapshot.db"
            cluster.ctl("snapshot", "save", str(snap), endpoints=cluster.members[0].endpoint, timeout=120.0)
            snapshot = snap.stat().st_size
        finally:
            cluster.stop()
    return Sizing(events=len(records), body_bytes=sum(len(r.body) for r in records), keys=keys,
                  db_empty=empty, db_after=after, in_use_after=in_use, db_compacted=compacted,
                  snapshot=snapshot, seconds=seconds)


def report(s: Sizing) -> list[str]:
    return [
        f"events appended: {s.events:,} in {s.seconds:.1f} s ({s.events / s.seconds:,.0f}/s); "
        f"their JSON bodies {s.body_bytes / s.events:,.0f} bytes an event; {s.keys:,} keys",
        f"database: empty {s.db_empty:,} bytes; after the appends {s.db_after:,} "
        f"({s.per_event_raw:,.0f} bytes an event; in use {s.in_use_after:,})",
        f"after etcdctl compact + defrag: {s.db_compacted:,} bytes ({s.per_event:,.0f} bytes an event)",
        f"a snapshot (etcdctl snapshot save): {s.snapshot:,} bytes ({s.snapshot / s.events:,.0f} an event)",
        f"the default quota ({QUOTA_BYTES / GIB:g} GiB) holds about {s.holds(QUOTA_BYTES):,} events; "
        f"8 GiB about {s.holds(8 * GIB):,}",
    ]


def run(args: argparse.Namespace) -> int:
    if args.events < 1:
        raise SystemExit("bench etcd-size: --events must be positive")
    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
        sizing = measure(args.events, args.work)
    else:
        with tempfile.TemporaryDirectory(prefix="arena-etcd-size-") as tmp:
            sizing = measure(args.events, Path(tmp))
    for line in report(sizing):
        print(line)
    return 0
