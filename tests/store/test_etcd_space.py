"""What the log takes in etcd's backend per million events, measured: a bounded number of
events appended through ``EtcdStore`` to a real three-member cluster of the test's own
(each event its record, its dedup key, kept for ever, and the log's head rewritten), the
history compacted as ``--auto-compaction`` does, then the member's own ``dbSizeInUse``
(the pages the data takes), extrapolated to a million (it grows linearly).
docs/deployment.md states the figure this measures, and sizes the backend's quota by it.

    python3 -m pytest tests/store/test_etcd_space.py -q -s    # prints the figures
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stream.store import Record
from stream.store.etcd import EtcdStore
from stream.tools.harness import EtcdCluster, EtcdMember, Processes

from ..docs_text import section as doc_section

pytestmark = [pytest.mark.slow, pytest.mark.etcd]

EVENTS = 5_000
GAMES = 100          # appends of different games go at once; a game's, one after another
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


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[EtcdCluster]:
    """A cluster of the test's own: nothing else written to it."""
    with Processes(tmp_path) as group:
        c = EtcdCluster(tmp_path / "etcd", group=group)
        c.start()
        try:
            yield c
        finally:
            c.stop()


def in_use(member: EtcdMember) -> int:
    """The bytes of the member's backend its data takes (``dbSizeInUse``)."""
    return int(member.call("maintenance/status", {})["dbSizeInUse"])


def compact(member: EtcdMember) -> None:
    """Every revision before the newest dropped, as auto-compaction does within its period."""
    newest = int(member.call("kv/range", {"key": "AA=="})["header"]["revision"])
    member.call("kv/compaction", {"revision": str(newest), "physical": True}, timeout=30)


async def measure(cluster: EtcdCluster, profile: str) -> float:
    """Bytes of etcd's backend per million events, extrapolated from ``EVENTS`` appends."""
    device, ids = PROFILES[profile]
    member = cluster.members[0]
    store = EtcdStore(cluster.url(f"space-{profile}"))
    await store.open()
    try:
        await asyncio.to_thread(compact, member)
        before = await asyncio.to_thread(in_use, member)
        for start in range(0, EVENTS, GAMES):
            await asyncio.gather(*(store.append(Record(
                game=f"game-{n % GAMES}", seq=n // GAMES + 1, device=device, client_id=ids(n),
                official="A. Rivera", digest=secrets.token_bytes(16), received_at=1796130000000 + n,
                body=BODY)) for n in range(start, start + GAMES)))
        assert store.stats().records == EVENTS
        await asyncio.to_thread(compact, member)
        after = await asyncio.to_thread(in_use, member)
        return (after - before) / EVENTS * MILLION
    finally:
        await store.close()


def stated(text: str) -> dict[str, int]:
    """The figures a doc states: "**590 MB per million events**" and "650 MB with the longest"."""
    typical = re.search(r"\*\*(\d+) MB per million events\*\*", text)
    longest = re.search(r"(\d+) MB with the longest", text)
    assert typical and longest, "the figures are not stated"
    return {"typical": int(typical.group(1)), "longest": int(longest.group(1))}


async def test_the_log_takes_what_the_docs_say_in_etcd_per_million_events(cluster: EtcdCluster) -> None:
    measured = {p: await measure(cluster, p) / 1e6 for p in PROFILES}
    print(f"\netcd's backend per million events, extrapolated from {EVENTS:,}: "
          + ", ".join(f"{p} {mb:.1f} MB" for p, mb in measured.items()))
    figures = stated(doc_section("deployment.md", "## Two nodes by hand"))
    for profile, mb in measured.items():
        assert abs(figures[profile] - mb) <= 0.1 * mb, (
            f"docs/deployment.md says {figures[profile]} MB per million events ({profile}); "
            f"measured {mb:.1f} MB")
