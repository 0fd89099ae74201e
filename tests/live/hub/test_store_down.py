"""The service on an etcd store that fails: HTTP answers a typed 503, never a 500 with a
traceback; a write whose answer was lost is ``unknown`` on a device and on the HTTP API,
and its retry (the same event, the same id) is settled by dedup; and an outage is logged
once, without a traceback. A real etcd cluster of three members on loopback (the store
down: every member killed), the service in this process; the lost answers are cut by
``tests/tcp_proxy.py`` between the store and its one member (a lost answer with a member
left to resend to is acked by the resend: ``tests/store/test_etcd_writes.py``)."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import websockets

from stream.tools.harness import Device, EtcdCluster

from ...tcp_proxy import Proxy, through
from ..conftest import RunningServer, Server, Viewer, store_down, view_after

#: What the log says when no member can be reached (aiohttp's words).
UNREACHABLE = re.compile(r"Cannot connect to host|Server disconnected")
#: An etcd call's budget across the members: a call to a store that is down fails that fast.
BUDGET_MS = 1000


async def request(server: Server, method: str, path: str, body: Any = None,
                  ) -> tuple[int, dict[str, str], str]:
    headers = {"Authorization": f"Bearer {server.admin}"}
    async with aiohttp.ClientSession() as s, s.request(method, server.http + path, json=body,
                                                       headers=headers) as r:
        return r.status, dict(r.headers), await r.text()


def no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    tracebacks = [(r.name, r.getMessage()) for r in caplog.records if r.exc_info]
    assert not tracebacks, f"logged with a traceback: {tracebacks}"
    assert "Traceback" not in caplog.text and "Error handling request" not in caplog.text


async def test_http_answers_a_typed_503_while_the_store_is_down_and_200_as_soon_as_it_is_back(
        tmp_path: Path, etcd: EtcdCluster, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with RunningServer(tmp_path / "data", store=etcd.url("arena"), etcd_budget_ms=BUDGET_MS) as server:
        await server.setup_game()
        status, _, text = await request(server, "GET", "/api/log")
        assert status == 200 and '"admin/setup-g1"' in text
        store_down(etcd)
        answers = {
            "GET /api/log": await request(server, "GET", "/api/log"),
            "GET /api/games/g1/log": await request(server, "GET", "/api/games/g1/log"),
            "POST /api/tokens/revoke": await request(server, "POST", "/api/tokens/revoke",
                                                     {"jti": "j1", "reason": "lost"}),
            "POST /api/events": await request(server, "POST", "/api/events", {
                "id": "spring", "event": "spring", "class": "club", "handicap": 8, "teams": ["a", "b"]}),
        }
        for route, (status, headers, text) in answers.items():
            assert status == 503, (route, status, text)
            assert headers["Content-Type"].startswith("application/json"), route
            assert headers.get("Retry-After") == "1", route
            doc = json.loads(text)
            assert doc["code"] == "not_stored" and doc["detail"], (route, doc)
        assert set(json.loads(answers["GET /api/log"][2])) == {"code", "detail"}  # Problem
        await etcd.astart()  # the members' data directories bring the log back
        status, _, text = await request(server, "GET", "/api/log")
        assert status == 200 and '"admin/setup-g1"' in text, (status, text)
    no_traceback(caplog)


async def test_a_lost_answer_is_unknown_on_a_device_and_a_retry_is_settled_by_dedup(
        tmp_path: Path, etcd: EtcdCluster, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with Proxy(etcd.members[0].client_port) as proxy, RunningServer(
            tmp_path / "data", store=through(etcd.url("arena"), proxy), etcd_budget_ms=BUDGET_MS) as server:
        await server.setup_game()
        tk = await server.device("timekeeper")
        await tk.send({"type": "clock.start", "game": "g1"})
        ump = await server.device("umpire")
        viewer = await Viewer.open(server.watch_url, game="g1")
        assert (await viewer.next("snapshot"))["seq"] == 2
        goal = {"type": "goal", "game": "g1", "team": "home", "id": "goal-1"}
        # etcd stores the goal; its answer is lost on the way back, and the member is out of
        # reach until the call's budget is spent.
        proxy.cut_after(b"/v3/kv/txn", down=True)
        reply = await ump.send_once(dict(goal))
        assert proxy.cut.is_set()
        proxy.refuse = False
        assert (reply["type"], reply["code"], reply["retry"], reply["id"]) == ("error", "unknown", True,
                                                                               "goal-1"), reply
        assert "send the same event again with the same id" in reply["detail"]
        ack = await ump.send(dict(goal), attempts=60)  # the same event again: dedup settles it
        assert (ack["type"], ack["duplicate"], ack["seq"]) == ("ack", True, 3), ack
        # A write cut before etcd got it is just as unknown; its retry is the first copy stored.
        second = {"type": "goal", "game": "g1", "team": "away", "id": "goal-2"}
        proxy.cut_before(b"/v3/kv/txn", down=True)
        reply = await ump.send_once(dict(second))
        assert (reply["code"], reply["retry"]) == ("unknown", True), reply
        proxy.refuse = False
        ack2 = await ump.send(dict(second), attempts=60)
        assert (ack2["duplicate"], ack2["seq"]) == (False, 4), ack2
        _, _, log = await request(server, "GET", "/api/games/g1/log")
        ids = [json.loads(line)["id"] for line in log.splitlines()]
        assert ids.count(ack["log_id"]) == 1 and ids.count(ack2["log_id"]) == 1 and len(ids) == 4
        status, game = await server.api("GET", "/api/games/g1")
        assert status == 200 and game["seq"] == 4 and game["view"]["score"] == {"home": 1, "away": 1}
        # A viewer saw each goal once, in order: the one whose answer was lost too.
        frames = await viewer.until_seq("g1", 4, timeout=10)
        assert [f["seq"] for f in frames if f["type"] == "delta"] == [3, 4]
        assert view_after(viewer.frames) == game["view"]
        await viewer.close()
        for d in (tk, ump):
            await d.close()
    no_traceback(caplog)


async def test_a_lost_answer_is_unknown_on_the_http_api_too(tmp_path: Path, etcd: EtcdCluster) -> None:
    async with Proxy(etcd.members[0].client_port) as proxy, RunningServer(
            tmp_path / "data", store=through(etcd.url("arena"), proxy), etcd_budget_ms=BUDGET_MS) as server:
        body = {"id": "spring-cup", "event": "spring-cup", "class": "club", "handicap": 8,
                "teams": ["aiken", "wellington"]}
        proxy.cut_after(b"/v3/kv/txn", down=True)
        status, headers, text = await request(server, "POST", "/api/events", body)
        doc = json.loads(text)
        assert (status, doc["code"], doc["retry"], headers.get("Retry-After")) == (503, "unknown", True, "1")
        proxy.refuse = False
        for _ in range(50):  # the same call again, while the service reloads the log: 503 not_stored
            status, _, text = await request(server, "POST", "/api/events", body)
            if status != 503:
                break
            await asyncio.sleep(0.05)
        doc = json.loads(text)
        assert (status, doc["type"], doc["duplicate"]) == (200, "ack", True), (status, doc)


async def test_the_store_down_is_logged_once_with_its_reason_and_no_traceback(
        tmp_path: Path, etcd: EtcdCluster, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with RunningServer(tmp_path / "data", store=etcd.url("arena"), etcd_budget_ms=BUDGET_MS) as server:
        await server.setup_game()
        dev = Device(server.device_url, server.token("umpire", "ump", game="g1"), prefix="u")
        await dev.connect()
        store_down(etcd)
        loop = asyncio.get_running_loop()
        until = loop.time() + 3.0
        while loop.time() < until:  # a device sending, an operator reading: for 3 s
            reply = await dev.send_once({"type": "whistle", "game": "g1", "id": dev.new_id()}, 2)
            assert (reply["type"], reply["code"], reply["retry"]) == ("error", "not_stored", True), reply
            assert (await request(server, "GET", "/api/log"))[0] == 503
            await asyncio.sleep(0.2)
        await etcd.astart()
        ack = await dev.send({"type": "whistle", "game": "g1"}, attempts=60)
        assert ack["type"] == "ack"
        # What was said from the outage to the ack: the node's close may cut short a read on a
        # connection the members' restart left stale, which is not the outage made here.
        said = list(caplog.records)
        await dev.close()
    store_said = [(r.levelname, r.getMessage()) for r in said if r.name == "arena_stream.store"]
    assert store_said == [("ERROR", "etcd unavailable"), ("WARNING", "etcd available again")]
    down = next(r for r in said if r.getMessage() == "etcd unavailable")
    assert UNREACHABLE.search(down.reason), down.reason  # type: ignore[attr-defined]
    no_traceback(caplog)


async def test_a_resume_the_store_must_serve_while_it_is_down_is_closed_1001_and_served_after(
        tmp_path: Path, etcd: EtcdCluster, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    store = etcd.url("arena")
    async with RunningServer(tmp_path / "data", store=store, etcd_budget_ms=BUDGET_MS) as server:
        await server.setup_game()
        tk = await server.device("timekeeper")
        for n in range(4):
            await tk.send({"type": "clock.start" if n % 2 == 0 else "clock.stop", "game": "g1"})
        await tk.close()
        viewer = await Viewer.open(server.watch_url, game="g1")
        snap = await viewer.next("snapshot")
        await viewer.close()
    assert snap["seq"] == 5
    # Restarted: the deltas before the restart are not in memory; a resume from seq 2 needs the log.
    async with RunningServer(tmp_path / "data", store=store, etcd_budget_ms=BUDGET_MS) as server:
        store_down(etcd)
        resume = f"{server.watch_url}?game=g1&since=2&epoch={snap['epoch']}"
        async with websockets.connect(resume, open_timeout=5) as ws:
            frames = [json.loads(raw) async for raw in ws]
        assert (ws.close_code, ws.close_reason) == (1001, "store unavailable"), frames
        assert [f["type"] for f in frames if f["type"] != "heartbeat"] == [], frames
        refused = [r for r in caplog.records if r.name == "arena_stream.watch"]
        assert [r.levelname for r in refused] == ["WARNING"]
        assert UNREACHABLE.search(refused[0].reason), refused[0].reason  # type: ignore[attr-defined]
        # Back: the same resume gets exactly the deltas missed, as docs/protocol-viewer.md says ("Resume").
        await etcd.astart()
        async with asyncio.timeout(10):
            while True:
                viewer = await Viewer.connect(resume)
                try:
                    frames = await viewer.until_seq("g1", 5)
                    break
                except websockets.ConnectionClosed:
                    await asyncio.sleep(0.1)  # the store's connections come back first
        await viewer.close()
        assert [(f["type"], f["seq"]) for f in frames if f["type"] in ("delta", "snapshot")] == [
            ("delta", 3), ("delta", 4), ("delta", 5)]
    no_traceback(caplog)
