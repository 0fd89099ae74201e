"""Whether Redis still holds the log this store has served, the hold on writes when it
does not (or when Redis could lose what it acks), and the operator's way out.

**What is checked.** A store has *seen* the entries it appended and had confirmed, and
those its fold read from Redis (confirmed on the replicas first, when acks wait for
them): it keeps the newest one. Whenever the writer connects again, and with every read
the fold takes (``RedisStore.rows_after``, ``read_after``), one pipelined exchange asks
for the epoch (``{p}epoch``), the operator's last acceptance (``{p}accepted``), a node's
flag (``{p}diverged``) and that newest entry. The verdict:

* **whole**: the epoch is this store's, no node has flagged the history, and the entry is
  there (the same record);
* **replaced**: the epoch changed and ``{p}accepted`` names the new one: the operator
  accepted the history Redis holds (on any node). The store adopts it, and the service
  reloads the log and resets its viewers (``on_replaced``);
* **diverged**: anything else: the epoch is gone (Redis lost its data, or was emptied) or
  is another log's, a node flagged the history, or the newest entry seen is missing (Redis
  holds a history behind what was served: a replica that was behind was promoted, say).
  The store flags the history in Redis for the other nodes (when it found it behind or
  without an epoch) and takes no write until a later check finds it whole (the operator
  brought back the primary that holds it) or replaced (``accept``).

**Holds.** A diverged history, or a Redis that could lose an acked write (``unsafe``),
holds every write: each append fails at once (``NotStored``, with the reason), the fold
reads nothing new, ``hold`` says why (``/readyz`` answers 503 with it, and a metric
counts it), and one ERROR line says what happened and what the operator can do; one
WARNING line when it ends.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec
from redis.exceptions import ResponseError

from ..errors import NotStored
from . import Accepted, Hold
from .redis_connect import entries, pairs

log = logging.getLogger("arena_stream.store")

#: How the check asks the operator to act, by kind of hold.
ACTION = {
    "diverged": "bring back the Redis primary that holds the missing history (the nodes resume by "
                "themselves), or accept the history Redis holds now with POST /api/admin/store/accept "
                "(viewers are then sent a fresh snapshot)",
    "unsafe": "configure every Redis server of the set with 'appendonly yes' and 'appendfsync always' "
              "(the store checks again at each attempt), or restart the service with --unsafe-store",
}
CHECKS = 4  # the commands of ``History.commands``


class _Key(msgspec.Struct):
    device: str
    client_id: str


_dec_key = msgspec.msgpack.Decoder(_Key)


def key_of(blob: bytes) -> bytes:
    """The dedup key (device NUL client_id) of a stored record."""
    k = _dec_key.decode(blob)
    return f"{k.device}\x00{k.client_id}".encode()


@dataclass
class Verdict:
    kind: Literal["whole", "replaced", "diverged"]
    reason: str = ""
    epoch: str = ""
    flag: bool = False          # this store found it: flag the history for the other nodes


@dataclass
class Check:
    """One check's commands, and what it is judged against: the store as it was when the
    check was sent (a verdict about an older state than the store's now is no verdict)."""

    epoch: str
    seen: tuple[str, bytes] | None
    changes: int
    commands: list[tuple[Any, ...]]


@dataclass
class History:
    prefix: str
    where: str                                      # the store's URL, for the logs
    epoch: str = ""
    seen: tuple[str, bytes] | None = None           # the newest entry seen: (id, its dedup key)
    holds: dict[str, Hold] = field(default_factory=dict)   # by kind: "diverged", "unsafe"
    changes: int = 0                                 # history holds taken or released, epochs adopted
    on_replaced: Callable[[str], None] | None = None

    # ------------------------------------------------------------- the check

    def check(self) -> Check:
        """The commands of one check, against the store as it is now."""
        p, seen = self.prefix, self.seen
        return Check(self.epoch, seen, self.changes, [
            ("GET", p + "epoch"), ("HGETALL", p + "accepted"), ("HGETALL", p + "diverged"),
            ("XRANGE", p + "log", seen[0], seen[0]) if seen else ("PING",)])

    def judge(self, check: Check, replies: Sequence[Any]) -> Verdict:
        for reply in replies[:CHECKS]:
            if isinstance(reply, ResponseError):
                raise NotStored(f"Redis refused the check of its history: {reply}")
        raw, accepted, flag, at_seen = replies[:CHECKS]
        epoch = raw.decode() if isinstance(raw, bytes) else None
        if epoch is None:
            return Verdict("diverged", "Redis holds no epoch for this log: its data was lost or emptied",
                           flag=True)
        if epoch != check.epoch:
            if pairs(accepted).get(b"epoch", b"").decode() == epoch:
                why = pairs(accepted).get(b"reason", b"").decode()
                return Verdict("replaced", why, epoch)
            return Verdict("diverged", f"Redis holds another log (epoch {epoch}; this node served "
                                       f"{check.epoch})")
        flagged = pairs(flag)
        if flagged:
            return Verdict("diverged", flagged.get(b"reason", b"").decode()
                           + f" (found by {flagged.get(b'by', b'?').decode()})")
        if check.seen is not None:
            found = entries(at_seen)
            if not found or key_of(found[0][1].get(b"r", b"")) != check.seen[1]:
                device, _, cid = check.seen[1].decode().partition("\x00")
                return Verdict("diverged", f"the log no longer holds entry {check.seen[0]} ({device}/{cid}), "
                                           "the newest this node has served: Redis holds a history behind it",
                               flag=True)
        return Verdict("whole")

    def flag_commands(self, v: Verdict) -> list[tuple[Any, ...]]:
        """What marks the history as diverged for every node (nothing if another did)."""
        if not v.flag:
            return []
        return [("HSET", self.prefix + "diverged", "reason", v.reason, "by", node_name(),
                 "at", int(time.time() * 1000))]

    def settle(self, check: Check, v: Verdict) -> None:
        """Act on a verdict: return if the history is whole, else raise ``NotStored``. A
        check sent before the store's last hold, release or new epoch says nothing now."""
        if check.changes != self.changes:
            raise NotStored("the store's state changed while it was checked; read again")
        if v.kind == "whole":
            self.release("diverged")
            return
        if v.kind == "replaced":
            previous = self.adopt(v.epoch)
            log.warning("the history Redis holds was accepted; reloading it", extra={
                "store": self.where, "epoch": v.epoch, "previous": previous, "reason": v.reason})
            if self.on_replaced is not None:
                self.on_replaced(v.reason)
            raise NotStored("the history was replaced (a new epoch): the service reloads it; send it again")
        self.hold_on("diverged", v.reason)
        raise NotStored(f"the store takes no writes: {v.reason}")

    # ------------------------------------------------------------- holds

    @property
    def hold(self) -> Hold | None:
        return self.holds.get("diverged") or self.holds.get("unsafe")

    def hold_on(self, kind: Literal["diverged", "unsafe"], reason: str) -> None:
        if kind in self.holds:
            if self.holds[kind].reason != reason:
                self.holds[kind] = Hold(kind=kind, reason=reason, since=self.holds[kind].since)
            return
        self.holds[kind] = Hold(kind=kind, reason=reason, since=time.time())
        self.changes += kind == "diverged"
        log.error("the store takes no writes", extra={
            "store": self.where, "hold": kind, "reason": reason, "action": ACTION[kind]})

    def release(self, kind: str, *, quiet: bool = False) -> None:
        hold = self.holds.pop(kind, None)
        if hold is None:
            return
        self.changes += kind == "diverged"
        if not quiet:
            log.warning("the store takes writes again", extra={
                "store": self.where, "hold": kind, "after_s": round(time.time() - hold.since, 1)})

    def adopt(self, epoch: str) -> str:
        """Take ``epoch`` as this log's (the operator accepted the history): nothing of it
        has been seen yet, and no hold on its history stands. Returns the one before."""
        previous, self.epoch, self.seen = self.epoch, epoch, None
        self.changes += 1
        self.release("diverged", quiet=True)
        return previous

    def saw(self, entry_id: str, key: bytes) -> None:
        if self.seen is None or _id(entry_id) > _id(self.seen[0]):
            self.seen = (entry_id, key)


def node_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _id(entry_id: str) -> tuple[int, int]:
    ms, _, n = entry_id.partition("-")
    return int(ms), int(n or 0)


# ------------------------------------------------------------------ the operator's way out


async def accept(r: Any, prefix: str, *, previous: str, by: str, reason: str) -> Accepted:
    """Take the history Redis holds as the log: first make the game counters, the dedup
    keys and the games' streams agree with ``{p}log`` (a history cut by hand may not), then,
    in one transaction, a new epoch, the ``{p}accepted`` record, no flag, no snapshot."""
    repaired = await _repair(r, prefix)
    epoch = secrets.token_hex(6)
    at = int(time.time() * 1000)
    record = {"epoch": epoch, "previous": previous, "by": by, "at": at, "reason": reason}
    pipe = r.pipeline(transaction=True)
    pipe.set(prefix + "epoch", epoch)
    pipe.delete(prefix + "accepted", prefix + "diverged", prefix + "snapshot")
    pipe.hset(prefix + "accepted", mapping=record)
    await pipe.execute()
    return Accepted(epoch=epoch, previous=previous, by=by, at=at, reason=reason, repaired=repaired)


async def _repair(r: Any, prefix: str) -> dict[str, int]:
    log_key = prefix + "log"
    newest = await r.xrevrange(log_key, "+", "-", count=1)
    tip = _id(newest[0][0].decode()) if newest else (0, 0)
    last: dict[str, int] = {}
    start = "-"
    dec = msgspec.msgpack.Decoder(_Seq)
    while True:
        rows = await r.xrange(log_key, start, "+", count=5000)
        for _, f in rows:
            s = dec.decode(f[b"r"])
            if s.game is not None and s.seq is not None:
                last[s.game] = s.seq
        if len(rows) < 5000:
            break
        start = "(" + rows[-1][0].decode()
    fixed = {"seqs": 0, "dedup_keys": 0, "game_entries": 0}
    counters = {k.decode(): int(v) for k, v in (await r.hgetall(prefix + "seq")).items()}
    for game in set(counters) | set(last):
        if counters.get(game) != last.get(game):
            fixed["seqs"] += 1
            if game in last:
                await r.hset(prefix + "seq", game, last[game])
            else:
                await r.hdel(prefix + "seq", game)
        beyond = [i for i, _ in await r.xrange(prefix + "game:" + game, f"({tip[0]}-{tip[1]}", "+")]
        if beyond:
            fixed["game_entries"] += await r.xdel(prefix + "game:" + game, *beyond)
    async for key, entry in r.hscan_iter(prefix + "dedup", count=5000):
        if _id(entry.decode()) > tip:
            fixed["dedup_keys"] += await r.hdel(prefix + "dedup", key)
    return fixed


class _Seq(msgspec.Struct):
    game: str | None
    seq: int | None
