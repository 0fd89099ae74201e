"""A viewer worker for the reconnect storm (``test_reconnect_storm.py``): many
viewers on the harness's Sans-I/O viewer (``TimedViewer``), each of which keeps what
it was sent across its connections and resumes, as a display does, with the
``since`` and ``epoch`` it last saw.

``python -m tests.proof.storm_worker --url URL --count N --out FILE``, then on
stdin, one line each:

* (it prints ``ready OPENED ERRORS``) once every viewer has its snapshot;
* ``cut``: every connection is reset at once (``SO_LINGER`` 0: an RST, as a
  network that goes away leaves it); prints ``cut``;
* ``resume``: every viewer reconnects at once with its ``since``/``epoch``
  (a failed attempt is retried after a short random pause); prints
  ``resumed OK FAILED`` when each has been sent everything it missed;
* ``stop LAST DRAIN``: waits (up to DRAIN s) until every viewer has ``LAST``,
  writes the report (MessagePack) to FILE, prints ``done``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import random
import socket
import struct
from array import array
from pathlib import Path

import msgspec

from stream.tools.harness import TimedViewer, raise_nofile, stdin_lines

DELTA, SNAPSHOT, RESET = 0, 1, 2


class _Head(msgspec.Struct):
    """What a viewer needs of a frame; msgspec skips the rest."""

    type: str
    seq: int = -1
    epoch: str = ""
    reset: bool = False


_head = msgspec.json.Decoder(_Head)


class Record:
    """One viewer over all its connections: every snapshot and delta, in arrival order."""

    def __init__(self, url: str, progress: asyncio.Event) -> None:
        self.url = url
        self.progress = progress
        self.seqs = array("q")
        self.kinds = array("b")
        self.times = array("q")
        self.last = -1          # the highest seq it has: what it resumes from
        self.epoch = ""
        self.link: Link | None = None
        self.connects = 0
        self.retries = 0
        self.caught_up = array("q")  # ns, per connection: its first presence (all it missed is in)

    def resume_url(self) -> str:
        return f"{self.url}&since={self.last}&epoch={self.epoch}"


class Link(TimedViewer):
    """One connection of a ``Record``. ``first`` resolves at the subscription's ``presence``
    frame, which the service sends right after the snapshot or the deltas missed."""

    def __init__(self, url: str, record: Record) -> None:
        super().__init__(url)
        self.record = record

    def on_frame(self, payload: bytes, now: int) -> None:
        head = _head.decode(payload)
        rec = self.record
        if head.type == "presence":
            if not self.first.done():
                rec.caught_up.append(now)
                self.first.set_result(rec.last)
            return
        if head.type == "delta":
            kind = DELTA
        elif head.type == "snapshot":
            kind = RESET if head.reset else SNAPSHOT
            rec.epoch = head.epoch
        else:
            return  # heartbeats
        rec.seqs.append(head.seq)
        rec.kinds.append(kind)
        rec.times.append(now)
        rec.last = max(rec.last, head.seq)
        rec.progress.set()


async def connect(rec: Record, url: str, wait_s: float) -> None:
    """One connection, up to its presence frame."""
    link = Link(url, rec)
    rec.connects += 1
    await link.connect(wait_s)
    rec.link = link


def cut(rec: Record) -> None:
    """Reset the connection: no close frame, no FIN; an RST, at once."""
    link, rec.link = rec.link, None
    if link is None or link.transport is None:
        return
    sock = link.transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    link.transport.abort()


async def resume(rec: Record, timeout: float, attempts: int = 20) -> bool:
    """Reconnect with ``since``/``epoch``; retry after a short random pause, as a display would."""
    for _ in range(attempts):
        try:
            await connect(rec, rec.resume_url(), timeout)
        except (OSError, TimeoutError, ConnectionError):
            rec.retries += 1
            await asyncio.sleep(random.uniform(0.05, 0.25))
            continue
        return True
    return False


async def main(url: str, count: int, out: Path, timeout: float) -> None:
    raise_nofile()
    progress = asyncio.Event()  # set at every frame a viewer keeps
    records = [Record(url, progress) for _ in range(count)]
    sem = asyncio.Semaphore(100)
    errors: list[str] = []

    async def first(rec: Record) -> None:
        async with sem:
            try:
                await connect(rec, rec.url, timeout)
            except (OSError, TimeoutError, ConnectionError) as err:
                errors.append(f"{type(err).__name__}: {err}")

    await asyncio.gather(*(first(r) for r in records))
    gc.collect()
    gc.freeze()
    print(f"ready {count - len(errors)} {len(errors)} {errors[0] if errors else ''}".rstrip(), flush=True)

    async for line in stdin_lines():
        if line[0] == "cut":
            for rec in records:
                cut(rec)
            print("cut", flush=True)
        elif line[0] == "resume":
            ok = await asyncio.gather(*(resume(r, timeout) for r in records))
            print(f"resumed {sum(ok)} {len(ok) - sum(ok)}", flush=True)
        elif line[0] == "stop":
            last, drain = int(line[1]), float(line[2])
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(drain):
                    while any(r.last < last for r in records):
                        progress.clear()
                        await progress.wait()
            await asyncio.to_thread(out.write_bytes, msgspec.msgpack.encode({"viewers": [
                {"seqs": r.seqs.tobytes(), "kinds": r.kinds.tobytes(), "times": r.times.tobytes(),
                 "caught_up": r.caught_up.tobytes(), "retries": r.retries, "connects": r.connects,
                 "open": r.link is not None and not r.link.closed} for r in records]}))
            for r in records:
                if r.link is not None:
                    r.link.close()
            await asyncio.sleep(0.2)
            print("done", flush=True)
            return


def _main() -> None:
    p = argparse.ArgumentParser(prog="python -m tests.proof.storm_worker")
    p.add_argument("--url", required=True, help="ws://HOST:PORT/ws/watch?game=GAME")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--timeout", type=float, default=30.0)
    args = p.parse_args()
    asyncio.run(main(args.url, args.count, args.out, args.timeout))


if __name__ == "__main__":
    _main()
