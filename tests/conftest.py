"""Every async test runs on the event loop ``arena-stream serve`` runs on: uvloop where it
is installed, unless ``ARENA_STREAM_LOOP=asyncio`` (``tests/run.sh`` runs the proof suites
again that way, so that they pass on both loops). Services the tests start as processes
(``ServiceProcess``) take the same default."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

import pytest

from stream.live.loops import default_loop


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item
                                  ) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    if default_loop() != "uvloop":
        return {"asyncio": asyncio.new_event_loop}
    import uvloop

    return {"uvloop": uvloop.new_event_loop}
