"""A node whose write failed settles it game by game (``stream/live/hub/races.py``): what it
took back and the log holds comes back into its fold, even when the log can't be read
at that moment. Until it has, no refusal that depends on it is final (docs/reliability.md).

Two service nodes in this process on one real etcd cluster (three members); node B talks
to one member only, through ``tests/tcp_proxy.py``, which loses the answer to B's write
after etcd committed it and takes the store away from B for a while (so that no resend
to another member answers it: B can't tell whether it was stored). A lost race is
settled the same way when the follower has passed what the node takes back.

B's calls to etcd may take ``DEADLINE_MS`` each (the proxy holds an answer up to 3 s
here) and ``BUDGET_MS`` in all."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from stream.store.etcd_client import b64, parse_url, prefix_end
from stream.tools.device_client import Device

from ...tcp_proxy import Proxy, through
from ..conftest import RunningServer, Server, eventually

CARD = {"type": "card", "game": "g1", "player": "a2", "color": "yellow", "conduct": "arguing", "id": "card-1"}
DEADLINE_MS = BUDGET_MS = 4000
#: An append: one etcd transaction.
TXN = b"/v3/kv/txn"


@asynccontextmanager
async def two_nodes(tmp_path: Path, url: str) -> AsyncIterator[tuple[Proxy, Server, Server]]:
    """Node A on every member, node B on one member through the proxy; game g1 set up and
    its clock started through A, and folded by B."""
    _host, port = parse_url(url).members[0]
    async with Proxy(port) as proxy, RunningServer(tmp_path, store=url) as a, RunningServer(
            tmp_path, store=through(url, proxy), etcd_deadline_ms=DEADLINE_MS, etcd_budget_ms=BUDGET_MS) as b:
        await a.setup_game("g1")
        tk = await a.device("timekeeper", "g1")
        await tk.send({"type": "clock.start", "game": "g1"})
        await tk.close()
        await eventually(lambda: b.svc.hub.seqs.get("g1") == 2, timeout=10)
        yield proxy, a, b


async def test_an_event_taken_back_while_the_log_was_away_comes_back_and_can_be_voided(
        tmp_path: Path, etcd_url: str) -> None:
    """Through B, an umpire cards a player. etcd stores the card and B's follower reads it
    back, but the answer to B's write is lost and then etcd is away from B: B answers
    ``unknown`` and takes the card back, and can't read the game's tail from the log. When
    etcd answers again, the umpire voids the card through B: acked (the log holds the
    card), never refused ``unknown_target``; B's fold is A's; the card's retry is a
    duplicate."""
    async with two_nodes(tmp_path, etcd_url) as (proxy, a, b):
        hub = b.svc.hub
        ump = await b.device("umpire", "g1")
        settled = hub.races.settled
        card = dict(CARD)
        proxy.cut_after(TXN, hold=0.5, down=True)
        reply = await ump.send_once(dict(card))
        assert (reply["type"], reply["code"], reply["retry"]) == ("error", "unknown", True), reply
        await eventually(lambda: hub.races.settled > settled and hub.races.settling is None, timeout=10)
        assert hub.seqs["g1"] == 2  # taken back: the log could not be read to say otherwise
        proxy.refuse = False        # etcd answers B again
        _, log = await a.api("GET", "/api/games/g1/log")
        carded = json.loads(log.splitlines()[-1])
        assert carded["type"] == "card", carded
        voided = await ump.send({"type": "void", "target": carded["id"], "id": "void-1"}, attempts=60)
        assert (voided["type"], voided["game"], voided["seq"]) == ("ack", "g1", 4), voided
        again = await ump.send(dict(card), attempts=60)
        assert (again["type"], again["duplicate"], again["seq"]) == ("ack", True, 3), again
        await eventually(lambda: a.svc.hub.seqs == hub.seqs, timeout=10)
        assert a.svc.hub.engine.state_hash() == hub.engine.state_hash()
        assert hub.reloads == 0  # settled game by game, no fold of the whole log
        for d in (ump,):
            await d.close()


async def settled_after_a_lost_answer(proxy: Proxy, a: Server, b: Server, ump_a: Device, ump_b: Device,
                                      entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Through B, ``ump_b`` cards a player; etcd stores the card, but the answer to B's write
    is slow. Meanwhile ``ump_a`` logs ``entries`` through A after the card (each entry may
    name the log id of an earlier one's ack as ``"{0}"``, ``"{1}"``), and B's follower folds
    them all (the card as its own). Then B's answer is lost and etcd is away from B a while:
    B takes its card back, and everything of the game folded since; etcd answers B again,
    and B settles. Answers A's acks, once B's fold is A's again."""
    hub = b.svc.hub
    proxy.cut_after(TXN, hold=3.0, down=True)
    carding = asyncio.create_task(ump_b.send_once(dict(CARD)))
    await eventually(lambda: a.svc.hub.seqs.get("g1") == 3, timeout=10)
    acks: list[dict[str, Any]] = []
    for entry in entries:
        sent = {k: v.format(*(x["log_id"] for x in acks)) if isinstance(v, str) else v
                for k, v in entry.items()}
        ack = await ump_a.send(sent)
        assert (ack["type"], ack["seq"]) == ("ack", 4 + len(acks)), ack
        acks.append(ack)
    await eventually(lambda: hub.races.passed.get("g1") == 3 + len(entries), timeout=10)
    assert not proxy.cut.is_set(), "the answer to B's card came back before A's entries were folded"
    reply = await carding
    assert (reply["type"], reply["code"], reply["retry"]) == ("error", "unknown", True), reply
    proxy.refuse = False  # etcd answers B again
    await eventually(lambda: hub.races.settling is None and not hub.races.owed, timeout=10)
    await eventually(lambda: hub.seqs == a.svc.hub.seqs, timeout=10)
    assert hub.engine.state_hash() == a.svc.hub.engine.state_hash()
    return acks


