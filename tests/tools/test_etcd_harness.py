"""The etcd harness on a real three-member cluster (Debian's etcd 3.4): it starts with the
production settings, and the faults it makes are the ones it says: a killed leader is
followed by a new one and writes go on; a killed member restarted serves and catches up;
two of three paused take no write, resumed they do; a member replaced serves every key.
Each test leaves the module's cluster whole (three members serving) for the next."""

from __future__ import annotations

import re
import secrets
import urllib.request
from pathlib import Path

import pytest

from stream.tools.harness import EtcdCluster, EtcdMember, Processes
from stream.tools.harness.etcd import QUOTA_BYTES, etcdctl, member_ids, prefix_end


def _keys(tag: str, n: int = 5) -> dict[str, str]:
    prefix = f"harness/{tag}-{secrets.token_hex(3)}/"
    return {f"{prefix}{i}": f"{tag}-{i}" for i in range(n)}


def _member_id(cluster: EtcdCluster, m: EtcdMember) -> str:
    status = cluster.status(m)
    assert status is not None, f"{m.name} does not answer"
    return str(status["header"]["member_id"])


def _metric(m: EtcdMember, name: str) -> float:
    with urllib.request.urlopen(f"{m.client_url}/metrics", timeout=5) as r:
        text = r.read().decode()
    found = re.search(rf"^{name} (\S+)$", text, re.MULTILINE)
    assert found, f"{m.name} has no {name}"
    return float(found.group(1))


def test_the_cluster_serves_with_the_production_settings(etcd_cluster: EtcdCluster) -> None:
    c = etcd_cluster
    assert len(c.members) == 3 and all(m.healthy() for m in c.members)
    assert c.endpoints == ",".join(f"127.0.0.1:{m.client_port}" for m in c.members)
    statuses = [c.status(m) for m in c.members]
    assert all(s is not None for s in statuses)
    assert len({s["header"]["cluster_id"] for s in statuses if s}) == 1, "one cluster, not three"
    assert sum(_metric(m, "etcd_server_is_leader") for m in c.members) == 1
    assert all(_metric(m, "etcd_server_quota_backend_bytes") == QUOTA_BYTES for m in c.members)
    # A write through one member is read from each of the others.
    keys = _keys("settings", 2)
    for key, value in keys.items():
        c.members[0].put(key, value)
    assert all(m.range(next(iter(keys)).rsplit("/", 1)[0] + "/") == keys for m in c.members[1:])


def test_fsync_cannot_be_turned_off(tmp_path: Path) -> None:
    with Processes(tmp_path) as group, pytest.raises(ValueError, match="fsync"):
        EtcdCluster(tmp_path, group=group, extra_args=["--unsafe-no-fsync"])


def test_etcd_url_names_the_cluster_and_a_prefix_of_the_tests_own(etcd_url: str, etcd_cluster: EtcdCluster,
                                                                 request: pytest.FixtureRequest) -> None:
    found = re.fullmatch(r"etcd://([^/]+)/(t-[0-9a-f]{12}/)", etcd_url)
    assert found, etcd_url
    assert found.group(1) == etcd_cluster.endpoints
    assert etcd_cluster.members[0].range(found.group(2)) == {}, "a fresh prefix holds nothing"
    assert request.node.get_closest_marker("etcd") is not None, "marked etcd by tests/conftest.py"


def test_a_prefix_range_ends_where_the_prefix_does() -> None:
    assert prefix_end(b"t-ab/") == b"t-ab0"
    assert prefix_end(b"a\xff") == b"b"
    assert prefix_end(b"") == b"\0"


def test_a_killed_leader_is_followed_by_a_new_one_and_writes_go_on(etcd_cluster: EtcdCluster) -> None:
    c = etcd_cluster
    old = c.leader()
    c.kill(old)
    try:
        assert c.status(old) is None
        new = c.leader(timeout=10)
        assert new is not old
        keys = _keys("after-kill")
        for key, value in keys.items():
            new.put(key, value)
        other = next(m for m in c.members if m not in (old, new))
        assert {k: other.get(k) for k in keys} == keys
    finally:
        c.restart(old)


def test_a_killed_member_restarted_serves_again_and_catches_up(etcd_cluster: EtcdCluster) -> None:
    c = etcd_cluster
    down = c.followers()[0]
    before = _member_id(c, down)
    c.kill(down)
    keys = _keys("while-down", 20)
    for key, value in keys.items():
        c.write(key, value)
    assert not down.healthy()
    c.restart(down)
    assert down.healthy()
    assert _member_id(c, down) == before, "the same member, on its own data directory"
    # Read from it alone: what it applied, written while it was down.
    assert {k: down.get(k, serializable=True) for k in keys} == keys


def test_two_of_three_paused_take_no_write_and_resumed_they_do(etcd_cluster: EtcdCluster) -> None:
    c = etcd_cluster
    leader = c.leader()
    follower, left = c.followers()
    c.pause(leader)
    c.pause(follower)
    try:
        with pytest.raises(TimeoutError):
            left.put("harness/paused", "never acked", timeout=2.0)
    finally:
        c.resume(leader)
        c.resume(follower)
    keys = _keys("resumed")
    for key, value in keys.items():
        c.write(key, value)
    assert all({k: m.get(k) for k in keys} == keys for m in c.members)
    assert c.leader() in c.members


def test_a_member_lost_for_good_is_replaced_and_serves_every_key(etcd_cluster: EtcdCluster) -> None:
    c = etcd_cluster
    keys = _keys("before-loss", 20)
    for key, value in keys.items():
        c.write(key, value)
    lost = c.followers()[0]
    old_id = _member_id(c, lost)
    new = c.replace(lost)
    assert new in c.members and lost not in c.members
    assert (new.name, new.client_port, new.data_dir) == (lost.name, lost.client_port, lost.data_dir)
    assert _member_id(c, new) != old_id, "a new member, not the old one back"
    listing = member_ids(etcdctl("member", "list", endpoints=c.endpoints))
    assert listing[new.name] == f"{int(_member_id(c, new)):x}" and len(listing) == 3
    assert {k: new.get(k, serializable=True) for k in keys} == keys


async def test_astart_and_arestart_from_a_coroutine(tmp_path: Path) -> None:
    async with Processes(tmp_path) as group:
        c = EtcdCluster(tmp_path, size=1, group=group, name="solo")
        await c.astart()
        [m] = c.members
        m.put("solo/a", "1")
        c.kill(m)
        await c.arestart(m)
        assert m.get("solo/a", serializable=True) == "1"
        await c.astop()
        assert not m.process.alive


def test_a_member_that_cannot_start_fails_with_the_end_of_its_log(tmp_path: Path) -> None:
    with Processes(tmp_path) as group:
        c = EtcdCluster(tmp_path, size=1, group=group, heartbeat_ms=100, election_ms=10)
        with pytest.raises(RuntimeError, match=r"(?s)etcd-1 exited .*its log ends:.*--election-timeout"):
            c.start()
