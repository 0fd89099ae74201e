"""docs/deployment.md, "etcd: backups and replacing a member", done on a real cluster with
the commands the page gives: keys written through the JSON gateway, a snapshot saved and
checked, a member lost for good (killed, its data directory wiped) removed and added
again with ``etcdctl`` and started empty, and a new cluster restored from the snapshot.
Every ``etcdctl`` command run here has its form (its subcommand and its flags) on the
page, and every flag the page gives exists in the installed etcd and etcdctl."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from stream.tools.harness import EtcdCluster, EtcdError, Processes
from stream.tools.harness.etcd import etcdctl

from ..docs_text import doc_text, section_of

pytestmark = pytest.mark.etcd

SECTION = section_of(doc_text("deployment.md"), "## etcd: backups and replacing a member")
#: etcdctl's flags that take no value, in the page's commands.
BOOLEAN_FLAGS = {"--cluster", "--prefix", "--keys-only"}


class Ctl:
    """``etcdctl`` as the page runs it, every command kept for the check against the page."""

    def __init__(self) -> None:
        self.ran: list[list[str]] = []

    def __call__(self, *args: str, endpoints: str | None = None, stderr: bool = False) -> str:
        self.ran.append([*([f"--endpoints={endpoints}"] if endpoints else []), *args])
        return etcdctl(*args, endpoints=endpoints, stderr=stderr)


def form(words: list[str]) -> tuple[str, frozenset[str]]:
    """An etcdctl command's form: its subcommand (``member add``) and its flags' names."""
    flags, positional = set(), []
    rest = iter(words)
    for word in rest:
        if word.startswith("-"):
            name = word.split("=", 1)[0]
            flags.add(name)
            if "=" not in word and name not in BOOLEAN_FLAGS:
                next(rest, None)
        else:
            positional.append(word)
    return " ".join(positional[:2]), frozenset(flags)


def page_commands(program: str) -> list[list[str]]:
    """Every ``program`` command line in the section's code blocks, continuations joined."""
    blocks = re.findall(r"```sh\n(.*?)```", SECTION, re.DOTALL)
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
    return [shlex.split(line, comments=True)[1:] for line in lines
            if line.strip().startswith(f"{program} ")]


