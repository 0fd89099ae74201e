"""One real redis-server per test module of the store's tests (durable settings: AOF,
appendfsync always), stopped when the module is done; and, for the modules that ask,
a Sentinel set (``sentinel_group``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stream.tools.harness import Processes, SentinelGroup

from ..redis_server import RedisServer


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    srv = RedisServer(tmp_path_factory.mktemp("redis"))
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def sentinel_group(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SentinelGroup]:
    """A primary, its replica and three Sentinels (real processes, durable settings) for the
    module, ended when it is done."""
    work = tmp_path_factory.mktemp("sentinel")
    with Processes(work) as processes:
        group = SentinelGroup(work, group=processes)
        group.start()
        yield group
