"""The service's life beside its handlers: the store its settings name, and the tasks that
run while it serves (the deadline timer, the heartbeat to viewers, the loop-stall probe,
the follower of other nodes' writes, revocations made on other nodes)."""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
from collections.abc import AsyncIterator

from aiohttp import web

from ..errors import NotStored, StartupRefused
from ..store import Followable, Store
from ..store.sqlite import SqliteStore
from ..tasks import detached, stop
from .hub import follower, timer
from .hub.feeds import Frames
from .ops import heap, stall
from .ops.config import Config
from .ops.wallclock import now_ms
from .service import Service
from .wire import protocol as pr

log = logging.getLogger("arena_stream.lifecycle")


def make_store(config: Config) -> Store:
    if config.store == "sqlite":
        if config.sqlite_synchronous != "FULL" and not config.unsafe_store:
            raise StartupRefused(f"sqlite_synchronous={config.sqlite_synchronous} can lose acknowledged "
                             "events at a power cut: it needs unsafe_store (--unsafe-store)")
        return SqliteStore(config.data_dir / "arena.sqlite", synchronous=config.sqlite_synchronous)
    if config.store.startswith(("etcd://", "etcds://")):
        from ..store.etcd import EtcdStore

        try:
            return EtcdStore(config.store, deadline=config.etcd_deadline_ms / 1000,
                             budget=config.etcd_budget_ms / 1000, ca=config.etcd_ca or None,
                             cert=config.etcd_cert or None, key=config.etcd_key or None)
        except ValueError as err:
            raise StartupRefused(f"the store's etcd URL: {err}") from None
    raise StartupRefused(f"unknown store {config.store!r}: use sqlite, or an etcd:// (etcds://) URL")


async def revocations(svc: Service, every: float = 2.0) -> None:
    """Pick up tokens revoked through another node, and close their sockets here."""
    while True:
        await asyncio.sleep(every)
        try:
            revoked = await detached(svc.hub.store.revoked())
        except NotStored:
            continue
        for jti in revoked - svc.revoked:
            await svc.revoke(jti)


async def heartbeat(svc: Service) -> None:
    interval = svc.config.heartbeat
    while True:
        await asyncio.sleep(interval)
        hb = pr.Heartbeat(server_time=now_ms(), interval_ms=int(interval * 1000),
                          seqs=svc.hub.feeds.shown())
        svc.fanout.everyone(Frames.of(hb))


async def run(app: web.Application) -> AsyncIterator[None]:
    svc = app[Service.KEY]
    await svc.hub.start()
    svc.revoked = await svc.hub.store.revoked()
    pauses = heap.PauseTimer(svc.metrics.gc_pauses)
    gc.callbacks.append(pauses)
    if svc.config.freeze_heap:
        heap.freeze_after_start()
    tasks = [asyncio.create_task(timer.run(svc.hub), name="deadline-timer"),
             asyncio.create_task(heartbeat(svc), name="heartbeat"),
             asyncio.create_task(svc.pings.run(), name="viewer-pings"),
             asyncio.create_task(stall.run(svc.metrics.loop_lag, svc.metrics.loop_lag_window),
                                 name="stall-probe")]
    if svc.config.freeze_heap:
        tasks.append(asyncio.create_task(heap.freeze_crowds(lambda: len(svc.fanout.watchers)),
                                         name="freeze-crowds"))
    if isinstance(svc.hub.store, Followable):
        tasks.append(asyncio.create_task(follower.run(svc.hub), name="log-follower"))
    tasks.append(asyncio.create_task(revocations(svc), name="revocations"))
    for t in tasks:
        t.add_done_callback(functools.partial(_ended, svc))
    try:
        yield
    finally:
        await stop(tasks)
        gc.callbacks.remove(pauses)
        await svc.hub.close()


def _ended(svc: Service, task: asyncio.Task[None]) -> None:
    """One of the node's tasks ended while it serves (each runs until cancelled at stop): a
    bug, or a library that failed it. Said at once, with the error, and the node is no longer
    ready: a node whose follower stopped would otherwise serve a log it no longer reads."""
    if task.cancelled():
        return
    err = task.exception()
    svc.stopped = task.get_name() + (f" stopped: {type(err).__name__}: {err}" if err else " ended")
    log.error("a task of the node stopped; the node is not ready", exc_info=err,
              extra={"task": task.get_name()})
