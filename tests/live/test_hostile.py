"""Hostile input against a real service: frames no handheld or viewer would
send, and bad bodies for the HTTP API. Whatever arrives, the answer is one
typed ``error`` frame (or the documented close code), nothing is written,
nothing crashes, and the next device is served as usual."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from stream.live.wire import auth
from stream.live.wire import protocol as pr
from stream.rules.events import TYPE_NAMES

from .conftest import Raw, RunningServer, Server, admin_device, eventually

BIG = 2**80
PING = json.dumps({"type": "ping", "device_time": 1})


def send(event: Any) -> str:
    return json.dumps({"type": "send", "event": event})


def card(**over: Any) -> dict[str, Any]:
    return {"type": "card", "id": "c1", "game": "g1", "player": "h1", "color": "yellow",
            "conduct": "arguing", **over}


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


async def start_game(server: Server) -> None:
    await server.setup_game()
    admin = await admin_device(server)
    await admin.send({"type": "clock.start", "game": "g1", "id": "prep-start"})
    await admin.close()


async def replies_until_pong(raw: Raw, timeout: float = 5.0) -> list[dict[str, Any]]:
    """Everything the server answers before the pong to a ping sent now (heartbeats
    aside), or up to the close: the replies to what was sent before."""
    out: list[dict[str, Any]] = []
    with contextlib.suppress(Exception):  # already closed: the close is in the replies
        await raw.send(PING)
    async with asyncio.timeout(timeout):
        while True:
            msg = await raw.reply()
            if msg["type"] == "pong":
                return out
            if msg["type"] != "heartbeat":
                out.append(msg)
            if msg["type"] == "closed":
                return out


async def still_serving(server: Server) -> None:
    """A fresh device posts a valid event and is acked; a fresh viewer gets its snapshot."""
    dev = await server.device("umpire", game="g1")
    ack = await dev.send({"type": "whistle", "game": "g1"})
    assert ack["type"] == "ack" and not ack["duplicate"]
    await dev.close()
    raw = await Raw.connect(server.watch_url + "?game=g1")
    snap = await raw.reply()
    assert snap["type"] == "snapshot" and snap["seq"] == ack["seq"]
    await raw.close()


def server_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.ERROR]


# ------------------------------------------------------------- /ws/device

#: name -> (frame, send it as a text frame even if bytes, the error codes accepted or a close code)
DEVICE_CASES: dict[str, tuple[str | bytes, bool, set[str] | int]] = {
    "oversized": (send(card(pad="x" * (64 * 1024))), True, 1009),
    "nested_100k_over_the_limit": (send(card(pad="@")).replace('"@"', nested(100_000)), True, 1009),
    "nested_30k": (send(card(pad="@")).replace('"@"', nested(30_000)), True, {"too_deep"}),
    "nested_30k_bare": (nested(30_000), True, {"too_deep", "invalid_frame"}),
    "invalid_utf8_in_event": (send(card(player="@")).encode().replace(b'"@"', b'"\xff\xfe"'), True,
                              {"malformed_json"}),
    "invalid_utf8_in_frame": (b'{"type":"s\xc3\x28nd"}', True, {"malformed_json"}),
    "count_99": (send(card(count=99)), False, {"invalid_field"}),
    "color_green": (send(card(color="green")), False, {"invalid_field"}),
    "conduct_number": (send(card(conduct=7)), False, {"invalid_field"}),
    "id_number": (send(card(id=7)), False, {"invalid_field"}),
    "id_too_long": (send(card(id="x" * 65)), False, {"invalid_field"}),
    "unknown_frame_type": (json.dumps({"type": "bogus"}), False, {"invalid_frame"}),
    # authorization comes before decoding: a type no role may send is "forbidden"
    "unknown_event_type": (send({"type": "bogus", "id": "b", "game": "g1"}), False,
                           {"unknown_type", "forbidden"}),
    "no_event_type": (send({"id": "b", "game": "g1"}), False, {"missing_type"}),
    "tick_from_a_device": (send({"type": "tick", "id": "t", "game": "g1"}), False, {"forbidden"}),
    # A token scoped to g1 learns nothing about other games: out of scope, not unknown.
    "unknown_game": (send({"type": "whistle", "id": "w", "game": "nope"}), False, {"out_of_scope"}),
    "no_game": (send({"type": "whistle", "id": "w"}), False, {"out_of_scope", "invalid_field"}),
    "unknown_player": (send(card(player="zz")), False, {"unknown_player"}),
    "huge_float": (send(card()).replace('"yellow"', '"yellow","count":1e400'), False,
                   {"invalid_field", "invalid_frame"}),
    "huge_int": (send(card(count=BIG)), False, {"invalid_field"}),
    "huge_int_in_frame": (json.dumps({"type": "pong", "server_time": BIG, "device_time": 1}), False,
                          {"invalid_frame"}),
    "empty_object": ("{}", False, {"invalid_frame"}),
    "json_array": ("[]", False, {"invalid_frame"}),
    "json_null": ("null", False, {"invalid_frame"}),
    "empty_text": ("", False, {"malformed_json"}),
    "binary_garbage": (bytes(range(256)) * 3, False, {"malformed_json"}),
    "binary_json": (send(card(player="zz")).encode(), False, {"unknown_player"}),
    "send_without_event": (json.dumps({"type": "send"}), False, {"invalid_frame"}),
    "send_empty_event": (send({}), False, {"invalid_field"}),
    "send_event_array": (send([1, 2]), False, {"invalid_field"}),
    "send_event_string": (send("goal"), False, {"invalid_field"}),
    "second_auth": (json.dumps({"type": "auth", "token": "x"}), False, {"already_authenticated"}),
    "setup_from_an_umpire": (send({"type": "game.setup", "id": "s", "game": "g5"}), False, {"forbidden"}),
}


@pytest.mark.parametrize("name", sorted(DEVICE_CASES))
async def test_hostile_device_frame(server: Server, caplog: pytest.LogCaptureFixture, name: str) -> None:
    frame, as_text, expect = DEVICE_CASES[name]
    await start_game(server)
    before = server.log_rows()
    raw = await Raw.device(server, server.token("umpire", "hostile", game="g1"))
    await raw.send(frame, text=True if as_text else None)
    replies = await replies_until_pong(raw)
    await raw.close()
    assert len(replies) == 1, replies  # exactly one answer
    reply = replies[0]
    if isinstance(expect, int):
        assert reply == {"type": "closed", "code": expect}
    else:
        assert reply["type"] == "error" and reply["code"] in expect, reply
        assert reply["retry"] is False
    assert server.log_rows() == before
    assert server_errors(caplog) == []
    await still_serving(server)


@pytest.mark.parametrize("at", ["soon", True, 1.5, BIG, -1], ids=["string", "bool", "float", "2**80", "-1"])
async def test_ill_typed_at_is_refused(server: Server, at: Any) -> None:
    await start_game(server)
    before = server.log_rows()
    raw = await Raw.device(server, server.token("umpire", "hostile", game="g1"))
    await raw.send(send({"type": "whistle", "id": "w", "game": "g1", "at": at}))
    reply = await raw.reply()
    await raw.close()
    assert server.log_rows() == before, "written"
    assert (reply["type"], reply["code"]) == ("error", "invalid_field"), reply


async def test_flood_is_rate_limited(server: Server) -> None:
    await start_game(server)
    before = server.log_rows()
    raw = await Raw.device(server, server.token("umpire", "flood", game="g1"))
    t0 = time.monotonic()
    await asyncio.gather(*(raw.send(send(card(id=f"f{i}", player="zz"))) for i in range(200)))
    replies = [await raw.reply() for _ in range(200)]
    elapsed = time.monotonic() - t0
    assert [r["type"] for r in replies] == ["error"] * 200
    limited = [r for r in replies if r["code"] == "rate_limited"]
    served = [r for r in replies if r["code"] != "rate_limited"]
    assert all(r["retry"] is True for r in limited)
    assert {r["code"] for r in served} == {"unknown_player"} and all(not r["retry"] for r in served)
    burst, rate = server.svc.config.device_burst, server.svc.config.device_rate
    assert burst <= len(served) <= burst + rate * elapsed + 1
    assert [r["code"] for r in replies[:burst]] == ["unknown_player"] * burst
    # nothing else came: the next thing answered is the pong
    assert await replies_until_pong(raw) == []
    assert server.log_rows() == before
    await asyncio.sleep(1.5 / rate)  # the bucket refills
    await raw.send(send(card(id="later", player="zz")))
    assert (await raw.reply())["code"] == "unknown_player"
    await raw.close()
    await still_serving(server)


@pytest.mark.parametrize("socket", ["device", "watch"])
async def test_a_socket_that_keeps_sending_junk_is_closed_1008(server: Server, socket: str) -> None:
    """Each invalid frame gets its typed error, up to the socket's allowance (20 in a
    row); the next one closes it with 1008. Other sockets are untouched."""
    await start_game(server)
    before = server.log_rows()
    raw = (await Raw.device(server, server.token("umpire", "junk", game="g1")) if socket == "device"
           else await Raw.connect(server.watch_url))
    burst = server.svc.config.invalid_burst
    for _ in range(burst + 5):
        await raw.send("{nope")
    replies = [await raw.reply() for _ in range(burst + 1)]
    assert [r["type"] for r in replies[:burst]] == ["error"] * burst
    assert {r["code"] for r in replies[:burst]} <= {"malformed_json", "invalid_frame"}
    assert replies[burst] == {"type": "closed", "code": 1008}
    assert server.log_rows() == before
    await still_serving(server)


async def test_rate_limited_reply_names_the_event(server: Server) -> None:
    await start_game(server)
    raw = await Raw.device(server, server.token("umpire", "flood", game="g1"))
    n = server.svc.config.device_burst + 10
    for i in range(n):
        await raw.send(send(card(id=f"f{i}", player="zz")))
    replies = [await raw.reply() for _ in range(n)]
    await raw.close()
    limited = [(i, r) for i, r in enumerate(replies) if r["code"] == "rate_limited"]
    assert limited
    assert all(r["id"] == f"f{i}" for i, r in limited), limited[0]


async def test_rate_limit_is_per_device_not_per_socket(server: Server) -> None:
    await start_game(server)
    token = server.token("umpire", "flood", game="g1")
    socks = [await Raw.device(server, token) for _ in range(3)]
    t0 = time.monotonic()
    for raw in socks:
        for i in range(40):
            await raw.send(send(card(id=f"f{i}", player="zz")))
    replies = [await raw.reply() for raw in socks for _ in range(40)]
    elapsed = time.monotonic() - t0
    for raw in socks:
        await raw.close()
    served = [r for r in replies if r["code"] != "rate_limited"]
    config = server.svc.config
    assert len(served) <= config.device_burst + config.device_rate * elapsed + 1


async def test_device_gone_mid_commit_still_lands_and_a_retry_gets_its_ack(server: Server) -> None:
    await start_game(server)
    token = server.token("timekeeper", "tk", game="g1")
    raw = await Raw.device(server, token)
    await raw.send(send({"type": "clock.stop", "game": "g1", "id": "stop-1"}))
    raw.ws.transport.abort()  # no close handshake: the device just vanishes
    await eventually(lambda: any(r[3] == "stop-1" for r in server.log_rows()))
    again = await Raw.device(server, token)
    await again.send(send({"type": "clock.stop", "game": "g1", "id": "stop-1"}))
    reply = await again.reply()
    assert (reply["type"], reply["duplicate"]) == ("ack", True)
    await again.close()
    assert [r[3] for r in server.log_rows()].count("stop-1") == 1
    await still_serving(server)


async def test_device_vanishing_before_its_ack_logs_no_traceback(
        server: Server, caplog: pytest.LogCaptureFixture) -> None:
    await start_game(server)
    for i in range(10):
        raw = await Raw.device(server, server.token("timekeeper", f"tk{i}", game="g1"))
        await raw.send(send({"type": "clock.stop" if i % 2 == 0 else "clock.start", "game": "g1",
                             "id": f"c{i}"}))
        raw.ws.transport.abort()
        await eventually(lambda i=i: any(r[3] == f"c{i}" for r in server.log_rows()))
    await asyncio.sleep(0.2)
    assert server_errors(caplog) == []


# -------------------------------------------------------------- /ws/watch

WATCH_CASES: dict[str, tuple[str | bytes, bool, set[str] | int]] = {
    "oversized": (json.dumps({"type": "subscribe", "game": "g1", "pad": "x" * 9000}), True, 1009),
    "nested_deep": ('{"type":"subscribe","game":' + nested(2000) + "}", True, {"invalid_frame"}),
    "invalid_utf8": (b'{"type":"subscribe","game":"\xff"}', True, {"invalid_frame"}),
    "unknown_type": (json.dumps({"type": "bogus"}), False, {"invalid_frame"}),
    "device_frame": (send(card()), False, {"invalid_frame"}),
    "unknown_game": (json.dumps({"type": "subscribe", "game": "nope"}), False, {"unknown_game"}),
    "neither_game_nor_arena": (json.dumps({"type": "subscribe"}), False, {"invalid_frame"}),
    "negative_since": (json.dumps({"type": "subscribe", "game": "g1", "since": -1}), False,
                       {"invalid_frame"}),
    "huge_since": ('{"type":"subscribe","game":"g1","since":1e400}', False, {"invalid_frame"}),
    "game_too_long": (json.dumps({"type": "subscribe", "game": "g" * 200}), False, {"invalid_frame"}),
    "game_number": (json.dumps({"type": "subscribe", "game": 1}), False, {"invalid_frame"}),
    "empty_object": ("{}", False, {"invalid_frame"}),
    "json_array": ("[1]", False, {"invalid_frame"}),
    "binary_garbage": (bytes(range(256)), False, {"invalid_frame"}),
}


@pytest.mark.parametrize("name", sorted(WATCH_CASES))
async def test_hostile_watch_frame(server: Server, caplog: pytest.LogCaptureFixture, name: str) -> None:
    frame, as_text, expect = WATCH_CASES[name]
    await start_game(server)
    before = server.log_rows()
    raw = await Raw.connect(server.watch_url)
    await raw.send(frame, text=True if as_text else None)
    replies = await replies_until_pong(raw)
    await raw.close()
    if isinstance(expect, int):
        assert replies == [{"type": "closed", "code": expect}]
    else:
        assert len(replies) == 1, replies  # one answer, and the socket stays open
        assert replies[0]["type"] == "error" and replies[0]["code"] in expect, replies
    assert server.log_rows() == before
    assert server_errors(caplog) == []
    await still_serving(server)


@pytest.mark.parametrize("query", ["since=abc&epoch=x", "since=-3", "since=&epoch=", "game=g1&game=g2",
                                   "format=bogus", "since=99999999999999999999999999&epoch=E"])
async def test_odd_watch_query_gets_a_snapshot(server: Server, caplog: pytest.LogCaptureFixture,
                                               query: str) -> None:
    await start_game(server)
    query = query.replace("epoch=E", f"epoch={server.svc.hub.store.epoch}")
    raw = await Raw.connect(f"{server.watch_url}?game=g1&{query}")
    snap = await raw.reply()
    await raw.close()
    assert snap["type"] == "snapshot" and snap["game"] == "g1" and snap["seq"] == 2
    # a resume that can't be served says so; no resume asked is a plain snapshot
    assert snap["reset"] == ("epoch=" + server.svc.hub.store.epoch in query)
    assert server_errors(caplog) == []


@pytest.mark.parametrize("since", ["%C2%B2", "9" * 5000], ids=["superscript-two", "5000-digits"])
async def test_watch_query_with_a_strange_since_is_answered(
        server: Server, caplog: pytest.LogCaptureFixture, since: str) -> None:
    await start_game(server)
    raw = await Raw.connect(f"{server.watch_url}?game=g1&since={since}&epoch=x")
    first = await raw.reply()
    await raw.close()
    assert server_errors(caplog) == []
    assert first["type"] in ("snapshot", "error"), first


async def test_watch_auth_with_a_bad_token_is_closed_4401(server: Server) -> None:
    await start_game(server)
    raw = await Raw.connect(server.watch_url)
    await raw.send(json.dumps({"type": "auth", "token": "v1.x.y"}))
    replies = await replies_until_pong(raw)
    assert replies[-1] == {"type": "closed", "code": 4401}
    await still_serving(server)


@pytest.mark.parametrize("token", ["v1.x.y", "expired"])
async def test_watch_auth_refusal_sends_its_error_before_closing(server: Server, token: str) -> None:
    await start_game(server)
    if token == "expired":
        token = server.token("display", "board", game="g1", ttl=-1)
    raw = await Raw.connect(server.watch_url)
    await raw.send(json.dumps({"type": "auth", "token": token}))
    replies = await replies_until_pong(raw)
    assert replies[0]["type"] == "error" and replies[0]["code"] in ("bad_token", "expired"), replies


# ----------------------------------------------------------------- HTTP API

HTTP_CASES: list[tuple[str, bytes, int]] = [
    ("/api/games", b"not json", 400),
    ("/api/games", b"", 400),
    ("/api/games", b"[]", 400),
    ("/api/games", b'"a string"', 400),
    ("/api/games", b'{"game":"\xff\xfe"}', 400),
    ("/api/games", b'{"game":' + nested(100_000).encode() + b"}", 400),
    ("/api/games", b'{"pad":"' + b"x" * 300_000 + b'"}', 413),
    ("/api/games", b"{}", 400),
    ("/api/games", b'{"game":"g5","event":"cup","handicap":"eight"}', 400),
    ("/api/games", b'{"game":"g5","event":"cup","handicap":1e400}', 400),
    ("/api/games", b'{"game":"g5","event":"cup","handicap":%d}' % BIG, 400),
    ("/api/games", b'{"game":"g1","id":"%s"}' % (b"x" * 65), 400),
    ("/api/events", b'{"event":"e","class":"pro","handicap":8,"teams":[]}', 400),
    ("/api/events", b'{"event":"e","class":"club","handicap":8,"teams":"ab"}', 400),
    ("/api/events/cup/complete", b"[1]", 400),
    ("/api/events/nope/complete", b"{}", 409),  # a rules refusal: 409 with its clause
    ("/api/tokens", b'{"role":"god","device":"x"}', 400),
    ("/api/tokens", b'{"role":"umpire","device":"x"}', 400),
    ("/api/tokens", b'{"role":"umpire","device":"bad name","game":"g1"}', 400),
    ("/api/tokens", b'{"role":"umpire","device":"x","game":"g1","ttl_s":"long"}', 400),
    ("/api/tokens", b"\x00\x01", 400),
    ("/api/tokens/revoke", b"{}", 400),
    ("/api/tokens/revoke", b'{"jti":7}', 400),
    ("/api/tokens/revoke", b"[", 400),
]


async def test_bad_http_bodies_are_refused_and_write_nothing(server: Server,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    await start_game(server)
    before = server.log_rows()
    headers = {"Authorization": f"Bearer {server.admin}"}
    async with aiohttp.ClientSession() as s:
        for path, body, want in HTTP_CASES:
            async with s.post(server.http + path, data=body, headers=headers) as r:
                text = await r.text()
                assert r.status == want, (path, body[:60], r.status, text[:200])
        for path in ("/api/games/nope", "/api/games/nope/log", "/api/games/%00/log"):
            async with s.get(server.http + path) as r:
                assert r.status == 404, path
    assert server.log_rows() == before
    assert server.svc.revoked == set()
    assert server_errors(caplog) == []
    await still_serving(server)


# --------------------------------------------------------------- Hypothesis

KEYS = st.sampled_from(["type", "id", "game", "at", "team", "player", "color", "count", "conduct",
                        "event", "target", "token", "points", "since", "epoch", "arena", "split"])
WORDS = st.sampled_from(["g1", "g2", "h1", "a1", "home", "away", "send", "auth", "subscribe", "goal",
                         "card", "whistle", "clock.start", "void", "game.setup", "tick", "yellow",
                         "arguing", "", "\x00", "\ud7ff", "\u202e"])
SCALARS = (st.none() | st.booleans() | st.integers(min_value=-BIG, max_value=BIG)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12) | WORDS)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(KEYS | st.text(max_size=6), inner, max_size=6), max_leaves=24)
OBJECTS = st.dictionaries(KEYS, JSON, max_size=7)


def _enc(v: Any) -> str:
    return msgspec.json.encode(v).decode()


def frames(frame_types: list[str], *, events: bool) -> st.SearchStrategy[tuple[str | bytes, bool]]:
    """(frame, as a text frame): any JSON, a frame of a known type with junk in it,
    a device ``send`` of an event-like object, or raw bytes as a binary or a text frame."""
    typed = st.builds(lambda t, body: {**body, "type": t}, st.sampled_from(frame_types) | st.text(max_size=8),
                      OBJECTS)
    etype = st.sampled_from(sorted(auth.ROLE_EVENTS["umpire"])) | st.sampled_from(sorted(TYPE_NAMES))
    ids, games = st.text(min_size=1, max_size=10), st.sampled_from(["g1", "g1", "g2", "nope"])
    event_like = st.builds(lambda t, i, g, extra: {**extra, "type": t, "id": i, "game": g},
                           st.one_of(etype, etype, etype, st.text(max_size=6)),
                           st.one_of(ids, ids, ids, JSON), st.one_of(games, games, games, JSON),
                           st.dictionaries(KEYS, st.one_of(WORDS, WORDS, SCALARS, JSON), max_size=6))
    sends = st.builds(lambda body: {"type": "send", "event": body}, st.one_of(event_like, event_like, JSON))
    text = st.tuples((JSON | typed).map(_enc), st.just(False))
    raw = st.tuples(st.binary(max_size=300), st.booleans())
    if not events:
        return text | raw
    send_frames = st.tuples(sends.map(_enc), st.just(False))
    return st.one_of(send_frames, send_frames, text, raw)


HYPO = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture
async def ended_game(server: Server) -> Server:
    """g1 over (so no junk can make a valid event for it) and g2 live, out of the token's scope."""
    await start_game(server)
    await server.setup_game("g2", "a2")
    admin = await admin_device(server)
    await admin.send({"type": "game.end", "game": "g1"})
    await admin.send({"type": "clock.start", "game": "g2"})
    await admin.close()
    return server


