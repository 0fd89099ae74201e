"""``arena-stream archive``: an ended, completed event moved out of the etcd store into a file
that ``replay`` reads, on the real three-member cluster.

* The demo's event (two games, a suspension served across them, a void, ticks; what it
  still owed rescinded, then completed) beside a later event of other teams: the file
  replays to the fold of exactly its records and holds the event as the log had it; the
  event's records and dedup keys are gone from etcd, the later event's are all there and
  fold as before, tokens are untouched. A node running during the archive keeps the event
  until it restarts; restarted, it comes up without it (its snapshot held the event and is
  not loaded) and serves the rest.
* Refused, nothing written or deleted: an event not completed, a game not ended, an
  obligation still owed, a suspension served in another event's game (the rest would fold
  differently), a store that is not etcd, a file that exists.
* A store that fails midway leaves the file and what is left to delete; ``--resume``
  finishes it.
"""

from __future__ import annotations

import asyncio
import json
import random
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from stream.cli import main
from stream.errors import NotStored
from stream.migrate.archive import archive
from stream.migrate.importer import import_records
from stream.migrate.records import file_hash, fold, records_of
from stream.store import Record
from stream.store.etcd import EtcdStore
from stream.store.etcd_client import parse_url
from stream.tools import demo
from stream.tools.bench_replay import game_events
from stream.tools.harness import EtcdCluster, Processes, ServiceProcess
from stream.tools.live_log import as_live, demo_tournament, jsonl

from .tcp_proxy import Proxy

EVENT = demo.EVENT            # demo-cup: demo-semi, then demo-final
LATER = "spring-cup"
T_LATER = demo.DEMO_T0 + 4 * 3_600_000


def _later_event(*, same_teams: bool) -> list[dict[str, Any]]:
    """A later event, not completed, as the service logs it: of other teams (a plausible game
    of its own), or of the demo's two teams (the demo game played again): then its game
    serves what the demo's event owes."""
    setup: dict[str, Any] = {"type": "event.setup", "id": f"{LATER}-setup", "at": T_LATER - 3_600_000,
                             "event": LATER, "class": "club", "handicap": 8, "completed": False,
                             "teams": [demo.HOME["team"], demo.AWAY["team"]] if same_teams else []}
    if same_teams:
        game = {**demo.setup_events(T_LATER, "spring-final", LATER)[-1], "id": "spring-final-setup"}
        play = [game, *(e for _, e in demo.script_events(T_LATER, "spring-final"))]
    else:
        play = game_events(random.Random(1), "spring-1", LATER, T_LATER, 60)
    return as_live([setup, *play], lambda e: "spring-umpire")


def _log(tmp_path: Path, *, settle: bool = True, complete: bool = True, same_teams: bool = False,
         cut: int = 0) -> Path:
    """The demo's event (the last ``cut`` of its events left out), then a later one."""
    events = demo_tournament(settle=settle, complete=complete)
    path = tmp_path / "export.jsonl"
    path.write_bytes(jsonl([*events[:len(events) - cut], *_later_event(same_teams=same_teams)]))
    return path


def _load(url: str, log: Path) -> list[Record]:
    asyncio.run(import_records(lambda: EtcdStore(url), log))
    return records_of(log)


def _held(url: str) -> list[Record]:
    async def read() -> list[Record]:
        store = EtcdStore(url)
        await store.open()
        try:
            return await store.records()
        finally:
            await store.close()
    return asyncio.run(read())


def _state(svc: ServiceProcess) -> str:
    return str(svc.get("/api/state", svc.admin)["sha256"])


