"""Two nodes racing for one game's ``seq`` (``stream/live/hub/races.py``): the loser takes
its events in flight back, folds the winner's entry and sends its own again; only
that game waits, and the log is never folded whole for a race in the middle of play.

Two ``Hub``s in this process on one real etcd cluster (three members), each with its follower, as
``stream/live/app.py`` wires them. A race is made for certain: both hubs apply an
event to the same game before either commits (``asyncio.gather`` runs each ``submit``
up to its commit), so both give it the same ``seq``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from stream.live.hub import follower
from stream.live.hub.dedup import digest
from stream.live.hub.feeds import Frames
from stream.live.hub.hub import Hub
from stream.live.ops.wallclock import now_ms
from stream.live.wire import protocol as pr
from stream.rules import codec
from stream.rules.engine import Engine
from stream.store.etcd import EtcdStore

from ...rules.script import AWAY, HOME, T0, game_setup
from ...sinks import Deltas

CONDUCT = "arguing"


@dataclass
class Node:
    hub: Hub
    task: asyncio.Task[None]
    frames: dict[tuple[str, int], bytes] = field(default_factory=dict)   # what it published


@dataclass
class Pair:
    nodes: list[Node]
    n: int = 0
    at: int = T0

    async def submit(self, node: int, body: dict[str, Any], device: str = "") -> pr.Ack:
        self.n += 1
        self.at += 1000
        raw = {"id": f"e{self.n}", "at": self.at, **body}
        payload = codec.encode_event(codec.event_from_fields(raw))
        return await self.nodes[node].hub.submit(
            device=device or f"dev-{node}", official="", client_id=f"c{self.n}",
            payload_digest=digest(payload), event=codec.decode_event(payload),
            received_at=now_ms())

    async def settled(self, game: str, seq: int) -> None:
        """Both followers have folded up to ``seq`` of ``game``, and both published it."""
        async with asyncio.timeout(10):
            while True:
                if all(n.hub.seqs.get(game, 0) >= seq and (game, seq) in n.frames for n in self.nodes):
                    return
                await asyncio.sleep(0.01)

    def races(self) -> tuple[int, int]:
        return (sum(n.hub.races.caught_up for n in self.nodes), sum(n.hub.races.reloads for n in self.nodes))


@pytest.fixture
async def pair(etcd_url: str) -> AsyncIterator[Pair]:
    nodes = []
    for i in (0, 1):
        sink = Deltas()
        hub = Hub(EtcdStore(etcd_url), sink)
        node = Node(hub, asyncio.create_task(asyncio.sleep(0)))
        sink.publish = functools.partial(_published, node)
        await hub.start()
        node.task = asyncio.create_task(follower.run(hub), name=f"follower-{i}")
        nodes.append(node)
    p = Pair(nodes)
    try:
        await p.submit(0, setup_body("g1"))
        await p.submit(0, setup_body("g2"))
        await p.submit(0, {"type": "clock.start", "game": "g1"})
        await p.submit(0, {"type": "clock.start", "game": "g2"})
        await p.settled("g1", 2)
        await p.settled("g2", 2)
        yield p
    finally:
        for node in nodes:
            node.task.cancel()
            await asyncio.gather(node.task, return_exceptions=True)
            await node.hub.close()


def _published(node: Node, game: str, frames: Frames) -> None:
    seq = frames.msg.seq
    assert (game, seq) not in node.frames, f"{game} seq {seq} published twice"
    assert seq == 1 or (game, seq - 1) in node.frames, f"{game} seq {seq} published before {seq - 1}"
    node.frames[(game, seq)] = frames.json


def setup_body(game: str) -> dict[str, Any]:
    body = game_setup(game=game)
    del body["id"], body["at"]
    return body


async def same_everywhere(p: Pair) -> None:
    """Both nodes' folds equal a fresh fold of the log, and every seq's delta bytes agree."""
    records = await p.nodes[0].hub.store.records()
    fresh = Engine()
    for r in records:
        fresh.feed(codec.decode_event(r.body))
    for game in ("g1", "g2"):
        # The log's last seq: node A's follower may not have folded node B's last entry yet.
        await p.settled(game, max(r.seq or 0 for r in records if r.game == game))
        seqs = sorted(s for g, s in p.nodes[0].frames if g == game)
        assert seqs == list(range(1, len(seqs) + 1))
        assert [r.seq for r in records if r.game == game] == seqs
    a, b = p.nodes
    assert a.hub.engine.state_hash() == b.hub.engine.state_hash() == fresh.state_hash()
    assert a.frames == b.frames


IN_PLAY = [
    {"type": "goal", "game": "g1", "team": "home", "player": HOME[0]},
    {"type": "whistle", "game": "g1"},
    {"type": "card", "game": "g1", "player": AWAY[1], "color": "yellow", "conduct": CONDUCT},
    {"type": "clock.stop", "game": "g1"},
]


@pytest.mark.parametrize("first", range(len(IN_PLAY)))
async def test_a_race_in_play_costs_the_game_s_tail_and_no_reload(pair: Pair, first: int) -> None:
    """Both nodes give their event seq 3 of g1: one lands, the other node takes its own back,
    folds the winner's, and lands at seq 4. Nothing is refused; the log is not folded again."""
    mine, theirs = IN_PLAY[first], IN_PLAY[(first + 1) % len(IN_PLAY)]
    acks = await asyncio.gather(pair.submit(0, mine), pair.submit(1, theirs))
    assert sorted(a.seq or 0 for a in acks) == [3, 4]
    assert pair.races() == (1, 0)
    await same_everywhere(pair)


