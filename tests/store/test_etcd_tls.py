"""The etcd store over TLS, and with etcd's authentication, on a real three-member cluster
whose members take clients and each other over TLS only, each presenting a certificate of
the cluster's CA (``--client-cert-auth``, ``--peer-client-cert-auth``). The CA and the
certificates are made here with ``openssl`` (``stream/tools/harness/tls.py``).

* With the CA and the client certificate, ``etcds://`` appends and reads.
* Without the client certificate, or trusting another CA, the store is refused at once, at
  ``open``, saying it is TLS and what to check: never "not reachable", never "the write may
  be committed".
* With authentication on (``root`` and a user whose role reads and writes one prefix):
  ``etcds://user:password@…`` appends and reads under its prefix; outside it, a wrong
  password and no user at all are each refused at ``open`` (``StartupRefused``) with etcd's
  reason. A token etcd no longer knows (the members restarted: tokens live in their memory)
  is taken again by the next call. (``arena-stream import`` through such a URL, with its
  ``--etcd-*`` files: ``tests/test_import.py``.)

The tests that need authentication come last in this file: the fixture that turns it on
does so for the rest of the module's cluster.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from stream.errors import StartupRefused
from stream.store.etcd import EtcdStore
from stream.tools.harness import EtcdCluster, Processes
from stream.tools.harness.tls import TLSFiles, make_ca, make_tls

from .backends import rec

pytestmark = pytest.mark.etcd   # a cluster of its own: the fixture names are not the shared ones

PASSWORD = "s3cret-arena"


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TLSFiles:
    return make_tls(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, tls: TLSFiles) -> Iterator[EtcdCluster]:
    """Three members with TLS for clients and peers, for the module."""
    work = tmp_path_factory.mktemp("etcd-tls")
    with Processes(work) as processes:
        c = EtcdCluster(work, group=processes, tls=tls)
        c.start()
        yield c
        c.stop()


@pytest.fixture(scope="module")
def authenticated(cluster: EtcdCluster) -> str:
    """Authentication on, with ``root`` and the user ``arena``, whose role reads and writes
    ``arena-p/`` alone: the ``user:password`` of ``arena``."""
    for step in (("user", "add", "root", "--new-user-password=root-pw"),
                 ("user", "add", "arena", f"--new-user-password={PASSWORD}"),
                 ("role", "add", "arena"),
                 ("role", "grant-permission", "arena", "--prefix=true", "readwrite", "arena-p/"),
                 ("user", "grant-role", "arena", "arena"),
                 ("auth", "enable")):
        cluster.ctl(*step)
    return f"arena:{PASSWORD}"


def _store(url: str, tls: TLSFiles, *, ca: Path | None = None, cert: bool = True,
           budget: float = 3.0) -> EtcdStore:
    """The store on ``url`` trusting ``ca`` (the cluster's), presenting the client certificate
    (unless not ``cert``)."""
    return EtcdStore(url, ca=str(ca or tls.ca), cert=str(tls.client_cert) if cert else None,
                     key=str(tls.client_key) if cert else None, budget=budget)


@pytest.fixture
async def opened(cluster: EtcdCluster, tls: TLSFiles) -> AsyncIterator[EtcdStore]:
    store = _store(cluster.url("tls-p/"), tls)
    await store.open()
    try:
        yield store
    finally:
        await store.close()


async def _refusal(store: EtcdStore) -> str:
    with pytest.raises(StartupRefused) as refused:
        await store.open()
    await store.close()
    return refused.value.detail


async def test_with_the_ca_and_a_client_certificate_it_appends_and_reads(
        cluster: EtcdCluster, opened: EtcdStore) -> None:
    assert opened.where.startswith("etcds://127.0.0.1:")
    await opened.append(rec(1))
    await opened.append(rec(2))
    assert await opened.records() == [rec(1), rec(2)]
    assert cluster.ctl("get", "--prefix", "tls-p/log/", "--keys-only").split() == [
        "tls-p/log/g/g1/0000000001", "tls-p/log/g/g1/0000000002"]


async def test_without_the_client_certificate_it_is_refused_clearly(cluster: EtcdCluster,
                                                                    tls: TLSFiles) -> None:
    detail = await _refusal(_store(cluster.url("tls-p/"), tls, cert=False))
    assert "every etcd member refused this client's TLS" in detail
    assert "BAD_CERTIFICATE" in detail and "--etcd-cert" in detail
    assert "may be committed" not in detail and "not reachable" not in detail


async def test_trusting_another_ca_it_is_refused_clearly(cluster: EtcdCluster, tls: TLSFiles,
                                                         tmp_path: Path) -> None:
    other, _ = make_ca(tmp_path / "other")
    detail = await _refusal(_store(cluster.url("tls-p/"), tls, ca=other))
    assert "every etcd member refused this client's TLS" in detail
    assert "CERTIFICATE_VERIFY_FAILED" in detail and "--etcd-ca" in detail


# -------------------------------------------------- authentication on, from here to the end


async def test_a_user_with_a_role_on_the_prefix_appends_and_reads_there_only(
        cluster: EtcdCluster, tls: TLSFiles, authenticated: str) -> None:
    store = _store(cluster.url("arena-p/", user=authenticated), tls)
    await store.open()
    try:
        assert "s3cret" not in store.where
        await store.append(rec(1))
        assert await store.records() == [rec(1)]
    finally:
        await store.close()
    outside = await _refusal(_store(cluster.url("elsewhere/", user=authenticated), tls))
    assert "PermissionDenied" in outside and "permission denied" in outside


async def test_a_wrong_password_or_no_user_is_refused_at_open(
        cluster: EtcdCluster, tls: TLSFiles, authenticated: str) -> None:
    wrong = await _refusal(_store(cluster.url("arena-p/", user="arena:not-the-password"), tls))
    assert "refused the store's user 'arena'" in wrong and "authentication failed" in wrong
    assert "not-the-password" not in wrong
    nobody = await _refusal(_store(cluster.url("arena-p/"), tls))
    assert "user name is empty" in nobody


async def test_a_token_the_members_lost_is_taken_again(
        cluster: EtcdCluster, tls: TLSFiles, authenticated: str) -> None:
    """etcd keeps its tokens in each member's memory: once every member has restarted, the
    store's token is unknown to all, and its next call authenticates again and goes through."""
    store = _store(cluster.url("arena-p/restart/", user=authenticated), tls, budget=10.0)
    await store.open()
    try:
        await store.append(rec(1))
        before = store.gateway._token
        assert before is not None
        await cluster.arestart_all()
        await store.append(rec(2))   # answered "invalid auth token" first, then authenticated again
        assert await store.records() == [rec(1), rec(2)]
        assert store.gateway._token not in (None, before), "the lost token was not taken again"
    finally:
        await store.close()

