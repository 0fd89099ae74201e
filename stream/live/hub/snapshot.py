"""Snapshots: the fold of the log up to a position, cached.

The log is the truth and the state is a fold over it (``Hub._load``). A
snapshot is only a cache of that fold at one log position: the engine's image
(``Engine.image``: each game's state, accepted events, checkpoints and set-up
notices; the tournaments, the event owners, the ledger, the committee's
decisions, the voids) and the maps the hub derives from the log (each game's
last ``seq``, every dedup key with what its retry is acked with). A start
decodes it, then folds only the records after its position.

It is tied to the code that made it: its format string holds this module's
``FORMAT``, the package version, a digest of the snapshot's schema and of the
rules' source. A snapshot from other code, of another log (epoch), at a
position the store does not vouch for, or that does not decode is refused with
``SnapshotError``; the caller folds the whole log.

``SnapshotCache`` is the cache's life beside the store: read one at a start,
write one after a long fold and at a clean shutdown. It is only a cache, so it
swallows its own failures (logged) and never stops the service.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import hashlib
import logging
import re
import struct
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import msgspec
import msgspec.inspect

from ... import __version__
from ...rules.engine import CHECKPOINT_EVERY, Engine
from ...rules.records import EngineImage
from ...store import Log, Snapshots
from .dedup import Key, Known, Logged

log = logging.getLogger("arena_stream.snapshot")

FORMAT = 2


class SnapshotError(Exception):
    """This snapshot can't stand for the fold: fold the whole log instead."""


class EngineSnapshot(msgspec.Struct, array_like=True, gc=False):
    """The fold of the log up to a position: the engine and the hub's load-derived maps."""

    engine: EngineImage
    seqs: dict[str, int]
    keys: dict[Key, Logged]


class _Header(msgspec.Struct, array_like=True):
    """Checked before the body is decoded. A blob is the body (an ``EngineSnapshot``), then
    this header, then the header's length (4 bytes, big-endian): the body is encoded in place,
    never copied, and it is checked whole before it is decoded."""

    format: str
    epoch: str            # the log's (Store.epoch): a snapshot of another log is refused
    position: str         # the last record folded
    length: int           # of the body
    crc: int              # of the body: a torn or rotten one is refused before it is used


_enc = msgspec.msgpack.Encoder()
_dec_header = msgspec.msgpack.Decoder(_Header)
_dec_body = msgspec.msgpack.Decoder(EngineSnapshot)
_TRAILER = struct.Struct(">I")


@functools.cache
def _code_digest() -> str:
    """The snapshot's schema and the rules' source: a change to either makes old snapshots stale."""
    schema = re.sub(r" at 0x[0-9a-f]+", "", repr(msgspec.inspect.type_info(EngineSnapshot)))
    h = hashlib.sha256(schema.encode())
    h.update(b"checkpoint every %d" % CHECKPOINT_EVERY)
    rules = Path(__file__).parents[1] / "rules"
    try:
        for path in sorted(rules.glob("*.py")):
            h.update(path.name.encode() + b"\0" + path.read_bytes())
    except OSError:  # no source to read (a frozen build): the version and schema still count
        pass
    return h.hexdigest()[:24]


def format_of() -> str:
    """What a snapshot must say it is to be used by this code."""
    return f"arena-stream snapshot {FORMAT}; {__version__}; {_code_digest()}"


def capture(engine: Engine, seqs: dict[str, int], keys: dict[Key, Logged], *,
            epoch: str, position: str, size_hint: int = 0) -> bytearray:
    """The snapshot of a fold that has reached ``position``. Nothing may change the engine meanwhile
    (it runs on the event loop, in one go). ``size_hint``: the size expected, so that the buffer
    is allocated once (growing a few hundred MB step by step costs more than encoding them)."""
    body = EngineSnapshot(engine=engine.image(), seqs=seqs, keys=keys)
    blob = bytearray(size_hint)
    _enc.encode_into(body, blob)  # truncated to the body's end
    header = _enc.encode(_Header(format_of(), epoch, position, len(blob), zlib.crc32(blob)))
    blob += header
    blob += _TRAILER.pack(len(header))
    return blob


def restore(blob: bytes | bytearray, *, epoch: str, position: str
            ) -> tuple[Engine, dict[str, int], dict[Key, Logged]]:
    """(engine, seqs, dedup keys) as the fold left them at ``position``, the position the store
    keeps with ``blob``; or ``SnapshotError``."""
    view = memoryview(blob)
    end = len(view) - _TRAILER.size
    try:
        (n,) = _TRAILER.unpack_from(view, end)
        if not 0 < n <= end:
            raise ValueError("no header")
        head = _dec_header.decode(view[end - n:end])
    except (struct.error, ValueError, msgspec.DecodeError, RecursionError) as err:
        raise SnapshotError(f"it does not decode ({err})") from None
    if head.format != format_of():
        raise SnapshotError(f"it was made by other code ({head.format[:120]!r})")
    if head.epoch != epoch:
        raise SnapshotError(f"it is of another log (epoch {head.epoch!r}, the log's is {epoch!r})")
    if head.position != position:
        raise SnapshotError(f"it says it covers {head.position!r}, the store says {position!r}")
    body = view[:end - n]
    if len(body) != head.length or zlib.crc32(body) != head.crc:
        raise SnapshotError("it is torn or corrupt: its length or checksum does not match")
    try:
        s = _dec_body.decode(body)
    except (msgspec.DecodeError, RecursionError) as err:
        raise SnapshotError(f"it does not decode ({err})") from None
    return Engine.from_image(s.engine), s.seqs, s.keys


