"""Two (or more) service nodes on one three-member etcd cluster, as the service runs on
several machines."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .etcd import EtcdCluster
from .processes import Processes, ServiceProcess

__all__ = ["Cluster"]


class Cluster:
    """Three etcd members in ``workdir/etcd`` (``etcd``, an ``EtcdCluster``) and ``nodes``
    service nodes on them (``node-a``, ``node-b`` …, each with ``args`` more ``serve``
    flags, its store URL naming every member), sharing one data directory,
    ``workdir/shared``: one ``secret.key``, so every node takes every token, and one admin
    token. In ``group``, if given; else in a group of its own, ended by ``stop``."""

    def __init__(self, workdir: Path, nodes: int = 2, *, args: Sequence[str] = (),
                 group: Processes | None = None) -> None:
        self._own = Processes(workdir) if group is None else None
        members = group if group is not None else self._own
        assert members is not None
        self.etcd = EtcdCluster(workdir / "etcd", group=members)
        self.data = workdir / "shared"
        self.store = self.etcd.url("arena")
        self.nodes = [ServiceProcess(self.data, store=self.store, args=args, name=f"node-{chr(97 + i)}")
                      for i in range(nodes)]
        for node in self.nodes:
            members.add(node)

    def start(self) -> None:
        """The etcd members, then the nodes one at a time: the first writes the secret and the
        admin token."""
        self.etcd.start()
        for node in self.nodes:
            node.start()

    async def astart(self) -> None:
        await self.etcd.astart()
        for node in self.nodes:
            await node.astart()

    def stop(self) -> None:
        """The nodes, then the etcd members (the followers first)."""
        for node in self.nodes:
            node.stop()
        self.etcd.stop()
        if self._own is not None:
            self._own.close()

    async def astop(self) -> None:
        for node in self.nodes:
            await node.astop()
        await self.etcd.astop()
        if self._own is not None:
            await self._own.aclose()
