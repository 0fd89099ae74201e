"""Notices in names, on a real service with real clients: a card to a registered player
reads "#4 José Díaz (Aiken Arena)" in the ack and the delta, in English and Spanish, from
the roster as of the card (docs/log-format.md, "Notices"). A rename afterwards changes
the texts of later notices only: the game report (JSON and CSV), a replay of the log and
a viewer resuming after a restart read the earlier card as it was sent."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import aiohttp

from stream.cli import replay

from .conftest import RunningServer, Server, Viewer

AIKEN = {"team": "g1-home", "name": "Aiken Arena", "short": "AIK",
         "colors": {"primary": "#0b3d2e", "secondary": "#f2c230"}}
DIAZ = {"player": "h2", "name": "José Díaz", "number": 4, "team": "g1-home"}


def of_type(notices: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (n,) = [n for n in notices if n["type"] == kind]
    return n


async def get(server: Server, path: str) -> bytes:
    async with aiohttp.ClientSession() as s, s.get(
            server.http + path, headers={"Authorization": f"Bearer {server.admin}"}) as r:
        assert r.status == 200, path
        return await r.read()


async def register(server: Server) -> None:
    for path, body in (("/api/teams", AIKEN), ("/api/players", DIAZ)):
        status, reply = await server.api("POST", path, body)
        assert status == 201, reply


async def card_then_rename_then_card(server: Server) -> tuple[dict[str, Any], dict[str, Any], Viewer]:
    """Both cards' acks, and a viewer that watched from before them."""
    await server.setup_game()
    await register(server)
    viewer = await Viewer.open(server.watch_url, game="g1")
    await viewer.next("snapshot")
    tk, ump = await server.device("timekeeper"), await server.device("umpire")
    await tk.send({"type": "clock.start", "game": "g1"})
    first = await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow",
                            "conduct": "arguing"})
    status, reply = await server.api("POST", "/api/players", {**DIAZ, "name": "José María Díaz",
                                                               "revision": 1})
    assert status == 201, reply
    second = await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow",
                             "conduct": "arguing"})
    await tk.close()
    await ump.close()
    return first, second, viewer


async def test_a_card_names_the_player_as_registered_in_the_ack_and_the_delta(server: Server) -> None:
    first, second, viewer = await card_then_rename_then_card(server)
    card = of_type(first["notices"], "card.recorded")
    assert card["player"] == "h2" and card["side"] == "home"          # the fields keep their ids
    assert card["text"]["en"].startswith("Yellow card to #4 José Díaz (Aiken Arena): 1 yellow in this game")
    assert card["text"]["es"].startswith("Tarjeta amarilla para #4 José Díaz (Aiken Arena): 1 amarilla(s)")
    # The away team is not registered: it is named by its side, as before rosters.
    penalty = of_type(first["notices"], "penalty.awarded")
    assert penalty["text"]["en"].startswith("Penalty to away.")
    assert penalty["text"]["es"].startswith("Penal a favor del visitante.")

    # The viewer's delta carries the very same notices.
    frames = await viewer.until_seq("g1", second["seq"])
    by_seq = {f["seq"]: f for f in frames if f["type"] == "delta"}
    assert by_seq[first["seq"]]["notices"] == first["notices"]
    assert by_seq[second["seq"]]["notices"] == second["notices"]

    # The rename reaches the later card only.
    later = of_type(second["notices"], "card.recorded")
    assert later["text"]["en"].startswith("Yellow card to #4 José María Díaz (Aiken Arena): 2 yellow")
    assert later["text"]["es"].startswith("Tarjeta amarilla para #4 José María Díaz (Aiken Arena): 2")
    box = of_type(second["notices"], "box.enter")
    assert box["text"]["es"].startswith("#4 José María Díaz (Aiken Arena) al área de castigo")
    await viewer.close()


async def test_the_report_and_a_replay_read_each_card_as_it_was_sent(server: Server) -> None:
    first, second, viewer = await card_then_rename_then_card(server)
    await viewer.close()
    sent = {first["log_id"]: of_type(first["notices"], "card.recorded")["text"],
            second["log_id"]: of_type(second["notices"], "card.recorded")["text"]}
    assert "#4 José Díaz (Aiken Arena)" in sent[first["log_id"]]["en"]

    report = json.loads(await get(server, "/games/g1/report.json"))
    cards = {e["cause"]: e["text"] for e in report["entries"] if e["kind"] == "card.recorded"}
    assert cards == sent

    rows = list(csv.DictReader(io.StringIO((await get(server, "/games/g1/report.csv")).decode()
                                           .lstrip("\ufeff"))))
    csv_cards = {r["cause"]: {"en": r["text_en"], "es": r["text_es"]} for r in rows
                 if r["kind"] == "card.recorded"}
    assert csv_cards == sent

    out = io.BytesIO()
    assert replay(io.BytesIO(await get(server, "/api/log")), out, state=False) == 0
    replayed = [json.loads(x) for x in out.getvalue().splitlines()]
    assert {n["cause"]: n["text"] for n in replayed if n["type"] == "card.recorded"} == sent
    # Every notice of both cards, not only the card's own line.
    assert [n for n in replayed if n["cause"] in sent] == first["notices"] + second["notices"]


async def test_a_viewer_resuming_after_a_restart_reads_the_names_that_were_sent(tmp_path: Path) -> None:
    running = RunningServer(tmp_path)
    async with running as server:
        _, second, viewer = await card_then_rename_then_card(server)
        epoch = (viewer.frames[0])["epoch"]
        live = [f for f in await viewer.until_seq("g1", second["seq"]) if f["type"] == "delta"]
        await viewer.close()
    async with RunningServer(tmp_path, port=running.port) as server:
        back = await Viewer.open(server.watch_url, game="g1", since=1, epoch=epoch)
        rebuilt = [f for f in await back.until_seq("g1", second["seq"]) if f["type"] == "delta"]
        assert rebuilt == live
        assert "#4 José Díaz (Aiken Arena)" in of_type(rebuilt[-2]["notices"], "card.recorded")["text"]["en"]
        await back.close()
