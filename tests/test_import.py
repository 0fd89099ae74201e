"""``arena-stream import``: an exported log into an empty store, on a real SQLite file and on
the real three-member etcd cluster.

* The records are those the live service writes: the same log submitted through a real
  ``Hub`` leaves exactly the records the import writes (game, seq, device, id, digest…).
* A log like the demo's (two games, cards, a red served in the next game, a void, ticks,
  the event's set-up and completion) round-trips: the store's fold equals the file's replay,
  and a service started on the imported store serves that hash on ``GET /api/state`` and the
  file itself on ``GET /api/log``.
* A store that holds records is refused (exit 2), and so is a bad line, naming it, with
  nothing written.
* Through ``etcds://user:password@…`` with the CA and a client certificate, on a cluster
  with TLS and etcd's authentication on, it imports the same.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest

from stream.cli import main
from stream.live.hub.dedup import digest
from stream.live.hub.hub import Hub
from stream.migrate.records import file_hash, records_of, sender
from stream.rules import codec
from stream.store import START, Record
from stream.store.etcd import EtcdStore
from stream.store.sqlite import SqliteStore
from stream.tools.harness import EtcdCluster, Processes, ServiceProcess
from stream.tools.harness.tls import make_tls
from stream.tools.live_log import demo_tournament, jsonl

from .sinks import Deltas


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "export.jsonl"
    path.write_bytes(jsonl(demo_tournament()))
    return path


def _records(store: SqliteStore | EtcdStore) -> list[Record]:
    async def read() -> list[Record]:
        await store.open()
        try:
            return await store.records()
        finally:
            await store.close()
    return asyncio.run(read())


def _served(data: Path, store: str | None, tmp_path: Path) -> tuple[str, bytes]:
    """``GET /api/state``'s hash and ``GET /api/log`` of a service started on the store."""
    import urllib.request

    with Processes(tmp_path / "procs") as group:
        svc = ServiceProcess(data, store=store, log=tmp_path / "service.log")
        group.add(svc)
        svc.start()
        state = svc.get("/api/state", svc.admin)["sha256"]
        req = urllib.request.Request(svc.http + "/api/log", headers={"Authorization": f"Bearer {svc.admin}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            exported = r.read()
        svc.stop()
    return state, exported


def test_the_records_are_those_the_hub_writes_for_the_same_events(log: Path, tmp_path: Path) -> None:
    events = [e for _, e in codec.read_log(io.BytesIO(log.read_bytes()))]

    async def through_the_hub() -> list[Record]:
        hub = Hub(SqliteStore(tmp_path / "hub.sqlite"), Deltas())
        await hub.start()
        try:
            for e in events:
                assert not isinstance(e, Exception)
                device, client_id = sender(e.id)
                await hub.submit(device=device, official="", client_id=client_id,
                                 payload_digest=digest(codec.encode_event(e)), event=e, received_at=e.at)
            return await hub.store.records()
        finally:
            await hub.close()

    imported = records_of(log)
    assert imported == asyncio.run(through_the_hub())
    by_type = {json.loads(r.body)["type"]: r for r in imported}
    tick, void, setup = by_type["tick"], by_type["void"], by_type["event.setup"]
    assert (tick.device, tick.client_id[:5], tick.game) == ("system", "tick:", json.loads(tick.body)["game"])
    assert (setup.game, setup.seq, setup.device) == (None, None, "committee")
    assert void.game == "demo-final" and void.device == "referee-demo-final"
    seqs: dict[str, list[int]] = {}
    for r in imported:
        assert r.received_at == json.loads(r.body)["at"] and r.official == ""
        if r.game is not None:
            seqs.setdefault(r.game, []).append(r.seq or 0)
    assert {g: s == list(range(1, len(s) + 1)) for g, s in seqs.items()} == {"demo-semi": True,
                                                                             "demo-final": True}


def test_a_log_round_trips_through_sqlite_and_a_service_serves_it(
        log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    assert main(["import", "--store", "sqlite", "--data", str(data), str(log)]) == 0
    expected = file_hash(log)
    assert capsys.readouterr().out == (f"imported 130 events into sqlite:{data}/arena.sqlite; state "
                                       f"sha256 {expected} (equal to the file's replay)\n")
    assert _records(SqliteStore(data / "arena.sqlite")) == records_of(log)
    assert _served(data, None, tmp_path) == (expected, log.read_bytes())


def test_a_log_round_trips_through_etcd_and_a_service_serves_it(
        log: Path, tmp_path: Path, etcd_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "--store", etcd_url, str(log)]) == 0
    expected = file_hash(log)
    assert capsys.readouterr().out.endswith(f"; state sha256 {expected} (equal to the file's replay)\n")
    assert _records(EtcdStore(etcd_url)) == records_of(log)
    assert _served(tmp_path / "node", etcd_url, tmp_path) == (expected, log.read_bytes())


@pytest.mark.parametrize("kind", ["sqlite", "etcd"])
def test_a_store_that_holds_records_is_refused(kind: str, log: Path, tmp_path: Path,
                                               request: pytest.FixtureRequest,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    url = "sqlite" if kind == "sqlite" else request.getfixturevalue("etcd_url")

    def store() -> SqliteStore | EtcdStore:
        return SqliteStore(data / "arena.sqlite") if kind == "sqlite" else EtcdStore(url)

    one = records_of(log)[0]

    async def seed() -> None:
        s = store()
        await s.open()
        await s.append(one)
        await s.close()

    asyncio.run(seed())
    assert main(["import", "--store", url, "--data", str(data), str(log)]) == 2
    assert ("the store already holds 1 records: an import goes into an empty store only; nothing was "
            "imported") in capsys.readouterr().err
    assert _records(store()) == [one]


@pytest.mark.parametrize("bad, code", [
    (b'{"type": "goal", "id": "x/1", "at": 5\n', "malformed_json"),
    (b'{"type":"card","id":"umpire-9/1","at":1780000000000,"game":"no-such-game","player":"p",'
     b'"color":"yellow"}\n', "unknown_game"),
])
def test_a_bad_line_is_refused_by_its_number_with_nothing_written(
        bad: bytes, code: str, log: Path, tmp_path: Path, etcd_url: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:40]) + bad + b"".join(lines[40:]))
    data = tmp_path / "data"
    assert main(["import", "--store", "sqlite", "--data", str(data), str(log)]) == 2
    err = capsys.readouterr().err
    assert f"{log}: line 41: " in err and f"({code}); nothing was imported" in err
    assert not (data / "arena.sqlite").exists()
    assert main(["import", "--store", etcd_url, str(log)]) == 2
    assert "line 41: " in capsys.readouterr().err

    async def nothing_under_the_prefix() -> tuple[str, int]:
        store = EtcdStore(etcd_url)
        await store.open()
        try:
            return await store.end(), len((await store.rows_after(START))[1])
        finally:
            await store.close()
    assert asyncio.run(nothing_under_the_prefix()) == (START, 0)


def test_import_through_etcds_as_a_user_of_the_prefix(log: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    tls = make_tls(tmp_path / "tls")
    with Processes(tmp_path / "etcd") as group:
        cluster = EtcdCluster(tmp_path / "etcd", group=group, tls=tls)
        cluster.start()
        for step in (("user", "add", "root", "--new-user-password=root-pw"),
                     ("user", "add", "arena", "--new-user-password=s3cret"), ("role", "add", "arena"),
                     ("role", "grant-permission", "arena", "--prefix=true", "readwrite", "moved/"),
                     ("user", "grant-role", "arena", "arena"), ("auth", "enable")):
            cluster.ctl(*step)
        files = ["--etcd-ca", str(tls.ca), "--etcd-cert", str(tls.client_cert),
                 "--etcd-key", str(tls.client_key)]
        assert main(["import", str(log), "--store", cluster.url("moved/", user="arena:s3cret"), *files]) == 0
        out = capsys.readouterr().out
        assert out.startswith("imported 130 events into etcds://127.0.0.1:") and "s3cret" not in out
        assert out.endswith(f"state sha256 {file_hash(log)} (equal to the file's replay)\n")
        assert main(["import", str(log), "--store", cluster.url("moved/", user="arena:wrong"), *files]) == 2
        assert "authentication failed" in capsys.readouterr().err
        assert len(cluster.ctl("get", "--prefix", "moved/log/", "--keys-only").split()) == 130
        cluster.stop()
