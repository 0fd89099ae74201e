"""Spectators in worker processes: each a ``TimedViewer`` that follows several games on
one socket (``/ws/watch?event=E``) or one (``?game=G``), its deltas keyed by game and
``seq`` (``key``), stamped the moment their bytes arrive (``Spectator``).

``python -m stream.tools.public_bench.spectators --games G0,G1,… --target COUNT=URL …
--out FILE`` opens the viewers (each ready once it has a snapshot of every game it
follows: all of ``--games`` on an event socket, one on a game's), prints ``ready OPENED
ERRORS [FIRST ERROR]``; for ``wait DRAIN LAST0 LAST1 …`` (the last acked ``seq`` of
each game) it waits until every viewer has those (or ``DRAIN`` s) and prints ``caught``;
for ``stop DRAIN LAST0 …`` the same, then writes what each got to FILE (MessagePack)
and prints ``done``."""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import gc
import os
import time
from array import array
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

from ...tasks import stop
from ..harness.measure import raise_nofile
from ..harness.processes import Processes
from ..harness.tail import LoopStalls
from ..harness.viewers import stdin_lines
from ..harness.workers import LineWorkers


def key(game: int, seq: int) -> int:
    """A delta's key: its game's index and its ``seq`` in one integer."""
    return game << 32 | seq


class _Head(msgspec.Struct):
    type: str
    seq: int = -1
    game: str = ""


_head = msgspec.json.Decoder(_Head)
#: One receive buffer for every spectator of a process: the loop hands it to one socket at a time.
_RECV = memoryview(bytearray(256 * 1024))


class Spectator(asyncio.BufferedProtocol):
    """A viewer of ``follows`` games (indices into ``games``): ``first`` resolves once it has
    a snapshot of each; each delta's key and arrival time (``time.time_ns()``, the moment
    its bytes arrive) go to ``keys`` and ``times``; ``joined_bytes``: what it was sent until
    ``first``. Its WebSocket client is this class: the upgrade request, then the server's
    frames (unmasked, uncompressed: no extension is offered) read off the buffer as they
    come, a ping answered with its pong at once. A spectator of a whole event gets every
    game's deltas: tens of thousands of frames a second for a few thousand of them, which a
    general client parses slower than the service sends (the harness's limit, not the
    service's); this one costs a few microseconds a frame."""

    def __init__(self, url: str, games: list[str], follows: int) -> None:
        self.url = urlsplit(url)
        self.index = {g: i for i, g in enumerate(games)}
        self.follows = follows
        self.first: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.upgraded = False
        self.parts: list[bytes] = []
        self.firsts: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self.keys = array("q")
        self.times = array("q")
        self.resets = 0
        self.closed = False
        self.joined_bytes = 0
        self.waiter: AllCaughtUp | None = None

    async def connect(self, wait_s: float) -> None:
        try:
            async with asyncio.timeout(wait_s):
                await asyncio.get_running_loop().create_connection(
                    lambda: self, self.url.hostname or "127.0.0.1", self.url.port or 80)
                await self.first
        except BaseException:
            self.close()
            raise

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        wskey = base64.b64encode(os.urandom(16)).decode()
        transport.write(f"GET {self.url.path}?{self.url.query} HTTP/1.1\r\nHost: {self.url.netloc}\r\n"
                        f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {wskey}\r\n"
                        "Sec-WebSocket-Version: 13\r\n\r\n".encode())

    def get_buffer(self, sizehint: int) -> memoryview:
        return _RECV

    def buffer_updated(self, nbytes: int) -> None:
        now = time.time_ns()
        self.buf += _RECV[:nbytes]
        buf = self.buf
        at = 0
        if not self.upgraded:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            if not buf.startswith(b"HTTP/1.1 101"):
                self._fail(f"upgrade refused: {bytes(buf[:end]).decode(errors='replace')}")
                return
            self.upgraded, at = True, end + 4
        size = len(buf)
        while size - at >= 2:
            b0, n = buf[at], buf[at + 1] & 0x7F
            head = 2
            if n == 126:
                if size - at < 4:
                    break
                n, head = int.from_bytes(buf[at + 2:at + 4]), 4
            elif n == 127:
                if size - at < 10:
                    break
                n, head = int.from_bytes(buf[at + 2:at + 10]), 10
            if size - at < head + n:
                break
            payload = bytes(buf[at + head:at + head + n])
            at += head + n
            self._frame(b0, payload, now)
        del buf[:at]

    def _frame(self, b0: int, payload: bytes, now: int) -> None:
        opcode = b0 & 0x0F
        if opcode == 0x9:  # ping: a pong, masked as a client's frames are, with its payload
            mask = os.urandom(4)
            body = bytes(c ^ mask[i % 4] for i, c in enumerate(payload))
            if self.transport is not None and not self.transport.is_closing():
                self.transport.write(bytes((0x8A, 0x80 | len(payload))) + mask + body)
            return
        if opcode == 0x8:
            self.close()
            return
        if opcode not in (0x0, 0x1, 0x2):
            return
        if not b0 & 0x80:
            self.parts.append(payload)
            return
        if self.parts:
            payload = b"".join([*self.parts, payload])
            self.parts.clear()
        self.on_frame(payload, now)

    def on_frame(self, payload: bytes, now: int) -> None:
        if not self.first.done():
            self.joined_bytes += len(payload)
        head = _head.decode(payload)
        g = self.index.get(head.game)
        if g is None:
            return
        if head.type == "delta":
            self.keys.append(key(g, head.seq))
            self.times.append(now)
            self.last[g] = max(self.last.get(g, -1), head.seq)
        elif head.type == "snapshot":
            if g in self.firsts:
                self.resets += 1
            else:
                self.firsts[g] = head.seq
            self.last[g] = max(self.last.get(g, -1), head.seq)
            if len(self.firsts) >= self.follows and not self.first.done():
                self.first.set_result(len(self.firsts))
        else:
            return
        if self.waiter is not None:
            self.waiter.check(self)

    def _fail(self, why: str) -> None:
        if not self.first.done():
            self.first.set_exception(ConnectionError(why))
        self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.waiter is not None:
            self.waiter.check(self)
        if not self.first.done():
            self.first.set_exception(ConnectionError(f"connection lost: {exc}"))

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def caught_up(self, last: list[int]) -> bool:
        """Whether it has ``last[g]`` of each game ``g`` it follows (or lost its connection)."""
        return self.closed or all(self.last.get(g, -1) >= s for g, s in enumerate(last) if g in self.firsts)

    def report(self) -> dict[str, object]:
        return {"firsts": sorted(self.firsts.items()), "seqs": self.keys.tobytes(),
                "times": self.times.tobytes(), "resets": self.resets, "closed": self.closed,
                "joined_bytes": self.joined_bytes}


