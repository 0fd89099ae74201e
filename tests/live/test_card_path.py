"""One card followed through the service, as a newcomer reads it: from the device's frame
to the bytes written to a viewer's socket, each module of the shell entered once, in
one direction (docs/architecture.md, "One card, end to end").

The path is traced in a service running in this process, by profiling every call made
on the card's behalf: its device's connection from the frame on, and every task and
callback scheduled from there (they inherit its context), so nothing else the service
does meanwhile (the deadline timer, the stall probe, pings) is counted. A module is
*entered* when a call comes into it from another module, or from the event loop; a
return to the caller is not an entry, nor is a coroutine resumed. The pure rule engine
(``stream/rules``) is not a step of the path but what its steps consult, as they would a
library: the scope check reads which arena a game is in, the hub folds the card, the
feeds diff the views; the test names who consults it."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import stream

from .conftest import Server, Viewer

_RESUMABLE = inspect.CO_COROUTINE | inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR
ROOT = Path(stream.__file__).parent
CARD: contextvars.ContextVar[bool] = contextvars.ContextVar("card", default=False)


class CardTrace:
    """Every module of ``stream`` entered on the card's behalf, in order, until the
    fan-out writes the card's update to a viewer's transport."""

    def __init__(self) -> None:
        self.armed = False
        self.done = False
        self.entries: list[str] = []
        self.consulting: list[str] = []  # the shell's modules that call into the engine
        self._running: dict[int, FrameType] = {}  # coroutines begun (held, so no id is reused)

    def __enter__(self) -> CardTrace:
        sys.setprofile(self._event)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)

    @staticmethod
    def module(frame: FrameType | None) -> str | None:
        if frame is None:
            return None
        path = Path(frame.f_code.co_filename)
        if not path.is_relative_to(ROOT):
            return None
        rel = path.relative_to(ROOT).as_posix()
        return None if rel.startswith("rules/") else rel.removesuffix(".py")

    def begin(self) -> None:
        """Arm the trace: the coroutines already running (a connection's handler waiting for
        its next frame) are resumed later, not entered."""
        for task in asyncio.all_tasks():
            awaited: Any = task.get_coro()
            while awaited is not None:
                frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
                if frame is None:
                    break
                self._running[id(frame)] = frame
                awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
        self.armed = True

    @staticmethod
    def _in_rules(frame: FrameType | None) -> bool:
        return frame is not None and Path(frame.f_code.co_filename).is_relative_to(ROOT / "rules")

    def _event(self, frame: FrameType, what: str, arg: Any) -> None:
        if self.done or what not in ("call", "return"):
            return
        here = self.module(frame)
        if (self.armed and what == "call" and here == "live/devices/ingest"
                and frame.f_code.co_name == "handle"):
            self.armed = False
            CARD.set(True)  # the device connection's context, and every task made from it
            self.entries.append(here)
        if not CARD.get():
            return  # not the card's
        if here is None:
            if what == "call" and self._in_rules(frame) and not self._in_rules(frame.f_back):
                outer = self.module(frame.f_back)
                if outer is not None and outer not in self.consulting:
                    self.consulting.append(outer)
            return  # not the shell's code
        if what == "return":
            # The fan-out's write of an update to a viewer's transport (uvloop's is compiled:
            # the profiler sees no call into it) is done when ``_send`` returns.
            self.done = here == "live/broadcast/fanout" and frame.f_code.co_name == "_send"
            return
        if frame.f_code.co_flags & _RESUMABLE:
            if id(frame) in self._running:
                return  # a coroutine resumed
            self._running[id(frame)] = frame
        caller = frame.f_back
        while caller is not None and self.module(caller) is None:
            caller = caller.f_back  # through the library (a decorator, asyncio's callback)
        entered = caller is None or self.module(caller) != here
        if entered and (not self.entries or self.entries[-1] != here):
            self.entries.append(here)


async def test_a_card_enters_each_module_of_the_shell_once_on_its_way_to_the_overlay(
        server: Server) -> None:
    await server.setup_game()
    viewer = await Viewer.open(server.watch_url, game="g1")
    await viewer.next("snapshot")
    tk = await server.device("timekeeper")
    ump = await server.device("umpire")
    assert (await tk.send({"type": "clock.start", "game": "g1"}))["seq"] == 2
    await viewer.until_seq("g1", 2)

    with CardTrace() as trace:
        trace.begin()
        ack = await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow",
                              "conduct": "arguing"})
        frames = await viewer.until_seq("g1", 3)
    assert ack["seq"] == 3 and frames[-1]["notices"][0]["type"] == "card.recorded"
    assert trace.done, f"the card's write to the viewer was not seen: {trace.entries}"

    path = trace.entries
    print("\n    a card's path: " + " -> ".join(path) + f" ({len(path)} modules);"
          " the rule engine consulted by " + ", ".join(trace.consulting))
    twice = sorted({m for m in path if path.count(m) > 1})
    assert not twice, f"entered more than once: {twice}, on {' -> '.join(path)}"
    # The steps a card must take, in this order: received, folded, logged, shown, sent.
    steps = [path.index(m) for m in ("live/devices/ingest", "live/hub/hub", "store/sqlite", "live/hub/feeds",
                                     "live/broadcast/fanout")]
    assert steps == sorted(steps), path
    assert path[0] == "live/devices/ingest" and path[-1] == "live/broadcast/fanout", path
    assert "live/hub/hub" in trace.consulting, trace.consulting  # the fold
    await viewer.close()
    await tk.close()
    await ump.close()
