"""WebSocket pings to viewers (stream/live/broadcast/pings.py): each viewer is pinged once per
interval (3 × heartbeat), first within an interval of connecting, the pings of viewers
who connected at the same moment spread over half the interval rather than sent in one
turn of the loop; a viewer that answers stays,
one that leaves a ping unanswered for the timeout (1.5 × heartbeat) is closed."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from ..conftest import RunningServer, Server

HEARTBEAT = 0.5
INTERVAL, TIMEOUT = 3 * HEARTBEAT, 1.5 * HEARTBEAT
VIEWERS = 40


class Viewer:
    """A viewer's socket that notes when each ping comes, and answers it or not."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, answer: bool) -> None:
        self.ws, self.answer = ws, answer
        self.pings: list[float] = []
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, session: aiohttp.ClientSession, server: Server, *, answer: bool = True) -> Viewer:
        return cls(await session.ws_connect(f"{server.watch_url}?game=g1", autoping=False), answer)

    async def _read(self) -> None:
        async for msg in self.ws:
            if msg.type is aiohttp.WSMsgType.PING:
                self.pings.append(time.monotonic())
                if self.answer:
                    await self.ws.pong(msg.data)

    async def close(self) -> None:
        self.reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.reader
        await self.ws.close()


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async with RunningServer(tmp_path, heartbeat=HEARTBEAT, send_timeout=1.0) as s:
        await s.setup_game()
        yield s


@pytest.mark.slow
async def test_pings_are_spread_over_the_interval_and_answered_viewers_stay(server: Server) -> None:
    async with aiohttp.ClientSession() as session:
        opened = time.monotonic()
        viewers = await asyncio.gather(*(Viewer.open(session, server) for _ in range(VIEWERS)))
        connected = time.monotonic()
        try:
            await asyncio.sleep(2.5 * INTERVAL)
            assert all(v.pings for v in viewers)               # every viewer was pinged ...
            firsts = sorted(v.pings[0] for v in viewers)
            # ... within an interval of connecting, and not all in one turn of the loop: spread
            # over the second half of the interval
            assert firsts[0] >= opened + 0.4 * INTERVAL and firsts[-1] <= connected + INTERVAL + 0.2
            assert firsts[-1] - firsts[0] >= 0.35 * INTERVAL, firsts[-1] - firsts[0]
            for v in viewers:                                  # once per interval each, no more
                gaps = [b - a for a, b in itertools.pairwise(v.pings)]
                assert all(g >= 0.6 * INTERVAL for g in gaps), gaps
            assert not any(v.ws.closed for v in viewers)       # answered: all still open
            assert server.svc.metrics.ping_timeouts._value.get() == 0
        finally:
            for v in viewers:
                await v.close()


async def test_a_viewer_that_leaves_a_ping_unanswered_is_closed(server: Server) -> None:
    async with aiohttp.ClientSession() as session:
        alive = await Viewer.open(session, server)
        mute = await Viewer.open(session, server, answer=False)
        try:
            async with asyncio.timeout(INTERVAL + TIMEOUT + 2.0):
                await mute.reader                              # its socket closed under it
            closed_after = time.monotonic() - mute.pings[0]
            assert TIMEOUT - 0.05 <= closed_after <= TIMEOUT + 1.0, closed_after
            assert not alive.ws.closed
            assert server.svc.metrics.ping_timeouts._value.get() == 1
            await asyncio.sleep(0.2)
            assert server.svc.open_sockets == 1
        finally:
            for v in (alive, mute):
                await v.close()
