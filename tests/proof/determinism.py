"""Determinism after a fault: the live state's hash (``GET /api/state``) equals
the hash of a fresh replay of the log the service exports (``GET /api/log``)."""

from __future__ import annotations

import io
import json
import urllib.request

from stream.cli import replay


def _get(url: str, token: str) -> bytes:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        body: bytes = r.read()
        return body


def replay_hash(log: bytes) -> str:
    out = io.BytesIO()
    assert replay(io.BytesIO(log), out, state=False, digest=True) == 0
    return out.getvalue().decode().strip()


def live_equals_replay(*http_bases: str, token: str) -> str:
    """Check every node: its live hash equals a fresh replay of its exported log,
    and all nodes agree. Returns the hash."""
    hashes: set[str] = set()
    for base in http_bases:
        live = str(json.loads(_get(f"{base}/api/state", token))["sha256"])
        replayed = replay_hash(_get(f"{base}/api/log", token))
        assert live == replayed, f"{base}: live state {live} != replay of its log {replayed}"
        hashes.add(live)
    assert len(hashes) == 1, f"the nodes disagree: {hashes}"
    return hashes.pop()
