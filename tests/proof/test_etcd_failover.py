"""Proof 9: etcd leader failovers under load, and a quorum lost.

A three-member etcd cluster (``EtcdCluster``: Debian's ``etcd-server``, real processes,
``--heartbeat-interval 100 --election-timeout 1000 --pre-vote``); two nodes of the
service on it (``etcd://``); three officials' devices sending to one game on both nodes
(each resends until acked, moving to the other node when its own can't be reached);
scoreboards in worker processes, half on each node, each resuming on either; at each kill
a tenth of them leave their node and resume on the other (``since``/``epoch``).

**Leader kills.** At random moments under that load the member etcd elected leader is
SIGKILLed, at least 20 times; the two others elect a new one, and the dead member is
started again on its own data directory a moment later and catches up. The officials'
stream is a tournament's: whistles and goals, now and then a void of an earlier
whistle, a card to a team official and its conduct named later (``card.amended``); each
device resends an unanswered event with the same id (docs/protocol-device.md), and gives
up on a final refusal, which none of them may meet. Pass: no acked event lost, none
twice, none logged that was not sent, each device's order kept; no final refusal; every
viewer saw every ``seq`` once, in order, with no reset snapshot, and no heartbeat ahead
of what it had been sent; both nodes' live state equals a fresh replay of the log; no
node folded the whole log again; no node unready for more than 1 s at a stretch; from
the SIGKILL to the next ack, at the median, within the election timeout + 1 s.

**Quorum lost.** Two of the three members SIGSTOPped for 10 s, under the same load: no
node acks anything meanwhile, and every send is answered with a documented error that
says to send it again (``not_stored`` or ``unknown``, ``retry: true``); after SIGCONT the
devices' resends land, each once, and the log, the viewers and both nodes' state are
exact as above.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp

from stream.tools.harness import (
    Device,
    EtcdCluster,
    Officials,
    Process,
    Processes,
    ServiceProcess,
    game_log,
    node_hashes,
    tally,
)

from ..rules.script import AWAY, HOME
from .conftest import Figures, scale

READY_EVERY_S = 0.05
ELECTION_S = 1.0
SETTLED = 'arena_failed_writes_settled{outcome="taken_back"}'


async def _viewers(processes: Processes, urls: list[str], count: int, name: str) -> Process:
    worker = processes.spawn(name, "-m", "tests.proof.failover_worker", "--urls", ",".join(urls),
                             "--count", str(count), "--game", "g1", stdin=True, stdout=True)
    line = await worker.areadline(90)
    assert line.startswith("ready"), f"{name}: {line!r}{worker.tail()}"
    return worker


async def _readiness(http: str, stop: asyncio.Event, unready: list[tuple[float, str]]) -> None:
    """``GET /readyz`` every ``READY_EVERY_S`` until ``stop``: each answer that was not 200,
    with its reason (a node that does not answer within the interval counts too)."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=READY_EVERY_S * 4)) as http_:
        while not stop.is_set():
            t = time.monotonic()
            try:
                async with http_.get(f"{http}/readyz") as r:
                    if r.status != 200:
                        unready.append((t, str((await r.json()).get("reason"))))
            except (aiohttp.ClientError, TimeoutError) as err:
                unready.append((t, type(err).__name__))
            await asyncio.sleep(max(0.0, READY_EVERY_S - (time.monotonic() - t)))


def _longest_stretch(samples: list[tuple[float, str]]) -> float:
    """The longest run of consecutive unready samples, in seconds."""
    longest = run = 0.0
    last = None
    for t, _ in samples:
        run = run + READY_EVERY_S if last is not None and t - last <= READY_EVERY_S * 2.5 else READY_EVERY_S
        longest = max(longest, run)
        last = t
    return longest


async def _probe(url: str, token: str, stop: asyncio.Event, acks: list[float],
                 answers: dict[str, int] | None = None) -> None:
    """A device on one node that resends every 50 ms (no backoff) until acked, then sends the
    next event; each error answer counted by its code in ``answers``."""
    d = Device(url, token, prefix="probe")
    try:
        while not stop.is_set():
            event: dict[str, Any] = {"type": "whistle", "game": "g1", "id": d.new_id()}
            while not stop.is_set():
                try:
                    if not d.connected:
                        await d.connect()
                    reply = await d.send_once(event, wait_s=5)
                except (OSError, TimeoutError, ConnectionError) as err:
                    if answers is not None:
                        answers[type(err).__name__] = answers.get(type(err).__name__, 0) + 1
                    await d.close()
                    await asyncio.sleep(0.05)
                    continue
                if reply["type"] == "ack":
                    acks.append(time.monotonic())
                    break
                assert reply.get("retry") is True, f"a final refusal: {reply}"
                if answers is not None:
                    answers[reply["code"]] = answers.get(reply["code"], 0) + 1
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.1)
    finally:
        await d.close()


