"""The Python SDK (clients/python/arena_client.py) against a real server: a snapshot,
then deltas with the view patched; after the server drops the socket, or
restarts, it resumes by itself with exactly the deltas it missed; a patch it
can't apply makes it resync from a fresh snapshot rather than raise."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import websockets

from .live.conftest import RunningServer, Server, free_port
from .sdk import sdk


@pytest.fixture
async def srv(tmp_path: Path) -> AsyncIterator[Server]:
    async with RunningServer(tmp_path) as s:
        yield s


class Collector:
    """Runs ``async for update in watch`` in a task and keeps every update."""

    def __init__(self, watch: Any) -> None:
        self.watch = watch
        self.updates: list[Any] = []
        self._new = asyncio.Event()
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for update in self.watch:
            self.updates.append(update)
            self._new.set()

    async def until_seq(self, seq: int, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while not self.updates or self.updates[-1].seq < seq:
                self._new.clear()
                await self._new.wait()

    async def until_kind(self, kind: str, timeout: float = 10.0) -> Any:
        async with asyncio.timeout(timeout):
            while not self.updates or self.updates[-1].kind != kind:
                self._new.clear()
                await self._new.wait()
        return self.updates[-1]

    async def close(self) -> None:
        await self.watch.close()
        async with asyncio.timeout(5):
            await self.task


async def server_view(server: Server) -> tuple[int, Any]:
    status, doc = await server.api("GET", "/api/games/g1")
    assert status == 200
    return doc["seq"], doc["view"]


def assert_gapless(updates: list[Any]) -> None:
    seqs = [u.seq for u in updates]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs


async def test_snapshot_then_deltas_with_the_view_patched(srv: Server) -> None:
    await srv.setup_game()
    c = Collector(sdk.Watch(srv.watch_url, game="g1"))
    await c.until_seq(1)
    snap = c.updates[0]
    assert (snap.kind, snap.seq, snap.reset, snap.resumed) == ("snapshot", 1, False, False)
    assert snap.view.status == "scheduled" and snap.view.teams.home.team == "g1-home"

    tk = await srv.device("timekeeper")
    ump = await srv.device("umpire")
    await tk.send({"type": "clock.start", "game": "g1"})
    await ump.send({"type": "card", "game": "g1", "player": "a1", "color": "yellow", "count": 2,
                    "conduct": "striking"})
    await ump.send({"type": "goal", "game": "g1", "team": "home", "player": "h1"})
    await c.until_seq(4)
    assert [u.kind for u in c.updates] == ["snapshot", "delta", "delta", "delta"]
    assert_gapless(c.updates)
    card = c.updates[2]
    assert [type(n).__name__ for n in card.notices][:3] == ["CardRecorded", "PenaltyAwarded", "BoxEnter"]
    assert card.notices[0].text.es.startswith("2 tarjetas amarillas")
    a1 = next(p for p in card.view.players if p.id == "a1")
    assert a1.box is not None and a1.box.owed_ms == 120_000 and not a1.on_field
    seq, view = await server_view(srv)
    assert seq == 4 and msgspec.to_builtins(c.watch.view) == view
    await c.close()
    await tk.close()
    await ump.close()


async def test_notices_about_the_game_from_another_games_event(srv: Server) -> None:
    """A ``notices`` frame (a late post-game card of g0 that suspends h2 from g1, already
    under way) comes out as an update of kind ``notices``: the view and seq unchanged."""
    teams = {"home": {"team": "g1-home", "players": ["h1", "h2", "h3"]},
             "away": {"team": "g1-away", "players": ["a1", "a2", "a3"]}}
    await srv.setup_game("g0", teams=teams)
    await srv.setup_game()
    tk0 = await srv.device("timekeeper", game="g0")
    tk = await srv.device("timekeeper")
    ump = await srv.device("umpire", game="g0")
    await tk0.send({"type": "clock.start", "game": "g0"})
    await tk0.send({"type": "game.end", "game": "g0"})
    await tk.send({"type": "clock.start", "game": "g1"})
    c = Collector(sdk.Watch(srv.watch_url, game="g1"))
    await c.until_seq(2)
    await ump.send({"type": "postgame.card", "game": "g0", "player": "h2", "level": "red"})
    told = await c.until_kind("notices")
    assert (told.seq, told.view) == (2, c.updates[-2].view)
    (alert,) = told.notices
    assert (alert.code, alert.game, alert.player, alert.origin_game) == ("next_game_begun", "g1", "h2", "g0")
    await c.close()
    for dev in (tk0, tk, ump):
        await dev.close()


async def test_resumes_after_the_server_closes_the_socket_with_no_gap_or_duplicate(srv: Server) -> None:
    await srv.setup_game()
    tk = await srv.device("timekeeper")
    ump = await srv.device("umpire")
    c = Collector(sdk.Watch(srv.watch_url, game="g1", backoff=(1.0, 2.0)))
    await c.until_seq(1)
    await tk.send({"type": "clock.start", "game": "g1"})
    await c.until_seq(2)

    for w in list(srv.svc.fanout.watchers):   # the server drops every viewer
        await w.ws.close(code=1001, message=b"test: going away")
    # While it is away (its first retry waits at least 0.5 s), the game goes on.
    await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow",
                    "conduct": "arguing"})
    await ump.send({"type": "goal", "game": "g1", "team": "away", "player": "a3"})
    await tk.send({"type": "clock.start", "game": "g1"})
    await c.until_seq(5)
    await ump.send({"type": "whistle", "game": "g1"})
    await c.until_seq(6)

    assert c.watch.reconnects == 1
    assert [u.kind for u in c.updates] == ["snapshot", "delta", "delta", "delta", "delta", "delta"]
    assert_gapless(c.updates)
    assert [u.resumed for u in c.updates] == [False, False, True, False, False, False]
    assert type(c.updates[2].notices[0]).__name__ == "CardRecorded"  # missed while away
    seq, view = await server_view(srv)
    assert seq == 6 and msgspec.to_builtins(c.watch.view) == view
    await c.close()
    await tk.close()
    await ump.close()


async def test_resumes_across_a_server_restart(tmp_path: Path) -> None:
    """Same data directory, same port: the epoch is the same, so the deltas missed
    while the server was down (none) and after it came back arrive in order."""
    port = free_port()
    async with RunningServer(tmp_path, port=port) as s1:
        await s1.setup_game()
        watch = sdk.Watch(s1.watch_url, game="g1", backoff=(0.1, 0.5))
        c = Collector(watch)
        await c.until_seq(1)
        tk = await s1.device("timekeeper")
        await tk.send({"type": "clock.start", "game": "g1"})
        await c.until_seq(2)
        await tk.close()
    await asyncio.sleep(0.3)  # down: the client retries with backoff
    assert watch.stale
    async with RunningServer(tmp_path, port=port) as s2:
        ump = await s2.device("umpire")
        await ump.send({"type": "goal", "game": "g1", "team": "home", "player": "h1"})
        await c.until_seq(3)
        assert [u.kind for u in c.updates] == ["snapshot", "delta", "delta"]
        assert_gapless(c.updates)
        assert c.updates[-1].view.score.home == 1 and watch.reconnects >= 1
        seq, view = await server_view(s2)
        assert seq == 3 and msgspec.to_builtins(watch.view) == view
        await c.close()
        await ump.close()


async def test_apply_patch_addresses_players_by_id() -> None:
    view: dict[str, Any] = {"score": {"home": 0}, "teams": {"home": {"short": []}},
                            "players": [{"id": "a", "box": None}, {"id": "b.c", "box": 1}]}
    P = sdk.pr.Patch
    sdk.apply_patch(view, [P("score.home", 2), P("players.a.box", {"owed_ms": 1}),
                           P("teams.home.short", [{"player": "a"}]), P("players.z", {"id": "z"})])
    assert view["score"]["home"] == 2 and view["players"][0]["box"] == {"owed_ms": 1}
    assert view["teams"]["home"]["short"] == [{"player": "a"}] and view["players"][-1] == {"id": "z"}
    sdk.apply_patch(view, [P("players.z", None)])
    assert [p["id"] for p in view["players"]] == ["a", "b.c"]
    assert sdk.apply_patch(view, [P("", {"fresh": True})]) == {"fresh": True}


async def test_an_unknown_game_is_an_error_not_a_retry_loop(srv: Server) -> None:
    with pytest.raises(sdk.WatchError) as err:
        async with asyncio.timeout(5):
            async for _ in sdk.Watch(srv.watch_url, game="nope"):
                pass
    assert err.value.code == "unknown_game"


@pytest.mark.parametrize("missing", [
    ["players.ghost.box", None],         # no player "ghost" to go into
    ["score.overtime", 1],               # no such field: a patch never adds one
    ["players.ghost", None],             # no player "ghost" to remove
])
async def test_a_patch_with_a_missing_path_resyncs_from_a_fresh_snapshot(srv: Server,
                                                                          missing: list[Any]) -> None:
    """A proxy in front of the real server passes the first connection's snapshot, then
    holds the server's frames while a goal is scored, and hands the client a delta of the
    next seq whose patch names a path the view doesn't have. The client raises nothing and
    applies nothing of it (not even the score before the bad path): it drops its copy and
    subscribes again without ``since``, and its next update is the fresh snapshot, which
    has the real goal; deltas go on from it."""
    await srv.setup_game()
    ump = await srv.device("umpire")
    paths: list[str] = []
    crafted = {"type": "delta", "game": "g1", "seq": 2, "notices": [], "patch": [["score.home", 7], missing]}

    async def proxy(client: Any) -> None:
        path = client.request.path
        paths.append(path)
        query = path.partition("?")[2]
        async with websockets.connect(f"{srv.watch_url}?{query}") as upstream:
            if len(paths) == 1:
                while json.loads(frame := await upstream.recv())["type"] != "snapshot":
                    pass
                await client.send(frame)
                await ump.send({"type": "goal", "game": "g1", "team": "home", "player": "h1"})
                await client.send(json.dumps(crafted))      # the server's own seq 2 never arrives
                await client.wait_closed()
                return

            async def pipe(src: Any, dst: Any) -> None:
                async for message in src:
                    await dst.send(message)

            tasks = [asyncio.create_task(pipe(client, upstream)), asyncio.create_task(pipe(upstream, client))]
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                task.cancel()

    async with websockets.serve(proxy, "127.0.0.1", 0) as relay:
        port = next(iter(relay.sockets)).getsockname()[1]
        c = Collector(sdk.Watch(f"ws://127.0.0.1:{port}/ws/watch", game="g1", backoff=(0.05, 0.2)))
        await c.until_seq(2)
        assert not c.task.done(), "the watch ended (an exception escaped?)"
        assert [(u.kind, u.seq) for u in c.updates] == [("snapshot", 1), ("snapshot", 2)]
        fresh = c.updates[1]
        assert fresh.view.score.home == 1 and fresh.resumed        # the server's state, not the 7
        assert c.watch.resyncs == 1 and c.watch.reconnects == 1
        assert len(paths) == 2 and "since=" not in paths[1] and "epoch=" not in paths[1], paths

        await ump.send({"type": "goal", "game": "g1", "team": "away", "player": "a1"})
        await c.until_seq(3)
        assert [u.kind for u in c.updates] == ["snapshot", "snapshot", "delta"]
        seq, view = await server_view(srv)
        assert seq == 3 and msgspec.to_builtins(c.watch.view) == view
        await c.close()
    await ump.close()


async def test_apply_patch_raises_patch_error_on_a_missing_path() -> None:
    """The rule of docs/protocol-viewer.md, "Applying a patch": a path that isn't in the view is a
    ``PatchError`` naming it, never a ``KeyError``, whatever way it is missing."""
    P = sdk.pr.Patch
    base: dict[str, Any] = {"score": {"home": 0}, "teams": {"home": {"short": [{"player": "a"}]}},
                            "players": [{"id": "a", "box": None}]}
    missing = ["players.ghost.box", "players.a.box.eligible", "score.overtime", "score.home.x",
               "teams.home.short.a", "nope.deeper"]
    for path in missing:
        with pytest.raises(sdk.PatchError) as err:
            sdk.apply_patch(copy.deepcopy(base), [P(path, 1)])
        assert err.value.path == path and not isinstance(err.value, KeyError)
    for patch in ([P("players.ghost", None)], [P("players.b", {"id": "c"})], [P("", None)]):
        with pytest.raises(sdk.PatchError):
            sdk.apply_patch(copy.deepcopy(base), patch)
