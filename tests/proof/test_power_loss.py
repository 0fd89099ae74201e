"""Proof: power loss. "Acked means durable" must survive the machine losing
power, not only the process dying: at every cut, each write that was not
fsynced is dropped (``tests/proof/powerloss``, an LD_PRELOAD layer that logs
undo records, and ``power_cut``, which applies them after a SIGKILL).

Three devices send with retries while the service, on ``synchronous=FULL``,
is killed and its unsynced writes dropped again and again. Pass: no acked
event lost, none logged twice, none logged that wasn't sent, each device's
order kept, one gap-free ``seq``, ``integrity_check`` ok after every cut, and
the restarted service's state hash equals a fresh replay of its log.

The control: the same harness on ``--unsafe-store --sqlite-synchronous
NORMAL`` (no fsync per commit) must lose acked events, or the harness could
not see a loss at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from stream.tools.harness import Device, ServiceProcess

from .conftest import Figures, scale
from .determinism import live_equals_replay
from .officials import umpires_game
from .powerloss import Cut, build_shim, kill_at_sync, power_cut, preload_env, read_log

DEVICES = 3


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_shim(tmp_path_factory.mktemp("powerloss"))


# ------------------------------------------------------------ the layer alone

WRITER = r"""
import os, sys
d = sys.argv[1]
a = os.open(os.path.join(d, "a"), os.O_WRONLY | os.O_CREAT, 0o644)
os.write(a, b"synced:")
os.fsync(a)
os.write(a, b" lost")                       # appended, never synced
os.pwrite(a, b"S", 0)                       # overwrites a synced byte, never synced
b = os.open(os.path.join(d, "b"), os.O_RDWR | os.O_CREAT, 0o644)
os.write(b, b"0123456789")
os.fdatasync(b)
os.ftruncate(b, 4)                          # cut short, never synced
with open(os.path.join(d, "c"), "w") as f:  # O_TRUNC of a durable file, then a write
    f.write("new")
with open(os.path.join(d, "x-shm"), "w") as f:  # SQLite's wal-index: not tracked
    f.write("shm")