_n = iter(range(10**9))


def _device_name() -> str:
    return f"fuzz{next(_n)}"


@HYPO
@given(frame=frames(["send", "auth", "ping", "pong"], events=True))
async def test_random_device_frames(ended_game: Server, frame: tuple[str | bytes, bool]) -> None:
    server = ended_game
    data, as_text = frame
    try:
        decoded = pr.device_in.decode(data)
    except (msgspec.DecodeError, RecursionError):
        decoded = None
    assume(not isinstance(decoded, pr.Ping | pr.Pong))  # those are answered with a pong, or not at all
    before = server.log_rows()
    raw = await Raw.device(server, server.token("umpire", _device_name(), game="g1"))
    await raw.send(data, text=True if as_text else None)
    replies = await replies_until_pong(raw)
    await raw.close()
    assert len(replies) == 1, replies
    event(f"{replies[0].get('code')}")
    assert replies[0]["type"] == "error", replies
    assert isinstance(replies[0]["code"], str) and replies[0]["code"] != "error"
    assert replies[0]["retry"] is False
    assert server.log_rows() == before


@HYPO
@given(frame=frames(["subscribe", "auth", "ping"], events=False))
async def test_random_watch_frames(ended_game: Server, frame: tuple[str | bytes, bool]) -> None:
    server = ended_game
    data, as_text = frame
    # what the protocol says should come back (stream.live.wire.protocol's decoder as the oracle)
    try:
        decoded = pr.watch_in_json.decode(data)
    except (msgspec.DecodeError, RecursionError):
        decoded = None
    if isinstance(decoded, pr.Subscribe):
        assume(decoded.arena is None and decoded.game not in server.svc.hub.feeds)
        expect = "unknown_game" if decoded.game is not None else "invalid_frame"
    elif isinstance(decoded, pr.Auth):
        expect = "bad_token"
    else:
        assume(decoded is None)
        expect = "invalid_frame"
    raw = await Raw.connect(server.watch_url)
    await raw.send(data, text=True if as_text else None)
    replies = await replies_until_pong(raw)
    await raw.close()
    event(expect)
    if expect == "bad_token":  # closed 4401 (the error frame before it is lost: see above)
        assert replies[-1] == {"type": "closed", "code": 4401}, replies
        assert replies[:-1] in ([], [{**replies[0], "type": "error", "code": "bad_token"}]), replies
    else:
        assert len(replies) == 1, replies
        assert replies[0]["type"] == "error" and replies[0]["code"] == expect, (replies, decoded)


