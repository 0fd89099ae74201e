"""Determinism after a fault: the live state's hash (``GET /api/state``) equals
the hash of a fresh replay of the log the service exports (``GET /api/log``)."""

from __future__ import annotations

from stream.tools.harness import node_hashes


def live_equals_replay(*http_bases: str, token: str) -> str:
    """Check every node: its live hash equals a fresh replay of its exported log,
    and all nodes agree. Returns the hash."""
    hashes: set[str] = set()
    for base, (live, replayed) in zip(http_bases, node_hashes(*http_bases, token=token), strict=True):
        assert live == replayed, f"{base}: live state {live} != replay of its log {replayed}"
        hashes.add(live)
    assert len(hashes) == 1, f"the nodes disagree: {hashes}"
    return hashes.pop()
