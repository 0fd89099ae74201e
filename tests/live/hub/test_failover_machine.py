"""Failovers under two nodes writing, as a state machine: ``TwoNodes`` (every rule and every
invariant of ``test_nodes_machine.py``) on a three-member etcd cluster (``EtcdCluster``,
real processes), both hubs reaching every member, and two rules more:

``failover``: both nodes' devices send a game's events (or, ``failover_two_games``, two
games' in turn) one after another while the leader is SIGKILLed at a random moment;
the other two members elect a new leader and the old one comes back as a follower.
Events in flight are answered ``not_stored`` or ``unknown`` and resent with the same id
until acked. The nodes' stores give each call a budget shorter than an election
(``BUDGET_S``), so that a failover leaves writes whose fate the node can't know, which it
must take back (with the default budget, the store's own resend to the new leader acks
most of them: ``tests/store/test_etcd_writes.py``).

Checked after the failover, besides ``TwoNodes``' invariants (every ``seq`` once to every
viewer, one state equal to a fresh fold of the log, every final answer true of the log):

* no node folded the whole log again: each took back only the events the log did not
  confirm, game by game (``Races.failed``; over the run, some node had something to take
  back);
* no node stopped being ready (``GET /readyz``'s "reloading the log") at any moment.
"""

from __future__ import annotations

import asyncio
import random
import traceback
from collections.abc import Awaitable
from typing import ClassVar, TypeVar

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.errors import FlakyFailure, FlakyStrategyDefinition
from hypothesis.stateful import initialize, invariant, rule, run_state_machine_as_test

from stream.tools.harness import EtcdCluster

from .test_nodes_machine import TwoNodes

T = TypeVar("T")

#: What the devices send through a failover, to a game under way: events that change their
#: own game alone (a card's conduct named later, a void of a whistle among them), so that
#: each node can take back its unconfirmed ones game by game (a game's set-up, start or
#: end, a post-game card may change more: those are taken back by a fold of the whole log).
ALONE = ("whistle", "goal", "clock.start", "clock.stop", "amend", "void_whistle")
alone = st.tuples(st.sampled_from(ALONE), st.integers(0, 10_000))
#: Each call's budget on the nodes' stores: less than the election after a leader's crash
#: takes (the cluster's election timeout is 1 s).
BUDGET_S = 0.8


