"""Service settings, with the defaults ``arena-stream serve`` runs on."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import msgspec

from ...errors import StartupRefused
from ..wire import auth


class Config(msgspec.Struct, kw_only=True):
    data_dir: Path = Path("arena-data")
    host: str = "127.0.0.1"
    port: int = 8080
    store: str = "sqlite"                  # or an etcd:// (etcds://) URL, for several nodes
    origins: list[str] = []                # browser Origins allowed besides the service's own
    public_watch: bool = True              # viewers need no token (scoreboards, stream pages)
    public_pages: bool = True              # the tournament in public: /, /events/..., /teams/...
    demo: bool = True                      # set up and play the demo game when the log is empty
    demo_speed: float = 1.0
    device_rate: float = 10.0              # events per second per device, sustained ...
    device_burst: int = 30                 # ... and in a burst
    max_connections: int = 20_000
    max_device_connections: int = 4        # per device token subject
    max_frame: int = 64 * 1024
    invalid_rate: float = 1.0              # frames a socket may get wrong per second, sustained ...
    invalid_burst: int = 20                # ... and in a row; past that it is closed with 1008
    auth_timeout: float = 5.0              # an unauthenticated device socket is closed after this
    ping_interval: float = 10.0            # clock-sync pings to devices
    heartbeat: float = 5.0                 # app-level heartbeat to viewers
    watcher_queue: int = 64                # frames a viewer may fall behind before a resync
    send_timeout: float = 10.0             # a viewer that can't take one frame in this long is dropped
    compress: bool = False                 # permessage-deflate, only if the operator asks for it
    unsafe_store: bool = False             # allow a store that could lose acked events
    sqlite_synchronous: str = "FULL"       # NORMAL only with unsafe_store: a power cut loses acks
    etcd_deadline_ms: int = 500            # each call to an etcd member (about half its election
                                           # timeout); then the next member is asked
    etcd_budget_ms: int = 3000             # a call's whole time across members; then a write is
                                           # answered "unknown" and a read "not stored"
    etcd_ca: str = ""                      # etcds://: the CA the members' certificates are checked
    etcd_cert: str = ""                    # against, and the client certificate and key the node
    etcd_key: str = ""                     # presents (PEM files)
    freeze_heap: bool = False              # gc.freeze after start-up and after crowds connect
                                           # (heap.py; `serve` sets it: it owns its process)
    public_url: str = ""                   # where users reach the service (https://arena.example);
                                           # "" for the listening address. Every link the service
                                           # makes starts with it: the Host header is never read

    @property
    def base_url(self) -> str:
        """The start of every link the service makes: ``public_url``, else the listening address."""
        return self.public_url.rstrip("/") or f"http://{self.host}:{self.port}"


def load_secret(data_dir: Path) -> bytes:
    """The signing secret, created on first start (mode 0600).

    It is written to a temporary file, fsynced, and linked into place, and the
    directory is fsynced: neither a crash nor a power cut can leave an empty or
    partial ``secret.key`` behind (the power-loss proof found one: tokens signed
    with an empty key could be forged by anyone).
    """
    path = data_dir / "secret.key"
    data_dir.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        tmp = data_dir / f".secret.key.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(auth.new_secret())
                f.flush()
                os.fsync(f.fileno())
            with contextlib.suppress(FileExistsError):  # another process made one first: use it
                os.link(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        dfd = os.open(data_dir, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    secret = path.read_bytes()
    if len(secret) < 16:
        raise StartupRefused(f"{path} holds {len(secret)} bytes, too few for a signing secret: "
                         "restore it, or delete it to have a new one made (every token is then void)")
    return secret


def admin_token(data_dir: Path, secret: bytes, days: int = 30) -> str:
    """An admin token for the operator, written to ``admin.token`` (0600)."""
    token, _ = auth.issue(secret, sub="admin", role="admin", official="operator",
                          exp=int(time.time()) + days * 86_400)
    path = data_dir / "admin.token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return token
