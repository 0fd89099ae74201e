"""With several nodes on one Redis log: fold, in log order, what the other nodes
write, and show it to this node's viewers with the same sequence numbers."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..errors import NotStored
from ..store import Followable

if TYPE_CHECKING:
    from .hub import Hub


async def run(hub: Hub) -> None:
    store = hub.store
    assert isinstance(store, Followable)
    while True:
        if not hub.ready or hub.recovering:
            await asyncio.sleep(0.05)
            continue
        try:
            entries = await store.read_after(hub.tail, block_ms=1000)
        except NotStored:
            await asyncio.sleep(0.5)
            continue
        for entry_id, r in entries:
            if hub.recovering:
                break
            if not hub.fold_remote(r):
                await hub._recover()
                break
            hub.tail = entry_id
