"""What the store has committed, on ``/metrics``, on SQLite and on etcd:
``arena_store_records`` counts every event the log took since the service started (a
device's retry, answered from dedup, is not one more), and ``arena_store_commits`` the
transactions they took, at least one and no more than one each. Each transaction is
timed alone (``arena_store_commit_seconds``) and each append from its call to durable
(``arena_store_durable_seconds``); beside them, the process's CPU and the machine's
stolen and disk-waiting CPU time, to tell a slow second's cause."""

from __future__ import annotations

from pathlib import Path

from ..conftest import RunningServer, Server, admin_device, metric


async def committed_figures(server: Server) -> None:
    assert await metric(server, "arena_store_records") == 0.0
    await server.setup_game()
    desk = await admin_device(server)
    try:
        events = [{"type": kind, "game": "g1", "id": f"e{n}"}
                  for n, kind in enumerate(["clock.start", "whistle", "clock.start"])]
        for event in events:
            assert (await desk.send(dict(event)))["type"] == "ack"
        again = await desk.send(dict(events[1]))  # a retry: the log takes nothing more
        assert again["duplicate"] is True
    finally:
        await desk.close()
    logged = len(await server.svc.hub.store.records())
    assert logged == 1 + len(events)
    assert await metric(server, "arena_store_records") == logged
    commits = await metric(server, "arena_store_commits")
    assert 1 <= commits <= logged
    assert await metric(server, "arena_store_commit_seconds_count") == commits
    assert await metric(server, "arena_store_durable_seconds_count") >= logged
    assert await metric(server, "arena_store_durable_seconds_sum") > 0
    assert await metric(server, "arena_store_commit_seconds_sum") > 0
    assert await metric(server, "process_cpu_seconds_total") > 0
    assert await metric(server, 'arena_machine_cpu_seconds_total{mode="steal"}') >= 0
    assert await metric(server, 'arena_machine_cpu_seconds_total{mode="idle"}') > 0


async def test_the_store_figures_on_sqlite(tmp_path: Path) -> None:
    async with RunningServer(tmp_path) as server:
        await committed_figures(server)


async def test_the_store_figures_on_etcd(tmp_path: Path, etcd_url: str) -> None:
    async with RunningServer(tmp_path, store=etcd_url) as server:
        await committed_figures(server)
