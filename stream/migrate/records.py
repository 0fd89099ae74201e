"""A log's lines as the records the live service writes, and a fold of records.

Each line of an exported log (``GET /api/log``: one event body a line, docs/log-format.md)
becomes the ``Record`` the hub would have appended for it (``stream/live/hub/hub.py``):

* ``game`` and ``seq``: the log folded in order with the rules engine, each event filed
  under the game the fold's face names for it (``Face.logged_under``, the hub's own
  question) and numbered from 1 in its game;
* ``device`` and ``client_id`` from its id: ``DEVICE/ID`` (a token's subject, which holds
  no ``/``, and the device's own id: docs/protocol-device.md), a tick's
  ``system:tick:GAME:AT`` as the device ``system`` and ``tick:GAME:AT``, as the service's
  timer writes it; any other id (a hand-written log's) as it is, under the device ``""``,
  which no token names;
* ``official`` ``""``, ``received_at`` the event's ``at``;
* ``body`` the event encoded as the hub encodes it, and ``digest`` the dedup digest of that
  body (``dedup.digest``: the first 16 bytes of its SHA-256).

The digest is what a retry is judged by (``Hub._submit_once`` compares a resend's payload
digest with it). The service's own ticks are digested the same way, so a tick written again
after a move is a duplicate. A device's payload digest is taken over what the device sent
(its own id, its own clock: ``ingest.py``), which the log does not keep: an old event a
device sends again after the move is answered ``id_conflict``, not as a duplicate.

A line that does not decode, an event the rules refuse and two lines with one dedup key are
``LineRefused``, naming the line, before anything is written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ..errors import ArenaStreamError, MalformedEvent, Refused
from ..live.hub.dedup import digest
from ..rules import codec
from ..rules.engine import Engine
from ..store import FoldRow, Record

__all__ = ["LineRefused", "file_hash", "fold", "records_of", "sender"]

SYSTEM = "system"
_TICK = "system:tick:"
#: A token's subject (``api_types.TokenRequest.device``): what may stand before the ``/``.
_DEVICE = re.compile(r"[A-Za-z0-9_.:-]{1,48}")


class LineRefused(ArenaStreamError):
    """A line of the log that can't become a record: nothing was written."""

    def __init__(self, line: int, code: str, detail: str) -> None:
        super().__init__(code, f"line {line}: {detail}")
        self.line = line


def sender(event_id: str) -> tuple[str, str]:
    """(device, client_id) of a logged event's id (the module docstring)."""
    if event_id.startswith(_TICK):
        return SYSTEM, event_id[len(SYSTEM) + 1:]
    device, slash, own = event_id.partition("/")
    if slash and own and _DEVICE.fullmatch(device):
        return device, own
    return "", event_id


def records_of(path: Path) -> list[Record]:
    """Every line of the log at ``path`` as the record the service would have written, in
    order; ``LineRefused`` for the first line that can't be one, ``OSError`` if it can't be
    read."""
    engine = Engine()
    seqs: dict[str, int] = {}
    keys: dict[tuple[str, str], int] = {}
    out: list[Record] = []
    with open(path, "rb") as f:
        for line, item in codec.read_log(f):
            if isinstance(item, MalformedEvent):
                raise LineRefused(line, item.code, f"not an event: {item.detail}")
            game = engine.logged_under(item)
            try:
                engine.apply(item)
            except Refused as err:
                raise LineRefused(line, err.code, f"the rules refuse {item.id!r} ({err.clause}): "
                                                  f"{err.detail}") from None
            device, client_id = sender(item.id)
            first = keys.setdefault((device, client_id), line)
            if first != line:
                raise LineRefused(line, "duplicate_key", f"{item.id!r} has the dedup key "
                                  f"({device!r}, {client_id!r}) of line {first}")
            seq = None
            if game is not None:
                seq = seqs[game] = seqs.get(game, 0) + 1
            body = codec.encode_event(item)
            out.append(Record(game=game, seq=seq, device=device, client_id=client_id, official="",
                              digest=digest(body), received_at=item.at, body=body))
    return out


def fold(rows: Iterable[FoldRow | Record]) -> Engine:
    """The fold of records (or the store's fold rows), in order, as a node folds its log."""
    engine = Engine()
    for r in rows:
        engine.feed(codec.decode_event(r.body if isinstance(r, Record) else r[5]))
    return engine


def file_hash(path: Path) -> str:
    """``arena-stream replay PATH --hash``: the state hash of the file's own replay."""
    engine = Engine()
    with open(path, "rb") as f:
        for _, item in codec.read_log(f):
            if not isinstance(item, MalformedEvent):
                engine.feed(item)
    return engine.state_hash()