async def test_another_nodes_event_folded_after_one_taken_back_is_folded_again(
        tmp_path: Path, etcd_url: str) -> None:
    """Through B, an umpire cards a player; etcd stores the card, but the answer to B's
    write is slow. Meanwhile A folds the card and logs a whistle after it, and B's follower
    folds both (the card as its own). Then B's answer is lost, and etcd is away from B a
    while: B takes its card back, and with it everything of the game folded since, A's
    whistle included; both come back from the log. B's fold is A's again, and the whistle
    can be voided through B."""
    async with two_nodes(tmp_path, etcd_url) as (proxy, a, b):
        hub = b.svc.hub
        ump_b, ump_a = await b.device("umpire", "g1"), await a.device("umpire", "g1")
        [whistle] = await settled_after_a_lost_answer(proxy, a, b, ump_a, ump_b, [
            {"type": "whistle", "game": "g1", "id": "w-1"}])
        voided = await ump_b.send({"type": "void", "target": whistle["log_id"], "id": "void-1"}, attempts=60)
        assert (voided["type"], voided["game"], voided["seq"]) == ("ack", "g1", 5), voided
        again = await ump_b.send(dict(CARD), attempts=60)
        assert (again["type"], again["duplicate"], again["seq"]) == ("ack", True, 3), again
        await eventually(lambda: a.svc.hub.seqs == hub.seqs, timeout=10)
        assert a.svc.hub.engine.state_hash() == hub.engine.state_hash()
        assert hub.reloads == 0  # settled game by game, no fold of the whole log
        for d in (ump_a, ump_b):
            await d.close()


async def test_a_void_among_the_events_taken_back_is_folded_again_game_by_game(
        tmp_path: Path, etcd_url: str) -> None:
    """As above, with a void among the entries B took back: A logs a whistle and its void
    after B's card. A void of a whistle in play changes its game alone (L1), so B folds it
    again from the log with the rest of the game's tail: no fold of the whole log."""
    async with two_nodes(tmp_path, etcd_url) as (proxy, a, b):
        hub = b.svc.hub
        ump_b, ump_a = await b.device("umpire", "g1"), await a.device("umpire", "g1")
        whistle, _ = await settled_after_a_lost_answer(proxy, a, b, ump_a, ump_b, [
            {"type": "whistle", "game": "g1", "id": "w-1"},
            {"type": "void", "target": "{0}", "id": "void-1"}])
        assert not hub.engine.knows(whistle["log_id"])   # voided, as on A
        assert hub.reloads == 0  # settled game by game, no fold of the whole log
        for d in (ump_a, ump_b):
            await d.close()


async def test_a_lost_race_with_a_retry_logged_through_another_node_folds_it_again(
        tmp_path: Path, etcd_url: str) -> None:
    """An umpire's card reaches B, and B's write reaches etcd late. Meanwhile the handheld,
    moved to A, sends the same card again (the same id), and A logs it at the seq B gave its
    own copy: B's follower meets the log's copy there and passes it as B's. Then etcd answers
    B that the id is logged, with another copy: B has lost the race, takes its card back, and
    etcd is away from B before B can read the game's tail. When etcd answers again, the
    umpire voids the card through B: acked, never refused ``unknown_target``; B's fold is A's."""
    async with two_nodes(tmp_path, etcd_url) as (proxy, a, b):
        hub = b.svc.hub
        ump_b = await b.device("umpire", "g1", name="umpire-x")
        ump_a = await a.device("umpire", "g1", name="umpire-x")
        card = dict(CARD)
        proxy.delay(TXN, 2.0)
        # B's read of the game's tail: a range that ends where g1's records do.
        game = parse_url(etcd_url).prefix.encode() + b"log/g/g1/"
        proxy.cut_before(b64(prefix_end(game)).encode(), down=True)
        carding = asyncio.create_task(ump_b.send_once(dict(card)))
        await eventually(lambda: hub.seqs.get("g1") == 3, timeout=10)  # B applied its copy
        logged = await ump_a.send(dict(card))
        assert (logged["type"], logged["seq"], logged["duplicate"]) == ("ack", 3, False), logged
        await eventually(lambda: hub.races.passed.get("g1") == 3, timeout=10)
        reply = await carding
        assert proxy.cut.is_set(), "B did not read the game's tail"
        assert (reply["type"], reply["retry"]) == ("error", True), reply
        await eventually(lambda: hub.races.settling is None and "g1" not in hub.races.catching, timeout=10)
        proxy.refuse = False  # etcd answers B again
        voided = await ump_b.send({"type": "void", "target": logged["log_id"], "id": "void-1"}, attempts=60)
        assert (voided["type"], voided["game"], voided["seq"]) == ("ack", "g1", 4), voided
        again = await ump_b.send(dict(card), attempts=60)
        assert (again["type"], again["duplicate"], again["seq"]) == ("ack", True, 3), again
        await eventually(lambda: a.svc.hub.seqs == hub.seqs, timeout=10)
        assert a.svc.hub.engine.state_hash() == hub.engine.state_hash()
        assert hub.reloads == 0  # caught up game by game, no fold of the whole log
        for d in (ump_a, ump_b):
            await d.close()
