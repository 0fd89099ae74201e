"""Prometheus metrics, in a registry of the app's own (several apps can live in one process).

Beside the service's own: what holds an ack or a frame up from outside the loop, so a
slow second can be told apart: each store transaction alone (the disk's fsync) and each
append from its call to durable, garbage collections by generation (``heap.py``), the
loop's lateness (``stall.py``), the process's CPU (``process_*``, prometheus-client's),
and the machine's CPU time stolen by its host and spent waiting on disks."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import ClassVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from ...store import StoreStatus
from .heap import pause_histogram
from .stall import LagWindow, lag_histogram

_STORE_BUCKETS = (0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.connections = Gauge("arena_connections", "Open WebSocket connections", ["kind"], registry=r)
        self.events = Counter("arena_events_total", "Events from devices, by outcome", ["result"],
                              registry=r)
        self.ack_seconds = Histogram(
            "arena_ack_seconds", "From an event's arrival to its durable ack", registry=r,
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0))
        self.queue_drops = Counter("arena_queue_drops_total",
                                   "Viewers that fell behind and were sent a fresh snapshot", registry=r)
        self.viewer_drops = Counter("arena_viewer_disconnects_total",
                                    "Viewers closed because a frame could not be sent in time", registry=r)
        self.ping_timeouts = Counter("arena_viewer_ping_timeouts_total",
                                     "Viewers closed because they left a ping unanswered", registry=r)
        self.broadcasts = Counter("arena_broadcasts_total", "Updates published to viewers", registry=r)
        self.commits = Gauge("arena_store_commits", "Store transactions committed", registry=r)
        self.committed = Gauge("arena_store_records", "Records committed", registry=r)
        self.races = Gauge("arena_seq_races_lost", "Seq races lost to another node, by how they were "
                           "settled: caught_up (one game's tail) or reloaded (the whole log)",
                           ["outcome"], registry=r)
        self.failed_writes = Gauge("arena_failed_writes_settled", "Failed writes (not stored, or not "
                                   "known: the store down, a failover) settled with several nodes, by how: "
                                   "taken_back (each game's unconfirmed events) or reloaded (the whole "
                                   "log)", ["outcome"], registry=r)
        self.reloads = Gauge("arena_log_reloads", "Folds of the whole log since the start, for any "
                             "reason", registry=r)
        self.commit_seconds = Histogram(
            "arena_store_commit_seconds", "Each store transaction alone: SQLite's COMMIT (its fsync), or "
            "an etcd transaction's round trip (the members' fsyncs included)",
            registry=r, buckets=_STORE_BUCKETS)
        self.durable_seconds = Histogram(
            "arena_store_durable_seconds", "Each append, from its call to durable (its wait for the "
            "transaction included)", registry=r, buckets=_STORE_BUCKETS)
        ProcessCollector(registry=r)
        r.register(MachineCPU())
        # The loop-stall probe's (stream/live/ops/stall.py): started with the service's tasks.
        self.loop_lag = lag_histogram(r)
        self.loop_lag_window = LagWindow()
        r.register(self.loop_lag_window)
        self.gc_pauses = pause_histogram(r)


class StoreCluster(Collector):
    """The cluster a store is on, as the store last found it (``Store.status``): nothing on
    SQLite. ``arena_store_member_info{member, leader}`` is 1 (leader "" while there is none);
    ``arena_store_raft_term``, ``arena_store_members``."""

    def __init__(self, status: Callable[[], StoreStatus | None]) -> None:
        self.status = status

    def collect(self) -> Iterator[GaugeMetricFamily]:
        s = self.status()
        if s is None:
            return
        info = GaugeMetricFamily("arena_store_member_info", "The store's member this node talks to, and "
                                 "the leader it names", labels=["member", "leader"])
        info.add_metric([s.member, s.leader or ""], 1)
        yield info
        if s.raft_term is not None:
            yield GaugeMetricFamily("arena_store_raft_term", "The store cluster's Raft term, as its "
                                    "member names it (it grows at every election)", value=s.raft_term)
        if s.members is not None:
            yield GaugeMetricFamily("arena_store_members", "The store cluster's members", value=s.members)


class MachineCPU(Collector):
    """``arena_machine_cpu_seconds_total{mode}``: the whole machine's CPU time (every core)
    idle (``idle``), idle while waiting on a disk (``iowait``) and stolen by its host
    (``steal``: a shared virtual machine), from ``/proc/stat``; nothing where there is no
    such file."""

    MODES: ClassVar[dict[str, int]] = {"idle": 3, "iowait": 4, "steal": 7}  # fields after "cpu"

    def __init__(self, path: str = "/proc/stat") -> None:
        self.path = path
        self.hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def collect(self) -> Iterator[CounterMetricFamily]:
        try:
            with open(self.path) as f:
                fields = f.readline().split()[1:]
        except OSError:
            return
        family = CounterMetricFamily("arena_machine_cpu_seconds", "The machine's CPU time (all cores) "
                                     "idle, idle waiting on a disk, or stolen by its host", labels=["mode"])
        for mode, i in self.MODES.items():
            if i < len(fields):
                family.add_metric([mode], int(fields[i]) / self.hz)
        yield family