e = os.open(os.path.join(d, "e"), os.O_WRONLY | os.O_CREAT, 0o644)
os.write(e, b"e")
os.fsync(e)
rp, wp = os.pipe()
os.dup2(wp, e)                              # e's number now names a pipe: a close the layer didn't see
os.write(e, b"to the pipe")
os.write(a, b"!")
print("written", flush=True)
os.kill(os.getpid(), 9)
"""


def test_the_layer_drops_exactly_the_unsynced_writes(tmp_path: Path, shim: Path) -> None:
    d, log = tmp_path / "d", tmp_path / "undo.log"
    d.mkdir()
    (d / "c").write_text("old content")     # written by this process: no layer, durable
    r = subprocess.run([sys.executable, "-c", WRITER, str(d)], capture_output=True, text=True,
                       env={**os.environ, **preload_env(shim, d, log)}, timeout=60)
    assert r.returncode == -9 and r.stdout == "written\n", r.stderr
    assert (d / "a").read_bytes() == b"Synced: lost!"   # the page cache had everything
    ops = read_log(log)
    assert [op.kind for op in ops].count("S") == 3
    assert not any(op.path.endswith("-shm") for op in ops)
    assert [op.count for op in ops if op.path.endswith("/e")] == [1, 0], "the pipe write is not e's"

    saved = tmp_path / "saved"
    shutil.copytree(d, saved / "d")
    shutil.copy(log, saved / "undo.log")
    cut = power_cut(log)
    assert not log.exists()
    assert (d / "a").read_bytes() == b"synced:"
    assert (d / "b").read_bytes() == b"0123456789"
    assert (d / "c").read_bytes() == b"old content"
    assert (d / "x-shm").read_bytes() == b"shm"
    assert (d / "e").read_bytes() == b"e"
    assert (cut.files, cut.writes) == (3, 6)
    assert cut.by_file == {"a": 3, "b": 1, "c": 2}
    assert cut.bytes == len(b" lost") + 1 + 1 + len(b"new")

    # A random prefix of each file's unsynced writes lands: always one of the
    # states the file passed through.
    states = {"a": {b"synced:", b"synced: lost", b"Synced: lost", b"Synced: lost!"},
              "b": {b"0123456789", b"0123"}, "c": {b"old content", b"", b"new"}}
    seen: dict[str, set[bytes]] = {name: set() for name in states}
    for seed in range(30):
        shutil.rmtree(d)
        shutil.copytree(saved / "d", d)
        shutil.copy(saved / "undo.log", log)
        cut = power_cut(log, mode="prefix", seed=seed)
        assert cut.kept + cut.writes == 6
        for name, allowed in states.items():
            content = (d / name).read_bytes()
            assert content in allowed, (seed, name, content)
            seen[name].add(content)
    assert seen == states, "every prefix came up in 30 seeds"


# ------------------------------------------------------------ the service


@dataclass
class Run:
    synchronous: str
    sent: dict[str, list[str]] = field(default_factory=lambda: {f"ump{i}": [] for i in range(DEVICES)})
    acked: dict[str, list[str]] = field(default_factory=lambda: {f"ump{i}": [] for i in range(DEVICES)})
    retried_duplicates: int = 0          # acks that said "already stored"
    cuts: list[Cut] = field(default_factory=list)        # while the devices sent
    modes: list[str] = field(default_factory=list)
    where: list[str] = field(default_factory=list)        # "outside", "before an fsync", "at the end"
    lost_at_cut: list[int] = field(default_factory=list)  # acked before the kill, gone after the cut
    quiet_cuts: list[Cut] = field(default_factory=list)  # after a clean stop
    integrity: list[str] = field(default_factory=list)
    rows: list[tuple[str, str, int]] = field(default_factory=list)
    state_hash: str = ""
    seconds: float = 0.0

    def acked_total(self) -> int:
        return sum(map(len, self.acked.values()))

    def logged(self) -> dict[str, list[str]]:
        return {dev: [cid for d, cid, _ in self.rows if d == dev] for dev in self.acked}

    def lost(self) -> int:
        logged = self.logged()
        return sum(len(set(self.acked[d]) - set(logged[d])) for d in self.acked)

    def doubled(self) -> int:
        logged = self.logged()
        return sum(len(logged[d]) - len(set(logged[d])) for d in self.acked)

    def unsent(self) -> int:
        logged = self.logged()
        return sum(len(set(logged[d]) - set(self.sent[d])) for d in self.acked)

    def order_kept(self) -> bool:
        """Each device's surviving events are in the order it sent them."""
        for dev, ids in self.logged().items():
            where = {cid: n for n, cid in enumerate(self.sent[dev])}
            if [where[c] for c in ids if c in where] != sorted(where[c] for c in ids if c in where):
                return False
        return True

    def caught_mid_commit(self) -> int:
        """Cuts that found SQLite with WAL writes not yet fsynced."""
        return sum(c.unsynced_by_file.get("arena.sqlite-wal", 0) > 0 for c in self.cuts)

    def dropped(self, name: str | None = None) -> int:
        return sum(c.writes if name is None else c.by_file.get(name, 0)
                   for c in self.cuts + self.quiet_cuts)


