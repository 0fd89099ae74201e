"""Snapshots: the fold of the log up to a position, cached.

The log is the truth and the state is a fold over it (``Hub._load``). A
snapshot is only a cache of that fold at one log position: everything the
engine holds (each game's state, accepted events, checkpoints and set-up
notices; the tournaments, the event owners, the ledger and its sources, the
voids) and the maps the hub derives from the log (each game's last ``seq``,
every dedup key with what its retry is acked with). A start decodes it, then
folds only the records after its position.

It is tied to the code that made it: its format string holds this module's
``FORMAT``, the package version, a digest of the snapshot's schema and of the
rules' source. A snapshot from other code, of another
log (epoch), at a position the store does not vouch for, or that does not
decode is refused with ``SnapshotError``; the caller folds the whole log.
"""

from __future__ import annotations

import functools
import hashlib
import re
import struct
import zlib
from pathlib import Path

import msgspec
import msgspec.inspect

from .. import __version__
from ..rules import ledger as lg
from ..rules.engine import CHECKPOINT_EVERY, Engine, GameRecord, Tournament
from ..rules.notices import Notice
from ..rules.state import Game

FORMAT = 1

#: What a retry needs of an event folded from the log: (digest, log id, game, seq, at).
Logged = tuple[bytes, str, str | None, int | None, int]


class SnapshotError(Exception):
    """This snapshot can't stand for the fold: fold the whole log instead."""


class GameSnapshot(msgspec.Struct, array_like=True, gc=False):
    """One ``GameRecord``."""

    game: Game
    now: int
    opened_at: int
    any_team: dict[str, bool] | None
    setup_notices: list[Notice]
    events: bytes                  # list[Event], packed: unpacked when first read (GameRecord)
    checkpoints: list[bytes]


class EngineSnapshot(msgspec.Struct, array_like=True, gc=False):
    """The fold of the log up to a position: the engine and the hub's load-derived maps."""

    games: dict[str, GameSnapshot]
    tournaments: dict[str, Tournament]
    owner: dict[str, str | None]
    ledger: dict[str, list[lg.Obligation]]
    sources: dict[str, int]
    voids: list[str]
    voided: list[str]
    decisions: dict[str, tuple[str, int]]
    seqs: dict[str, int]
    # The dedup keys: (device, client_id) -> (digest, log id, game, seq, at).
    keys: dict[tuple[str, str], tuple[bytes, str, str | None, int | None, int]]


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


def capture(engine: Engine, seqs: dict[str, int], keys: dict[tuple[str, str], Logged], *,
            epoch: str, position: str, size_hint: int = 0) -> bytearray:
    """The snapshot of a fold that has reached ``position``. Nothing may change the engine meanwhile
    (it runs on the event loop, in one go). ``size_hint``: the size expected, so that the buffer
    is allocated once (growing a few hundred MB step by step costs more than encoding them)."""
    games = {gid: GameSnapshot(r.game, r.now, r.opened_at, r.any_team, r.setup_notices,
                               _enc.encode(r.events) if r.packed is None else r.packed, r.checkpoints)
             for gid, r in engine.games.items()}
    body = EngineSnapshot(
        games=games, tournaments=engine.tournaments, owner=engine.owner, ledger=engine.ledger,
        sources=engine._sources, voids=sorted(engine.voids), voided=sorted(engine.voided),
        decisions=engine.decisions, seqs=seqs,
        keys=keys)
    blob = bytearray(size_hint)
    _enc.encode_into(body, blob)  # truncated to the body's end
    header = _enc.encode(_Header(format_of(), epoch, position, len(blob), zlib.crc32(blob)))
    blob += header
    blob += _TRAILER.pack(len(header))
    return blob


def restore(blob: bytes | bytearray, *, epoch: str, position: str
            ) -> tuple[Engine, dict[str, int], dict[tuple[str, str], Logged]]:
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
    engine = Engine()
    for gid, g in s.games.items():
        rec = GameRecord.__new__(GameRecord)
        rec.game, rec.now, rec.opened_at, rec.any_team = g.game, g.now, g.opened_at, g.any_team
        rec.setup_notices, rec.packed, rec.checkpoints = g.setup_notices, g.events, g.checkpoints
        engine.games[gid] = rec
    engine.tournaments = s.tournaments
    engine.owner = s.owner
    engine.ledger = s.ledger
    engine._sources = s.sources
    engine.voids = set(s.voids)
    engine.voided = set(s.voided)
    engine.decisions = s.decisions
    engine.reindex()
    return engine, s.seqs, s.keys