async def test_server_survives_the_corpus_in_one_go(tmp_path: Path) -> None:
    """Every hostile frame above on one device socket after another, on one service."""
    async with RunningServer(tmp_path) as server:
        await start_game(server)
        before = server.log_rows()
        for name, (frame, as_text, expect) in sorted(DEVICE_CASES.items()):
            raw = await Raw.device(server, server.token("umpire", f"corpus-{name}", game="g1"))
            await raw.send(frame, text=True if as_text else None)
            replies = await replies_until_pong(raw)
            await raw.close()
            assert len(replies) == 1, (name, replies)
            assert (replies[0]["type"] == "closed") == isinstance(expect, int), (name, replies)
        assert server.log_rows() == before
        await still_serving(server)


# ------------------------------------------- regressions (tests/proof/test_hostile_input.py)


@pytest.mark.parametrize("path", ["/ws/device", "/ws/watch"])
async def test_a_frame_of_exactly_the_limit_is_taken_one_byte_more_is_not(server: Server, path: str) -> None:
    """docs/protocol.md, "Limits": 64 KiB (device) and 8 KiB (watch) are the largest frames; aiohttp's
    ``max_msg_size`` refused a frame *of* that size too."""
    await start_game(server)
    limit = server.svc.config.max_frame if path == "/ws/device" else 8 * 1024
    template = send(card(player="zz", pad="@")) if path == "/ws/device" else json.dumps(
        {"type": "subscribe", "game": "nope", "pad": "@"})
    frame = template.replace("@", "x" * (limit - len(template) + 1))
    assert len(frame) == limit
    for data, want in ((frame, "error"), (frame + " ", "closed")):
        raw = await (Raw.device(server, server.token("umpire", "lim", game="g1")) if path == "/ws/device"
                     else Raw.connect(server.watch_url))
        await raw.send(data)
        replies = await replies_until_pong(raw)
        await raw.close()
        assert [r["type"] for r in replies] == [want], replies
        if want == "closed":
            assert replies[0]["code"] == 1009


@pytest.mark.parametrize("request_bytes", [
    b"GET /api/games HTTP/9.9\r\nHost: x\r\n\r\n",
    b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /api/log HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer v1.secret-ish" + b"A" * 9000 + b"\r\n\r\n",
], ids=["bad-version", "long-path", "long-authorization"])
async def test_an_unparseable_http_request_is_a_400_without_a_traceback(
        server: Server, caplog: pytest.LogCaptureFixture, request_bytes: bytes) -> None:
    """aiohttp logged these at ERROR with a traceback quoting the start of the bad line
    (an Authorization header included): now one line at INFO, no content."""
    await start_game(server)
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(request_bytes)
    status = await reader.readline()
    writer.close()
    assert status.split()[1] == b"400", status
    await asyncio.sleep(0.05)
    assert server_errors(caplog) == []
    assert not any(r.exc_info for r in caplog.records if r.name.startswith("aiohttp"))
    assert not any("secret-ish" in r.getMessage() for r in caplog.records)
    await still_serving(server)
