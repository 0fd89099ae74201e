"""Redis as it runs for high availability: a primary, one replica (or two) and three
Sentinels on loopback (``SentinelGroup``), each a real process of its own, durable as the
service requires (AOF, ``appendfsync always`` on every server).

The Sentinels agree on a failure with a quorum of two, after ``down_after_ms`` without
an answer (short here: the tests and the proofs fail the primary over in about two
seconds), then promote a replica (and make the other one, if any, its replica).
``kill_primary`` is the crash; ``wait_promoted``
waits for the Sentinels to name the new primary; ``rejoin`` (``arejoin`` from a coroutine)
starts the old one again as a replica of it (as an operator's restart of that server, with its configuration
rewritten for the new primary, does) and waits until it is in sync.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path
from typing import Any

import redis

from .processes import HOST, Process, Processes, RedisProcess, free_port, redis_answers

__all__ = ["SentinelGroup", "SentinelProcess"]

#: A replica's full sync starts at once (Redis waits 5 s by default, for more replicas to share it).
SYNC_AT_ONCE = ["--repl-diskless-sync-delay", "0"]


class SentinelProcess(Process):
    """A ``redis-sentinel`` on loopback watching ``service`` (the primary at ``primary``),
    its configuration file in ``workdir`` (Sentinel rewrites it as it learns). Ready when
    it answers PING."""

    def __init__(self, workdir: Path, service: str, primary: tuple[str, int], *, name: str,
                 down_after_ms: int, failover_timeout_ms: int, port: int | None = None,
                 log: Path | None = None) -> None:
        program = shutil.which("redis-sentinel")
        if program is None:
            raise FileNotFoundError("redis-sentinel is not installed (tests/run.sh installs it)")
        super().__init__(name, [program], log=log, ready_timeout=30.0)
        self.workdir, self.port = workdir, port or free_port()
        self.service, self.primary = service, primary
        self.down_after_ms, self.failover_timeout_ms = down_after_ms, failover_timeout_ms

    def command(self) -> list[str]:
        return [*self.argv, str(self.workdir / "sentinel.conf")]

    def spawn(self) -> None:
        conf = self.workdir / "sentinel.conf"
        if not conf.exists():
            self.workdir.mkdir(parents=True, exist_ok=True)
            s, (host, port) = self.service, self.primary
            conf.write_text("\n".join([
                f"port {self.port}", f"bind {HOST}", f"dir {self.workdir}",
                f"sentinel monitor {s} {host} {port} 2",
                f"sentinel down-after-milliseconds {s} {self.down_after_ms}",
                f"sentinel failover-timeout {s} {self.failover_timeout_ms}",
                f"sentinel parallel-syncs {s} 1", ""]))
        super().spawn()

    def ready(self) -> bool:
        return redis_answers(self.port)

    def client(self) -> Any:
        return redis.Redis(host=HOST, port=self.port, socket_timeout=1, socket_connect_timeout=1)


class SentinelGroup:
    """A primary (``redis-1``), its ``replicas`` (``redis-2``, ``redis-3``) and three
    Sentinels, in ``workdir``; in ``group`` if given (which then ends them)."""

    def __init__(self, workdir: Path, *, service: str = "arena", down_after_ms: int = 500,
                 failover_timeout_ms: int = 2000, group: Processes | None = None,
                 replicas: int = 1) -> None:
        self.service = service
        first = RedisProcess(workdir / "redis-1", name="redis-1", extra=SYNC_AT_ONCE)
        self.servers = [first, *(RedisProcess(workdir / f"redis-{i}", name=f"redis-{i}", extra=SYNC_AT_ONCE,
                                              replicaof=(HOST, first.port)) for i in range(2, replicas + 2))]
        self.sentinels = [SentinelProcess(workdir / f"sentinel-{i}", service, (HOST, first.port),
                                          name=f"sentinel-{i}", down_after_ms=down_after_ms,
                                          failover_timeout_ms=failover_timeout_ms) for i in (1, 2, 3)]
        if group is not None:
            for p in (*self.servers, *self.sentinels):
                group.add(p)

    @property
    def url(self) -> str:
        """The store's URL: every Sentinel, and the service's name."""
        hosts = ",".join(f"{HOST}:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{hosts}/{self.service}"

    # ------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 30.0) -> None:
        """The servers, the replicas in sync, then the Sentinels, until each of them knows the
        replicas and the two other Sentinels (else a failover could not be agreed)."""
        for server in self.servers:
            server.start()
        self.wait_synced(timeout, replicas=len(self.servers) - 1)
        for sentinel in self.sentinels:
            sentinel.start()
        self._until(lambda: all(self._knows_all(s) for s in self.sentinels), timeout,
                    "the Sentinels did not find each other and the replica")

    async def astart(self) -> None:
        await asyncio.to_thread(self.start)

    def stop(self) -> None:
        for p in (*self.sentinels, *self.servers):
            p.stop()

    async def astop(self) -> None:
        await asyncio.to_thread(self.stop)

    # ------------------------------------------------------------ roles

    def primary_address(self) -> tuple[str, int]:
        """Where the Sentinels say the primary is (the first that answers)."""
        for s in self.sentinels:
            try:
                host, port = s.client().sentinel_get_master_addr_by_name(self.service)
                return (host.decode() if isinstance(host, bytes) else str(host)), int(port)
            except (redis.RedisError, OSError, TypeError):
                continue
        raise RuntimeError("no Sentinel answered")

    @property
    def primary(self) -> RedisProcess:
        port = self.primary_address()[1]
        return next(s for s in self.servers if s.port == port)

    @property
    def replica(self) -> RedisProcess:
        """A replica (the first, with two)."""
        port = self.primary_address()[1]
        return next(s for s in self.servers if s.port != port)

    def kill_primary(self) -> RedisProcess:
        """SIGKILL the primary; returns it."""
        old = self.primary
        old.kill9()
        return old

    def wait_promoted(self, old: RedisProcess, timeout: float = 30.0) -> RedisProcess:
        """Until every Sentinel names another primary than ``old``; returns it."""
        def promoted() -> bool:
            return all(self._primary_of(s) not in (None, old.port) for s in self.sentinels)
        self._until(promoted, timeout, f"no replica was promoted in place of {old.name}")
        return self.primary

    def rejoin(self, old: RedisProcess, timeout: float = 30.0) -> None:
        """Start ``old`` again, as a replica of the primary now, and wait until every replica
        is in sync."""
        old.replicaof = self.primary_address()
        old.start()
        self.wait_synced(timeout, replicas=len(self.servers) - 1)

    async def arejoin(self, old: RedisProcess) -> None:
        """``rejoin`` for a coroutine: ``old`` spawned from the event loop's thread (a process
        dies with the thread that started it), the waits off it."""
        old.replicaof = await asyncio.to_thread(self.primary_address)
        await old.astart()
        await asyncio.to_thread(self.wait_synced, 30.0, len(self.servers) - 1)

    def wait_synced(self, timeout: float = 30.0, replicas: int = 1) -> None:
        """Until the primary has ``replicas`` online (in sync, taking the stream)."""
        def synced() -> bool:
            return any(s.alive and _online_replicas(s) >= replicas for s in self.servers)
        self._until(synced, timeout, "the replica did not come in sync")

    # ------------------------------------------------------------ helpers

    def _primary_of(self, s: SentinelProcess) -> int | None:
        try:
            return int(s.client().sentinel_get_master_addr_by_name(self.service)[1])
        except (redis.RedisError, OSError, TypeError):
            return None

    def _knows_all(self, s: SentinelProcess) -> bool:
        try:
            state = s.client().sentinel_master(self.service)
        except (redis.RedisError, OSError):
            return False
        return (int(state.get("num-slaves", 0)) >= len(self.servers) - 1
                and int(state.get("num-other-sentinels", 0)) >= 2)

    @staticmethod
    def _until(check: Any, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} within {timeout:g} s")
            time.sleep(0.05)


def _online_replicas(server: RedisProcess) -> int:
    try:
        info = redis.Redis(host=HOST, port=server.port, socket_timeout=1).info("replication")
    except (redis.RedisError, OSError):
        return 0
    if info.get("role") != "master":
        return 0
    return sum(1 for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)
               and v.get("state") == "online")

