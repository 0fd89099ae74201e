"""A Python client for Arena Stream's viewer socket (``/ws/watch``, docs/protocol-viewer.md).

Follow one game: a snapshot, then one delta per logged event, each with the
game's view already patched. The client keeps its own copy of the view, checks
that ``seq`` grows by exactly one, and when the connection drops (the server
restarts, the network blinks, two heartbeats go missing, a gap in ``seq``) it
reconnects with exponential backoff and resumes with ``since``/``epoch``: you get
exactly the deltas you missed, never one twice; or, if the server can't serve
them, a snapshot with ``reset=True``. A delta whose patch can't be applied to
the copy (a path that isn't in it) is never patched around and never raised to
you: the client drops its copy and its position and subscribes again without
``since``, and the next update is a fresh snapshot (``watch.resyncs`` counts
these; ``apply_patch`` raises ``PatchError`` if you call it yourself). Frames
are decoded with the service's own msgspec schemas
(``stream.live.wire.protocol.WatchOut``), so updates are typed: ``view``
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
import logging
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn
from urllib.parse import urlencode

import msgspec
import websockets

from stream.live.wire import protocol as pr
from stream.rules.notices import Notice
from stream.rules.view import GameView

__all__ = ["PatchError", "Update", "Watch", "WatchError", "apply_patch"]

_log = logging.getLogger("arena_client")
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
    """One change of the game: its first snapshot, a reset, a delta, or notices about it
    that another game's event raised (``notices``: the view and ``seq`` are unchanged)."""

    kind: Literal["snapshot", "delta", "notices"]
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


class PatchError(Exception):
    """A patch that can't be applied to the view held (docs/protocol-viewer.md, "Applying a patch"):
    ``path`` is not in it. The view is not the server's any more: drop it and take a fresh
    snapshot (``Watch`` does, by itself)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path or '(the whole view)'}: {reason}")
        self.path = path
        self.reason = reason


def apply_patch(view: Any, patch: list[pr.Patch]) -> Any:
    """Apply a delta's patch to a view held as builtins (dicts and lists), in place; returns
    the view (a new one for the path ``""``). ``players.<id>`` addresses the player with that
    id; other lists are replaced whole. A path that is not in the view raises ``PatchError``,
    possibly after earlier entries were applied: the view is then to be dropped, not used.
    The same rule as the browsers' ``clients/web/shared/patch.js``."""
    for p in patch:
        view = _set(view, p.path, p.value)
    if not isinstance(view, dict):
        raise PatchError("", "there is no view to patch")
    return view


def _set(root: Any, path: str, value: Any) -> Any:
    if path == "":
        if not isinstance(value, dict):
            raise PatchError(path, "the whole view must be an object")
        return value
    *keys, last = path.split(".")
    node = root
    for key in keys:
        node = _child(node, key)
        if node is None:
            raise PatchError(path, f"no {key!r} to go into")
    if isinstance(node, list):
        if not _keyed(node):
            raise PatchError(path, "a list without ids is replaced whole, not addressed by item")
        i = next((n for n, x in enumerate(node) if _same_id(x, last)), -1)
        if value is None:
            if i < 0:
                raise PatchError(path, f"no item {last!r} to remove")
            del node[i]
        elif not _same_id(value, last):
            raise PatchError(path, f"an item of the list must be an object with the id {last!r}")
        elif i < 0:
            node.append(value)
        else:
            node[i] = value
        return root
    if not isinstance(node, dict):
        raise PatchError(path, "nothing to set a field on")
    if last not in node:
        raise PatchError(path, f"no field {last!r}")
    node[last] = value
    return root


def _keyed(items: list[Any]) -> bool:
    """A list whose items are addressed by id: every item an object with an ``id``."""
    return all(isinstance(x, dict) and "id" in x for x in items)


def _same_id(item: Any, key: str) -> bool:
    return isinstance(item, dict) and "id" in item and str(item["id"]) == key


def _child(node: Any, key: str) -> Any:
    """The object or list ``key`` selects under ``node``, or ``None`` if there is none."""
    if isinstance(node, list):
        return next((x for x in node if _same_id(x, key)), None) if _keyed(node) else None
    if isinstance(node, dict) and isinstance(node.get(key), dict | list):
        return node[key]
    return None


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
        self.resyncs = 0                 # fresh snapshots taken for a patch that couldn't be applied
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

    def _resync(self, why: Exception) -> NoReturn:
        """Our copy is not the server's view (a patch that can't be applied:
        docs/protocol-viewer.md, "Applying a patch"): drop it and its position, and subscribe
        again without ``since`` for a fresh snapshot. ``view`` keeps the last good view until
        that snapshot comes."""
        _log.warning("game %s: %s; resyncing from a fresh snapshot", self.game, why)
        self._raw = None
        self.seq, self.epoch = 0, None
        self.resyncs += 1
        raise _Reconnect from why

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
            except (PatchError, msgspec.ValidationError) as err:
                self._resync(err)
            self._view = view
            self.seq = msg.seq
            return Update("delta", msg.game, msg.seq, self.epoch or "", view, notices=list(msg.notices),
                          patch=list(msg.patch), resumed=resumed), level
        if isinstance(msg, pr.Notices) and msg.game == self.game and self._view is not None:
            return Update("notices", msg.game, self.seq, self.epoch or "", self._view,
                          notices=list(msg.notices), resumed=resumed), level
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