def _metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"no {name} in /metrics")


def _first_after(times: list[float], t: float) -> float:
    return min((x for x in times if x > t), default=float("inf"))


def _scrape(http: str) -> str:
    with urllib.request.urlopen(f"{http}/metrics", timeout=10) as r:
        return str(r.read().decode())


class _Run:
    """The cluster, two nodes, a game, officials, viewers, probes and readiness watchers."""

    def __init__(self, tmp_path: Path, processes: Processes, viewers: int) -> None:
        self.processes, self.viewers = processes, viewers
        self.etcd = EtcdCluster(tmp_path / "etcd", group=processes, election_ms=int(ELECTION_S * 1000))
        shared = tmp_path / "shared"   # one secret.key: a token of either node is taken by both
        self.nodes = [processes.add(ServiceProcess(
            shared, store=self.etcd.url("arena"), name=f"node-{x}",
            args=["--device-rate", "1000", "--device-burst", "1000"])) for x in "ab"]
        self.stop = asyncio.Event()
        self.unready: list[list[tuple[float, str]]] = [[], []]
        self.probe_acks: list[list[float]] = [[], []]
        self.answers: dict[str, int] = {}

    async def start(self) -> None:
        await self.etcd.astart()
        a, b = self.nodes
        for node in self.nodes:
            await node.astart()
        a.post("/api/games", {"id": "s1", "game": "g1", "event": "cup", "class": "club", "handicap": 8,
                              "teams": {"home": {"team": "h", "players": HOME},
                                        "away": {"team": "a", "players": AWAY}}})
        self.tokens = {f"ump{i}": a.post("/api/tokens", {"role": "umpire", "device": f"ump{i}",
                                                          "game": "g1"})["token"] for i in range(3)}
        timer = Device(a.device_url, a.post("/api/tokens", {"role": "timekeeper", "device": "tk",
                                                            "game": "g1"})["token"], prefix="tk")
        await timer.send({"type": "clock.start", "game": "g1"})
        await timer.close()
        self.workers = [await _viewers(self.processes, [n.watch_url, m.watch_url], self.viewers // 2,
                                       f"viewers-{n.name}") for n, m in ((a, b), (b, a))]
        self.officials = Officials([n.device_url for n in self.nodes], self.tokens, scale(30, 40), "g1",
                                   attempts=5000, corrections=True)
        self.officials.start()
        self.tasks = [asyncio.create_task(_readiness(n.http, self.stop, u))
                      for n, u in zip(self.nodes, self.unready, strict=True)]
        self.tasks += [asyncio.create_task(_probe(n.device_url, a.post("/api/tokens", {
            "role": "umpire", "device": f"probe-{n.name}", "game": "g1"})["token"], self.stop, acks,
            self.answers)) for n, acks in zip(self.nodes, self.probe_acks, strict=True)]
        self.t0 = time.monotonic()

    def hop(self) -> None:
        for w in self.workers:  # a tenth of the scoreboards move to the other node
            w.write_line(f"hop {max(1, self.viewers // 20)}")

    async def finish(self) -> dict[str, Any]:
        """Stop the load, wait for both nodes to agree, and check everything."""
        a, b = self.nodes
        self.stop.set()
        await asyncio.gather(*self.tasks)
        await self.officials.finish(within=120)
        run_s = time.monotonic() - self.t0
        deadline = time.monotonic() + 30
        while (final := int(a.get("/api/games/g1")["seq"])) != (seq_b := int(b.get("/api/games/g1")["seq"])):
            assert time.monotonic() < deadline, f"node B at seq {seq_b}, node A at {final}"
            await asyncio.sleep(0.05)
        reports: list[dict[str, Any]] = []
        for w in self.workers:
            w.write_line(f"stop {final} 60")
            line = await w.areadline(90)
            assert line.startswith("{"), f"{w.name}: {line!r}{w.tail()}"
            reports.append(json.loads(line))
        rows = await asyncio.to_thread(game_log, a.http, "g1")
        hashes = await asyncio.to_thread(node_hashes, a.http, b.http, token=a.admin)
        scraped = [await asyncio.to_thread(_scrape, n.http) for n in self.nodes]
        o = self.officials
        log = tally(rows, o.sent, o.acked)
        seen = {k: sum(r[k] for r in reports) for k in ("viewers", "caught_up", "gaps", "repeats", "resets",
                                                       "reconnects", "heartbeats", "ahead")}
        return {"final": final, "rows": rows, "log": log, "seen": seen, "reports": reports,
                "acked": sum(map(len, o.acked.values())), "run_s": run_s,
                "live_ok": all(live == again for live, again in hashes) and hashes[0][0] == hashes[1][0],
                "hash": hashes[0][0], "hashes": hashes,
                "reloads": [int(_metric(m, "arena_log_reloads")) for m in scraped],
                "settled": [int(_metric(m, SETTLED)) for m in scraped],
                "longest_unready": [_longest_stretch(u) for u in self.unready]}