def inspect(data: Path, scratch: Path) -> tuple[str, set[tuple[str, str]]]:
    """What the next start will find, read from a copy (so this check does not
    recover or checkpoint the real file): integrity and the logged events."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    for name in ("arena.sqlite", "arena.sqlite-wal"):
        if (data / name).exists():
            shutil.copyfile(data / name, scratch / name)
    with contextlib.closing(sqlite3.connect(scratch / "arena.sqlite")) as c:
        integrity = str(c.execute("PRAGMA integrity_check").fetchone()[0])
        rows = {(str(d), str(cid)) for d, cid in c.execute("SELECT device, client_id FROM log")}
    return integrity, rows


async def power_loss_run(tmp_path: Path, shim: Path, *, synchronous: str, per_device: int,
                         cuts: int, inside: int = 0, until_loss: bool = False,
                         seed: int = 14) -> Run:
    """Three devices send; the service is killed ``cuts`` times from outside
    (spread over the run), and ``inside`` times by the failpoint, instead of a
    WAL fsync; each time its unsynced writes are dropped. ``until_loss``: cut
    every few dozen acks instead, and stop the devices at the first cut that
    loses an acked event (at most ``cuts``)."""
    data, log, scratch = tmp_path / "data", tmp_path / "undo.log", tmp_path / "inspect"
    data.mkdir()
    args = ["--device-rate", "1000000", "--device-burst", "1000000"]
    if synchronous != "FULL":
        args += ["--unsafe-store", "--sqlite-synchronous", synchronous]
    srv = ServiceProcess(data, args=args, env=preload_env(shim, data, log))
    run = Run(synchronous)
    rng = random.Random(seed)
    t0 = time.monotonic()

    def quiet_cut() -> None:
        """The service stopped cleanly, and then the power went."""
        cut = power_cut(log)
        assert cut.logged > 0, "the layer saw no write: is LD_PRELOAD in effect?"
        run.quiet_cuts.append(cut)
        integrity, _ = inspect(data, scratch)
        run.integrity.append(integrity)

    # The failpoint (armed after the set-up, until it fired ``inside`` times):
    # the server SIGKILLs itself instead of the Nth WAL fsync after a start, its
    # commit written but not yet durable. N is drawn so the kills spread over
    # the run (about one WAL fsync per commit, two events per commit).
    stop = asyncio.Event()                 # the devices stop sending (until_loss)
    window = max(4, DEVICES * per_device // 2 // (inside + cuts + 1))
    armed = False

    def start() -> None:
        nonlocal armed
        armed = run.where.count("before an fsync") < inside and not stop.is_set()
        if armed:
            srv.env.update(kill_at_sync(rng.randint(2, window), match="arena.sqlite-wal"))
        else:
            for key in ("POWERLOSS_KILL_AT_SYNC", "POWERLOSS_KILL_MATCH"):
                srv.env.pop(key, None)
        try:
            srv.start()
        except RuntimeError:
            # The devices got in first and the failpoint fired before the start
            # was seen: the supervisor finds the process dead and cuts.
            if not (armed and srv.proc is not None and srv.proc.returncode == -9):
                raise

    srv.start()
    try:
        tokens = await umpires_game(srv, DEVICES)
        # The set-up is on disk before the game, in both runs: a clean stop
        # checkpoints even on NORMAL. And secret.key must survive a cut.
        await asyncio.to_thread(srv.stop)
        await asyncio.to_thread(quiet_cut)
        await asyncio.to_thread(start)

        async def official(i: int) -> None:
            name = f"ump{i}"
            d = Device(srv.device_url, tokens[i], prefix=f"u{i}")
            r = random.Random(seed * 100 + i)
            n = 0
            # At least per_device events, and on until every outside cut has happened:
            # a service fast enough to finish first would skip the last ones.
            while not stop.is_set() and (
                    n < per_device or (not until_loss and run.where.count("outside") < cuts)):
                event = ({"type": "whistle", "game": "g1"} if r.random() < 0.8 else
                         {"type": "goal", "game": "g1", "team": r.choice(["home", "away"])})
                event["id"] = f"u{i}-{n}"
                run.sent[name].append(event["id"])
                ack = await d.send(event, attempts=400)
                run.acked[name].append(ack["id"])
                run.retried_duplicates += bool(ack["duplicate"])
                n += 1
            await d.close()

        def cut_and_inspect(mode: str, cut_seed: int) -> tuple[Cut, str, set[tuple[str, str]]]:
            cut = power_cut(log, mode=mode, seed=cut_seed)
            return (cut, *inspect(data, scratch))

        async def cut(where: str) -> None:
            """The server is dead (killed from here, or by the failpoint): cut the
            power, check the file as the next start finds it, start again."""
            acked_then = {(d, cid) for d, ids in run.acked.items() for cid in ids}
            mode = "drop" if until_loss or rng.random() < 0.5 else "prefix"
            c, integrity, present = await asyncio.to_thread(cut_and_inspect, mode, rng.randrange(2**32))
            assert c.logged > 0, "the layer saw no write: is LD_PRELOAD in effect?"
            run.cuts.append(c)
            run.modes.append(mode)
            run.where.append(where)
            run.integrity.append(integrity)
            run.lost_at_cut.append(len(acked_then - present))
            if until_loss and (run.lost_at_cut[-1] > 0 or len(run.cuts) >= cuts):
                stop.set()
            await asyncio.to_thread(start)

        async def supervisor(devices: asyncio.Future[list[None]]) -> None:
            total = DEVICES * per_device
            gap = total / (cuts + 1)
            marks = [int(gap * (k + 1) + rng.uniform(-gap / 3, gap / 3)) for k in range(cuts)]
            outside = 0
            since = run.acked_total() + rng.randint(10, 40)
            while not devices.done():
                await asyncio.sleep(0.002)
                assert srv.proc is not None
                if srv.proc.poll() is not None:                # the failpoint fired
                    assert srv.proc.returncode == -9, f"the server died on its own: {srv.proc.returncode}"
                    await cut("before an fsync")
                    continue
                due = (run.acked_total() >= since and not stop.is_set()) if until_loss else (
                    outside < cuts and run.acked_total() >= marks[outside])
                if due:
                    await asyncio.sleep(rng.uniform(0, 0.02))   # a random moment while they send
                    await asyncio.to_thread(srv.kill9)
                    outside += 1
                    await cut("outside")
                    since = run.acked_total() + rng.randint(10, 40)

        async with asyncio.timeout(scale(240, 3600)):
            devices = asyncio.gather(*(official(i) for i in range(DEVICES)))
            watcher = asyncio.create_task(supervisor(devices))
            # A failed check in the supervisor stops the devices too.
            watcher.add_done_callback(lambda t: t.cancelled() or t.exception() is None or devices.cancel())
            try:
                await devices
            finally:
                await watcher
        assert srv.proc is not None
        if armed:  # one last cut, so the last start runs without the failpoint
            stop.set()
            if srv.proc.poll() is None:
                await asyncio.to_thread(srv.kill9)
            await cut("at the end")
        assert srv.proc.poll() is None
        run.state_hash = await asyncio.to_thread(live_equals_replay, srv.http, token=srv.admin)
    finally:
        srv.stop()
    await asyncio.to_thread(quiet_cut)
    run.seconds = time.monotonic() - t0
    with contextlib.closing(sqlite3.connect(data / "arena.sqlite")) as c:
        run.rows = [(str(d), str(cid), int(s)) for d, cid, s in c.execute(
            "SELECT device, client_id, seq FROM log WHERE game = 'g1' ORDER BY seq")]
    return run


async def test_power_loss_on_synchronous_full_loses_nothing_acked(
        tmp_path: Path, shim: Path, figures: Figures) -> None:
    per_device = scale(100, 2000)
    outside = scale(5, 50)
    failpoint = scale(5, 40)          # kills instead of a WAL fsync
    run = await power_loss_run(tmp_path, shim, synchronous="FULL", per_device=per_device,
                               cuts=outside, inside=failpoint)
    seqs = [r[2] for r in run.rows]
    sent = sum(map(len, run.sent.values()))
    lost, doubled, unsent = run.lost(), run.doubled(), run.unsent()
    integrity = "ok" if set(run.integrity) == {"ok"} else f"FAILED {run.integrity}"
    inside = run.where.count("before an fsync")
    figures(f"power loss, synchronous=FULL: {len(run.cuts)} cuts while {DEVICES} devices sent "
            f"({run.where.count('outside')} killed at random moments, {inside} killed by the failpoint "
            f"just before a WAL fsync, {run.where.count('at the end')} at the end; "
            f"{run.modes.count('drop')} dropping every unsynced write, {run.modes.count('prefix')} "
            f"keeping a random prefix; {run.caught_mid_commit()} found a commit written but not "
            f"fsynced), {len(run.quiet_cuts)} more after a clean stop",
            cuts=len(run.cuts), outside=run.where.count("outside"), before_fsync=inside,
            caught_mid_commit=run.caught_mid_commit(), quiet_cuts=len(run.quiet_cuts))
    figures(f"{sent:,} events sent, {run.acked_total():,} acked; {run.dropped():,} unsynced writes "
            f"dropped ({run.dropped('arena.sqlite-wal'):,} to the WAL, "
            f"{sum(c.bytes for c in run.cuts + run.quiet_cuts):,} bytes) of "
            f"{sum(c.logged for c in run.cuts + run.quiet_cuts):,} writes and "
            f"{sum(c.syncs for c in run.cuts + run.quiet_cuts):,} fsyncs seen; lost {lost} "
            f"(at the cuts: {sum(run.lost_at_cut)}), duplicates {doubled}, logged but never sent "
            f"{unsent}; integrity_check {integrity} after every cut; {run.seconds:.0f} s",
            sent=sent, acked=run.acked_total(), dropped_writes=run.dropped(),
            dropped_wal_writes=run.dropped("arena.sqlite-wal"), lost=lost,
            lost_at_cuts=sum(run.lost_at_cut), duplicates=doubled, unsent=unsent,
            retried_duplicates=run.retried_duplicates, integrity=integrity,
            seconds=round(run.seconds, 1))
    figures(f"after the last restart: live state hash = replay hash {run.state_hash[:16]}…; "
            f"{run.retried_duplicates} retries answered 'already stored'")
    assert set(run.integrity) == {"ok"}
    assert run.where.count("outside") == outside
    assert inside >= failpoint // 2, "the failpoint should have fired most of its times"
    assert run.caught_mid_commit() > 0, "no cut found a commit written but not yet fsynced"
    assert run.lost_at_cut == [0] * len(run.cuts), "an acked event was gone after a cut"
    assert seqs == list(range(1, len(run.rows) + 1)), "one total order with no gap"
    logged = run.logged()
    for dev in run.acked:
        assert logged[dev] == run.acked[dev] == run.sent[dev], (
            f"{dev}: every acked event once, in order, none extra")
    assert (lost, doubled, unsent) == (0, 0, 0)


async def test_power_loss_on_synchronous_normal_loses_acked_events(
        tmp_path: Path, shim: Path, figures: Figures) -> None:
    """The control: the harness must see a loss where there is one."""
    run = await power_loss_run(tmp_path, shim, synchronous="NORMAL", per_device=scale(300, 2000),
                               cuts=scale(10, 20), until_loss=True, seed=41)
    lost = run.lost()
    seqs = [r[2] for r in run.rows]
    figures(f"control, --unsafe-store --sqlite-synchronous NORMAL: lost {lost} acked events "
            f"(at the cuts: {run.lost_at_cut}) after {len(run.cuts)} cut(s), {run.acked_total():,} "
            f"acked; {run.dropped():,} unsynced writes dropped "
            f"({run.dropped('arena.sqlite-wal'):,} to the WAL): the harness sees loss. "
            f"Still: integrity_check {'ok' if set(run.integrity) == {'ok'} else run.integrity}, "
            f"duplicates {run.doubled()}, logged but never sent {run.unsent()}, "
            f"seq gap-free {seqs == list(range(1, len(seqs) + 1))}, live state = replay; "
            f"{run.seconds:.0f} s",
            control_cuts=len(run.cuts), control_lost=lost, control_acked=run.acked_total(),
            control_dropped_writes=run.dropped(), control_seconds=round(run.seconds, 1))
    assert lost > 0, "synchronous=NORMAL lost nothing: the harness cannot see a loss"
    assert 0 < sum(run.lost_at_cut) <= lost, "the loss shows at the cut that caused it"
    # What NORMAL costs is the last commits, not a corrupt or inconsistent file.
    assert set(run.integrity) == {"ok"}
    assert (run.doubled(), run.unsent()) == (0, 0)
    assert run.order_kept()
    assert seqs == list(range(1, len(run.rows) + 1))
