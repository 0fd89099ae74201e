"""What the ``{prefix}dedup`` hash costs in Redis's memory per million events, measured:
a bounded number of events appended through ``RedisStore`` to a real redis-server,
then Redis's own ``MEMORY USAGE … SAMPLES 0`` (every field counted), extrapolated to a
million (the hash's entries grow linearly; its table of slots doubles, 8 bytes a slot).
docs/deployment.md (and the note in docs/performance.md) state the figure this measures.

    python3 -m pytest tests/store/test_dedup_memory.py -q -s    # prints the figures
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Callable
from pathlib import Path

import redis.asyncio as aioredis

from stream.store import Record
from stream.store.redis import RedisStore

from ..docs_text import section as doc_section
from ..redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[2]
EVENTS = 20_000
MILLION = 1_000_000
BODY = (b'{"type":"whistle","id":"main-arena-ump-3/hh-mj3x1k2a-0f1e2d3c4b5a69788796",'
        b'"at":1796130000000,"game":"g1"}')


def handheld_id(n: int) -> str:
    """An id as the handheld makes them (clients/web/handheld/handheld-outbox.js): 32 characters."""
    return f"hh-{1796130000000 + n:x}"[:11] + "-" + secrets.token_hex(10)


#: (what, device name, the device's event ids)
PROFILES: dict[str, tuple[str, Callable[[int], str]]] = {
    "typical": ("main-arena-ump-3", handheld_id),               # 16 and 32 characters
    "longest": ("d" * 48, lambda n: secrets.token_hex(32)),     # the most a token and an id allow
}


def slots(entries: int) -> int:
    """The size of Redis's table for a hash of that many entries: a power of two above it."""
    return 1 << entries.bit_length()


async def measure(url: str, profile: str) -> float:
    """Bytes of ``{prefix}dedup`` per million events, extrapolated from ``EVENTS`` appends."""
    device, ids = PROFILES[profile]
    prefix = f"mem-{profile}:"
    store = RedisStore(url, prefix=prefix)
    direct = aioredis.from_url(url)
    await store.open()
    try:
        for start in range(0, EVENTS, 1000):
            await asyncio.gather(*(store.append(Record(
                game=None, seq=None, device=device, client_id=ids(n), official="A. Rivera",
                digest=secrets.token_bytes(16), received_at=1796130000000 + n, body=BODY))
                for n in range(start, start + 1000)))
        assert await direct.hlen(prefix + "dedup") == EVENTS
        used = await direct.memory_usage(prefix + "dedup", samples=0)
        assert used is not None
        per_entry = (used - 8 * slots(EVENTS)) / EVENTS
        return per_entry * MILLION + 8 * slots(MILLION)
    finally:
        await store.close()
        await direct.aclose()




def stated(text: str) -> dict[str, int]:
    """The figures a doc states: "**128 MB per million events**" and "192 MB with the longest"."""
    typical = re.search(r"\*\*(\d+) MB per million events\*\*", text)
    longest = re.search(r"(\d+) MB with the longest", text)
    assert typical and longest, "the dedup figures are not stated"
    return {"typical": int(typical.group(1)), "longest": int(longest.group(1))}


async def test_the_dedup_hash_costs_what_the_docs_say_per_million_events(redis_server: RedisServer) -> None:
    measured = {p: await measure(redis_server.url, p) / 1e6 for p in PROFILES}
    print(f"\n{{prefix}}dedup per million events, extrapolated from {EVENTS:,}: "
          + ", ".join(f"{p} {mb:.1f} MB" for p, mb in measured.items()))
    docs = {"docs/deployment.md": stated(doc_section("deployment.md", "## Two nodes by hand"))}
    performance = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    if "{prefix}dedup" in performance:  # the note (`bench all` rewrites the file without it)
        docs["docs/performance.md"] = stated(performance)
    for where, figures in docs.items():
        for profile, mb in measured.items():
            assert abs(figures[profile] - mb) <= 0.1 * mb, (
                f"{where} says {figures[profile]} MB per million events ({profile}); measured {mb:.1f} MB")
