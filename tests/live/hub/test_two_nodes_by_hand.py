"""docs/deployment.md's "Two nodes by hand", run as written: three etcd members as the
page's etcd section starts them (``EtcdCluster`` runs that command line), and the two
``arena-stream serve`` command lines (only the members' addresses, the ports and the
directories changed, to free ones of the test's), then what the section says of them:
no demo game on an etcd store unless ``--demo``; a token from either node taken by both;
a device on one node and a viewer on the other, with the same ``seq``; and the
section's ``--demo`` line plays one demo game that both nodes show."""

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

from stream.store.etcd_client import parse_url
from stream.tools.harness import HOST, Device, EtcdCluster, Process, Processes, Viewer, free_port

from ...docs_text import section as doc_section

#: The members' client addresses, as the etcd section gives them (``ENDPOINTS=``).
ETCD_SECTION = "## etcd: backups and replacing a member"


def section() -> str:
    return doc_section("deployment.md", "## Two nodes by hand")


def commands() -> tuple[list[list[str]], list[str]]:
    """(the two nodes' argv, the node with ``--demo``), as written."""
    block = section().split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [shlex.split(line) for line in block.splitlines() if line.strip()]
    nodes = [argv for argv in lines if argv[:2] == ["arena-stream", "serve"]]
    demo = re.search(r"`(arena-stream serve [^`]*--demo\b[^`]*)`", section())
    assert len(nodes) == 2 and demo, "the section shows two nodes and a --demo line"
    return nodes, shlex.split(demo.group(1))


def endpoints() -> str:
    """The members' client addresses the etcd section starts them on."""
    found = re.search(r"^ENDPOINTS=(\S+)$", doc_section("deployment.md", ETCD_SECTION), re.M)
    assert found, "the etcd section names its members' addresses"
    return found.group(1)


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


@pytest.fixture
def group(tmp_path: Path) -> Iterator[Processes]:
    with Processes(tmp_path) as g:
        yield g


def node(group: Processes, tmp_path: Path, argv: list[str], name: str, cluster: EtcdCluster) -> Http:
    """The node as written, on ``cluster``: each member the URL names, in order, is one of its."""
    port = free_port()
    url = argv[argv.index("--store") + 1]
    store = url.replace(endpoints(), cluster.endpoints)
    assert store != url and parse_url(store).prefix == parse_url(url).prefix, url
    argv = replace(argv, "--store", store)
    argv = replace(replace(argv, "--data", str(tmp_path / "arena-shared")), "--port", str(port))
    process = group.add(Http(name, [sys.executable, "-m", "stream", *argv[1:]], port))
    process.start()
    return process


@pytest.mark.slow
async def test_two_nodes_by_hand_as_the_deployment_page_says(tmp_path: Path, group: Processes) -> None:
    node_argvs, demo_argv = commands()
    for argv in (*node_argvs, demo_argv):  # every member the etcd section starts, and no other
        assert len(parse_url(argv[argv.index("--store") + 1]).members) == 3, argv
    cluster = EtcdCluster(tmp_path / "arena-etcd", group=group)
    await cluster.astart()
    a = node(group, tmp_path, node_argvs[0], "node-a", cluster)
    b = node(group, tmp_path, node_argvs[1], "node-b", cluster)

    # No demo game: on an etcd store it is off unless asked for.
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
    demo = node(group, tmp_path, demo_argv, "node-a-demo", cluster)
    deadline = time.monotonic() + 20
    while True:
        on = {n.name: [g["game"] for g in n.call("/api/games") if g["game"].startswith("demo-")]
              for n in (demo, b)}
        if on["node-a-demo"] and on["node-b"]:
            break
        assert time.monotonic() < deadline, f"no demo game on both nodes: {on}"
        await asyncio.sleep(0.1)
    assert on["node-a-demo"] == on["node-b"] and len(on["node-b"]) == 1
