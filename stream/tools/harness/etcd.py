"""etcd as the store's Raft cluster runs: three ``etcd`` members (Debian's ``etcd-server``,
3.4) on loopback (``EtcdCluster``), each a real process of its own, with the settings a
production member takes (docs/deployment.md, "etcd: backups and replacing a member"):
pre-vote, compaction by revision, a 2 GiB backend quota, and fsync on, always (etcd 3.4
has no switch for it; a later etcd's ``--unsafe-no-fsync`` is refused here).

A member is reached as the tests and the store's users reach it: through its JSON gateway
(``/v3/kv/put``, ``/v3/kv/range``, ``/v3/maintenance/status``, keys and values in base64)
and through ``etcdctl`` (``etcdctl``, Debian's ``etcd-client``), the operator's tool.

With ``tls`` (``tls.py``'s files) the members serve their clients and each other over TLS
only, and take only a client that presents a certificate their CA signed
(``--client-cert-auth``, ``--peer-client-cert-auth``): the URLs are ``https://`` and
``etcds://``, and the harness's own calls and ``etcdctl`` present the client certificate.

The faults a test makes: ``kill`` (SIGKILL: a crash), ``restart`` (the same member back
on its data directory), ``pause``/``resume`` (SIGSTOP/SIGCONT: a member that hangs, or a
partition seen from the others) and ``replace`` (a member lost for good, with its disk:
removed from the cluster, its data directory wiped, added again and started empty, the
steps an operator runs). Each start waits until the member serves (its ``/health``,
which in 3.4 takes a read through Raft) within a deadline, else raises with the end of
its log; every member dies with the thread that started it and ends with ``group``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .processes import HOST, Process, Processes, free_port
from .tls import TLSFiles

__all__ = ["EtcdCluster", "EtcdError", "EtcdMember", "EtcdProcess", "etcdctl"]

#: The backend's quota: etcd raises a NOSPACE alarm (and refuses writes) past it.
QUOTA_BYTES = 2 * 1024**3
#: How long a start, a restart or a replacement may take before it fails.
DEADLINE_S = 30.0
#: How long a member has to exit after SIGTERM before SIGKILL (``EtcdProcess.stop``).
STOP_GRACE_S = 1.0


class EtcdError(RuntimeError):
    """An error answer: from a member's JSON gateway (its ``error`` text and gRPC code) or
    from ``etcdctl`` (its exit status and stderr)."""


def _program(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise FileNotFoundError(f"{name} is not installed (Debian's {package}; tests/run.sh installs it)")
    return path


def etcdctl(*args: str, endpoints: str | None = None, timeout: float = 15.0, stderr: bool = False,
            tls: TLSFiles | None = None) -> str:
    """``ETCDCTL_API=3 etcdctl --endpoints=ENDPOINTS ARGS`` (no ``--endpoints`` without
    ``endpoints``: ``snapshot status``, ``snapshot restore``; with ``tls``, the CA and the
    client certificate): its stdout (and its stderr after it, with ``stderr``: ``endpoint
    health`` prints there), or EtcdError with its stderr. Bounded: killed after ``timeout`` s."""
    where = [] if endpoints is None else [f"--endpoints={endpoints}"]
    argv = [_program("etcdctl", "etcd-client"), *where, *(tls.etcdctl_flags() if tls else []), *args]
    try:
        done = subprocess.run(argv, env={**os.environ, "ETCDCTL_API": "3"}, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:
        raise EtcdError(f"etcdctl {' '.join(args)}: no answer in {timeout:g} s") from e
    if done.returncode != 0:
        raise EtcdError(f"etcdctl {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout + done.stderr if stderr else done.stdout


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _unb64(text: str) -> str:
    return base64.b64decode(text).decode()


def prefix_end(prefix: bytes) -> bytes:
    """The end of the range of every key that starts with ``prefix`` (its last byte plus
    one), as ``etcdctl get --prefix`` reads it."""
    raw = bytearray(prefix)
    while raw and raw[-1] == 0xFF:
        raw.pop()
    if not raw:
        return b"\0"   # to the end: every key
    raw[-1] += 1
    return bytes(raw)


class EtcdProcess(Process):
    """One ``etcd`` member's process; its command line is set by its cluster before each
    start. Ready when the member serves (``/health``). Ended even while paused: SIGCONT
    follows its SIGTERM, or a stopped member would wait for the SIGKILL."""

    def __init__(self, member: EtcdMember, *, log: Path) -> None:
        super().__init__(member.name, log=log, ready_timeout=DEADLINE_S)
        self.member = member

    def ready(self) -> bool:
        return self.member.healthy()

    def terminate(self) -> None:
        super().terminate()
        if self.alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGCONT)

    def stop(self, grace: float = STOP_GRACE_S, wait_first: float = 0.0) -> None:
        """As ``Process.stop``, SIGKILL after at most ``STOP_GRACE_S``: a leader told to stop
        hands its leadership over first, and waits for that up to its request timeout (7 s
        here) when its peers are stopping too. Nothing is lost to the SIGKILL: every commit
        was fsynced."""
        super().stop(min(grace, STOP_GRACE_S), wait_first)


class EtcdMember:
    """One member: its name, its ports on loopback, its data directory and its process,
    and its JSON gateway (``put``, ``get``, ``range``)."""

    def __init__(self, name: str, data_dir: Path, client_port: int, peer_port: int, *, log: Path,
                 initial_cluster: str, tls: TLSFiles | None = None) -> None:
        self.name, self.data_dir = name, data_dir
        self.tls = tls
        self._context = None if tls is None else tls.client_context()
        self.client_port, self.peer_port = client_port, peer_port
        #: The ``--initial-cluster`` it starts with: its cluster's, or the line ``etcdctl
        #: member add`` printed for it (a replacement). Read only while its data directory is empty.
        self.initial_cluster = initial_cluster
        self.state = "new"
        self.process = EtcdProcess(self, log=log)

    def __repr__(self) -> str:
        return f"EtcdMember({self.name!r}, client {self.client_port}, peer {self.peer_port})"

    @property
    def scheme(self) -> str:
        return "http" if self.tls is None else "https"

    @property
    def client_url(self) -> str:
        return f"{self.scheme}://{HOST}:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"{self.scheme}://{HOST}:{self.peer_port}"

    @property
    def endpoint(self) -> str:
        """``127.0.0.1:PORT``, as ``etcdctl --endpoints`` and the store's URL take it."""
        return f"{HOST}:{self.client_port}"

    # ------------------------------------------------------------ the JSON gateway

    def call(self, path: str, body: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
        """POST ``body`` to ``/v3/PATH``: the answer, EtcdError for an error answer,
        TimeoutError for none within ``timeout`` s, ConnectionError if nothing listens."""
        req = urllib.request.Request(f"{self.client_url}/v3/{path}", data=json.dumps(body).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self._context) as r:
                answer: dict[str, Any] = json.load(r)
        except urllib.error.HTTPError as e:
            raise EtcdError(f"{self.name} /v3/{path}: {e.code} {e.read().decode(errors='replace')}") from e
        except urllib.error.URLError as e:
            if isinstance(e.reason, TimeoutError):
                raise TimeoutError(f"{self.name} /v3/{path}: no answer in {timeout:g} s") from e
            raise ConnectionError(f"{self.name} /v3/{path}: {e.reason}") from e
        except TimeoutError as e:   # connected, and then no answer
            raise TimeoutError(f"{self.name} /v3/{path}: no answer in {timeout:g} s") from e
        if "error" in answer:
            raise EtcdError(f"{self.name} /v3/{path}: {answer['error']}")
        return answer

    def put(self, key: str, value: str, timeout: float = 5.0) -> int:
        """Write ``key``; the revision it was written at, once the cluster committed it."""
        answer = self.call("kv/put", {"key": _b64(key), "value": _b64(value)}, timeout)
        return int(answer["header"]["revision"])

    def range(self, prefix: str, *, serializable: bool = False, timeout: float = 5.0) -> dict[str, str]:
        """Every key starting with ``prefix`` and its value. ``serializable``: read from this
        member alone, as far as it has applied (else a read through the leader)."""
        end = base64.b64encode(prefix_end(prefix.encode())).decode()
        body = {"key": _b64(prefix), "range_end": end, "serializable": serializable}
        kvs = self.call("kv/range", body, timeout).get("kvs", [])
        return {_unb64(kv["key"]): _unb64(kv.get("value", "")) for kv in kvs}

    def get(self, key: str, *, serializable: bool = False, timeout: float = 5.0) -> str | None:
        """``key``'s value, None if there is none (``serializable``: as ``range``)."""
        kvs = self.call("kv/range", {"key": _b64(key), "serializable": serializable}, timeout).get("kvs", [])
        return _unb64(kvs[0].get("value", "")) if kvs else None

    def healthy(self) -> bool:
        """Whether it serves: ``/health`` says true (a leader, and a read through Raft answered)."""
        try:
            with urllib.request.urlopen(f"{self.client_url}/health", timeout=1, context=self._context) as r:
                return bool(json.load(r).get("health") == "true")
        except (OSError, ValueError):
            return False


class EtcdCluster:
    """``size`` members named ``NAME-1``… in ``work`` (each its data directory
    ``work/NAME-i`` and its log ``work/NAME-i.log``), in ``group``, which ends them.
    Ports are picked when it is made, so that a snapshot can be restored for it
    (``initial_cluster``, ``token``) before ``start``."""

    def __init__(self, work: Path, *, size: int = 3, group: Processes, heartbeat_ms: int = 100,
                 election_ms: int = 1000, extra_args: Sequence[str] = (), name: str = "etcd",
                 tls: TLSFiles | None = None) -> None:
        if any(a.startswith("--unsafe-no-fsync") for a in extra_args):
            raise ValueError("fsync stays on: an acked write must survive a power cut")
        self.program = _program("etcd", "etcd-server")
        self.work, self.group = work, group
        work.mkdir(parents=True, exist_ok=True)   # the members' logs; etcd makes each data directory
        self.heartbeat_ms, self.election_ms = heartbeat_ms, election_ms
        self.extra_args = list(extra_args)
        #: With TLS: clients and peers over TLS only, each presenting a certificate of the CA.
        self.tls = tls
        scheme = "http" if tls is None else "https"
        #: ``--initial-cluster-token``: unique, so that no member of another cluster joins this one.
        self.token = f"{name}-{secrets.token_hex(6)}"
        ports = _distinct_ports(2 * size)
        names = [f"{name}-{i}" for i in range(1, size + 1)]
        #: ``--initial-cluster``: every member's name and peer URL.
        self.initial_cluster = ",".join(f"{n}={scheme}://{HOST}:{ports[2 * i + 1]}"
                                        for i, n in enumerate(names))
        self.members = [EtcdMember(n, work / n, ports[2 * i], ports[2 * i + 1], log=work / f"{n}.log",
                                   initial_cluster=self.initial_cluster, tls=tls)
                        for i, n in enumerate(names)]
        for m in self.members:
            group.add(m.process)

    @property
    def endpoints(self) -> str:
        """``127.0.0.1:P1,127.0.0.1:P2,…``: every member's client address."""
        return ",".join(m.endpoint for m in self.members)

    def url(self, prefix: str, *, user: str | None = None) -> str:
        """The store's URL: every member, and the key prefix its data lives under (``etcds://``
        with TLS; ``user``: ``user:password`` to authenticate as)."""
        scheme = "etcd" if self.tls is None else "etcds"
        return f"{scheme}://{user + '@' if user else ''}{self.endpoints}/{prefix}"

    def ctl(self, *args: str, endpoints: str | None = None, timeout: float = 15.0) -> str:
        """``etcdctl`` on the cluster's members (or ``endpoints``), with its TLS files."""
        return etcdctl(*args, endpoints=endpoints or self.endpoints, timeout=timeout, tls=self.tls)

    def command(self, m: EtcdMember) -> list[str]:
        """``m``'s command line, as docs/deployment.md gives it (with free ports on loopback)."""
        return [self.program, "--name", m.name, "--data-dir", str(m.data_dir),
                "--listen-client-urls", m.client_url, "--advertise-client-urls", m.client_url,
                "--listen-peer-urls", m.peer_url, "--initial-advertise-peer-urls", m.peer_url,
                "--initial-cluster", m.initial_cluster, "--initial-cluster-token", self.token,
                "--initial-cluster-state", m.state,
                "--heartbeat-interval", str(self.heartbeat_ms), "--election-timeout", str(self.election_ms),
                "--pre-vote", "--logger", "zap", "--log-level", "warn",
                "--auto-compaction-mode", "revision", "--auto-compaction-retention", "10000",
                "--quota-backend-bytes", str(QUOTA_BYTES), *self._tls_args(), *self.extra_args]

    def _tls_args(self) -> list[str]:
        t = self.tls
        if t is None:
            return []
        return ["--cert-file", str(t.server_cert), "--key-file", str(t.server_key), "--client-cert-auth",
                "--trusted-ca-file", str(t.ca), "--peer-cert-file", str(t.server_cert),
                "--peer-key-file", str(t.server_key), "--peer-client-cert-auth",
                "--peer-trusted-ca-file", str(t.ca)]

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Every member at once (``--initial-cluster-state new``, or the data directories a
        snapshot was restored into), until each serves and they agree on a leader."""
        deadline = time.monotonic() + DEADLINE_S
        for m in self.members:
            self._spawn(m)
        self._until_serving(self.members, deadline)
        self.leader(max(deadline - time.monotonic(), 1.0))

    async def astart(self) -> None:
        """``start`` for a coroutine: spawned from the event loop's thread (a member dies with
        the thread that started it), waited for off it."""
        deadline = time.monotonic() + DEADLINE_S
        for m in self.members:
            self._spawn(m)
        await asyncio.to_thread(self._until_serving, self.members, deadline)
        await asyncio.to_thread(self.leader, max(deadline - time.monotonic(), 1.0))

    def restart(self, m: EtcdMember, *, initial_cluster: str | None = None) -> None:
        """``m`` started again on its data directory (``--initial-cluster-state existing``),
        until it serves. ``initial_cluster``: the line ``etcdctl member add`` printed, for a
        member that joins with an empty data directory."""
        self._prepare_restart(m, initial_cluster)
        self._spawn(m)
        self._until_serving([m], time.monotonic() + DEADLINE_S)

    async def arestart(self, m: EtcdMember, *, initial_cluster: str | None = None) -> None:
        """``restart`` for a coroutine: spawned from the event loop's thread, waited for off it."""
        self._prepare_restart(m, initial_cluster)
        self._spawn(m)
        await asyncio.to_thread(self._until_serving, [m], time.monotonic() + DEADLINE_S)

    def restart_all(self) -> None:
        """Every member stopped, then started again on its data directory, until each serves
        (``/health``, which asks no token: it holds with etcd's authentication on): what a
        member keeps only in memory, its authentication tokens, is gone."""
        self._stop_then_spawn()
        self._until_serving(self.members, time.monotonic() + DEADLINE_S)

    async def arestart_all(self) -> None:
        """``restart_all`` for a coroutine: spawned from the event loop's thread, waited for off it."""
        await asyncio.to_thread(self._stop_each)
        self._stop_then_spawn(stopped=True)
        await asyncio.to_thread(self._until_serving, self.members, time.monotonic() + DEADLINE_S)

    def _stop_each(self) -> None:
        for m in self.members:
            m.process.stop()

    def _stop_then_spawn(self, *, stopped: bool = False) -> None:
        if not stopped:
            self._stop_each()
        for m in self.members:
            self._prepare_restart(m, None)
            self._spawn(m)

    def stop(self) -> None:
        """End every member, the followers first (each hands nothing over), then the
        leader (no peer left to hand its leadership to, it exits at once)."""
        leader = self._current_leader()
        for m in sorted(self.members, key=lambda m: m is leader):
            m.process.stop()

    async def astop(self) -> None:
        await asyncio.to_thread(self.stop)

    def kill(self, m: EtcdMember) -> None:
        """SIGKILL: a crash (its data directory kept, as a power cut leaves it)."""
        m.process.kill9()

    def pause(self, m: EtcdMember) -> None:
        """SIGSTOP, until the kernel has stopped it: it answers nobody, peers nor clients."""
        os.kill(m.process.pid, signal.SIGSTOP)
        _until(lambda: _state(m.process.pid) == "T", 5.0, f"{m.name} did not stop")

    def resume(self, m: EtcdMember) -> None:
        """SIGCONT: it runs on from where it was stopped."""
        os.kill(m.process.pid, signal.SIGCONT)
        _until(lambda: _state(m.process.pid) != "T", 5.0, f"{m.name} did not resume")

    def replace(self, m: EtcdMember) -> EtcdMember:
        """``m`` lost for good, with its disk: the steps of docs/deployment.md with ``etcdctl``
        on the other members (``member list``, ``member remove ID``, its data directory
        wiped, ``member add NAME --peer-urls=…``), then the new member started empty on the
        same name and address with ``--initial-cluster-state existing`` and the
        ``ETCD_INITIAL_CLUSTER`` line ``member add`` printed, until it serves. Returns it
        (in ``members`` in place of ``m``)."""
        deadline = time.monotonic() + DEADLINE_S
        self.kill(m)
        self.leader(DEADLINE_S / 2)   # if it led, a request would wait on it until etcdctl's timeout
        others = ",".join(o.endpoint for o in self.members if o is not m)
        member_id = member_ids(self.ctl("member", "list", endpoints=others)).get(m.name)
        if member_id is not None:
            self.ctl("member", "remove", member_id, endpoints=others)
        shutil.rmtree(m.data_dir, ignore_errors=True)
        initial = self.member_add(m.name, m.peer_url, others, deadline, tls=self.tls)
        new = EtcdMember(m.name, m.data_dir, m.client_port, m.peer_port,
                         log=m.process.log or self.work / f"{m.name}.log", initial_cluster=initial,
                         tls=self.tls)
        new.state = "existing"
        self.members[self.members.index(m)] = new
        self.group.add(new.process)
        self._spawn(new)
        self._until_serving([new], deadline)
        return new

    @staticmethod
    def member_add(name: str, peer_url: str, endpoints: str, deadline: float, *,
                   tls: TLSFiles | None = None) -> str:
        """``etcdctl member add NAME --peer-urls=URL``: the ``ETCD_INITIAL_CLUSTER`` it printed.
        Tried again while the cluster answers "unhealthy cluster": etcd adds a member only
        once every member left has been connected to the others for 5 s."""
        while True:
            try:
                out = etcdctl("member", "add", name, f"--peer-urls={peer_url}", endpoints=endpoints, tls=tls)
            except EtcdError as e:
                if "unhealthy cluster" not in str(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
                continue
            found = re.search(r'^ETCD_INITIAL_CLUSTER="([^"]*)"', out, re.MULTILINE)
            if found is None:
                raise EtcdError(f"etcdctl member add printed no ETCD_INITIAL_CLUSTER: {out!r}")
            return found.group(1)

    # ------------------------------------------------------------ state

    def status(self, m: EtcdMember) -> dict[str, Any] | None:
        """``m``'s ``/v3/maintenance/status`` (its id in ``header.member_id``, the ``leader``
        it knows, ``raftIndex``, ``raftAppliedIndex``, ``dbSize``…), None if it does not
        answer within 1 s."""
        try:
            return m.call("maintenance/status", {}, timeout=1.0)
        except (OSError, EtcdError, ValueError):
            return None

    def leader(self, timeout: float = 10.0) -> EtcdMember:
        """The leader: the member that every answering member names, when a majority answers
        and the leader is one of them. Waits for one up to ``timeout`` s."""
        found: list[EtcdMember] = []

        def agreed() -> bool:
            statuses = [(m, self.status(m)) for m in self.members]
            answers = [(m, s) for m, s in statuses if s is not None]
            named = {s.get("leader", "0") for _, s in answers}
            if len(answers) <= len(self.members) // 2 or len(named) != 1 or named == {"0"}:
                return False
            [leader_id] = named
            found[:] = [m for m, s in answers if s["header"]["member_id"] == leader_id]
            return bool(found)

        _until(agreed, timeout, "the members did not agree on a leader")
        return found[0]

    def _current_leader(self) -> EtcdMember | None:
        """The leader, if the members agree on one now (no waiting)."""
        try:
            return self.leader(0.0)
        except RuntimeError:
            return None

    def followers(self) -> list[EtcdMember]:
        """Every member but the leader."""
        leader = self.leader()
        return [m for m in self.members if m is not leader]

    def write(self, key: str, value: str, timeout: float = 10.0) -> EtcdMember:
        """Write ``key`` through any running member, again and again until one acks (an
        election may be under way) or ``timeout`` s pass; the member that acked."""
        acked: list[EtcdMember] = []

        def put() -> bool:
            for m in self.members:
                if m.process.alive and _state(m.process.pid) != "T":
                    with contextlib.suppress(OSError, EtcdError):
                        m.put(key, value, timeout=2.0)
                        acked.append(m)
                        return True
            return False

        _until(put, timeout, f"no member acked a write of {key!r}")
        return acked[0]

    # ------------------------------------------------------------ helpers

    def _spawn(self, m: EtcdMember) -> None:
        m.process.argv = self.command(m)
        m.process.spawn()

    @staticmethod
    def _prepare_restart(m: EtcdMember, initial_cluster: str | None) -> None:
        if initial_cluster is not None:
            m.initial_cluster = initial_cluster
        m.state = "existing"

    @staticmethod
    def _until_serving(members: Sequence[EtcdMember], deadline: float) -> None:
        """Until every one of ``members`` serves; RuntimeError with the end of its log if one
        exits first or the deadline passes."""
        waiting = list(members)
        while waiting:
            for m in list(waiting):
                if not m.process.alive:
                    raise RuntimeError(f"{m.name} exited ({m.process.returncode}) before it served"
                                       f"{_quote(m)}")
                if m.healthy():
                    waiting.remove(m)
            if waiting and time.monotonic() > deadline:
                late = waiting[0]
                raise RuntimeError(f"{late.name} did not serve within {DEADLINE_S:g} s{_quote(late)}")
            if waiting:
                time.sleep(0.1)


def member_ids(listing: str) -> dict[str, str]:
    """Each member's name and hex id, from ``etcdctl member list``'s plain lines
    (``ID, STATUS, NAME, PEER ADDRS, CLIENT ADDRS, IS LEARNER``)."""
    out = {}
    for line in listing.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) >= 3 and cells[2]:
            out[cells[2]] = cells[0]
    return out


def _distinct_ports(n: int) -> list[int]:
    ports: list[int] = []
    while len(ports) < n:
        port = free_port()
        if port not in ports:
            ports.append(port)
    return ports


def _state(pid: int) -> str:
    """The process's state letter (``T``: stopped), "" if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[0]


def _quote(m: EtcdMember) -> str:
    tail = m.process.tail()
    return f"; its log ends:\n{tail}" if tail else ""


def _until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} within {timeout:g} s")
        time.sleep(0.05)
