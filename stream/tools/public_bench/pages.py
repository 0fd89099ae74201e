"""The event page's HTTP load, in a process of its own (not the service's, not the
device's): ``python -m stream.tools.public_bench.pages --url URL --rate R --out FILE``
prints ``ready``, then for each ``run SECONDS`` line on stdin sends ``GET URL`` at ``R``
a second for ``SECONDS`` on schedule (open loop: a request does not wait for the one
before), each on aiohttp's pooled connections, waits for every answer (30 s at most
each), writes each request's time from its send to its last byte (ms) and the answers
that were not 200 to FILE (MessagePack) and prints ``done``. An empty line ends it."""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

import aiohttp
import msgspec

from ..harness.processes import Processes
from ..harness.viewers import stdin_lines
from ..harness.workers import LineWorkers


class PageRun(msgspec.Struct):
    """One ``run``: each answered request's time (ms, sorted), the failures and their first."""

    ms: list[float]
    failed: int
    first_failure: str


async def _get(session: aiohttp.ClientSession, url: str) -> float | str:
    t = time.perf_counter()
    try:
        async with session.get(url) as r:
            await r.read()
            if r.status != 200:
                return f"HTTP {r.status}"
    except (aiohttp.ClientError, OSError, TimeoutError) as err:
        return f"{type(err).__name__}: {err}"
    return 1000 * (time.perf_counter() - t)


async def _load(url: str, rate: float, out: Path) -> None:
    timeout = aiohttp.ClientTimeout(total=30)
    print("ready", flush=True)
    async for words in stdin_lines():
        if words[0] != "run":
            continue
        # A session of its own for each run: the service is a fresh process each round.
        connector = aiohttp.TCPConnector(limit=200)
        async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
            await _get(session, url)  # a connection made and the page drawn once: not counted
            loop = asyncio.get_running_loop()
            count, t0, tasks = round(float(words[1]) * rate), loop.time(), []
            for k in range(count):
                if (delay := t0 + k / rate - loop.time()) > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(_get(session, url)))
            got = await asyncio.gather(*tasks)
            fails = [x for x in got if isinstance(x, str)]
            run = PageRun(sorted(x for x in got if isinstance(x, float)), len(fails),
                          fails[0] if fails else "")
            await asyncio.to_thread(out.write_bytes, msgspec.msgpack.encode(run))
            print("done", flush=True)


class PageLoad(LineWorkers):
    """The page load process, started once and told to ``run`` for each round's stretch."""

    def __init__(self, group: Processes, url: str, rate: float) -> None:
        super().__init__(group)
        self.out = group.workdir / "pages.msgpack"
        self.spawn("page-load", self.out, "-m", "stream.tools.public_bench.pages", "--url", url,
                   "--rate", f"{rate:g}", "--out", str(self.out))

    async def ready(self) -> None:
        await self.read("ready", 60)

    async def run(self, seconds: float) -> PageRun:
        await self.say(f"run {seconds:g}", "done", seconds + 60)
        return msgspec.msgpack.decode(await asyncio.to_thread(self.out.read_bytes), type=PageRun)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m stream.tools.public_bench.pages")
    p.add_argument("--url", required=True)
    p.add_argument("--rate", type=float, required=True)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    asyncio.run(_load(args.url, args.rate, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
