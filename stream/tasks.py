"""The service's own background tasks: how they stop, and how they call a library that
may lose a cancellation.

House rules:

- Every task the service starts is held, and cancelled and awaited when its owner stops:
  nothing is fire-and-forget.
- Stopping waits a bounded time (``stop``). A task still running then has had its
  cancellation swallowed by a library under it (a client library can lose one that lands
  as a reply arrives): it is logged with its stack, and the stop goes on without it, so a
  node always stops.
- A long-lived task's call into such a library goes through ``detached``: the call runs in
  a task of its own, so cancelling the caller takes effect at once, whatever the library
  does with it; the call ends by itself and its outcome is retrieved.
- A cancellation of the stopping task itself is never swallowed.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Coroutine, Iterable
from typing import Any, TypeVar

T = TypeVar("T")

log = logging.getLogger("arena_stream.tasks")

#: How long ``stop`` waits for cancelled tasks to end.
STOP_WITHIN_S = 5.0

_calls: set[asyncio.Task[Any]] = set()   # detached calls whose caller has gone


async def stop(tasks: Iterable[asyncio.Task[Any] | None], *, within: float = STOP_WITHIN_S) -> None:
    """Cancel ``tasks`` and wait up to ``within`` seconds for them to end. A task that
    failed is logged with its error; one that is still running, with its stack."""
    held = [t for t in tasks if t is not None]
    for t in held:
        t.cancel()
    if not held:
        return
    done, pending = await asyncio.wait(held, timeout=within)
    for t in done:
        if not t.cancelled() and (err := t.exception()) is not None:
            log.error("background task failed", exc_info=err, extra={"task": t.get_name()})
    for t in pending:
        stack = io.StringIO()
        t.print_stack(file=stack)
        log.error("background task did not stop when cancelled; going on without it",
                  extra={"task": t.get_name(), "within_s": within, "stack": stack.getvalue()})


async def detached(call: Coroutine[Any, Any, T]) -> T:
    """Await ``call`` in a task of its own: cancelling the caller raises ``CancelledError``
    in the caller at once, even if the library under ``call`` would swallow it. The call is
    left to end by itself (its own timeouts bound it); its result or error is retrieved."""
    task = asyncio.ensure_future(call)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if not task.done():
            _calls.add(task)
            task.add_done_callback(_retrieved)
        raise


def _retrieved(task: asyncio.Task[Any]) -> None:
    _calls.discard(task)
    if not task.cancelled():
        task.exception()  # a call that failed after its caller was cancelled: nobody to tell
