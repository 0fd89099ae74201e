"""The harness: service and ``etcd`` processes on loopback, and the clients the tests and
the benchmarks drive them with.

Processes (``processes``, ``etcd``, ``cluster``): ``ServiceProcess`` (``arena-stream
serve`` with a port, a data directory, its admin token, extra flags and environment;
``start``, ``kill9``, ``stop``, ``restart``), ``EtcdCluster`` (``etcd``: three etcd
members, over TLS with ``tls``'s certificates if asked, and the faults and the
operator's steps on them: kill, restart, pause, replace), ``start_service``,
``Cluster`` (nodes on an ``EtcdCluster``), a plain ``Process`` and a ``Processes`` group
that ends every member. Each is bounded: a deadline
on every wait, and it dies with the thread that started it.

Clients (``clients``, ``viewers``, ``workers``): ``Viewer`` (one watch socket that
keeps its frames), ``TimedViewer`` (a Sans-I/O viewer stamping frames as they
arrive) and ``ViewerWorkers`` (processes full of them), ``DevicePool`` and
``EventStream`` (the officials' events on schedule), ``setup_game``; the handheld
``Device`` itself. Faults across nodes (``failover``): ``Officials`` (devices that
move to another node and resend), ``ResumingViewer`` (a scoreboard that resumes on
whichever node is up), ``game_log``, ``tally`` (the log against what was acked),
``node_hashes`` and ``replay_hash`` (live state against a replay). Measures
(``measure``): CPU, memory, descriptors, the metrics page, percentiles; ``analyse``
for what viewers got.
"""

from ..device_client import Device, DeviceError
from .clients import GAME, Burst, DevicePool, EventStream, Viewer, setup_game, wait_for_game
from .cluster import Cluster
from .etcd import EtcdCluster, EtcdError, EtcdMember
from .failover import LogTally, Officials, ResumingViewer, game_log, node_hashes, replay_hash, tally
from .measure import (
    ack_buckets,
    ack_histogram,
    cpu_seconds,
    histogram_p99_bound,
    lag_of,
    loop_lag,
    metric,
    open_files,
    percentile,
    raise_nofile,
    scrape,
    summed,
    vm_rss_kib,
)
from .processes import (
    HOST,
    Process,
    Processes,
    ServiceProcess,
    free_port,
    start_service,
)
from .tail import Sampler, SlowSecond, round_stall, slow_seconds
from .viewers import CaughtUp, TimedViewer, open_viewers, stdin_lines
from .workers import LineWorkers, LoadResult, ViewerWorkers, analyse, workers_for

__all__ = [
    "GAME", "HOST", "Burst", "CaughtUp", "Cluster", "Device", "DeviceError", "DevicePool", "EtcdCluster",
    "EtcdError", "EtcdMember", "EventStream",
    "LineWorkers", "LoadResult", "LogTally", "Officials", "Process", "Processes",
    "ResumingViewer", "Sampler", "ServiceProcess", "SlowSecond",
    "TimedViewer", "Viewer",
    "ViewerWorkers", "ack_buckets", "ack_histogram",
    "analyse", "cpu_seconds", "free_port", "game_log", "histogram_p99_bound", "lag_of", "loop_lag",
    "metric", "node_hashes",
    "open_files", "open_viewers", "percentile", "raise_nofile", "replay_hash",
    "round_stall", "scrape",
    "setup_game", "slow_seconds",
    "start_service", "stdin_lines", "summed", "tally", "vm_rss_kib", "wait_for_game",
    "workers_for",
]