def table_rows(table: str) -> list[list[str]]:
    """The rows of ``-w table`` output under its header, cell by cell."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in table.splitlines() if line.startswith("|")]
    return rows[1:]


def test_backup_replace_a_member_lost_for_good_and_restore(etcd_cluster: EtcdCluster, tmp_path: Path) -> None:
    c, ctl = etcd_cluster, Ctl()
    before = {f"ops/{i:03d}": f"before-{i}" for i in range(60)}
    for i, (key, value) in enumerate(before.items()):
        revision = c.members[i % 3].put(key, value)
    assert c.members[0].get(key) == value   # read through the leader: member 0 has applied every write

    # Backup: a snapshot from one member, and its check.
    snapshot = tmp_path / "arena-etcd.db"
    saved = ctl("snapshot", "save", str(snapshot), endpoints=c.members[0].endpoint)
    assert "Snapshot saved" in saved and snapshot.stat().st_size > 0
    [[_hash, snap_revision, total_keys, _size]] = table_rows(ctl("snapshot", "status", str(snapshot),
                                                                 "-w", "table"))
    assert int(snap_revision) == revision and int(total_keys) >= len(before)
    with pytest.raises(EtcdError, match="one selected node"):   # the page: exactly one endpoint
        etcdctl("snapshot", "save", str(tmp_path / "two.db"), endpoints=c.endpoints)

    after = {f"ops/after-{i}": "after" for i in range(10)}
    for key, value in after.items():
        c.write(key, value)

    # A member lost for good: the leader, killed, its disk gone.
    lost = c.leader()
    c.kill(lost)
    shutil.rmtree(lost.data_dir)
    left = [m for m in c.members if m is not lost]
    others = ",".join(m.endpoint for m in left)
    c.leader()   # the page: wait until the members left show a leader
    rows = table_rows(ctl("endpoint", "status", "-w", "table", endpoints=others))
    assert [r[4] for r in rows].count("true") == 1, rows   # IS LEADER

    listing = ctl("member", "list", endpoints=others)
    [line] = [ln for ln in listing.splitlines() if f", {lost.name}, " in ln]
    member_id = line.split(",")[0]
    assert re.fullmatch(r"[0-9a-f]+", member_id)
    removed = ctl("member", "remove", member_id, endpoints=others)
    assert re.search(rf"Member +{member_id} removed", removed), removed
    assert member_id not in ctl("member", "list", endpoints=others)
    added = add_again(ctl, lost.name, lost.peer_url, others)
    initial = re.search(r'^ETCD_INITIAL_CLUSTER="([^"]*)"$', added, re.MULTILINE)
    assert initial and f"{lost.name}={lost.peer_url}" in initial.group(1).split(",")
    assert 'ETCD_INITIAL_CLUSTER_STATE="existing"' in added
    # Its data directory empty, --initial-cluster-state existing and the line member add printed.
    c.restart(lost, initial_cluster=initial.group(1))
    assert "--initial-cluster-state existing" in " ".join(c.command(lost))

    health = ctl("endpoint", "health", "--cluster", endpoints=c.endpoints, stderr=True)
    healthy = re.findall(r"^(\S+) is healthy", health, re.MULTILINE)
    assert sorted(healthy) == sorted(m.client_url for m in c.members)
    rows = table_rows(ctl("endpoint", "status", "-w", "table", endpoints=c.endpoints))
    assert sorted(r[0] for r in rows) == sorted(m.endpoint for m in c.members)
    assert [r[4] for r in rows].count("true") == 1
    assert next(r for r in rows if r[0] == lost.endpoint)[1] != member_id, "a new member ID"
    # Every key, read from the new member alone.
    assert lost.range("ops/", serializable=True) == {**before, **after}

    # Restore a whole new cluster from the snapshot: what was written before it, nothing after.
    with Processes(tmp_path / "restored") as group:
        restored = EtcdCluster(tmp_path / "restored", group=group, name="restored")
        for m in restored.members:
            ctl("snapshot", "restore", str(snapshot), "--name", m.name,
                "--initial-cluster", restored.initial_cluster, "--initial-cluster-token", restored.token,
                "--initial-advertise-peer-urls", m.peer_url, "--data-dir", str(m.data_dir))
        restored.start()
        for m in restored.members:
            assert m.range("ops/", serializable=True) == before
        statuses = (restored.status(restored.members[0]), c.status(c.members[0]))
        ids = {s["header"]["cluster_id"] for s in statuses if s}
        assert len(ids) == 2, "a new cluster"
        restored.write("ops/restored", "yes")
        assert restored.members[2].get("ops/restored") == "yes"
        restored.stop()

    # Each command run here is on the page, in the same form.
    documented = {form(words) for words in page_commands("etcdctl")}
    missing = {form(words) for words in ctl.ran} - documented
    assert not missing, f"run here but not on the page: {sorted(missing)}"


def add_again(ctl: Ctl, name: str, peer_url: str, endpoints: str) -> str:
    """``member add``, run again while it answers "unhealthy cluster" (the page says why), at
    most 20 times."""
    for _ in range(20):
        try:
            return ctl("member", "add", name, f"--peer-urls={peer_url}", endpoints=endpoints)
        except EtcdError as e:
            if "unhealthy cluster" not in str(e):
                raise
            time.sleep(0.5)
    raise AssertionError("member add: unhealthy cluster, 20 times")


def _help_flags(*argv: str) -> set[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", done.stdout + done.stderr))


def test_every_flag_the_page_gives_exists_in_the_installed_etcd() -> None:
    etcd_lines, ctl_lines = page_commands("etcd"), page_commands("etcdctl")
    assert len(etcd_lines) == 2 and len(ctl_lines) >= 9, "the section is read"
    real = _help_flags("etcd", "--help")
    for words in etcd_lines:
        unknown = {w.split("=")[0] for w in words if w.startswith("--")} - real
        assert not unknown, f"etcd: {sorted(unknown)}"
        assert "--pre-vote" in words and "2147483648" in words
    for words in ctl_lines:
        sub = form(words)[0].split()
        real = _help_flags("etcdctl", *sub, "--help")
        unknown = set(form(words)[1]) - real - {"-w"}
        assert not unknown, f"etcdctl {' '.join(sub)}: {sorted(unknown)}"