async def test_every_event_in_flight_on_the_loser_is_taken_back_and_sent_again(pair: Pair) -> None:
    """Node B has three events of g1 in flight when node A's lands first: all three are
    taken back and land after it, in B's order; g2's event on B is not held back. (B's
    writes of g1 reach the store once A's has landed: which of two writes sent at once
    etcd commits first is not fixed.)"""
    b = pair.nodes[1].hub
    landed = asyncio.Event()
    real_append = b.store.append

    async def after_a(record: Any) -> None:
        if record.game == "g1":
            await landed.wait()
        await real_append(record)

    async def on_a() -> pr.Ack:
        ack = await pair.submit(0, IN_PLAY[0])
        landed.set()
        return ack

    b.store.append = after_a  # type: ignore[method-assign]
    acks = await asyncio.gather(
        on_a(),
        pair.submit(1, IN_PLAY[1]), pair.submit(1, IN_PLAY[0]), pair.submit(1, IN_PLAY[1]),
        pair.submit(1, {"type": "whistle", "game": "g2"}))
    b.store.append = real_append  # type: ignore[method-assign]
    assert [a.seq for a in acks[:4]] == [3, 4, 5, 6]
    assert acks[4].game == "g2" and acks[4].seq == 3
    caught, reloads = pair.races()
    assert caught >= 1 and reloads == 0
    await same_everywhere(pair)


async def test_a_race_the_follower_sees_first_is_caught_up_the_same_way(pair: Pair) -> None:
    """Node B's follower meets node A's entry at the seq B's event in flight holds."""
    b = pair.nodes[1].hub
    # B's writer answers late: A's entry is in the log and B's follower reads it first.
    held = asyncio.Event()
    real_append = b.store.append

    async def slow_append(record: Any) -> None:
        await held.wait()
        await real_append(record)

    b.store.append = slow_append  # type: ignore[method-assign]
    mine = asyncio.ensure_future(pair.submit(1, IN_PLAY[1]))
    await asyncio.sleep(0)
    ack_a = await pair.submit(0, IN_PLAY[0])
    async with asyncio.timeout(10):
        while True:  # until B's follower has met A's entry
            if "g1" in b.races.catching:
                break
            await asyncio.sleep(0.01)
    held.set()
    ack_b = await mine
    b.store.append = real_append  # type: ignore[method-assign]
    assert (ack_a.seq, ack_b.seq) == (3, 4)
    assert pair.races() == (1, 0)
    await same_everywhere(pair)


async def test_a_race_on_a_game_s_end_folds_the_log_again_and_stays_right(pair: Pair) -> None:
    """An event that may change more than its game (a game's end derives obligations) is
    not taken back alone: the loser folds the whole log again, and both agree."""
    acks = await asyncio.gather(pair.submit(0, {"type": "whistle", "game": "g2"}),
                                pair.submit(1, {"type": "game.end", "game": "g2"}))
    assert sorted(a.seq or 0 for a in acks) == [3, 4]
    caught, reloads = pair.races()
    assert caught + reloads == 1
    await same_everywhere(pair)
