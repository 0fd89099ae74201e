"""The garbage collector kept from stalling the loop (stream/live/ops/heap.py): a served node
freezes its heap after start-up and after each crowd of viewers, and times every
collection by generation."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from stream.live.ops import heap

from ..conftest import RunningServer


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """What a test freezes goes back to the collector after it."""
    gc.unfreeze()
    yield
    gc.unfreeze()


async def test_a_served_node_freezes_its_heap_and_times_collections(tmp_path: Path, unfrozen: None) -> None:
    async with RunningServer(tmp_path, freeze_heap=True) as s:
        assert gc.get_freeze_count() > 0
        gc.collect(2)
        async with aiohttp.ClientSession() as c, c.get(s.http + "/metrics") as r:
            page = await r.text()
    lines = {line.split(" ")[0]: float(line.split(" ")[1]) for line in page.splitlines()
             if line.startswith("arena_gc_pause_seconds_count")}
    assert lines['arena_gc_pause_seconds_count{generation="2"}'] >= 2   # the start's and ours


async def test_a_node_in_a_shared_process_freezes_nothing(tmp_path: Path, unfrozen: None) -> None:
    async with RunningServer(tmp_path):
        assert gc.get_freeze_count() == 0


@pytest.mark.parametrize(("counts", "freezes"), [
    ([0, 100, 400, 499], 0),                 # fewer than a crowd
    ([0, 600], 1),                           # a crowd
    ([0, 600, 900, 1099], 1),                # then less than a crowd more
    ([0, 600, 1100], 2),                     # a crowd, then another
    ([4000, 4600], 0),                       # a crowd, but not a quarter more
    ([4000, 100, 700], 1),                   # after most left, a crowd counts from what stayed
])
async def test_crowds_are_frozen_as_they_come(counts: list[int], freezes: int, unfrozen: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    frozen: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    seen = iter(counts)
    last = counts[-1]
    done = asyncio.Event()

    def viewers() -> int:
        n = next(seen, None)
        if n is None:
            done.set()
            return last
        return n

    task = asyncio.create_task(heap.freeze_crowds(viewers, every=0.001))
    await asyncio.wait_for(done.wait(), 5)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert len(frozen) == freezes
