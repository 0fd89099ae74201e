"""The service as a subprocess on loopback, for tests that kill it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from .conftest import free_port


class ServiceProcess:
    """``arena-stream serve --no-demo`` on a free port; ``kill9`` is SIGKILL."""

    def __init__(self, data: Path, port: int | None = None, store: str | None = None, *,
                 args: list[str] | None = None, env: dict[str, str] | None = None) -> None:
        self.data, self.port, self.store = data, port or free_port(), store
        self.args = list(args or [])           # more ``serve`` flags
        self.env = dict(env or {})             # added to this process's environment
        self.stderr: Path | None = None        # where its log goes (appended), if anywhere
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def device_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws/device"

    @property
    def watch_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws/watch"

    def start(self) -> None:
        args = [sys.executable, "-m", "stream", "serve", "--no-demo", "--data", str(self.data),
                "--port", str(self.port)]
        if self.store:
            args += ["--store", self.store]
        err = open(self.stderr, "ab") if self.stderr else subprocess.DEVNULL  # noqa: SIM115
        try:
            self.proc = subprocess.Popen(args + self.args, stdout=subprocess.DEVNULL, stderr=err,
                                         env={**os.environ, **self.env})
        finally:
            if self.stderr:
                err.close()  # type: ignore[union-attr]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:  # e.g. killed by a failpoint before it was seen ready
                raise RuntimeError(f"the service exited ({self.proc.returncode}) before it was ready")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the service did not start")

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def admin(self) -> str:
        return (self.data / "admin.token").read_text().strip()

    def get(self, path: str, token: str | None = None) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", headers=headers)
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)

    def post(self, path: str, body: Any, token: str | None = None) -> Any:
        token = token or (self.data / "admin.token").read_text().strip()
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=json.dumps(body).encode(),
                                     method="POST", headers={"Authorization": f"Bearer {token}",
                                                             "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)
