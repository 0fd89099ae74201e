"""A Python client for Arena Stream's viewer socket (``/ws/watch``, docs/protocol.md).

Follow one game: a snapshot, then one delta per logged event, each with the
game's view already patched. The client keeps its own copy of the view, checks
that ``seq`` grows by exactly one, and when the connection drops (the server
restarts, the network blinks, two heartbeats go missing, a gap in ``seq``) it
reconnects with exponential backoff and resumes with ``since``/``epoch``: you get
exactly the deltas you missed, never one twice; or, if the server can't serve
them, a snapshot with ``reset=True``. Frames are decoded with the service's own
msgspec schemas (``stream.live.protocol.WatchOut``), so updates are typed: ``view``
is a ``stream.rules.view.GameView`` and ``notices`` are ``stream.rules.notices``
structs, with display text in English and Spanish (``notice.text.es``). An
``Alert`` among them (``notice.code``: docs/log-format.md, "Alerts") is meant for
the officials: the rules took a fact they did not expect; a public display may
skip it.

Usage::

    import asyncio
    from arena_client import Watch

    async def main() -> None:
        async with Watch("ws://127.0.0.1:8080/ws/watch", game="final") as watch:
            async for update in watch:
                score = update.view.score
                print(update.kind, update.seq, f"{score.home}-{score.away}")
                for notice in update.notices:
                    print("  ", notice.text.en if notice.text else notice)

    asyncio.run(main())

``Watch(url, game=..., since=N, epoch=E)`` starts from a position you kept;
``watch.seq`` / ``watch.epoch`` are the position to keep. ``token=`` sends an
``auth`` frame first (for a service run without public viewing). Leaving the
``async with`` (or ``await watch.close()``) ends the iteration.

Installing: the module is one file, ``clients/python/arena_client.py``; it needs
``websockets``, ``msgspec`` and the ``stream`` package (``pip install -e .`` at the
repository root) for the schemas. Put ``clients/python`` on ``PYTHONPATH`` (or
copy the file next to your code) and ``import arena_client``. The tests load it
by its path (``tests/test_sdk.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlencode

import msgspec
import websockets

from stream.live import protocol as pr
from stream.rules.notices import Notice
from stream.rules.view import GameView

__all__ = ["Update", "Watch", "WatchError", "apply_patch"]

_decode = msgspec.json.Decoder(pr.WatchOut).decode
_encode = msgspec.json.Encoder().encode


class WatchError(Exception):
    """The server refused what we asked (e.g. ``unknown_game``): retrying won't help."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Update:
    """One change of the game: its first snapshot, a reset, or a delta."""

    kind: Literal["snapshot", "delta"]
    game: str
    seq: int
    epoch: str
    view: GameView                    # the whole view after this update
    notices: list[Notice] = field(default_factory=list)   # a delta's notices
    patch: list[pr.Patch] = field(default_factory=list)   # a delta's patch (already applied to ``view``)
    reset: bool = False               # a snapshot that replaces what you had (see ``reason``)
    reason: str | None = None         # "resume_unavailable", "slow"
    resumed: bool = False             # the first update after a reconnect
    recent: list[Notice] = field(default_factory=list)    # a snapshot's latest notices


def apply_patch(view: Any, patch: list[pr.Patch]) -> Any:
    """Apply a delta's patch to a view held as builtins (dicts and lists); returns the view.
    ``players.<id>`` addresses the player with that id; other lists are replaced whole."""
    for p in patch:
        if p.path == "":
            view = p.value
            continue
        *keys, last = p.path.split(".")
        node = view
        for k in keys:
            node = _child(node, k)
        if isinstance(node, list):
            i = next((n for n, x in enumerate(node) if isinstance(x, dict) and x.get("id") == last), -1)
            if p.value is None:
                if i >= 0:
                    del node[i]
            elif i < 0:
                node.append(p.value)
            else:
                node[i] = p.value
        elif isinstance(node, dict):
            node[last] = p.value
        else:
            raise KeyError(p.path)
    return view


def _child(node: Any, key: str) -> Any:
    if isinstance(node, list):
        for x in node:
            if isinstance(x, dict) and x.get("id") == key:
                return x
        raise KeyError(key)
    if isinstance(node, dict) and isinstance(node.get(key), dict | list):
        return node[key]
    raise KeyError(key)


class _Reconnect(Exception):
    """Drop this connection and resume."""


