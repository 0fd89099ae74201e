"""``stream.tools.device_client.Device`` against real servers: it answers the server's first
``ping`` (the clock sync) before it sends anything, on its first socket and after every
reconnect; and when it moves to another node it closes its socket to the one it left."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from stream.tools.harness import Cluster, Device, ServiceProcess, metric, scrape

from ..conftest import RunningServer

HOUR_MS = 3_600_000


def real_ms() -> int:
    return int(time.time() * 1000)


async def test_the_first_ping_is_answered_before_the_first_event_and_after_a_reconnect(
        tmp_path: Path) -> None:
    """The device's clock is an hour slow, and each event is pressed 5 s before it is sent.
    With the sync the server dates it 5 s ago; without it (the event overtaking the pong),
    at its arrival."""
    def device_clock() -> int:
        return real_ms() - HOUR_MS

    port = None
    async with RunningServer(tmp_path, ping_interval=60) as server:
        port = server.port
        await server.setup_game()
        dev = Device(server.device_url, server.token("umpire", "ump", game="g1"), prefix="u",
                     clock=device_clock)
        await dev.connect()
        sent = real_ms()
        ack = await dev.send_once({"type": "whistle", "game": "g1", "id": "w1", "at": device_clock() - 5000})
        assert ack["type"] == "ack", ack
        assert sent - 5500 <= ack["at"] <= sent - 4500, f"dated {sent - ack['at']} ms before it was sent"
    # The server restarts (same port, same data): the device reconnects, syncs, then resends.
    async with RunningServer(tmp_path, port=port, ping_interval=60):
        sent = real_ms()
        ack = await dev.send({"type": "whistle", "game": "g1", "id": "w2", "at": device_clock() - 5000})
        assert ack["type"] == "ack" and ack["seq"] == 3, ack
        assert sent - 5500 <= ack["at"] <= sent - 4000, f"dated {sent - ack['at']} ms before it was sent"
        await dev.close()


def established_to(port: int) -> int:
    """This process's TCP connections to ``port`` on loopback that are open (ESTABLISHED)."""
    mine = {os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
            if os.path.exists(f"/proc/self/fd/{fd}")} - {""}
    inodes = {link[8:-1] for link in mine if link.startswith("socket:[")}
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                remote, state, inode = cols[2], cols[3], cols[9]
                if state == "01" and int(remote.rsplit(":", 1)[1], 16) == port and inode in inodes:
                    count += 1
    return count


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    c = Cluster(tmp_path)
    try:
        await c.astart()
        yield c
    finally:
        for node in c.nodes:  # a stopped node can't stop
            if node.proc is not None and node.proc.poll() is None:
                os.kill(node.proc.pid, signal.SIGCONT)
        await c.astop()


async def device_sockets(node: ServiceProcess) -> float:
    return metric(await scrape(node.http), 'arena_connections{kind="device"}')


async def test_moving_to_another_node_closes_the_socket_to_the_old_one(cluster: Cluster) -> None:
    a, b = cluster.nodes
    a.post("/api/games", {"id": "s-g1", "game": "g1", "event": "cup", "class": "club", "handicap": 8,
                          "teams": {"home": {"team": "h", "players": ["h1", "h2", "h3"], "subs": ["h4"]},
                                    "away": {"team": "a", "players": ["a1", "a2", "a3"], "subs": ["a4"]}}})
    token = a.post("/api/tokens", {"role": "umpire", "device": "ump", "game": "g1"})["token"]
    dev = Device([a.device_url, b.device_url], token, prefix="u")
    first = await dev.send({"type": "whistle", "game": "g1"})
    assert first["type"] == "ack"
    assert established_to(a.port) == 1 and await device_sockets(a) == 1
    assert a.proc is not None
    os.kill(a.proc.pid, signal.SIGSTOP)  # node A hangs: its socket stays open, nothing answers
    try:
        ack = await dev.send({"type": "whistle", "game": "g1"}, wait_s=1.0)
        assert ack["type"] == "ack" and dev.url == b.device_url, ack
        assert established_to(a.port) == 0, "a socket to the node the device left is still open"
        assert established_to(b.port) == 1
    finally:
        os.kill(a.proc.pid, signal.SIGCONT)
    async with asyncio.timeout(10):  # node A, running again, sees the socket closed too
        while True:
            if await device_sockets(a) == 0:
                break
            await asyncio.sleep(0.05)
    assert await device_sockets(b) == 1
    await dev.close()
    assert established_to(b.port) == 0
