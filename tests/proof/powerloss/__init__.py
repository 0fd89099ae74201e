"""A power cut, simulated: drop every write that was not fsynced.

``powerloss.c`` is an LD_PRELOAD layer (Python's ``sqlite3`` is linked against
the system libsqlite3, so a SQLite VFS shim would not reach it; the C library
calls do). It logs an undo record before each write or truncate of a file
under ``$POWERLOSS_DIR``, and a sync record after each successful ``fsync`` or
``fdatasync``. After the process is killed (``SIGKILL``: the log is in the
kernel's page cache, so it survives), :func:`power_cut` rolls each file back
to what its last sync made durable, as if the machine had lost power.

What it models and what it doesn't: docs/reliability.md ("Power loss").
"""

from __future__ import annotations

import os
import random
import shutil
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

SOURCE = Path(__file__).with_name("powerloss.c")

_HEAD = struct.Struct("<cI")    # kind, path length
_NUMS = struct.Struct("<qqqI")  # offset, size before, count, old length


def build_shim(tmpdir: Path) -> Path:
    """Compile the layer into ``tmpdir``; returns the ``.so`` for LD_PRELOAD."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        raise RuntimeError("the power-loss proof needs a C compiler (gcc)")
    out = Path(tmpdir) / "powerloss.so"
    subprocess.run([gcc, "-shared", "-fPIC", "-O2", "-Wall", "-o", str(out), str(SOURCE), "-ldl"],
                   check=True, capture_output=True)
    return out


def preload_env(shim: Path, directory: Path, log: Path) -> dict[str, str]:
    """The environment for a process whose writes under ``directory`` may be cut."""
    return {"LD_PRELOAD": str(shim), "POWERLOSS_DIR": str(Path(directory).resolve()),
            "POWERLOSS_LOG": str(log)}


def kill_at_sync(n: int, *, match: str) -> dict[str, str]:
    """The failpoint's environment: instead of its ``n``th sync of a file whose
    path ends with ``match``, the process SIGKILLs itself."""
    return {"POWERLOSS_KILL_AT_SYNC": str(n), "POWERLOSS_KILL_MATCH": match}


@dataclass
class Op:
    """One record of the undo log."""

    pos: int          # where the record starts in the log
    kind: str         # "W" write, "T" truncate, "S" sync
    path: str
    offset: int       # W: start; T: new length; S: the log length when the sync began
    size: int         # the file's size before a W or T
    count: int        # the bytes a W wrote
    old: bytes        # the bytes it overwrote or cut off


def read_log(log: Path) -> list[Op]:
    """The records, in the order they happened; a record cut short by the kill
    is dropped (its write had not started: the record goes first)."""
    data = Path(log).read_bytes() if Path(log).exists() else b""
    ops: list[Op] = []
    i = 0
    while True:
        start = i
        if i + _HEAD.size > len(data):
            break
        kind, plen = _HEAD.unpack_from(data, i)
        i += _HEAD.size
        if i + plen + _NUMS.size > len(data):
            break
        path = data[i:i + plen].decode()
        i += plen
        offset, size, count, olen = _NUMS.unpack_from(data, i)
        i += _NUMS.size
        if i + olen > len(data):
            break
        ops.append(Op(start, kind.decode(), path, offset, size, count, data[i:i + olen]))
        i += olen
    return ops


@dataclass
class Cut:
    """What a power cut dropped."""

    logged: int = 0              # writes and truncates the layer saw since the last cut
    syncs: int = 0               # fsyncs and fdatasyncs it saw
    files: int = 0               # files that lost at least one write
    writes: int = 0              # unsynced writes and truncates undone
    bytes: int = 0               # bytes those writes had written
    kept: int = 0                # unsynced writes that landed anyway (mode "prefix")
    by_file: dict[str, int] = field(default_factory=dict)  # writes dropped, by file name
    unsynced_by_file: dict[str, int] = field(default_factory=dict)  # dropped or kept, by name


def power_cut(log: Path, *, mode: str = "drop", seed: int | None = None) -> Cut:
    """Roll every file back to what its last sync made durable, then delete the log.

    ``mode="drop"``: every unsynced write is lost (the strictest cut).
    ``mode="prefix"``: for each file, a random prefix (in time order) of its
    unsynced writes reached the disk before the power went, the rest did not
    (``seed`` picks it).
    """
    ops = read_log(Path(log))
    barrier: dict[str, int] = {}
    for op in ops:
        if op.kind == "S":
            barrier[op.path] = max(barrier.get(op.path, 0), op.offset)
    unsynced: dict[str, list[Op]] = {}
    for op in ops:
        if op.kind in "WT" and op.pos >= barrier.get(op.path, 0):
            unsynced.setdefault(op.path, []).append(op)
    rng = random.Random(seed)
    cut = Cut(logged=sum(op.kind in "WT" for op in ops), syncs=sum(op.kind == "S" for op in ops))
    for path, todo in unsynced.items():
        cut.unsynced_by_file[os.path.basename(path)] = len(todo)
        if mode == "prefix":
            keep = rng.randint(0, len(todo))
            cut.kept += keep
            todo = todo[keep:]
        elif mode != "drop":
            raise ValueError(f"unknown mode {mode!r}")
        if not todo or not os.path.exists(path):
            continue  # an unlink is treated as durable (see the docs)
        cut.files += 1
        fd = os.open(path, os.O_RDWR)
        try:
            for op in reversed(todo):
                if op.kind == "W":  # put back what it overwrote, and the length before it
                    os.pwrite(fd, op.old, op.offset)
                    os.ftruncate(fd, op.size)
                    cut.bytes += op.count
                else:  # T: put back the length and what it cut off
                    os.ftruncate(fd, op.size)
                    if op.old:
                        os.pwrite(fd, op.old, op.offset)
                cut.writes += 1
                name = os.path.basename(path)
                cut.by_file[name] = cut.by_file.get(name, 0) + 1
        finally:
            os.close(fd)
    Path(log).unlink(missing_ok=True)
    return cut