class Failovers(TwoNodes):
    budget: ClassVar[float] = BUDGET_S
    settled: ClassVar[int] = 0   # failed writes taken back game by game, over every example
    kills: ClassVar[int] = 0     # failovers, over every example
    failures: ClassVar[list[str]] = []

    @initialize()
    def under_way(self) -> None:
        """Both games set up and started."""
        self.append(0, "g1", ("clock.start", 0))
        self.append(1, "g2", ("clock.start", 0))  # (its set-up first)
        self.append(1, "g2", ("clock.start", 0))

    @rule(events=st.lists(alone, min_size=4, max_size=12), kill_after_ms=st.integers(0, 60),
          seed=st.integers(0, 2**16))
    def failover(self, events: list[tuple[str, int]], kill_after_ms: int, seed: int) -> None:
        """Both nodes' devices send to one game."""
        self.run(self._failover(events, ("g1",), kill_after_ms, random.Random(seed)))

    @rule(events=st.lists(alone, min_size=4, max_size=12), kill_after_ms=st.integers(0, 60),
          seed=st.integers(0, 2**16))
    def failover_two_games(self, events: list[tuple[str, int]], kill_after_ms: int, seed: int) -> None:
        """Each node's device sends to both games in turn: a node settles several games at once."""
        self.run(self._failover(events, ("g1", "g2"), kill_after_ms, random.Random(seed)))

    def run(self, aw: Awaitable[T]) -> T:
        """As ``TwoNodes.run``, keeping the first failure of the run: real processes make a
        failure hard for Hypothesis to replay, and it then reports only that."""
        try:
            return super().run(aw)
        except Exception:
            Failovers.failures.append(traceback.format_exc())
            raise

    @invariant()
    def delivered_exactly(self) -> None:
        try:
            super().delivered_exactly()
        except Exception:
            Failovers.failures.append(traceback.format_exc())
            raise

    def live(self, game: str) -> bool:
        return self.nodes[0].hub.engine.status_of(game) == "live"

    async def _failover(self, events: list[tuple[str, int]], games: tuple[str, ...], kill_after_ms: int,
                        rng: random.Random) -> None:
        # (Not a precondition: a game ended or not is what the nodes say, which Hypothesis
        # can't replay; a rule that has nothing to do draws the same data.)
        if not all(self.live(g) for g in games):
            return
        hubs = [n.hub for n in self.nodes]
        reloads = [h.reloads for h in hubs]
        settled = sum(h.races.settled for h in hubs)
        unready: list[int] = []
        done = asyncio.Event()

        async def watch_ready() -> None:  # what GET /readyz reads, every 5 ms
            while not done.is_set():
                unready.extend(i for i, h in enumerate(hubs) if h.recovering or not h.ready)
                await asyncio.sleep(0.005)

        async def device(node: int) -> None:  # one after another, each resent until acked
            for i, kind in enumerate(events[node::2]):
                await self.send(node, games[i % len(games)], kind)
                await asyncio.sleep(rng.uniform(0, 0.03))

        watcher = asyncio.create_task(watch_ready())
        sending = asyncio.gather(device(0), device(1))
        cluster = self.cluster
        old = None
        try:
            await asyncio.sleep(kill_after_ms / 1000)
            old = await asyncio.to_thread(cluster.leader)
            await asyncio.to_thread(cluster.kill, old)
            Failovers.kills += 1
            await asyncio.to_thread(cluster.leader)   # elected among the two left
            await cluster.arestart(old)
            old = None
            await sending
        finally:
            done.set()
            await watcher
            if old is not None:  # the step failed mid-failover: leave the cluster whole for the next
                await cluster.arestart(old)
        assert [h.reloads for h in hubs] == reloads, "a node folded the whole log again in a failover"
        assert not unready, f"node(s) {sorted(set(unready))} stopped being ready in a failover"
        Failovers.settled += sum(h.races.settled for h in hubs) - settled


@pytest.mark.slow
def test_failovers_under_two_nodes_writing_cost_no_reload_and_lose_nothing(
        etcd_cluster: EtcdCluster) -> None:
    Failovers.cluster = etcd_cluster
    Failovers.settled = Failovers.kills = 0
    Failovers.failures = []
    # A run's examples may end their games early (a failover needs its games under way):
    # the machine runs again, up to three times, until failovers have met writes in flight.
    for _ in range(3):
        try:
            run_machine(Failovers)
        except (FlakyFailure, FlakyStrategyDefinition) as err:
            raise AssertionError("first failure:\n" + Failovers.failures[0]) from err
        if Failovers.kills >= 3 and Failovers.settled > 0:
            break
    # Failovers happened, and met writes in flight: some node had events to take back.
    assert Failovers.kills >= 3 and Failovers.settled > 0, (Failovers.kills, Failovers.settled)


def run_machine(machine: type[Failovers]) -> None:
    run_state_machine_as_test(machine, settings=settings(
        max_examples=10, stateful_step_count=12, deadline=None, database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))


def test_a_failover_mid_stream_is_settled_game_by_game(etcd_cluster: EtcdCluster) -> None:
    """One failover, as an operator meets it: the leader SIGKILLed while both nodes write."""
    Failovers.cluster = etcd_cluster
    m = Failovers()
    try:
        m.append(0, "g1", ("clock.start", 0))
        m.delivered_exactly()
        m.watch(1, "g1")
        before = sum(n.hub.races.settled for n in m.nodes)
        m.failover([("whistle", i) for i in range(10)], 0, 7)
        m.delivered_exactly()
        assert sum(n.hub.races.settled for n in m.nodes) > before, "no write was in flight"
        m.append(1, "g1", ("goal", 1))
        m.delivered_exactly()
    finally:
        m.teardown()
