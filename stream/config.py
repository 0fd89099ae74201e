"""Service settings, with the defaults ``arena-stream serve`` runs on."""

from __future__ import annotations

import os
import time
from pathlib import Path

import msgspec

from . import auth


class Config(msgspec.Struct, kw_only=True):
    data_dir: Path = Path("arena-data")
    host: str = "127.0.0.1"
    port: int = 8080
    store: str = "sqlite"                  # or a redis:// URL
    origins: list[str] = []                # browser Origins allowed besides the service's own
    public_watch: bool = True              # viewers need no token (scoreboards, stream pages)
    demo: bool = True                      # set up and play the demo game when the log is empty
    demo_speed: float = 1.0
    device_rate: float = 10.0              # events per second per device, sustained ...
    device_burst: int = 30                 # ... and in a burst
    max_connections: int = 20_000
    max_device_connections: int = 4        # per device token subject
    max_frame: int = 64 * 1024
    auth_timeout: float = 5.0              # an unauthenticated device socket is closed after this
    ping_interval: float = 10.0            # clock-sync pings to devices
    heartbeat: float = 5.0                 # app-level heartbeat to viewers
    watcher_queue: int = 64                # frames a viewer may fall behind before a resync
    send_timeout: float = 10.0             # a viewer that can't take one frame in this long is dropped
    compress: bool = False                 # permessage-deflate, only if the operator asks for it
    unsafe_store: bool = False             # allow a Redis that could lose acked events


def load_secret(data_dir: Path) -> bytes:
    """The signing secret, created on first start (mode 0600)."""
    path = data_dir / "secret.key"
    data_dir.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(auth.new_secret())
    return path.read_bytes()


def admin_token(data_dir: Path, secret: bytes, days: int = 30) -> str:
    """An admin token for the operator, written to ``admin.token`` (0600)."""
    token, _ = auth.issue(secret, sub="admin", role="admin", official="operator",
                          exp=int(time.time()) + days * 86_400)
    path = data_dir / "admin.token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return token