class Watch:
    """Follow one game: ``async for update in Watch(url, game=...)``."""

    def __init__(self, url: str, *, game: str, since: int | None = None, epoch: str | None = None,
                 token: str | None = None, backoff: tuple[float, float] = (0.1, 5.0),
                 open_timeout: float = 10.0) -> None:
        self.url = url
        self.game = game
        self.seq = since or 0
        self.epoch = epoch
        self.token = token
        self.backoff = backoff
        self.open_timeout = open_timeout
        self.interval = 5.0              # the heartbeat interval, learnt from the server
        self.reconnects = 0              # connections after the first
        self.connected = False
        self.last_frame = 0.0            # time.monotonic() of the last frame
        self._raw: Any = None            # the view, as builtins
        self._view: GameView | None = None
        self._ws: Any = None
        self._closed = False

    @property
    def view(self) -> GameView | None:
        """The latest view (``None`` before the first snapshot)."""
        return self._view

    @property
    def stale(self) -> bool:
        """Not connected, or no frame for two heartbeat intervals."""
        return not self.connected or time.monotonic() - self.last_frame > 2 * self.interval

    async def __aenter__(self) -> Watch:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        self._closed = True
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()

    def __aiter__(self) -> AsyncIterator[Update]:
        return self._updates()

    # ---------------------------------------------------------------- internals

    def _address(self) -> str:
        query: dict[str, str | int] = {"game": self.game}
        if self.epoch is not None:
            query.update(since=self.seq, epoch=self.epoch)
        return f"{self.url}?{urlencode(query)}"

    async def _updates(self) -> AsyncIterator[Update]:
        attempt = 0
        first = True
        while not self._closed:
            try:
                async with websockets.connect(self._address(), open_timeout=self.open_timeout,
                                              max_size=2**22, compression=None) as ws:
                    self._ws = ws
                    self.connected = True
                    self.last_frame = time.monotonic()
                    if not first:
                        self.reconnects += 1
                    resumed = not first
                    first = False
                    if self.token is not None:
                        await ws.send(_encode(pr.Auth(token=self.token)).decode())
                    # Answered after any catch-up deltas: the pong means "you are level".
                    await ws.send(_encode(pr.Ping(device_time=int(time.time() * 1000))).decode())
                    level = False
                    while True:
                        try:
                            async with asyncio.timeout(2 * self.interval):
                                raw = await ws.recv()
                        except TimeoutError:
                            raise _Reconnect from None  # two heartbeats missed: stale, resume
                        self.last_frame = time.monotonic()
                        update, level = self._frame(_decode(raw), level, resumed)
                        if update is not None:
                            attempt = 0
                            resumed = False
                            yield update
            except (_Reconnect, OSError, TimeoutError, websockets.WebSocketException):
                pass
            finally:
                self.connected = False
                self._ws = None
            if self._closed:
                return
            lo, hi = self.backoff
            delay = min(hi, lo * 2 ** attempt)
            attempt += 1
            await asyncio.sleep(delay / 2 + random.random() * delay / 2)

    def _frame(self, msg: Any, level: bool, resumed: bool) -> tuple[Update | None, bool]:
        if isinstance(msg, pr.Snapshot) and msg.game == self.game:
            self._raw = msgspec.to_builtins(msg.view)
            self._view = msg.view
            self.seq, self.epoch = msg.seq, msg.epoch
            return Update("snapshot", msg.game, msg.seq, msg.epoch, msg.view, reset=msg.reset,
                          reason=msg.reason, resumed=resumed, recent=list(msg.recent)), True
        if isinstance(msg, pr.Delta) and msg.game == self.game:
            if self._raw is None or msg.seq <= self.seq:
                return None, level          # already have it
            if msg.seq != self.seq + 1:
                raise _Reconnect            # a gap: resume from what we hold
            try:
                self._raw = apply_patch(self._raw, msg.patch)
                view = msgspec.convert(self._raw, GameView)
            except (KeyError, msgspec.ValidationError):
                self.epoch = None           # our copy can't be trusted: ask for a fresh snapshot
                raise _Reconnect from None
            self._view = view
            self.seq = msg.seq
            return Update("delta", msg.game, msg.seq, self.epoch or "", view, notices=list(msg.notices),
                          patch=list(msg.patch), resumed=resumed), level
        if isinstance(msg, pr.Heartbeat):
            self.interval = max(0.05, msg.interval_ms / 1000)
            if level and msg.seqs.get(self.game, 0) > self.seq:
                raise _Reconnect            # something was lost on the way: resume
            return None, level
        if isinstance(msg, pr.ServerPong):
            return None, True
        if isinstance(msg, pr.Error):
            raise WatchError(msg.code, msg.detail)
        return None, level
