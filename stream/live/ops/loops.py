"""The event loop a node serves on: uvloop where it is installed, else asyncio's own."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Callable


def default_loop() -> str:
    """``ARENA_STREAM_LOOP`` if set, else uvloop where it is installed, else asyncio."""
    wanted = os.environ.get("ARENA_STREAM_LOOP")
    if wanted in ("uvloop", "asyncio"):
        return wanted
    return "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop]:
    """The event loop ``serve`` runs on: uvloop (``--loop uvloop``), or asyncio's own."""
    if name == "uvloop":
        import uvloop  # an optional speed-up: ``--loop asyncio`` runs without it

        return uvloop.new_event_loop
    return asyncio.new_event_loop
