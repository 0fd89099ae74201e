"""The store contract: an append-only log with its dedup keys, durable on return.

The log is the truth; the service's state is a fold over it. Every backend
(SQLite for one machine, etcd for several nodes) passes the same contract tests
(``tests/store/test_contract.py``).

* ``append(record)`` returns only once the record **and its dedup key**
  ``(device, client_id)`` are committed to disk in one transaction. Any
  failure raises ``NotStored``; nothing half-written is ever visible.
* A ``(device, client_id)`` pair is unique forever: appending it again raises
  ``DuplicateKey`` carrying the record already stored.
* ``(game, seq)`` is unique: the per-game total order.
* ``records()`` returns everything in the order it was appended;
  ``rows_after(position)`` the records after a log position, with only what
  the fold reads, and the position of the last one.
* ``save_snapshot(position, blob)`` / ``load_snapshot()`` keep one snapshot:
  the fold up to a position, cached (``stream/live/hub/snapshot.py``). It is never the
  truth and is not made durable ahead of anything: losing it costs a full fold.
* ``put_blob(digest, content_type, data)`` / ``get_blob(digest)``: small files the log
  names by their SHA-256 (a team's logo), durable on return like an append (so an event
  that names one is never committed before it); storing one again is harmless.
* ``record_token(claims_json, at, by)`` / ``tokens()``: the tokens issued (their claims,
  when and by whom; never the token itself), in the order issued.
* ``stats()``: what it has committed since it was opened (transactions, records).
* ``status()``: a store on a cluster (etcd): the member in use, the leader, the Raft term
  and the recent commit time, as last found; None on one machine.
* ``on_commit(seconds)``, ``on_durable(seconds)``: called, when set, with how long each
  transaction took alone (SQLite's ``COMMIT``, which is its fsync; an etcd transaction's
  round trip, the members' fsyncs included), and how long each
  append took from its call to durable (its wait for the transaction included): what
  the disk and the store's queue add to an ack (``/metrics``; docs/performance.md).

Each of these is one face, a protocol of its own (``Log``, ``Snapshots``, ``Tokens``,
``Blobs``; ``Followable`` for a log several nodes share): a caller
names the face it uses. ``Store`` is all of them, with ``open``, ``close`` and ``stats``.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import msgspec

from ..errors import ArenaStreamError, NotStored


class Record(msgspec.Struct, frozen=True, kw_only=True):
    game: str | None              # None for tournament events (event.setup, event.complete)
    seq: int | None               # position in the game's log, from 1
    device: str                   # who sent it (token subject), or "system"
    client_id: str                # the id the device gave it
    official: str                 # the person behind the device
    digest: bytes                 # of the event as the device sent it: tells a retry from a conflict
    received_at: int              # ms, the server's clock
    body: bytes                   # the event in the pinned log format (JSON), as the fold reads it


class TokenRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A token issued: its claims as JSON, when (ms) and by whom. Never the token itself."""

    claims: bytes
    at: int
    by: str


#: The position before the first record: ``rows_after(START)`` reads the whole log.
START = "0-0"

#: One record as the fold reads it: (game, seq, device, client_id, digest, body).
FoldRow = tuple[str | None, int | None, str, str, bytes, bytes]


class DuplicateKey(ArenaStreamError):
    def __init__(self, existing: Record) -> None:
        super().__init__("duplicate_key", f"{existing.device}/{existing.client_id} is stored")
        self.existing = existing


@runtime_checkable
class Followable(Protocol):
    """A store several nodes share: each folds what the others append."""

    async def read_after(self, entry_id: str, count: int | None = None,
                         block_ms: int | None = None) -> list[tuple[str, Record]]: ...

    async def end(self) -> str:
        """The newest entry's id in the global log (``START`` if it is empty)."""
        ...


def entry_key(entry_id: str) -> tuple[int, int]:
    """A log entry id (``ms-n``) as something that orders like the log."""
    ms, _, n = entry_id.partition("-")
    return int(ms), int(n or 0)


class SeqTaken(NotStored):
    """Another node took this sequence number first: fold its event, then try again."""

    def __init__(self, current: int) -> None:
        super().__init__(f"another node has already written seq {current} of this game")
        self.current = current


class StoreStatus(msgspec.Struct, frozen=True, kw_only=True):
    """A store on a cluster, as the node last found it (``GET /readyz``, ``/metrics``): the
    member this node talks to, the cluster's leader as that member names it (None: no
    leader, or no member answered), its Raft term, how many members the cluster has, and
    the median time of this node's last transactions (seconds; None before the first)."""

    kind: str
    member: str
    leader: str | None = None
    raft_term: int | None = None
    members: int | None = None
    commit_seconds: float | None = None
    checked_at: int | None = None  # ms, Unix time: when the member last answered