class AllCaughtUp:
    """Set ``event`` once every spectator has each game's ``last`` seq it follows (or lost
    its connection)."""

    def __init__(self, viewers: list[Spectator], last: list[int]) -> None:
        self.last = last
        self.event = asyncio.Event()
        self.waiting = set(viewers)
        for v in viewers:
            v.waiter = self
            self.check(v)

    def check(self, v: Spectator) -> None:
        if v in self.waiting and v.caught_up(self.last):
            self.waiting.discard(v)
            if not self.waiting:
                self.event.set()


async def _open(targets: list[tuple[str, int]], games: list[str]) -> tuple[list[Spectator], int, str]:
    viewers: list[Spectator] = []
    errors, first_error = 0, ""
    sem = asyncio.Semaphore(100)

    async def one(url: str) -> None:
        nonlocal errors, first_error
        async with sem:
            v = Spectator(url, games, len(games) if "event=" in url else 1)
            try:
                await v.connect(60.0)
            except (OSError, TimeoutError, ConnectionError) as err:
                errors += 1
                first_error = first_error or f"{type(err).__name__}: {err}"
                return
            viewers.append(v)

    await asyncio.gather(*(one(url) for url, n in targets for _ in range(n)))
    return viewers, errors, first_error


async def _worker(targets: list[tuple[str, int]], games: list[str], out: Path) -> None:
    raise_nofile()
    viewers, errors, first_error = await _open(targets, games)
    gc.collect()
    gc.freeze()
    stalls = LoopStalls()
    probe = asyncio.create_task(stalls.run(), name="spectator-stall-probe")
    try:
        print(f"ready {len(viewers)} {errors} {first_error}".rstrip(), flush=True)
        async for words in stdin_lines():
            if words[0] not in ("wait", "stop"):
                continue
            drain, last = float(words[1]), [int(x) for x in words[2:]]
            if viewers:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(AllCaughtUp(viewers, last).event.wait(), drain)
            if words[0] == "wait":
                print("caught", flush=True)
                continue
            report = {"viewers": [v.report() for v in viewers], "stalls": sorted(stalls.by_second.items())}
            await asyncio.to_thread(out.write_bytes, msgspec.msgpack.encode(report))
            for v in viewers:
                v.close()
            await asyncio.sleep(0.2)
            print("done", flush=True)
            return
    finally:
        await stop([probe])


class SpectatorWorkers(LineWorkers):
    """Worker processes holding the spectators, the viewers spread evenly over them."""

    def __init__(self, group: Processes, games: list[str]) -> None:
        super().__init__(group)
        self.games = games

    async def start(self, name: str, targets: list[tuple[str, int]], workers: int) -> tuple[int, int, str]:
        shares: list[dict[str, int]] = [{} for _ in range(workers)]
        i = 0
        for url, n in targets:
            for _ in range(n):
                shares[i % workers][url] = shares[i % workers].get(url, 0) + 1
                i += 1
        for w, share in enumerate(s for s in shares if s):
            out = self.group.workdir / f"{name}-w{w}.msgpack"
            args = ["-m", "stream.tools.public_bench.spectators", "--out", str(out),
                    "--games", ",".join(self.games)]
            for url, n in share.items():
                args += ["--target", f"{n}={url}"]
            self.spawn(f"{name}-w{w}", out, *args)
        opened = errors = 0
        first_error = ""
        for line in await self.read("ready", 120 + i / 20):
            parts = line.split(maxsplit=3)
            opened, errors = opened + int(parts[1]), errors + int(parts[2])
            first_error = first_error or (parts[3] if len(parts) > 3 else "")
        return opened, errors, first_error

    async def wait(self, last: list[int], drain: float) -> None:
        """Until every viewer has each game's ``last`` seq (or ``drain`` s have passed)."""
        await self.say(f"wait {drain:g} {' '.join(map(str, last))}", "caught", drain + 120)

    async def stop_at(self, last: list[int], drain: float) -> list[dict[str, Any]]:
        """Once every viewer has each game's ``last`` seq (or after ``drain`` s): the reports."""
        await self.say(f"stop {drain:g} {' '.join(map(str, last))}", "done", drain + 120)
        reports = []
        for out in self.outs:
            reports.append(msgspec.msgpack.decode(await asyncio.to_thread(out.read_bytes)))
            await asyncio.to_thread(out.unlink)
        await self.close(wait_first=5.0)
        return reports


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m stream.tools.public_bench.spectators")
    p.add_argument("--target", action="append", required=True, help="COUNT=URL")
    p.add_argument("--games", required=True, help="the event's games, comma-separated")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    targets = [(url, int(n)) for n, url in (t.split("=", 1) for t in args.target)]
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_worker(targets, args.games.split(","), args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
