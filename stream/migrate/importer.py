"""``arena-stream import --store URL LOG.jsonl``: an exported log (``GET /api/log`` of a
deployment on another store) into an empty store, as the live service would have written it.

1. The whole file becomes records first (``records.py``): a line that can't be one stops
   the import before anything is written.
2. The store must hold no record: an import is not merged into a log (``StartupRefused``).
3. The records are appended in the file's order, each durable before the next is sent
   (SQLite: a window of them shares commits, its one writer keeps their order). The log's
   order across games is the file's: the fold depends on it.
4. The store is opened again, its log read back and folded afresh, and the state's hash
   compared with the file's own replay (``arena-stream replay LOG --hash``). Equal, it says
   so; else it says which differ, and the command exits 1.

An import that stops midway (the store unreachable) leaves the records it wrote: empty the
store (a new SQLite file, or ``etcdctl del --prefix`` of the URL's prefix) and run it again.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from ..errors import NotStored, StartupRefused
from ..store import START, Record, Store
from ..store.sqlite import SqliteStore
from .records import LineRefused, file_hash, fold, records_of
from .stores import add_store_arguments, store_from, where

__all__ = ["Imported", "add_arguments", "import_records", "run"]

#: Appends a SQLite store takes at once (their order kept by its one writer).
SQLITE_WINDOW = 256


class Imported(msgspec.Struct, frozen=True, kw_only=True):
    """What an import wrote, and the two hashes it compared."""

    events: int
    store_hash: str
    file_hash: str
    seconds: float

    @property
    def equal(self) -> bool:
        return self.store_hash == self.file_hash


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("log", type=Path, help="the exported log (JSON Lines, as GET /api/log gives it)")
    add_store_arguments(p)
    p.set_defaults(func=run)


async def import_records(open_store: Callable[[], Store], path: Path,
                         records: list[Record] | None = None) -> Imported:
    """Import the log at ``path`` (its ``records``, if already made) into the store
    ``open_store`` makes (the module docstring). ``LineRefused`` for a bad line and
    ``StartupRefused`` for a store that holds records, nothing written; ``NotStored`` if the
    store fails midway."""
    started = time.perf_counter()
    records = records_of(path) if records is None else records
    store = open_store()
    await store.open()
    try:
        _, held = await store.rows_after(START)
        if held:
            raise StartupRefused(f"the store already holds {len(held)} records: an import goes "
                                 "into an empty store only")
        await _append_all(store, records)
    finally:
        await store.close()
    again = open_store()   # read back through a store of its own, as a node starting on it
    await again.open()
    try:
        _, rows = await again.rows_after(START)
    finally:
        await again.close()
    return Imported(events=len(rows), store_hash=fold(rows).state_hash(), file_hash=file_hash(path),
                    seconds=time.perf_counter() - started)


async def _append_all(store: Store, records: list[Record]) -> None:
    window = SQLITE_WINDOW if isinstance(store, SqliteStore) else 1
    for i in range(0, len(records), window):
        await asyncio.gather(*(store.append(r) for r in records[i:i + window]))


def run(args: argparse.Namespace) -> int:
    """The command: 0 once the store's fold equals the file's replay; 1 if they differ, or the
    store failed (unreachable, or midway); 2 for what was refused before anything was written."""
    name = where(args.store, getattr(args, "data", None))
    try:
        records = records_of(args.log)
        result = asyncio.run(import_records(lambda: store_from(args), args.log, records))
    except OSError as err:
        print(f"arena-stream: can't read {args.log}: {err.strerror}", file=sys.stderr)
        return 2
    except LineRefused as err:
        print(f"arena-stream: {args.log}: {err.detail} ({err.code}); nothing was imported",
              file=sys.stderr)
        return 2
    except StartupRefused as err:
        print(f"arena-stream: {name}: {err.detail}; nothing was imported", file=sys.stderr)
        return 2
    except NotStored as err:
        print(f"arena-stream: {name}: {err.detail}; if the import had begun, empty the store and "
              "run it again", file=sys.stderr)
        return 1
    if not result.equal:
        print(f"arena-stream: imported {result.events} events into {name}, but the store's state "
              f"sha256 {result.store_hash} differs from the file's replay {result.file_hash}",
              file=sys.stderr)
        return 1
    print(f"imported {result.events} events into {name}; state sha256 {result.store_hash} "
          f"(equal to the file's replay)")
    return 0