def _check_exact(r: dict[str, Any], officials: Officials, viewers: int) -> None:
    seen, log = r["seen"], r["log"]
    assert log.ok, log
    assert log.logged == r["acked"] and len(r["rows"]) == r["final"], "the log holds seq 1 to the last only"
    first_gaps = [x["first_gaps"] for x in r["reports"]]
    assert (seen["gaps"], seen["repeats"], seen["resets"]) == (0, 0, 0), first_gaps
    assert seen["ahead"] == 0, "a heartbeat vouched for a seq its viewer had not been sent"
    assert seen["caught_up"] == seen["viewers"] == viewers // 2 * 2
    assert r["live_ok"], r["hashes"]
    assert r["reloads"] == [0, 0], f"a node folded the whole log again: {r['reloads']}"
    assert max(r["longest_unready"]) <= 1.0, r["longest_unready"]
    assert officials.kinds.get("void", 0) > 0 and officials.kinds.get("card.amended", 0) > 0, officials.kinds


async def test_etcd_leader_sigkilled_again_and_again_loses_no_acked_event(
        tmp_path: Path, figures: Figures) -> None:
    kills, viewers = scale(20, 40), scale(60, 500)
    rng = random.Random(2026)
    async with Processes(tmp_path) as processes:
        run = _Run(tmp_path, processes, viewers)
        await run.start()
        o = run.officials
        failovers: list[dict[str, float]] = []
        for _ in range(kills):
            await asyncio.sleep(rng.uniform(1.0, 3.0))   # a random moment of the stream
            leader = await asyncio.to_thread(run.etcd.leader, 20.0)
            t_kill = time.monotonic()
            run.etcd.kill(leader)
            run.hop()
            new = await asyncio.to_thread(run.etcd.leader, 20.0)
            t_elected = time.monotonic()
            assert new is not leader
            await asyncio.sleep(rng.uniform(0.0, 1.0))   # two members alone a while
            await run.etcd.arestart(leader)
            t_back = time.monotonic()
            failovers.append({"kill": t_kill, "elected": t_elected - t_kill, "back": t_back - t_kill})
        await asyncio.sleep(2.0)
        r = await run.finish()
        answers = dict(run.answers)

    # Measured once the run is over: the first ack after each kill may come after the next.
    elected = [f["elected"] for f in failovers]
    probe_ack = [min(_first_after(acks, f["kill"]) for acks in run.probe_acks) - f["kill"] for f in failovers]
    officials_ack = [_first_after([t for _, t in o.times.values()], f["kill"]) - f["kill"] for f in failovers]
    seen, log = r["seen"], r["log"]
    figures(f"etcd leader SIGKILLed {len(failovers)} times at random moments in {r['run_s']:.0f} s under "
            f"{o.rate:.0f} events/s from {len(run.tokens)} devices on 2 nodes, {seen['viewers']} viewers: "
            f"{r['acked']:,} events acked, lost {log.lost}, duplicates {log.doubled}, logged but never sent "
            f"{log.unsent}, each device's order kept {log.order_kept}; among them "
            + ", ".join(f"{n} {k}" for k, n in sorted(o.kinds.items()))
            + " (every one acked: no final refusal)",
            kills=len(failovers), acked=r["acked"], lost=log.lost, duplicates=log.doubled, unsent=log.unsent)
    figures(f"from the SIGKILL to a new leader: median {statistics.median(elected):.2f} s, worst "
            f"{max(elected):.2f} s; to the next ack of a probe resending every 50 ms: median "
            f"{statistics.median(probe_ack):.2f} s, worst {max(probe_ack):.2f} s (goal: median <= election "
            f"timeout {ELECTION_S:g} s + 1 s); to the officials' next ack (backing off to 2 s): median "
            f"{statistics.median(officials_ack):.2f} s, worst {max(officials_ack):.2f} s",
            elected_median_s=statistics.median(elected), elected_worst_s=max(elected),
            kill_to_ack_median_s=statistics.median(probe_ack), kill_to_ack_worst_s=max(probe_ack))
    figures(f"viewers: every one caught up to seq {r['final']}: {seen['caught_up']} of {seen['viewers']}; "
            f"gaps {seen['gaps']}, repeats {seen['repeats']}, reset snapshots {seen['resets']}, reconnects "
            f"{seen['reconnects']}; heartbeats {seen['heartbeats']}, ahead of what the viewer had been sent "
            f"{seen['ahead']}; both nodes' live state = replay of the log {r['live_ok']} ({r['hash'][:16]}…)",
            **seen)
    unready = r["longest_unready"]
    figures(f"whole-log folds: node A {r['reloads'][0]}, node B {r['reloads'][1]}; failed writes settled "
            f"game by game: A {r['settled'][0]}, B {r['settled'][1]}; longest /readyz not 200 (sampled "
            f"every {READY_EVERY_S * 1000:.0f} ms): A {unready[0]:.2f} s, B {unready[1]:.2f} s; the probes' "
            f"error answers: {answers or 'none'}",
            reloads_a=r["reloads"][0], reloads_b=r["reloads"][1],
            unready_a_s=r["longest_unready"][0], unready_b_s=r["longest_unready"][1])
    assert len(failovers) == kills >= 20
    _check_exact(r, o, viewers)
    assert seen["reconnects"] >= len(failovers) * 2 * max(1, viewers // 20), "the scoreboards did not move"
    assert statistics.median(probe_ack) <= ELECTION_S + 1.0, probe_ack


async def test_etcd_quorum_lost_for_10_s_acks_nothing_then_resumes_exactly(
        tmp_path: Path, figures: Figures) -> None:
    viewers = scale(20, 100)
    async with Processes(tmp_path) as processes:
        run = _Run(tmp_path, processes, viewers)
        await run.start()
        o = run.officials
        await asyncio.sleep(2.0)
        leader = await asyncio.to_thread(run.etcd.leader, 20.0)
        stopped = [leader, next(m for m in run.etcd.members if m is not leader)]
        acked_before = len(o.times)
        for m in stopped:
            run.etcd.pause(m)
        t_stop = time.monotonic()
        await asyncio.sleep(1.0)   # what was in flight at the pause has been answered (or not) by now
        counted_from = time.monotonic()
        during = dict.fromkeys(("probe", "officials"), 0)
        answers_before = dict(run.answers)
        await asyncio.sleep(10.0 - (counted_from - t_stop))
        counted_to = time.monotonic()
        during["probe"] = sum(counted_from < t < counted_to for acks in run.probe_acks for t in acks)
        during["officials"] = sum(counted_from < t < counted_to for _, t in o.times.values())
        answers_during = {k: v - answers_before.get(k, 0) for k, v in run.answers.items()
                          if v != answers_before.get(k, 0)}
        for m in stopped:
            run.etcd.resume(m)
        t_cont = time.monotonic()
        await asyncio.to_thread(run.etcd.leader, 20.0)
        while (resumed := min(_first_after(a, t_cont) for a in run.probe_acks) - t_cont) == float("inf"):
            assert time.monotonic() - t_cont < 30, "no ack within 30 s of SIGCONT"
            await asyncio.sleep(0.02)
        await asyncio.sleep(3.0)
        r = await run.finish()

    seen, log = r["seen"], r["log"]
    figures(f"two of three etcd members SIGSTOPped for 10 s under {o.rate:.0f} events/s from 2 nodes: acks "
            f"while the quorum was lost {during['probe'] + during['officials']} (the probes "
            f"{during['probe']}, the officials {during['officials']}); the probes' answers meanwhile "
            f"{answers_during} (each with retry: true); after SIGCONT the next ack in {resumed:.2f} s; "
            f"{r['acked']:,} events acked in all ({acked_before} before the pause), lost {log.lost}, "
            f"duplicates {log.doubled}, logged but never sent {log.unsent}; viewers gaps {seen['gaps']}, "
            f"repeats {seen['repeats']}, resets {seen['resets']}, ahead {seen['ahead']}; live state = replay "
            f"{r['live_ok']}; whole-log folds {r['reloads']}",
            acked_during=during["probe"] + during["officials"], resumed_s=resumed, acked=r["acked"],
            lost=log.lost)
    assert during == {"probe": 0, "officials": 0}, during
    assert answers_during and set(answers_during) <= {"not_stored", "unknown"}, answers_during
    assert resumed < 10.0
    _check_exact(r, o, viewers)
