"""Child processes on loopback: the service, etcd's members (``etcd.py``) and any helper
program.

Every process here

* listens on ``127.0.0.1`` only (``HOST``), on a port picked free by ``free_port``;
* dies with the thread that started it (Linux ``PR_SET_PDEATHSIG``: a benchmark or a
  test that is killed leaves no orphan behind);
* is waited for within a deadline (``ready_timeout``), and ended by ``stop`` (SIGTERM,
  then SIGKILL after ``grace`` seconds) or ``kill9``; a ``Processes`` group ends all
  of its members at once, in a ``finally`` or on leaving its ``with`` block;
* writes its stdout and stderr to ``log`` (appended), if it is given, so that a
  failure can quote the end of it (``tail``).

``start`` is synchronous (a test may call it outside an event loop, or through
``asyncio.to_thread``); ``astart`` and ``astop`` are the same for a coroutine, the
waiting done off the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

HOST = "127.0.0.1"

__all__ = ["HOST", "Process", "Processes", "ServiceProcess", "free_port", "start_service"]


def free_port() -> int:
    """A TCP port nobody listens on, on loopback, right now."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


# Looked up once here, so that the child, between fork and exec, only makes the call.
_prctl: Any = None
if sys.platform == "linux":  # pragma: no branch
    with contextlib.suppress(OSError, AttributeError):
        _prctl = ctypes.CDLL(None, use_errno=True).prctl


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: SIGKILL to the child when the thread that started it ends."""
    if _prctl is not None:
        _prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Process:
    """One child process: ``argv`` (its program first), with ``env`` added to this
    process's environment. ``stdin``/``stdout``: pipes for a line protocol
    (``write_line``, ``readline``); otherwise stdin is /dev/null and stdout goes
    to ``log``. ``cwd``: the folder it runs in (this process's, by default)."""

    def __init__(self, name: str, argv: Sequence[str] = (), *, env: dict[str, str] | None = None,
                 log: Path | None = None, stdin: bool = False, stdout: bool = False,
                 ready_timeout: float = 30.0, poll: float = 0.05, cwd: Path | None = None) -> None:
        self.name = name
        self.argv = list(argv)
        self.env = dict(env or {})
        self.cwd = cwd
        self.log = log
        self.pipe_stdin, self.pipe_stdout = stdin, stdout
        self.ready_timeout, self.poll = ready_timeout, poll
        self.proc: subprocess.Popen[bytes] | None = None
        #: A command to run it under, set before a start: ``["taskset", "-c", "0"]`` pins it
        #: to a core, ``["valgrind", "--tool=callgrind", ...]`` counts its instructions.
        self.wrap: list[str] = []
        self._lines: queue.SimpleQueue[bytes] = queue.SimpleQueue()

    def command(self) -> list[str]:
        """The command line, built at each start (so a restart sees changed settings)."""
        return self.argv

    # ------------------------------------------------------------ lifecycle

    def spawn(self) -> None:
        """Start the process; do not wait for it to be ready."""
        if self.alive:
            raise RuntimeError(f"{self.name} is already running")
        out = open(self.log, "ab") if self.log is not None else None  # noqa: SIM115 - closed below
        try:
            self.proc = subprocess.Popen(
                [*self.wrap, *self.command()], env={**os.environ, **self.env}, cwd=self.cwd,
                stdin=subprocess.PIPE if self.pipe_stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE if self.pipe_stdout else (out or subprocess.DEVNULL),
                stderr=out or subprocess.DEVNULL,
                preexec_fn=_die_with_parent if _prctl is not None else None)
        finally:
            if out is not None:
                out.close()  # the child has its own copy
        if self.pipe_stdout:
            self._lines = queue.SimpleQueue()
            threading.Thread(target=self._pump, args=(self.proc, self._lines), daemon=True,
                             name=f"{self.name}-stdout").start()

    def ready(self) -> bool:
        """Whether the process serves yet (a plain process: as soon as it runs)."""
        return True

    def wait_ready(self) -> None:
        """Until ``ready()``; RuntimeError if the process exits first, or if ``ready_timeout``
        passes (then it is killed)."""
        deadline = time.monotonic() + self.ready_timeout
        while True:
            if self.proc is None or self.proc.poll() is not None:
                code = None if self.proc is None else self.proc.returncode
                raise RuntimeError(f"{self.name} exited ({code}) before it was ready{self._quote()}")
            if self.ready():
                return
            if time.monotonic() > deadline:
                self.kill9()  # bounded: a process that never gets ready is not left behind
                raise RuntimeError(f"{self.name} not ready in {self.ready_timeout:g} s{self._quote()}")
            time.sleep(self.poll)

    def start(self) -> None:
        self.spawn()
        self.wait_ready()

    async def astart(self) -> None:
        """``start`` for a coroutine: spawned from the event loop's thread, waited for off it."""
        self.spawn()
        await asyncio.to_thread(self.wait_ready)

    def kill9(self) -> None:
        """SIGKILL, and reap it: a crash, as far as the process can tell."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()
            self._close_pipes()

    def terminate(self) -> None:
        """SIGTERM, not waited for (``stop`` waits)."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.terminate()

    def stop(self, grace: float = 10.0, wait_first: float = 0.0) -> None:
        """End it: let it exit by itself for ``wait_first`` s, then SIGTERM, then SIGKILL
        after ``grace`` s. Nothing to do if it is not running."""
        if self.proc is None:
            return
        if wait_first > 0:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(wait_first)
        self.terminate()
        try:
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            self.kill9()
        self._close_pipes()

    async def astop(self, grace: float = 10.0, wait_first: float = 0.0) -> None:
        await asyncio.to_thread(self.stop, grace, wait_first)

    def restart(self) -> None:
        self.stop()
        self.start()

    async def arestart(self) -> None:
        await self.astop()
        await self.astart()

    # ---------------------------------------------------------------- state

    @property
    def pid(self) -> int:
        assert self.proc is not None, f"{self.name} was never started"
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def tail(self, lines: int = 20) -> str:
        """The end of its log ("" without one)."""
        if self.log is None:
            return ""
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def _quote(self) -> str:
        tail = self.tail()
        return f"; its log ends:\n{tail}" if tail else ""

    # ------------------------------------------------------- line protocol

    def write_line(self, line: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None, f"{self.name} has no stdin pipe"
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def readline(self, timeout: float) -> str:
        """The next line of its stdout, stripped; "" at its end or after ``timeout`` s."""
        try:
            return self._lines.get(timeout=timeout).decode(errors="replace").strip()
        except queue.Empty:
            return ""

    async def areadline(self, wait_s: float) -> str:
        return await asyncio.to_thread(self.readline, wait_s)

    @staticmethod
    def _pump(proc: subprocess.Popen[bytes], lines: queue.SimpleQueue[bytes]) -> None:
        assert proc.stdout is not None
        with contextlib.suppress(OSError, ValueError):
            for line in proc.stdout:
                lines.put(line)
        lines.put(b"")

    def _close_pipes(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()


class ServiceProcess(Process):
    """``python -m stream serve --no-demo`` on loopback: ``data`` its data directory,
    ``store`` an ``etcd://`` URL (else SQLite in ``data``), ``args`` more ``serve``
    flags, ``env`` more environment. Ready when ``/readyz`` answers 200. Started again
    on the same ``data`` it is a restart: same log, same secret, same admin token."""

    def __init__(self, data: Path, port: int | None = None, store: str | None = None, *,
                 args: Sequence[str] = (), env: dict[str, str] | None = None, log: Path | None = None,
                 name: str = "service", ready_timeout: float = 60.0, poll: float = 0.05,
                 cwd: Path | None = None) -> None:
        super().__init__(name, env=env, log=log, ready_timeout=ready_timeout, poll=poll, cwd=cwd)
        self.data, self.port, self.store = data, port or free_port(), store
        self.args = list(args)

    def command(self) -> list[str]:
        argv = [sys.executable, "-m", "stream", "serve", "--no-demo", "--data", str(self.data),
                "--host", HOST, "--port", str(self.port)]
        if self.store:
            argv += ["--store", self.store]
        return argv + self.args

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.http}/readyz", timeout=1) as r:
                return bool(r.status == 200)
        except OSError:
            return False

    @property
    def http(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def device_url(self) -> str:
        return f"ws://{HOST}:{self.port}/ws/device"

    @property
    def watch_url(self) -> str:
        return f"ws://{HOST}:{self.port}/ws/watch"

    def watch(self, game: str | None = None) -> str:
        """A viewer's URL: every game, or ``game``'s."""
        return self.watch_url + (f"?game={game}" if game else "")

    @property
    def admin(self) -> str:
        """The admin token the service wrote at its first start."""
        return (self.data / "admin.token").read_text().strip()

    def get(self, path: str, token: str | None = None) -> Any:
        """GET ``path`` as JSON (with ``token``, if given)."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        req = urllib.request.Request(self.http + path, headers=headers)
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)

    def post(self, path: str, body: Any, token: str | None = None) -> Any:
        """POST ``body`` as JSON to ``path``, with ``token`` (default: the admin token)."""
        req = urllib.request.Request(self.http + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": f"Bearer {token or self.admin}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)


P = TypeVar("P", bound=Process)


class Processes:
    """Every process a run starts, each logging to ``workdir/NAME.log``; ``close`` (or
    leaving ``with``/``async with``) ends them all, the last started first."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.members: list[Process] = []

    def add(self, process: P) -> P:
        """Take ``process`` into the group (not started); its log goes to the work directory."""
        if process.log is None:
            process.log = self.workdir / f"{process.name}.log"
        self.members.append(process)
        return process

    def service(self, data: Path, *, name: str = "service", **kw: Any) -> ServiceProcess:
        return self.add(ServiceProcess(data, name=name, **kw))

    def spawn(self, name: str, *args: str, program: str = sys.executable, stdin: bool = False,
              stdout: bool = False, env: dict[str, str] | None = None) -> Process:
        """Start ``program`` (this Python by default) with ``args``, not waiting for it."""
        process = self.add(Process(name, [program, *args], env=env, stdin=stdin, stdout=stdout))
        process.spawn()
        return process

    def close(self, grace: float = 5.0) -> None:
        """SIGTERM to every member still running, then wait for each (SIGKILL after ``grace`` s)."""
        for p in reversed(self.members):
            p.terminate()
        for p in reversed(self.members):
            p.stop(grace)

    async def aclose(self, grace: float = 5.0) -> None:
        await asyncio.to_thread(self.close, grace)

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    async def __aenter__(self) -> Processes:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()


def start_service(data: Path, *, group: Processes | None = None, **kw: Any) -> ServiceProcess:
    """A ``ServiceProcess`` on ``data`` (``kw``: its settings), started and ready; in ``group``
    if given."""
    service = ServiceProcess(data, **kw)
    if group is not None:
        group.add(service)
    service.start()
    return service