class StoreStats(msgspec.Struct, frozen=True, kw_only=True):
    """What a store has written since it was opened: transactions (one fsync each) and the
    records they held (``commits`` < ``records``: appends shared a commit). On SQLite a
    token, a revocation or a blob written in a batch counts among its records too."""

    commits: int = 0
    records: int = 0


# ------------------------------------------------------------------ the faces
#
# A store serves several callers, each through one face: the fold and the hub read and
# append the log, the snapshot cache keeps a fold, the tokens' routes keep tokens, the
# logo routes keep blobs. A caller names the face it needs; ``Store`` is all of them, and
# every backend is a ``Store``.


class Log(Protocol):
    """The log: appends, durable on return, and its reads, in append order."""

    #: Identifies this log: a resume against a different epoch starts afresh.
    epoch: str

    @abc.abstractmethod
    async def append(self, record: Record) -> None:
        """Durably append, or raise ``NotStored`` / ``DuplicateKey``."""

    @abc.abstractmethod
    async def records(self) -> list[Record]:
        """Every record, in append order."""

    @abc.abstractmethod
    async def game_records(self, game: str, after_seq: int = 0) -> list[Record]:
        """One game's records with ``seq > after_seq``, in order."""

    @abc.abstractmethod
    async def rows_after(self, position: str) -> tuple[str, list[FoldRow]]:
        """Every record after ``position`` (``START``: the whole log), in append order, as
        ``FoldRow`` tuples, and the position of the last one (``position`` itself if none).
        Positions are opaque strings of this store. Raises ``LookupError`` if ``position``
        is not one of this log's (beyond its end, say)."""

    @abc.abstractmethod
    async def reset_after_failure(self) -> None:
        """Accept appends again after a failed commit (the caller has reloaded)."""

    @abc.abstractmethod
    def readmit(self, game: str) -> None:
        """Accept ``game``'s appends again after one was refused with ``SeqTaken``: the
        caller has settled every append of the game it had sent and taken back the
        events they carried."""


class Snapshots(Protocol):
    """One snapshot: the fold up to a log position, cached; never the truth."""

    @abc.abstractmethod
    async def save_snapshot(self, position: str, blob: bytes | bytearray) -> None:
        """Keep ``blob``, the fold of the log up to ``position``, in place of any earlier
        one. Raises ``NotStored`` if it could not; nothing else depends on it."""

    @abc.abstractmethod
    async def load_snapshot(self) -> tuple[str, bytes] | None:
        """The last snapshot saved, as (position, blob), or None."""


class Tokens(Protocol):
    """The tokens issued and those revoked."""

    @abc.abstractmethod
    async def record_token(self, claims_json: bytes, at: int, by: str) -> None:
        """Keep a token issued (its claims, when, by whom), durably; or raise ``NotStored``."""

    @abc.abstractmethod
    async def tokens(self) -> list[TokenRecord]:
        """Every token recorded, in the order recorded."""

    @abc.abstractmethod
    async def revoke(self, jti: str, at: int, by: str, reason: str) -> None:
        """Keep a revocation, durably (again: harmless); or raise ``NotStored``."""

    @abc.abstractmethod
    async def revoked(self) -> set[str]:
        """The ``jti`` of every token revoked."""


class Blobs(Protocol):
    """Small files the log names by their SHA-256."""

    @abc.abstractmethod
    async def put_blob(self, digest: str, content_type: str, data: bytes) -> None:
        """Keep ``data`` under ``digest`` (its SHA-256, lower hex), durably; or raise ``NotStored``."""

    @abc.abstractmethod
    async def get_blob(self, digest: str) -> tuple[str, bytes] | None:
        """(content type, data) of the blob under ``digest``, or None."""


class Store(Log, Snapshots, Tokens, Blobs):
    """An append-only event log with dedup keys, and what it keeps beside it; see the
    module docstring. A backend opens and closes, and counts what it commits."""

    epoch: str = ""
    #: Each transaction's time alone, and each append's from its call to durable (seconds).
    on_commit: Callable[[float], None] | None = None
    on_durable: Callable[[float], None] | None = None

    def readmit(self, game: str) -> None:
        """A store that never raises ``SeqTaken`` has nothing to do."""
        return

    def status(self) -> StoreStatus | None:
        """The cluster the store is on, as last found (None: a store on one machine)."""
        return None

    @abc.abstractmethod
    async def open(self) -> None: ...

    @abc.abstractmethod
    async def close(self) -> None: ...

    @abc.abstractmethod
    def stats(self) -> StoreStats:
        """What it has committed since it was opened (for metrics and benchmarks)."""
