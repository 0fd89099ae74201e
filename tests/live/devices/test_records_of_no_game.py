"""An event that is no one game's, as a device sends it (docs/protocol-device.md, "Send an
event", "An event of no game"): its `ack` holds what the docs say, checked on a real
service through a committee's `/ws/device` socket: `draw.made` and `game.scheduled`, with a
game's own `game.setup` beside them."""

from __future__ import annotations

import json
import re
from typing import Any

import aiohttp
import msgspec

from stream.live.wire import auth
from stream.rules import events as ev

from ...docs_text import doc_text
from ..conftest import Raw, Server, game_setup_body

TEAMS = ["aiken", "bayou", "cedar", "delta"]


def no_game_types() -> set[str]:
    """The event types the ack table of docs/protocol-device.md says have `game` and `seq` null."""
    row = next(line for line in doc_text("protocol-device.md").splitlines()
               if line.startswith("| `game`, `seq` |"))
    return set(re.findall(r"`([a-z_]+\.[a-z_]+)`", row.split("`null` for", 1)[1]))


def test_the_docs_name_every_event_of_no_game() -> None:
    """Every type a device may send that is not a game's (a game's event, or a void of one)."""
    sendable = set().union(*auth.ROLE_EVENTS.values())
    of_no_game = {name for name, t in ev.TYPES_BY_NAME.items()
                  if not issubclass(t, ev.GameEventBase) and t is not ev.Void}
    assert no_game_types() == of_no_game & sendable


async def test_the_asyncapi_document_names_the_same(server: Server) -> None:
    async with aiohttp.ClientSession() as s, s.get(server.http + "/asyncapi.json") as r:
        ack = (await r.json())["components"]["schemas"]["Ack"]["properties"]
    described = ack["game"]["description"]
    assert set(re.findall(r"[a-z_]+\.[a-z_]+", described)) == no_game_types()
    assert "null for an event of no game" in ack["seq"]["description"]


async def send(raw: Raw, event: dict[str, Any]) -> dict[str, Any]:
    await raw.send(json.dumps({"type": "send", "event": event}))
    reply = await raw.reply()
    assert reply["type"] == "ack", reply
    return reply


async def test_the_ack_of_an_event_of_no_game(server: Server) -> None:
    status, ack = await server.api("POST", "/api/events", {
        "id": "cup", "event": "cup", "class": "club", "handicap": 8, "teams": TEAMS})
    assert status == 201, ack
    committee = await server.committee_token("cup", device="htc")
    raw = await Raw.device(server, committee)
    documented = no_game_types()
    try:
        setup = game_setup_body("g1", sides=("aiken", "bayou"), arena="a1")
        game_ack = await send(raw, {"type": "game.setup", **setup})
        assert (game_ack["game"], game_ack["seq"]) == ("g1", 1)
        _, before = await server.api("GET", "/api/games/g1")

        sent: list[dict[str, Any]] = [
            {"type": "draw.made", "id": "draw-1", "event": "cup", "format": "knockout", "teams": TEAMS},
            {"type": "game.scheduled", "id": "move-g1", "game": "g1", "starts_at": 1_796_148_000_000}]
        for event in sent:
            assert event["type"] in documented
            ack = await send(raw, event)
            # "`game`, `seq`: null for the events that are no one game's"; the rest as any ack
            assert (ack["id"], ack["log_id"], ack["game"], ack["seq"], ack["duplicate"]) == (
                event["id"], f"htc/{event['id']}", None, None, False), ack
            assert isinstance(ack["at"], int) and isinstance(ack["notices"], list)
            # a retry: "the original ack again with `duplicate: true` ... and an empty `notices` list"
            again = await send(raw, event)
            assert again == {**ack, "duplicate": True, "notices": []}
        # "in no game's sequence": the game it names has not moved
        _, after = await server.api("GET", "/api/games/g1")
        assert after["seq"] == before["seq"] == game_ack["seq"]
        assert after["roster"]["schedule"]["starts_at"] == 1_796_148_000_000
        # "in the log": both, with neither a game nor a seq
        rows = {msgspec.json.decode(body)["id"]: (game, seq) for game, seq, _, _, body in server.log_rows()}
        assert rows["htc/draw-1"] == rows["htc/move-g1"] == (None, None)
    finally:
        await raw.close()
