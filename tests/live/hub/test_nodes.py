"""Two service nodes on one etcd cluster (three members), as subprocesses on loopback:
any node serves any game, in one order, and nothing acked is lost when a node dies or
the whole store is down for a while."""

from __future__ import annotations

import asyncio
import urllib.error
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from stream.tools import harness
from stream.tools.harness import Device, DeviceError, ServiceProcess, Viewer

from ..conftest import game_setup_body


class Cluster(harness.Cluster):
    """Node A and node B on one etcd cluster; games and tokens set up through A."""

    @property
    def a(self) -> ServiceProcess:
        return self.nodes[0]

    @property
    def b(self) -> ServiceProcess:
        return self.nodes[1]

    def token(self, role: str, device: str, game: str = "g1") -> str:
        return str(self.a.post("/api/tokens", {"role": role, "device": device, "game": game})["token"])

    def setup_game(self, game: str = "g1") -> None:
        self.a.post("/api/games", {**game_setup_body(game), "class": "club"})


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    c = Cluster(tmp_path)
    try:
        await c.astart()
        yield c
    finally:
        await c.astop()


async def _wait_seq(node: ServiceProcess, game: str, seq: int) -> dict[str, Any]:
    """The game's document on ``node`` once it holds ``seq`` (404 until the node's follower
    has folded the game's set-up, another node's write)."""
    async with asyncio.timeout(10):
        while True:
            try:
                doc = await asyncio.to_thread(node.get, f"/api/games/{game}")
            except urllib.error.HTTPError as err:
                if err.code != 404:
                    raise
            else:
                if doc["seq"] >= seq:
                    return dict(doc)
            await asyncio.sleep(0.05)


async def test_device_on_a_viewers_on_b_same_order_same_seq(cluster: Cluster) -> None:
    cluster.setup_game()
    await _wait_seq(cluster.b, "g1", 1)
    viewer = await Viewer.open(cluster.b.watch_url, game="g1")
    snap = await viewer.next("snapshot")
    assert snap["seq"] == 1
    dev = Device(cluster.a.device_url, cluster.token("umpire", "ump"), prefix="u")
    tk = Device(cluster.a.device_url, cluster.token("timekeeper", "tk"), prefix="t")
    acks = [await tk.send({"type": "clock.start", "game": "g1"})]
    for n in range(20):
        acks.append(await dev.send({"type": "goal", "game": "g1", "team": "home" if n % 2 else "away"}))
    frames = await viewer.until_seq("g1", acks[-1]["seq"], timeout=10)
    deltas = [f for f in frames if f["type"] == "delta"]
    assert [d["seq"] for d in deltas] == [a["seq"] for a in acks] == list(range(2, 23))
    assert [d["notices"][0]["cause"] for d in deltas[1:]] == [a["log_id"] for a in acks[1:]]
    # Both nodes computed the same state.
    assert (await _wait_seq(cluster.a, "g1", 22))["view"] == (await _wait_seq(cluster.b, "g1", 22))["view"]
    # A viewer resumes on the other node with no gap and no duplicate.
    last = deltas[9]["seq"]
    await viewer.close()
    again = await Viewer.open(cluster.a.watch_url, game="g1", since=last, epoch=snap["epoch"])
    got = await again.until_seq("g1", 22, timeout=10)
    assert [f["type"] for f in got] == ["delta"] * (22 - last)
    assert [f["seq"] for f in got] == list(range(last + 1, 23))
    await again.close()
    await dev.close()
    await tk.close()


async def test_device_moves_to_b_and_its_retry_is_no_duplicate(cluster: Cluster) -> None:
    cluster.setup_game()
    token = cluster.token("umpire", "ump")
    tk = Device(cluster.a.device_url, cluster.token("timekeeper", "tk"), prefix="t")
    await tk.send({"type": "clock.start", "game": "g1"})
    on_a = Device(cluster.a.device_url, token, prefix="u")
    first = await on_a.send({"type": "goal", "game": "g1", "team": "home", "id": "goal-1"})
    await on_a.close()
    on_b = Device(cluster.b.device_url, token, prefix="u")
    await _wait_seq(cluster.b, "g1", first["seq"])
    again = await on_b.send({"type": "goal", "game": "g1", "team": "home", "id": "goal-1"})
    assert (again["seq"], again["log_id"], again["duplicate"]) == (first["seq"], first["log_id"], True)
    view = (await _wait_seq(cluster.b, "g1", first["seq"]))["view"]
    assert view["score"]["home"] == 1
    await on_b.close()
    await tk.close()


