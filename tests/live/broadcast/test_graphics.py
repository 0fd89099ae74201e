"""Broadcast graphics on ``/ws/watch``, with the real service and real WebSocket clients:
an overlay that subscribes with ``graphics`` gets the game's state after its snapshot and
after every operator's command; a control socket with a display, committee or admin token
drives it (take, hide, replay, queue, skip, language, citation); every bad command is
refused with its typed error and changes nothing; resumes and slow viewers get it again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgspec

from stream.live.broadcast.graphics import MAX_QUEUE

from ..conftest import Raw, RunningServer, Server

ASIDE = ("heartbeat", "presence", "roster")


async def watch(server: Server, query: str = "game=g1&graphics=1", **kw: Any) -> Raw:
    return await Raw.connect(f"{server.watch_url}?{query}", **kw)


async def next_of(raw: Raw, kind: str, timeout: float = 5.0) -> dict[str, Any]:
    """The next frame of ``kind``, past heartbeats (and presence and rosters unless asked)."""
    async with asyncio.timeout(timeout):
        return await _next_of(raw, kind)


async def _next_of(raw: Raw, kind: str) -> dict[str, Any]:
    while True:
        msg = await raw.reply()
        assert msg["type"] != "closed", msg
        if msg["type"] == kind:
            return msg
        assert msg["type"] in (*ASIDE, "snapshot", "delta"), msg


async def control(server: Server, token: str, query: str = "game=g1&graphics=1") -> Raw:
    """An operator's socket: authenticated, following the game's graphics (its first state read)."""
    raw = await watch(server, query)
    await raw.send(json.dumps({"type": "auth", "token": token}))
    await next_of(raw, "graphics")
    return raw


async def command(raw: Raw, **cmd: Any) -> dict[str, Any]:
    """Send one command; the state it made (or the error)."""
    await raw.send(json.dumps({"type": "graphics", "game": "g1", **cmd}))
    async with asyncio.timeout(5):
        while True:
            msg = await raw.reply()
            if msg["type"] in ("graphics", "error", "closed"):
                return msg


async def test_an_overlay_follows_the_graphics_an_operator_drives(server: Server) -> None:
    await server.setup_game()
    overlay = await watch(server)
    kinds: list[str] = []
    while not kinds or kinds[-1] != "graphics":
        kinds.append((await overlay.reply())["type"])
    kinds = [k for k in kinds if k != "heartbeat"]
    # after its snapshot, its roster and presence: the game's graphics, as the node started
    assert kinds == ["snapshot", "roster", "presence", "graphics"]
    plain = await watch(server, "game=g1")  # no graphics asked: none sent
    ops = await control(server, server.token("display", "ops-1", game="g1"))

    state = await command(ops, action="hide", graphic="bug", id="c1")
    assert state["type"] == "graphics" and state["version"] == 1 and state["by"] == "ops-1"
    assert state["bug"] == {"on": False, "take": 0} and state["box"] == {"on": True, "take": 0}
    assert (await next_of(overlay, "graphics")) == state
    state = await command(ops, action="take", graphic="bug")
    assert state["bug"] == {"on": True, "take": 1}
    again = await command(ops, action="take", graphic="bug")     # on air already: no new entrance
    assert again["bug"] == {"on": True, "take": 1} and again["version"] == 3
    replay = await command(ops, action="replay", graphic="bug")  # the entrance again
    assert replay["bug"] == {"on": True, "take": 2}
    es = await command(ops, action="lang", lang="es")
    cite = await command(ops, action="cite", cite=True)
    assert (es["lang"], cite["lang"], cite["cite"], cite["version"]) == ("es", "es", True, 6)
    seen = [await next_of(overlay, "graphics") for _ in range(5)]
    assert [s["version"] for s in seen] == [2, 3, 4, 5, 6] and seen[-1] == cite

    # a second overlay joins: it gets the state as it is now
    late = await watch(server)
    assert (await next_of(late, "graphics")) == cite
    # the plain viewer never got one
    plain_kinds: set[str] = set()
    while True:
        msg = await plain.reply()
        plain_kinds.add(msg["type"])
        if msg["type"] == "heartbeat" and "presence" in plain_kinds:
            break
    assert "graphics" not in plain_kinds
    for r in (overlay, plain, ops, late):
        await r.close()


async def test_lower_thirds_are_queued_skipped_taken_replayed_and_hidden(server: Server) -> None:
    await server.setup_game()
    ump = await server.device("umpire")
    tk = await server.device("timekeeper")
    await tk.send({"type": "clock.start", "game": "g1"})
    first = await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow",
                            "conduct": "arguing"})
    second = await ump.send({"type": "card", "game": "g1", "player": "a1", "color": "yellow", "count": 2,
                             "conduct": "striking"})
    overlay = await watch(server)
    await next_of(overlay, "graphics")
    ops = await control(server, server.token("admin", "ops-admin"))

    nothing = await command(ops, action="take", graphic="lower")
    assert (nothing["type"], nothing["code"]) == ("error", "nothing_queued")
    a = await command(ops, action="queue", cause=first["log_id"])
    b = await command(ops, action="queue", cause=second["log_id"], player="a1")
    queue = b["lower"]["queue"]
    assert [(q["id"], q["cause"], q["player"]) for q in queue] == [
        (1, first["log_id"], None), (2, second["log_id"], "a1")]
    assert a["lower"]["on_air"] is None
    # only what a lower third shows of the event, with the text the overlay composes from
    assert [n["type"] for n in queue[0]["notices"]] == ["card.recorded", "penalty.awarded"]
    assert [n["type"] for n in queue[1]["notices"]] == ["card.recorded", "penalty.awarded", "box.enter"]
    assert queue[1]["notices"][2]["owed_ms"] == 120_000

    skipped = await command(ops, action="skip", item=1)
    assert [q["id"] for q in skipped["lower"]["queue"]] == [2]
    taken = await command(ops, action="take", graphic="lower")
    lower = taken["lower"]
    assert lower["on_air"]["id"] == 2 and lower["queue"] == [] and lower["take"] == 1
    assert lower["last"] == lower["on_air"]
    hidden = await command(ops, action="hide", graphic="lower")
    assert hidden["lower"]["on_air"] is None and hidden["lower"]["last"]["id"] == 2
    replayed = await command(ops, action="replay", graphic="lower")
    assert replayed["lower"]["on_air"]["id"] == 2 and replayed["lower"]["take"] == 2
    # straight to air, past the queue: the cause named with take
    direct = await command(ops, action="take", graphic="lower", cause=first["log_id"], player="h2")
    assert direct["lower"]["on_air"]["id"] == 3 and direct["lower"]["on_air"]["player"] == "h2"
    # the overlay saw each state, in order
    versions = [(await next_of(overlay, "graphics"))["version"] for _ in range(6)]
    assert versions == [1, 2, 3, 4, 5, 6]
    for d in (ump, tk, overlay, ops):
        await d.close()


async def test_bad_commands_get_typed_errors_and_change_nothing(server: Server) -> None:
    await server.setup_game()
    await server.setup_game("g2", event="other")
    ump = await server.device("umpire")
    card = await ump.send({"type": "card", "game": "g1", "player": "h2", "color": "yellow",
                           "conduct": "arguing"})
    overlay = await watch(server)
    before = await next_of(overlay, "graphics")

    # anonymous: no token, no control (on a public service too)
    anon = await watch(server)
    await next_of(anon, "graphics")
    refused = await command(anon, action="hide", graphic="bug", id="x1")
    assert (refused["type"], refused["code"], refused["id"]) == ("error", "auth_required", "x1")
    # an official's token does not control the broadcast
    umpire = await control(server, server.token("umpire", "ump-x", game="g1"))
    assert (await command(umpire, action="hide", graphic="bug"))["code"] == "forbidden"
    # a display of another game, a committee of another event
    other = await control(server, server.token("display", "disp-g2", game="g2"), "game=g2&graphics=1")
    out = await command(other, action="hide", graphic="bug")
    assert (out["code"], out["detail"]) == ("out_of_scope", "this token is for game 'g2', not 'g1'")
    htc = await control(server, server.token("committee", "htc-other", event="other"), "game=g2&graphics=1")
    assert (await command(htc, action="hide", graphic="bug"))["code"] == "out_of_scope"
    # the game's own committee may
    cup = await control(server, server.token("committee", "htc-cup", event="cup"))
    ops = await control(server, server.token("display", "ops", game="g1"))
    problems = [
        ({"action": "take"}, "invalid_graphics"),
        ({"action": "lang"}, "invalid_graphics"),
        ({"action": "cite"}, "invalid_graphics"),
        ({"action": "queue"}, "invalid_graphics"),
        ({"action": "queue", "cause": "nobody/x"}, "unknown_cause"),
        ({"action": "queue", "cause": card["log_id"], "player": "a3"}, "unknown_cause"),
        ({"action": "skip"}, "nothing_queued"),
        ({"action": "take", "graphic": "lower"}, "nothing_queued"),
        ({"action": "replay", "graphic": "lower"}, "nothing_aired"),
        ({"action": "dance"}, "invalid_frame"),
        ({"action": "lang", "lang": "fr"}, "invalid_frame"),
        ({"action": "hide", "graphic": "bug", "game": "nope"}, "unknown_game"),
    ]
    for cmd, code in problems:
        reply = await command(ops, **cmd, id="bad")
        assert (reply["type"], reply["code"]) == ("error", code), (cmd, reply)
        if code != "invalid_frame":
            assert reply["id"] == "bad"
    for _ in range(MAX_QUEUE):
        assert (await command(cup, action="queue", cause=card["log_id"]))["type"] == "graphics"
        await next_of(ops, "graphics")  # (the operator's page sees each one too)
    full = await command(ops, action="queue", cause=card["log_id"])
    assert full["code"] == "queue_full"
    skip = await command(ops, action="skip", item=99)
    assert (skip["code"], skip["detail"]) == ("nothing_queued", "lower third 99 is not queued")
    # only the committee's eight commands changed anything
    states = [await next_of(overlay, "graphics") for _ in range(MAX_QUEUE)]
    assert [s["version"] for s in states] == list(range(before["version"] + 1, MAX_QUEUE + 1))
    assert states[-1]["by"] == "htc-cup" and len(states[-1]["lower"]["queue"]) == MAX_QUEUE
    for r in (ump, overlay, anon, umpire, other, htc, cup, ops):
        await r.close()


async def test_a_resume_gets_the_graphics_after_its_catch_up(server: Server) -> None:
    await server.setup_game()
    ops = await control(server, server.token("display", "ops", game="g1"))
    await command(ops, action="hide", graphic="box")
    overlay = await watch(server)
    snap = await next_of(overlay, "snapshot")
    await overlay.close()
    tk = await server.device("timekeeper")
    await tk.send({"type": "clock.start", "game": "g1"})
    back = await watch(server, f"game=g1&graphics=1&since={snap['seq']}&epoch={snap['epoch']}")
    kinds: list[str] = []
    while "graphics" not in kinds:
        msg = await back.reply()
        if msg["type"] != "heartbeat":
            kinds.append(msg["type"])
            if msg["type"] == "graphics":
                assert msg["box"]["on"] is False and msg["version"] == 1
    assert kinds == ["delta", "roster", "presence", "graphics"]
    # a subscribe frame with graphics for a game the socket follows already: graphics from now on
    plain = await watch(server, "game=g1")
    await next_of(plain, "presence")
    await plain.send(json.dumps({"type": "subscribe", "game": "g1", "graphics": True}))
    assert (await next_of(plain, "graphics"))["box"]["on"] is False
    for r in (ops, back, plain, tk):
        await r.close()


async def test_msgpack_and_a_private_service(tmp_path: Path) -> None:
    """Without public viewing the overlay authenticates first; MessagePack frames carry the same state."""
    async with RunningServer(tmp_path, public_watch=False) as srv:
        await srv.setup_game()
        overlay = await Raw.connect(f"{srv.watch_url}?game=g1&graphics=1&format=msgpack")
        token = srv.token("display", "ov", game="g1")
        await overlay.send(msgspec.msgpack.encode({"type": "auth", "token": token}))
        await next_of(overlay, "graphics")
        ops = await control(srv, srv.token("display", "ops", game="g1"))
        assert (await command(ops, action="lang", lang="es"))["lang"] == "es"
        state = await next_of(overlay, "graphics")
        assert (state["lang"], state["version"], state["by"]) == ("es", 1, "ops")
        await overlay.close()
        await ops.close()
