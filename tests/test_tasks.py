"""``stream/tasks.py``: stopping the service's background tasks is bounded, and a call
that would swallow its caller's cancellation can't keep the caller running."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from stream import tasks


async def _swallows_cancel(ended: asyncio.Event, *, for_s: float = 3600.0) -> str:
    """Like a library call that loses a cancellation landing as its reply arrives: it
    catches the ``CancelledError`` and carries on."""
    try:
        await asyncio.sleep(for_s)
    except asyncio.CancelledError:
        await asyncio.sleep(0.3)
    ended.set()
    return "answered"


async def test_stop_goes_on_without_a_task_that_swallows_its_cancellation(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, "arena_stream.tasks")

    let_go = asyncio.Event()

    async def stubborn() -> None:
        while True:  # every cancellation swallowed until the test lets it go
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                if let_go.is_set():
                    raise

    task = asyncio.create_task(stubborn(), name="stubborn")
    quiet = asyncio.create_task(asyncio.sleep(3600), name="quiet")
    try:
        await asyncio.sleep(0)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await tasks.stop([task, None, quiet], within=0.2)
        waited = loop.time() - t0
        assert 0.2 <= waited < 10.0, waited  # bounded: the stubborn task sleeps for an hour
        assert quiet.cancelled()
        assert not task.done()
        # (Only the stopper's own records: a collection here may log another test's leftovers.)
        mine = [r for r in caplog.records if r.name == "arena_stream.tasks"]
        said = [(r.getMessage(), getattr(r, "task", None)) for r in mine]
        assert said == [("background task did not stop when cancelled; going on without it", "stubborn")]
        assert "stubborn" in mine[0].stack  # type: ignore[attr-defined]
    finally:
        let_go.set()    # the test's own clean-up, pass or fail: the loop could not close otherwise
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_stop_logs_a_task_that_failed_and_does_not_raise_it(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, "arena_stream.tasks")

    async def fails() -> None:
        raise ValueError("broken")

    task = asyncio.create_task(fails(), name="fails")
    await asyncio.sleep(0)
    await tasks.stop([task])
    [record] = [r for r in caplog.records if r.name == "arena_stream.tasks"]
    assert (record.getMessage(), record.task) == ("background task failed", "fails")  # type: ignore[attr-defined]
    assert record.exc_info is not None and isinstance(record.exc_info[1], ValueError)


async def test_stop_keeps_the_cancellation_of_the_task_that_stops() -> None:
    """The task doing the stopping, cancelled while it waits, is cancelled: ``stop``
    never swallows a cancellation meant for its caller."""
    ended = asyncio.Event()
    slow = asyncio.create_task(_swallows_cancel(ended))
    await asyncio.sleep(0)
    stopper = asyncio.create_task(tasks.stop([slow], within=10))
    await asyncio.sleep(0.05)
    stopper.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopper
    assert stopper.cancelled()
    await ended.wait()
    assert await slow == "answered"


async def test_a_detached_call_lets_its_caller_be_cancelled_at_once() -> None:
    ended = asyncio.Event()

    async def caller() -> str:
        return await tasks.detached(_swallows_cancel(ended, for_s=0.3))

    task = asyncio.create_task(caller())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(task), 0.2)
    assert task.cancelled() and not ended.is_set(), "the caller ended before the call did"
    await asyncio.wait_for(ended.wait(), 2)   # the call itself ran on to its end


async def test_without_detached_the_same_call_keeps_its_caller_running() -> None:
    """What ``detached`` is for: awaited directly, the call swallows the caller's
    cancellation, and the caller goes on as if never cancelled."""
    ended = asyncio.Event()

    async def caller() -> str:
        return await _swallows_cancel(ended)

    task = asyncio.create_task(caller())
    await asyncio.sleep(0.05)
    task.cancel()
    assert await task == "answered"
    assert not task.cancelled()


async def test_a_detached_call_that_fails_after_its_caller_left_is_retrieved(
        caplog: pytest.LogCaptureFixture) -> None:
    """Nobody awaits it any more: its error is retrieved, so asyncio reports no
    'exception was never retrieved', and the call is held until it ends."""
    caplog.set_level(logging.ERROR, "asyncio")
    gone = asyncio.Event()

    async def fails_later() -> None:
        await gone.wait()
        raise ConnectionError("lost")

    task = asyncio.create_task(tasks.detached(fails_later()))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(tasks._calls) == 1
    gone.set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert tasks._calls == set()
    gc.collect()
    assert [r for r in caplog.records if "never retrieved" in r.getMessage()] == []