@contextlib.contextmanager
def no_gc(*, freeze: bool = False) -> Iterator[None]:
    """A load makes millions of objects and frees few: the cycle collector would only slow it.
    With ``freeze`` (a big load), what exists is then moved out of its sight (``gc.freeze``):
    else it would traverse the state at its next collections, and at every full one while the
    service runs. Reference counting still frees the state when a reload replaces it."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if collecting:
            gc.enable()


def _why(err: BaseException) -> str:
    return str(err) if isinstance(err, SnapshotError) else f"{type(err).__name__}: {err}"


class SnapshotStore(Log, Snapshots, Protocol):
    """What the cache uses of the store: its snapshot, and the log it is the fold of."""


class SnapshotCache:
    """The store's snapshot, read and written; never an error to its caller."""

    def __init__(self, store: SnapshotStore) -> None:
        self.store = store
        self.position: str | None = None  # where the store's snapshot is, if this code can use it
        self.size = 0                     # the size of the last snapshot read or written
        self._saving: asyncio.Task[None] | None = None

    async def load(self) -> tuple[str, tuple[Engine, dict[str, int], dict[Key, Logged]]] | None:
        """(its position, the fold it holds), or None: fold the whole log."""
        self.position = None
        try:
            found = await self.store.load_snapshot()
        except Exception as err:  # the log is read next, and says whether the store is down
            log.warning("snapshot not read; folding the whole log", extra={"reason": _why(err)})
            return None
        if found is None:
            return None
        position, blob = found
        self.size = len(blob)
        try:
            with no_gc(freeze=self.size > 2**23):
                restored = restore(blob, epoch=self.store.epoch, position=position)
        except Exception as err:  # SnapshotError, or anything else: it is only a cache
            log.warning("snapshot ignored; folding the whole log", extra={"reason": _why(err)})
            return None
        self.position = position
        return position, restored

    def forget(self) -> None:
        """The log could not be read after the snapshot's position: it is of no use."""
        self.position = None

    def capture(self, engine: Engine, seqs: dict[str, int], known: dict[Key, Known],
                position: str) -> bytearray | None:
        """The snapshot of ``engine``, which must be the fold up to ``position``. Blocks the
        loop while it encodes (about 1 s per 1,000,000 events); None if it could not, or
        if a key's ack is not known yet."""
        keys: dict[Key, Logged] = {}
        for key, k in known.items():
            logged = k if isinstance(k, Logged) else k.logged()
            if logged is None:
                return None
            keys[key] = logged
        # The size of the last one, or about what a record takes: the buffer is allocated once.
        hint = int(self.size * 1.05) if self.size else 240 * len(keys) + 2**20
        try:
            with no_gc():
                blob = capture(engine, seqs, keys, epoch=self.store.epoch, position=position,
                               size_hint=hint)
        except Exception as err:  # only a cache: serve without it
            log.warning("snapshot not made", extra={"reason": _why(err)})
            return None
        self.size = len(blob)
        return blob

    def save_soon(self, position: str, blob: bytearray) -> None:
        """Write it in the background (one at a time; ``close`` waits for it)."""
        self._saving = asyncio.create_task(self.save(position, blob), name="snapshot-save")

    async def save(self, position: str, blob: bytes | bytearray) -> None:
        try:
            await self.store.save_snapshot(position, blob)
        except Exception as err:  # NotStored, or anything else: only a cache is lost
            log.warning("snapshot not written", extra={"reason": _why(err)})
            return
        self.position = position
        log.info("snapshot written", extra={"position": position, "bytes": len(blob)})

    async def save_at_close(self, position: str, applied: list[Key],
                            capture: Callable[[str], bytearray | None]) -> None:
        """At a clean shutdown: a snapshot of the state, if it is the fold of a log prefix
        (``applied``, every event applied since the load that reached ``position``, is the
        log's next records, in the log's order). ``capture(last)`` makes it."""
        try:
            last, rows = await self.store.rows_after(position)
        except Exception as err:  # only a cache: the next start folds more of the log
            log.warning("no snapshot at shutdown", extra={"reason": _why(err)})
            return
        if [(r[2], r[3]) for r in rows] != applied:
            log.info("no snapshot at shutdown: the state is not the fold of a log prefix")
        elif last != self.position and (blob := capture(last)) is not None:
            await self.save(last, blob)

    async def close(self) -> None:
        if self._saving is not None:
            await self._saving
