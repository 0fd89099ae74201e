"""``arena-stream archive --store URL --event E --out FILE``: an ended, completed event moved
out of an etcd store into a JSON Lines file that ``arena-stream replay`` reads.

What goes where (``record_events``, the committee's own reading of which records are an
event's: ``stream/live/http/committee_api.py``):

* **The file**: every record of the event, in log order (its set-up, its games, its own
  game-less records, the registrations of its teams and players and of no event), and the
  set-up, completion and eliminations of the other events its teams are entered in, logged
  before its last record: whether a team has another event to play decides who serves an
  obligation with any team (R15), which the event's own state records.
* **Deleted**: the records that are the event's alone (a registration of a team of another
  event too stays), with their dedup keys. Tokens, blobs and snapshots are not touched; the
  log's archive key is rewritten, so that no node loads a snapshot that holds the event.

Refused, with nothing written or deleted (``ArchiveRefused``, exit 2):

* a store that is not etcd; an event not set up, not completed, or with a game not ended;
* the rest of the log folding differently without the event (R6, R9, R15: obligations cross
  events): every other event, game, schedule, draw, registration and every obligation that
  touches them is compared before and after, by hash; an obligation of the event still owed
  (pending, or being served) would be lost with it; a record left that the rules would
  refuse without it (a registration naming the event);
* the file not replaying the event's own state as the log has it (a game of it that took an
  obligation from another event's game: archive the two events together, ``--event`` twice).

Then the file is written beside its place, fsynced, read back and replayed: its hash must be
the fold of exactly its records, and the event's own state the log's. Only then is it moved
into place (the directory fsynced), the records to delete written beside it
(``FILE.deleting``, fsynced) and deleted, in transactions (``EtcdStore.forget``). If the
store fails midway, the file is whole and ``FILE.deleting`` says what is left to delete:
``--resume`` deletes it (deleting a key again is harmless) and removes ``FILE.deleting``.

A node running at the time keeps the event in its fold until it loads the log again: at its
next start (it folds the whole log: its snapshot holds the event), or after a failed write.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import os
import secrets
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..errors import ArenaStreamError, NotStored, Refused, StartupRefused
from ..rules import codec
from ..rules import ledger as lg
from ..rules.engine import Engine
from ..rules.face import EngineState
from ..store import Record
from .records import file_hash, fold
from .stores import add_store_arguments, store_from, where

if TYPE_CHECKING:
    from ..store.etcd import EtcdStore

__all__ = ["ArchiveRefused", "Archived", "add_arguments", "archive", "resume", "run"]

#: The records of another event the file keeps beside the archived one's (the docstring).
_CONTEXT_TYPES = frozenset({"event.setup", "event.complete", "team.eliminated"})
_fields = msgspec.json.Decoder(dict[str, Any])
_records = msgspec.msgpack.Encoder()


class ArchiveRefused(ArenaStreamError):
    """The archive would lose or change something: nothing was written or deleted."""

    def __init__(self, detail: str) -> None:
        super().__init__("archive_refused", detail)


class Archived(msgspec.Struct, frozen=True, kw_only=True):
    """What an archive wrote and deleted."""

    events: list[str]
    out: str
    in_file: int
    file_hash: str
    deleted: int
    rest_hash: str


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--event", action="append", required=True, metavar="EVENT",
                   help="the event to archive (again for events archived together)")
    p.add_argument("--out", type=Path, required=True, metavar="FILE",
                   help="the JSON Lines file to write (it must not exist)")
    p.add_argument("--resume", action="store_true",
                   help="finish an archive the store failed midway: delete what FILE.deleting lists")
    add_store_arguments(p, sqlite=False)
    p.set_defaults(func=run)


# ------------------------------------------------------------------ what is compared


def _digest(view: Any) -> str:
    return hashlib.sha256(msgspec.json.encode(view, order="sorted")).hexdigest()


def _unordered(o: lg.Obligation) -> lg.Obligation:
    """An obligation without its serving turn: a number counted across the log's games, which
    shifts when earlier games leave it, and orders a player's obligations as their list does."""
    return msgspec.structs.replace(o, order=0)


def _touches_rest(o: lg.Obligation, events: set[str], games: set[str]) -> bool:
    """Whether an obligation matters outside the archived events: from another event's game,
    still owed (pending, or being served), or served in a game outside them."""
    return (o.origin_event not in events or o.status in ("pending", "serving")
            or (o.applied_in is not None and o.applied_in not in games))


def _rest(state: EngineState, events: set[str], games: set[str], teams: set[str],
          players: set[str]) -> dict[str, dict[str, Any]]:
    """The state outside the archived events, part by part."""
    return {
        "event": {k: v for k, v in state.events.items() if k not in events},
        "game": {k: v for k, v in state.games.items() if k not in games},
        "obligations of": {p: kept for p, obs in state.ledger.items()
                           if (kept := [_unordered(o) for o in obs if _touches_rest(o, events, games)])},
        "team": {k: v for k, v in state.teams.items() if k not in teams},
        "player": {k: v for k, v in state.players.items() if k not in players},
        "schedule of": {k: v for k, v in state.schedules.items() if k not in games},
        "draw of": {k: v for k, v in state.draws.items() if k not in events},
    }


