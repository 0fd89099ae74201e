"""The ingest path as the log and the dedup keys see it: the digest is over the event
as the device sent it, keys sorted (a retry in any key order is the same event); the
body stored is the typed event in the log's format, with the service's id and time."""

from __future__ import annotations

import msgspec

from stream.live.hub.dedup import digest
from stream.rules import codec
from stream.rules.events import Card

from ..conftest import Server

_sorted = msgspec.json.Encoder(order="sorted")


async def test_a_retry_in_another_key_order_is_the_same_event(server: Server) -> None:
    await server.setup_game()
    ump = await server.device("umpire", name="ump")
    sent = {"type": "card", "game": "g1", "player": "h2", "color": "yellow", "conduct": "arguing",
            "id": "c1", "unknown_to_this_build": [1, {"b": 2, "a": 1}]}
    first = await ump.send_once(sent)
    assert first["type"] == "ack" and not first["duplicate"]
    again = await ump.send_once(dict(reversed(sent.items())))
    assert (again["type"], again["seq"], again["log_id"], again["duplicate"]) == (
        "ack", first["seq"], first["log_id"], True)
    other = await ump.send_once({**sent, "unknown_to_this_build": [1, {"b": 2, "a": 2}]})
    assert (other["type"], other["code"], other["retry"]) == ("error", "id_conflict", False)

    known = server.svc.hub.keys[("ump", "c1")]
    assert known.digest == digest(_sorted.encode(sent))
    (body,) = [r[4] for r in server.log_rows() if r[3] == "c1"]
    event = codec.decode_event(body)
    assert isinstance(event, Card) and (event.id, event.at) == ("ump/c1", first["at"])
    assert bytes(body) == codec.encode_event(event)  # the log's format: the typed event's own bytes
    await ump.close()


async def test_an_ill_typed_field_is_refused_before_anything_is_stored(server: Server) -> None:
    await server.setup_game()
    ump = await server.device("umpire", name="ump")
    before = server.log_rows()
    reply = await ump.send_once({"type": "card", "game": "g1", "player": "h2", "color": "green",
                                 "id": "c2"})
    assert (reply["type"], reply["code"], reply["id"]) == ("error", "invalid_field", "c2")
    assert "$.color" in reply["detail"]
    assert server.log_rows() == before and ("ump", "c2") not in server.svc.hub.keys
    await ump.close()