def _exported(svc: ServiceProcess) -> bytes:
    req = urllib.request.Request(svc.http + "/api/log", headers={"Authorization": f"Bearer {svc.admin}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return bytes(r.read())


def _of_the_demo_event(body: bytes) -> bool:
    """A game-less record of the demo's event: its set-up and completion, its teams' and
    players' registrations (of no other event), the committee's rescind of what it owed."""
    e = json.loads(body)
    return bool(e.get("event") == EVENT or e["type"] in ("team.registered", "player.registered",
                                                         "committee.rescind"))


def _archive(url: str, out: Path, *events: str) -> int:
    return main(["archive", "--store", url, *(a for e in events for a in ("--event", e)), "--out", str(out)])


def test_an_event_moves_to_a_file_and_a_node_restarted_after_serves_the_rest(
        etcd_url: str, etcd_cluster: EtcdCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _log(tmp_path)
    records = _load(etcd_url, log)
    mine = [r for r in records if r.game in ("demo-semi", "demo-final") or _of_the_demo_event(r.body)]
    assert 0 < len(mine) < len(records)
    prefix = parse_url(etcd_url).prefix
    with Processes(tmp_path / "procs") as group:
        node = ServiceProcess(tmp_path / "node", store=etcd_url, log=tmp_path / "node.log")
        group.add(node)
        node.start()
        before = _state(node)
        assert before == file_hash(log)
        tokens = etcd_cluster.ctl("get", "--prefix", f"{prefix}token/", "--keys-only").split()

        out = tmp_path / "archive" / "demo-cup.jsonl"
        out.parent.mkdir()
        assert _archive(etcd_url, out, EVENT) == 0
        said = capsys.readouterr().out
        kept = [r for r in records if r not in mine]
        rest = fold(kept).state_hash()
        assert said.startswith(f"archived {EVENT}: ")
        assert f"the rest of the log folds as before (state sha256 {rest})" in said

        # The file: the event's records, in log order; its replay is the event as the log had it.
        assert out.read_bytes().splitlines() == [r.body for r in mine]
        assert f"state sha256 {file_hash(out)}, equal to the fold of those records" in said
        replayed = fold(records_of(out)).state()
        full = fold(records).state()
        assert replayed.games == {g: full.games[g] for g in ("demo-semi", "demo-final")}
        assert replayed.events[EVENT] == full.events[EVENT]

        # The store: the event's records and dedup keys gone; the rest as it was; tokens untouched.
        assert _held(etcd_url) == kept
        keys = etcd_cluster.ctl("get", "--prefix", prefix, "--keys-only").split()
        assert not [k for k in keys if "demo-semi" in k or "demo-final" in k or "referee-" in k]
        assert [k for k in keys if k.startswith(f"{prefix}token/")] == tokens
        assert not (tmp_path / "archive" / "demo-cup.jsonl.deleting").exists()

        # The running node keeps the event until it restarts; restarted, it serves the rest.
        assert _state(node) == before
        node.stop()   # a clean stop writes a snapshot, which holds the event
        node.start()
        assert _state(node) == rest
        assert _exported(node) == jsonl(json.loads(r.body) for r in kept)
        assert {g["game"] for g in node.get("/api/games")} == {"spring-1"}
        node.stop()


@pytest.mark.parametrize("how, said", [
    ({"complete": False}, f"event {EVENT!r} is not completed"),
    ({"cut": 1, "complete": True}, "has games not ended: demo-final"),
    ({"settle": False}, "'salas''s suspension from game 'demo-final' (referee-demo-final/2:salas:suspension) "
                        "is still pending: it would be lost with the event"),
    ({"settle": False, "same_teams": True}, "without it, the rest of the log would fold differently: "
                                            "game 'spring-final', obligations of 'salas'"),
])
def test_what_would_lose_or_change_something_is_refused_and_nothing_is_deleted(
        how: dict[str, Any], said: str, etcd_url: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    if how.get("cut"):   # the final's game.end left out: the event completed with a game not ended
        events = demo_tournament(settle=False)
        end = max(i for i, e in enumerate(events) if e["type"] == "game.end")
        log = tmp_path / "export.jsonl"
        log.write_bytes(jsonl([*events[:end], *events[end + 1:], *_later_event(same_teams=False)]))
    else:
        log = _log(tmp_path, **how)
    records = _load(etcd_url, log)
    out = tmp_path / "out.jsonl"
    assert _archive(etcd_url, out, EVENT) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena-stream: archive refused: ") and said in err and "nothing was deleted" in err
    assert not out.exists()
    assert _held(etcd_url) == records


def test_a_store_that_is_not_etcd_or_a_file_that_exists_is_refused(
        etcd_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.jsonl"
    assert _archive("sqlite", out, EVENT) == 2
    assert "archive moves events out of an etcd store only" in capsys.readouterr().err
    records = _load(etcd_url, _log(tmp_path))
    out.write_bytes(b"an earlier archive\n")
    assert _archive(etcd_url, out, EVENT) == 2
    assert f"{out} exists: an archive is never written over" in capsys.readouterr().err
    assert out.read_bytes() == b"an earlier archive\n" and _held(etcd_url) == records


async def test_a_store_failing_midway_is_finished_with_resume(etcd_url: str, tmp_path: Path) -> None:
    log = _log(tmp_path)
    await import_records(lambda: EtcdStore(etcd_url), log)
    records = records_of(log)
    host, port = parse_url(etcd_url).members[0]
    out = tmp_path / "out.jsonl"
    async with Proxy(port) as proxy:
        store = EtcdStore(f"etcd://{host}:{proxy.port}/{parse_url(etcd_url).prefix}", budget=1.0)
        await store.open()
        try:
            proxy.cut_before(b"/v3/kv/txn", down=True)   # the first deletion never reaches etcd
            with pytest.raises(NotStored):
                await archive(store, [EVENT], out)
        finally:
            await store.close()
    assert out.exists() and (tmp_path / "out.jsonl.deleting").exists()
    assert await asyncio.to_thread(_held, etcd_url) == records   # nothing deleted yet
    assert await asyncio.to_thread(main, ["archive", "--store", etcd_url, "--event", EVENT,
                                          "--out", str(out), "--resume"]) == 0
    left = await asyncio.to_thread(_held, etcd_url)
    assert {r.game for r in left} == {"spring-1", None} and len(left) < len(records)
    assert not (tmp_path / "out.jsonl.deleting").exists()
    assert fold(left).state_hash() == fold([r for r in records if r in left]).state_hash()
