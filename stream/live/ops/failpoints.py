"""Failpoints: crashes on purpose, at the moments the proofs must cover.

The kill -9 soak (``tests/proof/test_kill_soak.py``) needs the server to die
*between* committing an event and acknowledging it: the one moment an
external ``SIGKILL`` rarely lands on. With ``ARENA_FAILPOINTS`` unset (as in
production) ``hit`` is a dictionary lookup that finds nothing.

    ARENA_FAILPOINTS="after_commit=0.02"     # SIGKILL self on 2% of new acks
    ARENA_FAILPOINTS_SEED=7                   # the draw, reproducibly

Points:

``after_commit``
    The event and its dedup key are committed; its ``ack`` is not yet sent.
    The device never hears of it, resends, and must get ``duplicate: true``.
"""

from __future__ import annotations

import os
import random
import signal

_ARMED: dict[str, float] = {}
for _item in filter(None, os.environ.get("ARENA_FAILPOINTS", "").split(",")):
    _name, _, _p = _item.partition("=")
    _ARMED[_name.strip()] = float(_p or 1.0)
_rng = random.Random(os.environ.get("ARENA_FAILPOINTS_SEED"))


def hit(name: str) -> None:
    """Die here, as a power cut or ``kill -9`` would, if the point is armed and drawn."""
    p = _ARMED.get(name)
    if p is not None and _rng.random() < p:
        os.kill(os.getpid(), signal.SIGKILL)
