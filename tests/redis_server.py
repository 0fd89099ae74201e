"""A real redis-server for tests: ``stream.tools.harness.RedisProcess`` (a free
loopback port, its own directory, AOF with ``appendfsync always`` unless
``fsync=`` says otherwise, dies with the test run)."""

from __future__ import annotations

from stream.tools.harness import RedisProcess as RedisServer

__all__ = ["RedisServer"]
