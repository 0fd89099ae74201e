"""One real redis-server per test module of the store's tests (durable settings: AOF,
appendfsync always), stopped when the module is done (a Sentinel set, ``sentinel_group``,
is ``tests/conftest.py``'s)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

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
def redis_url(redis_server: RedisServer) -> str:
    """Its URL (``backends.RedisBackend``'s, as the service's tests name theirs)."""
    return redis_server.url
