"""A viewer worker process (``ViewerWorkers`` starts it):
``python -m stream.tools.harness.viewer_worker --target COUNT=URL … --out FILE``
opens the viewers (``TimedViewer``), prints ``ready OPENED ERRORS [FIRST ERROR]``,
waits for ``stop LAST_SEQ DRAIN_S`` on stdin, waits until every viewer has
``LAST_SEQ`` (or the drain time is up), writes what each viewer got to FILE
(MessagePack), with its own loop's largest stall of each second since it was ready
(``stalls``: ``[second, ms]`` pairs, ``tail.LoopStalls``), and prints ``done``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
from pathlib import Path

import msgspec

from ...tasks import stop
from .measure import raise_nofile
from .tail import LoopStalls
from .viewers import CaughtUp, TimedViewer, open_viewers, stdin_lines


async def _worker(targets: list[tuple[str, int]], out: Path, *, stop_at_error: bool,
                  concurrency: int, open_timeout: float) -> None:
    raise_nofile()
    viewers, errors, first_error = await open_viewers(
        targets, stop_at_error=stop_at_error, concurrency=concurrency, open_timeout=open_timeout)
    gc.collect()
    gc.freeze()  # the connections are long-lived: keep them out of the collector's way
    stalls = LoopStalls()
    probe = asyncio.create_task(stalls.run(), name="viewer-stall-probe")
    try:
        await _serve(viewers, errors, first_error, out, stalls)
    finally:
        await stop([probe])


async def _serve(viewers: list[TimedViewer], errors: int, first_error: str, out: Path,
                 stalls: LoopStalls) -> None:
    print(f"ready {len(viewers)} {errors} {first_error}".rstrip(), flush=True)
    async for words in stdin_lines():
        if words[0] == "stop":
            last_seq, drain = int(words[1]), float(words[2])
            if last_seq > 0 and viewers:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(CaughtUp(viewers, last_seq).event.wait(), drain)
            report = {"opened": len(viewers), "errors": errors, "first_error": first_error,
                      "viewers": [v.report() for v in viewers],
                      "stalls": sorted(stalls.by_second.items())}
            await asyncio.to_thread(out.write_bytes, msgspec.msgpack.encode(report))
            for v in viewers:
                v.close()
            await asyncio.sleep(0.2)
            print("done", flush=True)
            return


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m stream.tools.harness.viewer_worker",
                                description="a viewer worker (see stream.tools.harness.ViewerWorkers)")
    p.add_argument("--target", action="append", required=True, help="COUNT=URL")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--stop-at-error", action="store_true")
    p.add_argument("--concurrency", type=int, default=100)
    p.add_argument("--timeout", type=float, default=30.0)
    args = p.parse_args(argv)
    targets = [(url, int(n)) for n, url in (t.split("=", 1) for t in args.target)]
    asyncio.run(_worker(targets, args.out, stop_at_error=args.stop_at_error,
                        concurrency=args.concurrency, open_timeout=args.timeout))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
