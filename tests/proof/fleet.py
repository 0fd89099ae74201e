"""What the fan-out proofs share: the service as a subprocess with flags of the
test's choosing (so the clients measuring it are off its event loop), its memory
and open files, and the officials' event stream sent on schedule.

The viewers themselves are ``stream.tools.bench_fanout``'s worker processes (or
``storm_worker``, built on the same Sans-I/O viewer): 1,000 asyncio
``websockets`` clients in the test's own process would be the bottleneck on
two cores, not the service.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from stream.tools.bench_fanout import GAME, Children, DevicePool, Node, free_port, setup_game

__all__ = ["GAME", "EventStream", "metric", "open_files", "scrape", "start_service"]


async def start_service(children: Children, data: Path, *flags: str) -> Node:
    """``arena-stream serve --no-demo`` with ``flags``, ready on /readyz; the bench game set up."""
    port = free_port()
    proc = await children.start("service", "-m", "stream", "serve", "--no-demo", "--data", str(data),
                                "--port", str(port), *flags)
    node = Node("service", proc, port, f"/ws/watch?game={GAME}", "/ws/device")
    deadline = time.monotonic() + 60
    async with aiohttp.ClientSession() as http:
        while True:
            if proc.returncode is not None:
                raise RuntimeError(f"the service exited ({proc.returncode}):\n{children.tail('service')}")
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with http.get(f"{node.http}/readyz") as r:
                    if r.status == 200:
                        return node
            assert time.monotonic() < deadline, f"the service is not ready:\n{children.tail('service')}"
            await asyncio.sleep(0.1)


def open_files(pid: int) -> int:
    """How many descriptors a process holds (its sockets among them)."""
    return len(os.listdir(f"/proc/{pid}/fd"))


async def scrape(node: Node) -> str:
    async with aiohttp.ClientSession() as http, http.get(f"{node.http}/metrics") as r:
        assert r.status == 200
        return await r.text()


def metric(text: str, name: str) -> float:
    """One sample of a Prometheus text page, by its full name (labels included); 0 if absent."""
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


@dataclass
class EventStream:
    """The officials' device: valid events (``clock.start`` / ``whistle``) sent on schedule,
    open loop, at ``rate`` per second. ``sends`` maps each acked ``seq`` to its send time
    (``time.time_ns()``, the clock the viewer workers stamp frames with)."""

    node: Node
    tokens: list[str]
    rate: float
    sends: dict[int, int] = field(default_factory=dict)
    acks: dict[int, float] = field(default_factory=dict)  # seq → ms from send to ack
    refused: list[dict[str, Any]] = field(default_factory=list)
    n: int = 0  # events fired so far: their parity keeps the clock start/stop alternating
    pool: DevicePool | None = None

    @classmethod
    async def open(cls, node: Node, data: Path, rate: float) -> EventStream:
        """Set the bench game up (with the admin token in ``data``) and connect the device."""
        admin = (data / "admin.token").read_text().strip()
        stream = cls(node, await setup_game(node, admin, 1), rate)
        stream.pool = await DevicePool(node.device_url(), stream.tokens, "proof").__aenter__()
        return stream

    async def close(self) -> None:
        if self.pool is not None:
            await self.pool.__aexit__(None, None, None)

    async def run(self, seconds: float | None = None, stop: asyncio.Event | None = None) -> dict[int, int]:
        """Send for ``seconds`` (or until ``stop`` is set), then wait for the acks; ending
        on an even count, so the clock is stopped. Returns this run's ``seq → send ns``."""
        assert self.pool is not None
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        k = 0
        tasks = []
        while True:
            timed_out = seconds is not None and loop.time() - t0 >= seconds
            if (timed_out or (stop is not None and stop.is_set())) and self.n % 2 == 0:
                break
            delay = t0 + k / self.rate - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(self.pool.fire(self.n)))
            self.n += 1
            k += 1
        out: dict[int, int] = {}
        for t_send, t_reply, reply in await asyncio.gather(*tasks):
            if reply.get("type") == "ack" and isinstance(reply.get("seq"), int):
                out[int(reply["seq"])] = t_send
                self.acks[int(reply["seq"])] = (t_reply - t_send) / 1e6
            else:
                self.refused.append(reply)
        self.sends |= out
        return out

