"""A viewer worker for the failover proof (``test_etcd_failover.py``): many
scoreboards in one process (``stream.tools.harness.ResumingViewer``), each following one
game on the nodes it is given and resuming, with ``since`` and ``epoch``, on whichever
is up.

``python -m tests.proof.failover_worker --urls URL,URL --count N --game G``, then:

* it prints ``ready N`` once every viewer has its first snapshot;
* on stdin ``hop K``: the next K viewers (in turn) leave their node and resume on the
  other (a scoreboard moved, or its node's connection lost), all at once;
* on stdin ``stop LAST WAIT``: it waits (up to WAIT s) until every viewer has ``LAST``,
  prints one JSON line (viewers, caught up, gaps, repeats, resets, reconnects,
  heartbeats and those ahead of what the viewer had been sent, the
  first gaps as ``[had, got, reconnects]``, seconds to catch up) and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time

from stream.tools.harness import ResumingViewer, raise_nofile, stdin_lines


async def _first_snapshot(v: ResumingViewer) -> None:
    while not v.epoch:
        v.moved.clear()
        await v.moved.wait()


async def main(urls: list[str], count: int, game: str) -> None:
    viewers = [ResumingViewer(urls, game) for _ in range(count)]
    for v in viewers:
        v.start()
    async with asyncio.timeout(60):
        await asyncio.gather(*(_first_snapshot(v) for v in viewers))
    print(f"ready {count}", flush=True)
    turn = 0
    async for words in stdin_lines():
        if words[:1] == ["hop"]:
            k = int(words[1])
            await asyncio.gather(*(viewers[(turn + i) % count].hop() for i in range(k)))
            turn += k
            continue
        if words[:1] != ["stop"]:
            continue
        last, wait = int(words[1]), float(words[2])
        t = time.monotonic()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait):
                await asyncio.gather(*(v.reach(last) for v in viewers))
        caught = time.monotonic() - t
        for v in viewers:
            await v.stop()
        print(json.dumps({
            "viewers": count, "caught_up": sum(v.seq >= last for v in viewers),
            "gaps": sum(v.gaps for v in viewers), "repeats": sum(v.repeats for v in viewers),
            "resets": sum(v.resets for v in viewers), "reconnects": sum(v.reconnects for v in viewers),
            "heartbeats": sum(v.heartbeats for v in viewers), "ahead": sum(v.ahead for v in viewers),
            "first_gaps": [v.first_gap for v in viewers if v.first_gap][:5], "caught_up_s": caught}),
            flush=True)
        return


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--urls", required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--game", required=True)
    a = p.parse_args()
    raise_nofile()
    asyncio.run(main(a.urls.split(","), a.count, a.game))
