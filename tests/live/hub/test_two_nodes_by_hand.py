"""docs/deployment.md's "Two nodes by hand", run as written: its ``redis-server`` and two
``arena-stream serve`` command lines (only the ports and directories changed, to free
ones of the test's), then what the section says of them: no demo game on a Redis store
unless ``--demo``; a token from either node taken by both; a device on one node and a
viewer on the other, with the same ``seq``; and the section's ``--demo`` line plays one
demo game that both nodes show."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stream.tools.harness import HOST, Device, Process, Processes, Viewer, free_port, redis_answers

from ...docs_text import section as doc_section


def section() -> str:
    return doc_section("deployment.md", "## Two nodes by hand")


def commands() -> tuple[list[str], list[list[str]], list[str]]:
    """(redis-server's argv, the two nodes' argv, the node with ``--demo``), as written."""
    block = section().split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [shlex.split(line) for line in block.splitlines() if line.strip()]
    redis = next(argv for argv in lines if argv[0] == "redis-server")
    nodes = [argv for argv in lines if argv[:2] == ["arena-stream", "serve"]]
    demo = re.search(r"`(arena-stream serve [^`]*--demo\b[^`]*)`", section())
    assert len(nodes) == 2 and demo, "the section shows redis-server, two nodes and a --demo line"
    return redis, nodes, shlex.split(demo.group(1))


def replace(argv: list[str], flag: str, value: str) -> list[str]:
    i = argv.index(flag)
    return [*argv[:i + 1], value, *argv[i + 2:]]


class Http(Process):
    """A node as the section starts it; ready when ``/readyz`` says so."""

    def __init__(self, name: str, argv: list[str], port: int) -> None:
        super().__init__(name, argv, ready_timeout=60)
        self.port = port
        self.http = f"http://{HOST}:{port}"

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.http}/readyz", timeout=1) as r:
                return bool(r.status == 200)
        except OSError:
            return False

    def call(self, path: str, body: Any = None, token: str | None = None) -> Any:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.http + path, data=data, headers=headers)
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)


class Redis(Process):
    def __init__(self, argv: list[str], port: int) -> None:
        super().__init__("redis", argv)
        self.port = port

    def ready(self) -> bool:
        return redis_answers(self.port)


@pytest.fixture
def group(tmp_path: Path) -> Iterator[Processes]:
    with Processes(tmp_path) as g:
        yield g


def node(group: Processes, tmp_path: Path, argv: list[str], name: str, redis_port: int) -> Http:
    port = free_port()
    argv = replace(argv, "--store", argv[argv.index("--store") + 1].replace(":6379/", f":{redis_port}/"))
    argv = replace(replace(argv, "--data", str(tmp_path / "arena-shared")), "--port", str(port))
    process = group.add(Http(name, [sys.executable, "-m", "stream", *argv[1:]], port))
    process.start()
    return process


@pytest.mark.slow
async def test_two_nodes_by_hand_as_the_deployment_page_says(tmp_path: Path, group: Processes) -> None:
    redis_argv, node_argvs, demo_argv = commands()
    assert {"--appendonly", "--appendfsync"} <= set(redis_argv)
    assert redis_argv[redis_argv.index("--appendonly") + 1] == "yes"
    assert redis_argv[redis_argv.index("--appendfsync") + 1] == "always"
    redis_port = free_port()
    (tmp_path / "arena-redis").mkdir()
    argv = replace(replace(redis_argv, "--port", str(redis_port)), "--dir", str(tmp_path / "arena-redis"))
    group.add(Redis(argv, redis_port)).start()
    a = node(group, tmp_path, node_argvs[0], "node-a", redis_port)
    b = node(group, tmp_path, node_argvs[1], "node-b", redis_port)

    # No demo game: on a Redis store it is off unless asked for.
    await asyncio.sleep(2.0)
    assert a.call("/api/games") == [] and b.call("/api/games") == []

    # A token issued by B (with B's admin token) is taken by A; a game set up on A is B's too.
    admin = (tmp_path / "arena-shared" / "admin.token").read_text().strip()
    a.call("/api/games", {"id": "s-g1", "game": "g1", "event": "cup", "class": "club", "handicap": 8,
                          "teams": {"home": {"team": "h", "players": ["h1", "h2", "h3"], "subs": ["h4"]},
                                    "away": {"team": "a", "players": ["a1", "a2", "a3"], "subs": ["a4"]}}},
           token=admin)
    token = b.call("/api/tokens", {"role": "timekeeper", "device": "tk", "game": "g1"}, token=admin)["token"]
    deadline = time.monotonic() + 10
    while not any(g["game"] == "g1" for g in b.call("/api/games")):
        assert time.monotonic() < deadline, "node B never showed the game set up on A"
        await asyncio.sleep(0.05)
    viewer = await Viewer.open(f"ws://{HOST}:{b.port}/ws/watch", game="g1")
    assert (await viewer.next("snapshot"))["seq"] == 1
    device = Device([f"ws://{HOST}:{a.port}/ws/device", f"ws://{HOST}:{b.port}/ws/device"], token, prefix="t")
    acks = [await device.send({"type": "clock.start" if n % 2 == 0 else "clock.stop", "game": "g1"})
            for n in range(4)]
    frames = await viewer.until_seq("g1", acks[-1]["seq"], timeout=10)
    assert [f["seq"] for f in frames if f["type"] == "delta"] == [a["seq"] for a in acks] == [2, 3, 4, 5]
    await viewer.close()
    await device.close()

    # The section's --demo line (on one node): one demo game, shown by both nodes.
    a.stop()
    demo = node(group, tmp_path, demo_argv, "node-a-demo", redis_port)
    deadline = time.monotonic() + 20
    while True:
        on = {n.name: [g["game"] for g in n.call("/api/games") if g["game"].startswith("demo-")]
              for n in (demo, b)}
        if on["node-a-demo"] and on["node-b"]:
            break
        assert time.monotonic() < deadline, f"no demo game on both nodes: {on}"
        await asyncio.sleep(0.1)
    assert on["node-a-demo"] == on["node-b"] and len(on["node-b"]) == 1
