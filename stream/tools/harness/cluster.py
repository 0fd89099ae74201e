"""Two (or more) service nodes on one ``redis-server``, as the service runs on Redis."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .processes import Processes, RedisProcess, ServiceProcess

__all__ = ["Cluster"]


class Cluster:
    """A durable ``redis-server`` in ``workdir/redis`` and ``nodes`` service nodes on it
    (``node-a``, ``node-b`` …, each with ``args`` more ``serve`` flags), sharing one data
    directory, ``workdir/shared``: one ``secret.key``, so every node takes every token,
    and one admin token. In ``group``, if given."""

    def __init__(self, workdir: Path, nodes: int = 2, *, args: Sequence[str] = (),
                 group: Processes | None = None) -> None:
        self.redis = RedisProcess(workdir / "redis")
        self.data = workdir / "shared"
        self.nodes = [ServiceProcess(self.data, store=self.redis.url, args=args, name=f"node-{chr(97 + i)}")
                      for i in range(nodes)]
        if group is not None:
            for process in (self.redis, *self.nodes):
                group.add(process)

    def start(self) -> None:
        """Redis, then the nodes one at a time: the first writes the secret and the admin token."""
        self.redis.start()
        for node in self.nodes:
            node.start()

    async def astart(self) -> None:
        await self.redis.astart()
        for node in self.nodes:
            await node.astart()

    def stop(self) -> None:
        """The nodes, then Redis."""
        for node in self.nodes:
            node.stop()
        self.redis.stop()

    async def astop(self) -> None:
        for node in self.nodes:
            await node.astop()
        await self.redis.astop()