def _own(state: EngineState, events: set[str], games: set[str]) -> dict[str, dict[str, Any]]:
    """The archived events' own state, part by part."""
    return {
        "event": {k: v for k, v in state.events.items() if k in events},
        "game": {k: v for k, v in state.games.items() if k in games},
        "obligations of": {p: kept for p, obs in state.ledger.items()
                           if (kept := [_unordered(o) for o in obs
                                        if o.origin_event in events or o.applied_in in games])},
        "schedule of": {k: v for k, v in state.schedules.items() if k in games},
        "draw of": {k: v for k, v in state.draws.items() if k in events},
    }


def _differences(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[str]:
    """What differs, as "game 'g2'", "obligations of 'salas'"…"""
    out = []
    for part, items in before.items():
        other = after[part]
        for key in sorted(set(items) | set(other)):
            if _digest(items.get(key)) != _digest(other.get(key)):
                out.append(f"{part} {key!r}")
    return out


def _said(found: list[str]) -> str:
    return ", ".join(found[:6]) + (f" and {len(found) - 6} more" if len(found) > 6 else "")


# ------------------------------------------------------------------ the archive


def _fields_of(r: Record) -> dict[str, Any]:
    try:
        return _fields.decode(r.body)
    except msgspec.DecodeError:
        return {}


def _strict_fold(records: Iterable[Record]) -> Engine:
    """The fold of ``records``; ``ArchiveRefused`` naming the first one the rules refuse."""
    engine = Engine()
    for r in records:
        e = codec.decode_event(r.body)
        try:
            engine.apply(e)
        except Refused as err:
            raise ArchiveRefused(f"without the archived records, the rules would refuse {e.id!r} "
                                 f"({err.code}: {err.detail})") from None
    return engine


def _check_archivable(engine: Engine, events: list[str]) -> set[str]:
    """The archived events' games; ``ArchiveRefused`` unless each event is set up and
    completed and each of its games has ended."""
    games: set[str] = set()
    for event in events:
        t = engine.tournament(event)
        if t is None:
            raise ArchiveRefused(f"there is no event {event!r} in the log")
        if not t.completed:
            raise ArchiveRefused(f"event {event!r} is not completed (an event.complete first)")
        mine = engine.games_of_event(event)
        running = [g for g in mine if engine.status_of(g) != "ended"]
        if running:
            raise ArchiveRefused(f"event {event!r} has games not ended: {', '.join(sorted(running))}")
        games.update(mine)
    return games


def _split(engine: Engine, records: list[Record], events: set[str],
           games: set[str]) -> tuple[list[Record], list[Record]]:
    """(the file's records, the records deleted), each in log order (the module docstring)."""
    from ..live.http.committee_api import record_events  # the service's HTTP room: only when used

    owners = [record_events(engine, r) for r in records]
    mine = [i for i, e in enumerate(owners) if isinstance(e, frozenset) and e & events]
    last = mine[-1] if mine else -1
    teams = {t for event in events if (entered := engine.tournament(event)) for t in entered.teams}
    teams |= {side.team for g in games for side in (engine.view(g).teams.home, engine.view(g).teams.away)}
    others = {e for t in teams for e in engine.team_events(t)} - events
    file: list[Record] = []
    for i, (r, e) in enumerate(zip(records, owners, strict=True)):
        if e is True or (isinstance(e, frozenset) and e & events):
            file.append(r)
        elif i < last and isinstance(e, frozenset) and e & others:
            f = _fields_of(r)
            if f.get("type") in _CONTEXT_TYPES and f.get("event") in others:
                file.append(r)
    deleted = [r for r, e in zip(records, owners, strict=True)
               if isinstance(e, frozenset) and e and e <= events]
    return file, deleted


def _registered(records: Iterable[Record]) -> tuple[set[str], set[str]]:
    """The teams and players these records register."""
    teams, players = set(), set()
    for r in records:
        f = _fields_of(r)
        if f.get("type") == "team.registered" and isinstance(f.get("team"), str):
            teams.add(f["team"])
        elif f.get("type") == "player.registered" and isinstance(f.get("player"), str):
            players.add(f["player"])
    return teams, players


def _write(out: Path, records: list[Record]) -> Path:
    """The file beside its place, fsynced: the temporary path."""
    tmp = out.with_name(f".{out.name}.{secrets.token_hex(4)}.tmp")
    with open(tmp, "xb") as f:
        for r in records:
            f.write(r.body + b"\n")
        f.flush()
        os.fsync(f.fileno())
    return tmp


def _into_place(tmp: Path, out: Path) -> None:
    os.link(tmp, out)   # never over an existing file
    tmp.unlink()
    fd = os.open(out.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


async def archive(store: EtcdStore, events: list[str], out: Path) -> Archived:
    """Archive ``events`` of the opened ``store`` into ``out`` (the module docstring)."""
    if await asyncio.to_thread(out.exists):
        raise ArchiveRefused(f"{out} exists: an archive is never written over")
    chosen = set(events)
    records = await store.records()
    engine = fold(records)
    games = _check_archivable(engine, events)
    file, deleted = _split(engine, records, chosen, games)
    owed = [o for obs in engine.book.ledger.values() for o in obs
            if o.origin_event in chosen and o.status in ("pending", "serving")]
    if owed:
        o = owed[0]
        raise ArchiveRefused(f"{o.player!r}'s {o.kind} from game {o.origin_game!r} ({o.id}) is still "
                             f"{o.status}: it would be lost with the event (rescind it, or archive once "
                             "it is served)")
    gone = {id(r) for r in deleted}
    kept = [r for r in records if id(r) not in gone]
    teams, players = _registered(deleted)
    kept_teams, kept_players = _registered(kept)
    teams -= kept_teams
    players -= kept_players
    after = _strict_fold(kept)
    before_rest = _rest(engine.state(), chosen, games, teams, players)
    after_rest = _rest(after.state(), chosen, games, teams, players)
    changed = _differences(before_rest, after_rest)
    if changed:
        raise ArchiveRefused(f"without it, the rest of the log would fold differently: {_said(changed)}")
    own = fold(file)
    differs = _differences(_own(engine.state(), chosen, games), _own(own.state(), chosen, games))
    if differs:
        raise ArchiveRefused(f"its records alone would not replay it as the log has it ({_said(differs)}): "
                             "a game of it took an obligation from another event's game; archive the "
                             "two together (--event twice)")
    tmp = await asyncio.to_thread(_write, out, file)
    try:
        replayed = await asyncio.to_thread(file_hash, tmp)
        if replayed != own.state_hash():
            raise ArchiveRefused(f"the file written replays to {replayed}, not to its records' fold "
                                 f"{own.state_hash()}: nothing was deleted")
        await asyncio.to_thread(_into_place, tmp, out)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    pending = _pending(out)
    await asyncio.to_thread(_write_pending, pending, deleted)
    removed = await store.forget(deleted, secrets.token_hex(8).encode())
    await asyncio.to_thread(pending.unlink)
    return Archived(events=events, out=str(out), in_file=len(file), file_hash=replayed,
                    deleted=removed, rest_hash=after.state_hash())


def _pending(out: Path) -> Path:
    return out.with_name(out.name + ".deleting")


def _write_pending(path: Path, records: list[Record]) -> None:
    with open(path, "xb") as f:
        f.write(_records.encode(records))
        f.flush()
        os.fsync(f.fileno())


async def resume(store: EtcdStore, out: Path) -> int:
    """Delete what ``out``'s ``.deleting`` lists (an archive the store failed midway): the keys
    deleted now."""
    pending = _pending(out)
    if not (await asyncio.to_thread(out.exists) and await asyncio.to_thread(pending.exists)):
        raise ArchiveRefused(f"nothing to resume: {out} and {pending} must both exist")
    records = msgspec.msgpack.decode(await asyncio.to_thread(pending.read_bytes), type=list[Record])
    removed = await store.forget(records, secrets.token_hex(8).encode())
    await asyncio.to_thread(pending.unlink)
    return removed


def run(args: argparse.Namespace) -> int:
    """The command: 0 once archived; 2 if refused (nothing written, nothing deleted); 1 if the
    store failed (the file, once written, holds every record: run it again)."""
    from ..store.etcd import EtcdStore  # aiohttp and all: only when used

    name = where(args.store)
    try:
        store = store_from(args)
        if not isinstance(store, EtcdStore):
            raise ArchiveRefused("archive moves events out of an etcd store only (--store etcd://…)")
        if args.resume:
            removed = asyncio.run(_resume(store, args.out))
            print(f"deleted the {removed} keys left of the archive in {args.out} from {name}")
            return 0
        result = asyncio.run(_archive(store, list(args.event), args.out))
    except (ArchiveRefused, StartupRefused) as err:
        print(f"arena-stream: archive refused: {err.detail}; nothing was deleted", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"arena-stream: can't write {args.out}: {err.strerror}; nothing was deleted", file=sys.stderr)
        return 2
    except NotStored as err:
        print(f"arena-stream: {name}: {err.detail}; if {args.out} was written, run the same "
              "command again with --resume", file=sys.stderr)
        return 1
    print(f"archived {', '.join(result.events)}: {result.in_file} records in {result.out} (state sha256 "
          f"{result.file_hash}, equal to the fold of those records); {result.deleted} keys (records and "
          f"their dedup keys) deleted from {name}; the rest of the log folds as before (state sha256 "
          f"{result.rest_hash}). Running nodes keep the event until they load the log again (restart them)")
    return 0


async def _archive(store: EtcdStore, events: list[str], out: Path) -> Archived:
    await store.open()
    try:
        return await archive(store, events, out)
    finally:
        await store.close()


async def _resume(store: EtcdStore, out: Path) -> int:
    await store.open()
    try:
        return await resume(store, out)
    finally:
        await store.close()