async def test_two_nodes_taking_one_game_yield_one_total_order(cluster: Cluster) -> None:
    cluster.setup_game()
    tk = Device(cluster.a.device_url, cluster.token("timekeeper", "tk"), prefix="t")
    await tk.send({"type": "clock.start", "game": "g1"})
    ua = Device(cluster.a.device_url, cluster.token("umpire", "ua"), prefix="a")
    ub = Device(cluster.b.device_url, cluster.token("umpire", "ub"), prefix="b")

    async def send(d: Device, team: str, n: int) -> list[dict[str, Any]]:
        return [await d.send({"type": "goal", "game": "g1", "team": team}) for _ in range(n)]

    got_a, got_b = await asyncio.gather(send(ua, "home", 25), send(ub, "away", 25))
    seqs = sorted(a["seq"] for a in got_a + got_b)
    assert seqs == list(range(3, 53)), "every ack has its own place in one order"
    va = (await _wait_seq(cluster.a, "g1", 52))["view"]
    vb = (await _wait_seq(cluster.b, "g1", 52))["view"]
    assert va == vb and va["score"] == {"home": 25, "away": 25}
    for d in (ua, ub, tk):
        await d.close()


async def test_kill_9_node_a_loses_nothing_acked(cluster: Cluster) -> None:
    cluster.setup_game()
    token = cluster.token("umpire", "ump")
    tk = Device(cluster.b.device_url, cluster.token("timekeeper", "tk"), prefix="t")
    await tk.send({"type": "clock.start", "game": "g1"})
    on_a = Device(cluster.a.device_url, token, prefix="u")
    acked = [await on_a.send({"type": "goal", "game": "g1", "team": "home"}) for _ in range(10)]
    await asyncio.to_thread(cluster.a.kill9)
    await on_a.close()
    doc = await _wait_seq(cluster.b, "g1", acked[-1]["seq"])
    assert doc["view"]["score"]["home"] == len(acked)
    await tk.close()


async def test_the_store_down_means_retry_then_exactly_once(cluster: Cluster) -> None:
    """Every etcd member stopped: an event is refused ``not_stored`` (retry); with the
    members back on their data directories, its retry is logged once, and a conflicting
    reuse of its id is refused."""
    cluster.setup_game()
    tk = Device(cluster.a.device_url, cluster.token("timekeeper", "tk"), prefix="t")
    await tk.send({"type": "clock.start", "game": "g1"})
    ump = Device(cluster.a.device_url, cluster.token("umpire", "ump"), prefix="u")
    await ump.send({"type": "goal", "game": "g1", "team": "home", "id": "before"})
    await cluster.etcd.astop()
    reply = await ump.send_once({"type": "goal", "game": "g1", "team": "home", "id": "during"}, wait_s=15)
    assert reply["type"] == "error" and reply["retry"] is True and reply["code"] == "not_stored"
    await cluster.etcd.astart()  # the same data directories: every acked write is back
    ack = await ump.send({"type": "goal", "game": "g1", "team": "home", "id": "during"}, attempts=60)
    assert ack["type"] == "ack"
    dup = await ump.send({"type": "goal", "game": "g1", "team": "home", "id": "during"})
    assert dup["duplicate"] is True and dup["seq"] == ack["seq"]
    doc = await _wait_seq(cluster.b, "g1", ack["seq"])
    assert doc["view"]["score"]["home"] == 2
    with pytest.raises(DeviceError):
        await ump.send({"type": "horn", "game": "g1", "id": "during"})  # a conflicting reuse
    await ump.close()
    await tk.close()


async def test_a_token_revoked_on_a_is_refused_and_closed_on_b(cluster: Cluster) -> None:
    cluster.setup_game()
    issued = cluster.a.post("/api/tokens", {"role": "umpire", "device": "lost", "game": "g1"})
    on_b = Device(cluster.b.device_url, issued["token"], prefix="l")
    await on_b.connect()
    cluster.a.post("/api/tokens/revoke", {"jti": issued["claims"]["jti"], "reason": "lost handheld"})
    reader = on_b._reader
    assert reader is not None
    async with asyncio.timeout(10):  # node B reads the revocation from the store and closes the socket
        await reader
    again = Device(cluster.b.device_url, issued["token"], prefix="l")
    with pytest.raises(DeviceError, match="revoked"):
        await again.connect()
