"""Exactly once: what a retry of an event is answered with.

Every event a device sends carries its own id; ``(device, client_id)`` is the
dedup key, stored in the log with the event in one transaction. The hub keeps,
for each key, what a retry needs: the original payload's digest (a different
payload under the same key is a conflict) and the ack, or the future of the
ack while the first copy is still committing.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass

import msgspec

from ..wire import protocol as pr

Key = tuple[str, str]   # (device, client_id)


def digest(payload: bytes) -> bytes:
    """What identifies a payload for dedup: a retry must send the same bytes' digest."""
    return hashlib.sha256(payload).digest()[:16]


class Logged(msgspec.Struct, array_like=True, frozen=True, gc=False):
    """An event folded from the log: its ack is made when a retry asks for it."""

    digest: bytes
    log_id: str
    game: str | None
    seq: int | None
    at: int

    def ack(self, client_id: str) -> pr.Ack:
        return pr.Ack(id=client_id, log_id=self.log_id, game=self.game, seq=self.seq, at=self.at,
                      duplicate=True, notices=[])

    def logged(self) -> Logged:
        """Itself (``Taken.logged``: what either says of a logged event)."""
        return self


@dataclass(slots=True)
class Taken:
    """An event this process took: its ack, or the future of its ack while it commits."""

    digest: bytes
    ack: pr.Ack | asyncio.Future[pr.Ack]

    def logged(self) -> Logged | None:
        """The same as ``Logged``, once its commit is known to have succeeded."""
        prior = self.ack
        if isinstance(prior, asyncio.Future):
            if not prior.done() or prior.cancelled() or prior.exception() is not None:
                return None
            prior = prior.result()
        return Logged(self.digest, prior.log_id, prior.game, prior.seq, prior.at)


Known = Logged | Taken
