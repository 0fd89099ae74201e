"""Every async test runs on the event loop ``arena-stream serve`` runs on: uvloop where it
is installed, unless ``ARENA_STREAM_LOOP=asyncio`` (``tests/run.sh`` runs the proof suites
again that way, so that they pass on both loops). Services the tests start as processes
(``ServiceProcess``) take the same default.

A test still running after ``ARENA_TEST_LIMIT_S`` seconds (300; none under ``proof --full``)
is hung: the stack of every task on its loop is printed and the tasks are cancelled, so the
test fails and the run goes on; if it is still running ``ARENA_TEST_LAST_RESORT_S`` (60) s
later (its loop blocked, or the cancellation swallowed), every thread's stack is printed and
the run ends there, rather than use up CI's time."""

from __future__ import annotations

import asyncio
import faulthandler
import gc
import inspect
import os
import secrets
import sys
import threading
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import TextIO

import pytest

from stream.live.ops.loops import default_loop
from stream.tools.harness import EtcdCluster, Processes, Viewer


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item
                                  ) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    if default_loop() != "uvloop":
        return {"asyncio": asyncio.new_event_loop}
    import uvloop

    return {"uvloop": uvloop.new_event_loop}



LIMIT_S = float(os.environ.get("ARENA_TEST_LIMIT_S",
                               "0" if os.environ.get("ARENA_PROOF_FULL") == "1" else "300"))
LAST_RESORT_S = float(os.environ.get("ARENA_TEST_LAST_RESORT_S", "60"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _watched(item, "running"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item,
                            nextitem: pytest.Item | None) -> Generator[None, object, object]:
    """The teardown too: a task left behind that swallows its cancellation would hold the
    loop's close, and the run, for ever."""
    return (yield from _watched(item, "tearing down"))


def _watched(item: pytest.Item, doing: str) -> Generator[None, object, object]:
    if LIMIT_S <= 0:
        return (yield)
    ended = threading.Event()
    threading.Thread(target=_watch, args=(item, ended, doing), daemon=True,
                     name="hung-test-watchdog").start()
    try:
        return (yield)
    finally:
        ended.set()


def _watch(item: pytest.Item, ended: threading.Event, doing: str = "running") -> None:
    if ended.wait(LIMIT_S):
        return
    nodeid = item.nodeid
    out = sys.__stderr__
    assert out is not None
    print(f"\ntests/conftest.py: {nodeid} still {doing} after {LIMIT_S:g} s: hung. "
          "Its loop's tasks, then cancelled:", file=out, flush=True)
    for loop in [o for o in gc.get_objects()
                 if isinstance(o, asyncio.AbstractEventLoop) and o.is_running()]:
        loop.call_soon_threadsafe(_dump_and_cancel, out)
    if ended.wait(LAST_RESORT_S):
        return
    capture = item.config.pluginmanager.getplugin("capturemanager")
    if capture is not None:   # what follows must reach the terminal, not the test's capture
        capture.suspend_global_capture(in_=False)
    print(f"tests/conftest.py: {nodeid} still {doing} {LAST_RESORT_S:g} s after its tasks were "
          "cancelled; every thread's stack, then the run ends:", file=out, flush=True)
    faulthandler.dump_traceback(file=out, all_threads=True)
    os._exit(1)


def _dump_and_cancel(out: TextIO) -> None:
    for task in asyncio.all_tasks():
        print(f"task {task.get_name()}: {task.get_coro()!r}", file=out)
        task.print_stack(file=out)
        task.cancel()
    out.flush()


# ------------------------------------------------------------------ markers
# Each test is marked by where it is and what it starts (pyproject.toml lists the markers;
# `bash tests/run.sh --quick` runs the tests marked none of them). ``slow`` is set by the
# tests themselves, where they take more than a few seconds.

_ETCD_FIXTURES = {"etcd_cluster", "etcd_url", "etcd"}
_ETCD_STARTS = ("EtcdCluster(", "etcd_cluster", "etcd_url")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = item.path.parts
        fixtures = set(getattr(item, "fixturenames", ()))
        if "browser" in parts:
            item.add_marker(pytest.mark.browser)
        if "proof" in parts:
            item.add_marker(pytest.mark.proof)
        if _ETCD_FIXTURES & fixtures or _starts(item, _ETCD_STARTS):
            item.add_marker(pytest.mark.etcd)


def _starts(item: pytest.Item, needles: tuple[str, ...]) -> bool:
    """Whether the test's own source names one of ``needles`` (a server it starts itself)."""
    function = getattr(item, "function", None)
    if function is None:
        return False
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return False
    return any(s in source for s in needles)


@pytest.fixture(scope="module")
def etcd_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdCluster]:
    """Three etcd members (real processes, the production settings, fsync on) for the
    module, ended when it is done, the followers first."""
    work = tmp_path_factory.mktemp("etcd")
    with Processes(work) as processes:
        cluster = EtcdCluster(work, group=processes)
        cluster.start()
        yield cluster
        cluster.stop()


@pytest.fixture
def etcd_url(etcd_cluster: EtcdCluster) -> str:
    """The store's URL on the module's cluster, under a key prefix of this test's own
    (``etcd://127.0.0.1:P1,…/t-<hex>/``): tests sharing the cluster share no key."""
    return etcd_cluster.url(f"t-{secrets.token_hex(6)}/")


@pytest.fixture(autouse=True)
def _viewer_route() -> Iterator[None]:
    """``ARENA_VIEWER_AFTER_HTTP=1``: every harness viewer connects on a connection that served
    HTTP first, so that the same tests run against the aiohttp upgrade (tests/run.sh)."""
    if os.environ.get("ARENA_VIEWER_AFTER_HTTP") != "1":
        yield
        return
    Viewer.after_http = True
    try:
        yield
    finally:
        Viewer.after_http = False
