"""Who may do what: tokens, roles, scopes, origins, timeouts and the admin API,
against a real service. Every refusal is also checked to have written nothing."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import sqlite3
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import websockets

from stream.live.wire import auth

from ..conftest import Raw, RunningServer, Server, admin_device

#: The codes of an authentication or authorization refusal (as opposed to the rules').
AUTH_CODES = {"auth_required", "bad_token", "expired", "revoked", "forbidden", "out_of_scope",
              "unscoped", "already_authenticated"}


def revoked_rows(server: Server) -> list[tuple[Any, ...]]:
    with sqlite3.connect(server.data / "arena.sqlite") as c:
        return c.execute("SELECT jti FROM revoked ORDER BY jti").fetchall()


async def auth_attempt(server: Server, token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Authenticate a device socket with ``token``: (first reply, what came next:
    the close after a refusal, nothing after a welcome)."""
    raw = await Raw.connect(server.device_url)
    await raw.send(json.dumps({"type": "auth", "token": token}))
    first = await raw.reply()
    then = await raw.reply() if first["type"] != "welcome" else {}
    await raw.close()
    return first, then


async def assert_refused_at_auth(server: Server, token: str, code: str) -> None:
    before = server.log_rows()
    first, then = await auth_attempt(server, token)
    assert first["type"] == "error" and first["code"] == code, first
    assert then == {"type": "closed", "code": 4401}
    assert server.log_rows() == before


async def admin_api(server: Server, path: str, body: Any) -> Any:
    status, reply = await server.api("POST", path, body)
    assert status in (200, 201), (status, reply)
    return reply


# ------------------------------------------------------------------ tokens


async def test_display_token_is_refused_on_the_device_socket(server: Server) -> None:
    await server.setup_game()
    await assert_refused_at_auth(server, server.token("display", "board", game="g1"), "forbidden")
    # nor can it post through the HTTP API
    status, _ = await server.api("POST", "/api/events", {"event": "x", "class": "club", "handicap": 0,
                                                         "teams": []},
                                 token=server.token("display", "board", game="g1"))
    assert status == 403


async def test_umpire_for_one_game_cannot_post_to_another(server: Server) -> None:
    await server.setup_game("g1", "a1")
    await server.setup_game("g2", "a2")
    admin = await admin_device(server)
    ack_g2 = await admin.send({"type": "clock.start", "game": "g2"})
    await admin.close()
    before = server.log_rows()

    ump = await server.device("umpire", game="g1")
    reply = await ump.send_once({"type": "whistle", "game": "g2", "id": "w-g2"})
    assert (reply["type"], reply["code"], reply["id"]) == ("error", "out_of_scope", "w-g2")
    # a void names its target's game, whatever "game" it says
    reply = await ump.send_once({"type": "void", "game": "g1", "target": ack_g2["log_id"], "id": "v-g2"})
    assert (reply["type"], reply["code"]) == ("error", "out_of_scope")
    assert server.log_rows() == before
    # its own game is fine: a rules refusal (the game hasn't begun), not an auth one
    reply = await ump.send_once({"type": "arena.left", "game": "g1", "player": "h3", "id": "w-g1"})
    assert (reply["type"], reply["code"]) == ("error", "game_not_started")
    await ump.close()

    # an arena-scoped token: every game of its arena, none of another
    arena = await Raw.device(server, server.token("umpire", "arena-ump", arena="a1"))
    await arena.send(json.dumps({"type": "send", "event": {"type": "whistle", "game": "g2", "id": "a"}}))
    reply = await arena.reply()
    assert (reply["type"], reply["code"]) == ("error", "out_of_scope")
    await arena.send(json.dumps({"type": "send", "event": {"type": "arena.left", "game": "g1", "player": "h3",
                                                            "id": "b"}}))
    reply = await arena.reply()
    assert (reply["type"], reply["code"]) == ("error", "game_not_started")
    await arena.close()
    assert server.log_rows() == before


async def test_expired_token_is_refused(server: Server) -> None:
    await server.setup_game()
    await assert_refused_at_auth(server, server.token("umpire", "u", game="g1", ttl=-5), "expired")


def _b64(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def _unb64(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


@pytest.mark.parametrize("forgery", ["signature", "payload", "other_secret", "version", "garbage", "empty"])
async def test_forged_token_is_refused(server: Server, forgery: str) -> None:
    await server.setup_game()
    good = server.token("umpire", "u", game="g1")
    version, payload, sig = good.split(".")
    if forgery == "signature":
        raw_sig = bytearray(_unb64(sig))
        raw_sig[0] ^= 1
        token = f"{version}.{payload}.{_b64(bytes(raw_sig))}"
    elif forgery == "payload":  # promote itself to an unscoped admin, keep the signature
        claims = json.loads(_unb64(payload))
        claims.update(role="admin", game=None)
        token = f"{version}.{_b64(json.dumps(claims).encode())}.{sig}"
    elif forgery == "other_secret":
        token, _ = auth.issue(auth.new_secret(), sub="u", role="admin", exp=int(time.time()) + 60)
    elif forgery == "version":
        token = f"v2.{payload}.{sig}"
    elif forgery == "garbage":
        token = "v1.\u00e9\u00e9.!!"
    else:
        token = ""
    await assert_refused_at_auth(server, token, "bad_token")


async def test_revoked_token_is_refused(server: Server) -> None:
    await server.setup_game()
    issued = await admin_api(server, "/api/tokens", {"role": "umpire", "device": "u9", "game": "g1"})
    token, jti = issued["token"], issued["claims"]["jti"]
    first, _ = await auth_attempt(server, token)
    assert first["type"] == "welcome" and first["device"] == "u9"

    assert (await admin_api(server, "/api/tokens/revoke", {"jti": jti, "reason": "lost"}))["revoked"] == jti
    assert revoked_rows(server) == [(jti,)]
    await assert_refused_at_auth(server, token, "revoked")
    # as an admin bearer token too
    status, _ = await server.api("GET", "/api/log", token=token)
    assert status == 401


async def test_revocation_survives_a_restart(tmp_path: Path) -> None:
    async with RunningServer(tmp_path) as first:
        await first.setup_game()
        issued = await admin_api(first, "/api/tokens", {"role": "umpire", "device": "u9", "game": "g1"})
        await admin_api(first, "/api/tokens/revoke", {"jti": issued["claims"]["jti"]})
    async with RunningServer(tmp_path) as again:
        await assert_refused_at_auth(again, issued["token"], "revoked")


# ------------------------------------------------------- role x event type

#: A representative event of each type, for a game whose clock is running
#: (``prep`` below); ``void`` targets the clock.start the prep logged.
EVENTS: dict[str, dict[str, Any]] = {
    "event.setup": {"event": "cup2", "class": "club", "handicap": 8, "teams": ["t1", "t2"]},
    "event.complete": {"event": "cup"},
    "team.eliminated": {"event": "cup", "team": "g1-away"},
    "draw.made": {"event": "cup", "format": "knockout", "teams": ["g1-home", "nope"]},  # not entered
    "game.setup": {"game": "g9", "event": "cup", "handicap": 8,
                   "teams": {"home": {"team": "x", "players": ["x1", "x2", "x3"]},
                             "away": {"team": "y", "players": ["y1", "y2", "y3"]}}},
    "clock.start": {"game": "g1"},
    "clock.stop": {"game": "g1"},
    "whistle": {"game": "g1"},
    "goal": {"game": "g1", "team": "home", "player": "h1"},
    "horn": {"game": "g1", "split": True},
    "game.end": {"game": "g1"},
    "card": {"game": "g1", "player": "h2", "color": "yellow", "conduct": "arguing"},
    "card.amended": {"game": "g1", "target": "admin/prep-start", "conduct": "arguing"},  # not a card
    "box.left_early": {"game": "g1", "player": "h2"},
    "arena.left": {"game": "g1", "player": "h3"},
    "substitution": {"game": "g1", "team": "home", "out": "h1", "in": "h4"},
    "mount.removed": {"game": "g1", "player": "a1", "reason": "unfit"},
    "mount.replaced": {"game": "g1", "player": "a1"},
    "postgame.card": {"game": "g1", "player": "a2", "level": "2y"},
    "void": {"game": "g1", "target": "admin/prep-start"},
    "committee.increase": {"player": "h1", "origin_game": "g1", "games": 1, "by": "committee",
                           "reason": "striking"},  # g1 has not ended: a rules refusal
    "committee.rescind": {"obligation": "nothing-owed", "by": "committee", "reason": "r"},  # ditto
    "committee.decrease": {"obligation": "nothing-owed", "owed_ms": 1000, "by": "committee",
                           "reason": "r"},
    "game.scheduled": {"game": "g1", "starts_at": 1796148000000, "officials": {"umpires": ["M. Pérez"]}},
    "game.handicap": {"game": "g1", "goals": {"home": 1.5, "away": 0}, "by": "committee",
                      "reason": "r"},  # g1 has begun: a rules refusal (game_begun)
    "tick": {"game": "g1"},  # the service's own: no role may send it
    "team.registered": {"team": "g1-home", "name": "Aiken Arena", "short": "AIK",
                        "colors": {"primary": "#0B3D91", "secondary": "#FFD100"}, "event": "cup"},
    "player.registered": {"player": "h1", "name": "Tomás Ortega", "number": 2},
}
#: The cells that, when allowed, are acked in that state (the others are refused by the rules).
ACKED = {"event.setup", "event.complete", "team.eliminated", "game.setup", "clock.start", "clock.stop",
         "whistle", "goal", "horn", "game.end", "card", "arena.left", "substitution", "mount.removed", "void",
         "team.registered", "player.registered", "game.scheduled"}
#: A committee token runs ``cup``: it sets up its own event (here already set up: refused by
#: the rules), never another (test_committee_scope.py has the scope itself).
COMMITTEE = {"event.setup": {"event": "cup", "class": "club", "handicap": 8, "teams": ["t1", "t2"]}}


#: Every type some role may send, and the others above. A type added to ROLE_EVENTS
#: without an entry in EVENTS is still checked, with a bare event (so a refusal for
#: its fields, not an ack, where it is allowed).
TYPES = sorted(set(EVENTS).union(*auth.ROLE_EVENTS.values()))


@pytest.mark.parametrize("etype", TYPES)
@pytest.mark.parametrize("role", sorted(auth.ROLE_EVENTS))
async def test_role_may_send_only_its_event_types(server: Server, role: str, etype: str) -> None:
    await server.setup_game()
    await admin_api(server, "/api/events", {"event": "cup", "class": "club", "handicap": 8,
                                            "teams": ["g1-home", "g1-away"]})
    prep = await admin_device(server)
    ack = await prep.send_once({"type": "clock.start", "game": "g1", "id": "prep-start"})
    assert ack["type"] == "ack"
    await prep.close()
    # the void's target is named by its log id: device/id
    committee = role == "committee"
    event = {"type": etype, "id": "cell",
             **(COMMITTEE if committee else {}).get(etype, EVENTS.get(etype, {"game": "g1"}))}
    if etype == "void":
        event["target"] = ack["log_id"]
    allowed = etype in auth.ROLE_EVENTS[role]
    token = server.token(role, f"{role}-dev", game=None if role in ("admin", "committee") else "g1",
                         event="cup" if committee else None)
    before = server.log_rows()

    if role == "display":  # can't even open a device session
        assert not allowed
        await assert_refused_at_auth(server, token, "forbidden")
        return
    dev = await Raw.device(server, token)
    await dev.send(json.dumps({"type": "send", "event": event}))
    reply = await dev.reply()
    await dev.close()
    after = server.log_rows()
    if not allowed:
        assert (reply["type"], reply["code"], reply["id"]) == ("error", "forbidden", "cell"), reply
        assert after == before
    elif etype in ACKED and not (committee and etype in COMMITTEE):
        assert reply["type"] == "ack", reply
        assert after[:-1] == before and after[-1][2:4] == (f"{role}-dev", "cell")
    else:
        assert reply["type"] == "error" and reply["code"] not in AUTH_CODES, reply
        assert reply["clause"] is not None, reply  # a rules refusal names its clause
        assert after == before


async def test_timekeeper_may_void_only_clock_events(server: Server) -> None:
    await server.setup_game()
    admin = await admin_device(server)
    await admin.send({"type": "clock.start", "game": "g1"})
    ump = await server.device("umpire")
    tk = await server.device("timekeeper")
    goal = await ump.send({"type": "goal", "game": "g1", "team": "home"})
    whistle_restart = await tk.send({"type": "clock.start", "game": "g1"})
    whistle = await ump.send({"type": "whistle", "game": "g1"})
    before = server.log_rows()
    for target in (goal["log_id"], whistle["log_id"]):
        reply = await tk.send_once({"type": "void", "game": "g1", "target": target, "id": f"v-{target}"})
        assert (reply["type"], reply["code"]) == ("error", "forbidden"), reply
    assert server.log_rows() == before
    horn = await tk.send({"type": "horn", "game": "g1", "split": True})
    for target in (horn["log_id"], whistle_restart["log_id"]):
        reply = await tk.send_once({"type": "void", "game": "g1", "target": target, "id": f"v-{target}"})
        assert reply["type"] == "ack", reply
    assert [r[3] for r in server.log_rows()[-2:]] == [f"v-{horn['log_id']}", f"v-{whistle_restart['log_id']}"]
    for d in (admin, ump, tk):
        await d.close()


# --------------------------------------------------------------- the socket


@pytest.mark.parametrize("path", ["/ws/device", "/ws/watch"])
async def test_foreign_origin_is_refused_on_upgrade(server: Server, path: str) -> None:
    url = f"ws://127.0.0.1:{server.port}{path}"
    for origin in ("http://evil.example", "null", f"http://127.0.0.1:{server.port + 1}",
                   f"https://evil.example:{server.port}", f"ws://127.0.0.1:{server.port}"):
        with pytest.raises(websockets.InvalidStatus) as err:
            await websockets.connect(url, origin=origin)  # type: ignore[arg-type]
        assert err.value.response.status_code == 403, origin
    own = await websockets.connect(url, origin=f"http://127.0.0.1:{server.port}")  # type: ignore[arg-type]
    await own.close()


async def test_own_and_listed_origins_are_allowed(tmp_path: Path) -> None:
    async with RunningServer(tmp_path, origins=["https://board.example"]) as server:
        await server.setup_game()
        for origin in (f"http://127.0.0.1:{server.port}", "https://board.example"):
            raw = Raw(await websockets.connect(server.device_url, origin=origin))  # type: ignore[arg-type]
            await raw.send(json.dumps({"type": "auth", "token": server.token("umpire", "u", game="g1")}))
            assert (await raw.reply())["type"] == "welcome"
            await raw.close()
            viewer = Raw(await websockets.connect(server.watch_url + "?game=g1",
                                                  origin=origin))  # type: ignore[arg-type]
            assert (await viewer.reply())["type"] == "snapshot"
            await viewer.close()
        with pytest.raises(websockets.InvalidStatus):
            await websockets.connect(server.watch_url, origin="https://other.example")  # type: ignore[arg-type]


async def test_silent_socket_is_closed_after_the_auth_timeout(server: Server) -> None:
    assert server.svc.config.auth_timeout == 1.0
    raw = await Raw.connect(server.device_url)
    t0 = time.monotonic()
    end = await raw.reply(timeout=10)
    assert end == {"type": "closed", "code": 4401}
    assert time.monotonic() - t0 >= 0.8  # not before its time


async def test_first_frame_must_be_auth(server: Server) -> None:
    await server.setup_game()
    before = server.log_rows()
    raw = await Raw.connect(server.device_url)
    await raw.send(json.dumps({"type": "send", "event": {"type": "whistle", "game": "g1", "id": "x"}}))
    reply = await raw.reply()
    assert (reply["type"], reply["code"]) == ("error", "auth_required")
    assert await raw.reply() == {"type": "closed", "code": 4401}
    assert server.log_rows() == before


async def test_a_token_in_the_query_string_is_not_authentication(server: Server) -> None:
    await server.setup_game()
    token = server.token("umpire", "u", game="g1")
    raw = await Raw.connect(f"{server.device_url}?token={token}")
    # no welcome: the socket is still waiting for its auth frame, until it gives up
    assert await raw.reply(timeout=10) == {"type": "closed", "code": 4401}


async def test_a_second_auth_frame_is_refused_without_closing(server: Server) -> None:
    await server.setup_game()
    token = server.token("umpire", "u", game="g1")
    raw = await Raw.device(server, token)
    await raw.send(json.dumps({"type": "auth", "token": server.token("admin", "x")}))
    reply = await raw.reply()
    assert (reply["type"], reply["code"]) == ("error", "already_authenticated")
    # still the umpire: the admin token wasn't taken
    await raw.send(json.dumps({"type": "send", "event": {"type": "clock.start", "game": "g1", "id": "c"}}))
    reply = await raw.reply()
    assert (reply["type"], reply["code"]) == ("error", "forbidden")
    await raw.close()


# -------------------------------------------------------------- admin HTTP

ADMIN_ROUTES: list[tuple[str, str, Any]] = [
    ("GET", "/api/log", None),
    ("GET", "/api/state", None),
    ("POST", "/api/events", {"event": "e2", "class": "club", "handicap": 8, "teams": ["a", "b"]}),
    ("POST", "/api/events/cup/complete", {}),
    ("POST", "/api/events/cup/eliminate", {"team": "g1-away"}),
    ("POST", "/api/games", {"game": "g7", "event": "cup", "handicap": 8,
                            "teams": {"home": {"team": "x", "players": ["x1", "x2", "x3"]},
                                      "away": {"team": "y", "players": ["y1", "y2", "y3"]}}}),
    ("POST", "/api/tokens", {"role": "admin", "device": "mallory"}),
    ("POST", "/api/tokens/revoke", {"jti": "0123456789abcdef"}),
]


async def _raw_request(server: Server, method: str, path: str, body: Any,
                       headers: dict[str, str]) -> tuple[int, str]:
    async with aiohttp.ClientSession() as s, s.request(
            method, server.http + path, headers=headers,
            data=None if body is None else json.dumps(body).encode()) as r:
        return r.status, await r.text()


@pytest.mark.parametrize(("method", "path", "body"), ADMIN_ROUTES, ids=[r[1] for r in ADMIN_ROUTES])
async def test_admin_routes_need_an_admin_bearer_token(server: Server, method: str, path: str,
                                                       body: Any) -> None:
    await server.setup_game()
    await admin_api(server, "/api/events", {"event": "cup", "class": "club", "handicap": 8,
                                            "teams": ["g1-home", "g1-away"]})
    before, revoked = server.log_rows(), revoked_rows(server)
    expired_admin = server.token("admin", "old-admin", ttl=-1)
    cases = {
        "no header": ({}, 401),
        "not bearer": ({"Authorization": f"Basic {server.admin}"}, 401),
        "garbage": ({"Authorization": "Bearer nonsense"}, 401),
        "forged": ({"Authorization": f"Bearer {server.admin[:-2]}AA"}, 401),
        "expired admin": ({"Authorization": f"Bearer {expired_admin}"}, 401),
        "umpire": ({"Authorization": f"Bearer {server.token('umpire', 'u', game='g1')}"}, 403),
        "display": ({"Authorization": f"Bearer {server.token('display', 'd', arena='a1')}"}, 403),
    }
    for name, (headers, want) in cases.items():
        status, text = await _raw_request(server, method, path, body, headers)
        assert status == want, (name, status, text)
        sent = headers.get("Authorization", "").partition(" ")[2]
        assert not sent or sent not in text  # the refusal doesn't echo the token
    assert server.log_rows() == before
    assert revoked_rows(server) == revoked
    assert server.svc.revoked == set()
    # and the same request with the admin token does go through
    status, _ = await _raw_request(server, method, path, body,
                                   {"Authorization": f"Bearer {server.admin}"})
    assert status in (200, 201)


@pytest.mark.parametrize("path", ["/api/events", "/api/events/cup/complete", "/api/events/cup/eliminate",
                                  "/api/games", "/api/committee/rescind", "/api/committee/decrease"])
async def test_anonymous_request_with_a_bad_body_gets_401_not_400(server: Server, path: str) -> None:
    async with aiohttp.ClientSession() as s, s.post(server.http + path, data=b"[not json") as r:
        assert r.status == 401


# ------------------------------------------------------------------- logs


async def test_tokens_never_reach_the_logs(server: Server, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="arena_stream")
    await server.setup_game()
    tokens = [server.admin]
    for n, role in enumerate(["umpire", "timekeeper", "display", "admin"]):
        body: dict[str, Any] = {"role": role, "device": f"dev{n}", "official": "Pat"}
        if role != "admin":
            body["game"] = "g1"
        issued = await admin_api(server, "/api/tokens", body)
        tokens.append(issued["token"])
        if role not in ("display",):
            first, _ = await auth_attempt(server, issued["token"])
            assert first["type"] == "welcome"
        await admin_api(server, "/api/tokens/revoke", {"jti": issued["claims"]["jti"]})
        first, _ = await auth_attempt(server, issued["token"])
        assert first["code"] == "revoked"
    # refusals too: an expired token, a forged one, one with a bad signature
    for bad in (server.token("umpire", "x", game="g1", ttl=-1), tokens[1][:-3] + "abc"):
        tokens.append(bad)
        first, _ = await auth_attempt(server, bad)
        assert first["type"] == "error"
    status, _ = await server.api("GET", "/api/log", token=tokens[1])
    assert status == 401
    # a conflicting id is logged, with the device's name
    dev = await server.device("timekeeper")
    tokens.append(dev.token)
    await dev.send_once({"type": "clock.start", "game": "g1", "id": "same"})
    await dev.send_once({"type": "horn", "game": "g1", "id": "same"})
    await dev.close()
    await asyncio.sleep(0.05)

    records = [r for r in caplog.records if r.name.startswith("arena_stream")]
    issued_logs = [r for r in records if r.getMessage() == "token issued"]
    assert len(issued_logs) == 4  # the capture works: the issuing was logged ...
    fingerprints = {getattr(r, "fingerprint", None) for r in issued_logs}
    assert fingerprints == {auth.fingerprint(t) for t in tokens[1:5]}
    assert any(r.getMessage() == "id conflict" for r in records)
    for r in records:
        text = r.getMessage() + " " + " ".join(repr(v) for v in vars(r).values())
        for t in tokens:
            assert t not in text, (r.getMessage(), vars(r))
            assert t.split(".")[2] not in text  # not even the signature


# ------------------------------------------- regressions (tests/proof/test_auth_matrix.py)


async def test_a_scoped_admin_issues_tokens_only_within_its_scope(server: Server) -> None:
    """A game-scoped admin token used to mint an unscoped admin token (201): every scope escaped."""
    await server.setup_game("g1", "a1")
    await server.setup_game("g2", "a2")
    for scoped, within, outside in (
            (server.token("admin", "ga", game="g1"), [{"game": "g1"}],
             [{}, {"game": "g2"}, {"arena": "a1"}]),
            (server.token("admin", "aa", arena="a1"), [{"arena": "a1"}, {"game": "g1"}],
             [{}, {"arena": "a2"}, {"game": "g2"}, {"game": "not-set-up"}])):
        for scope in within:
            body = {"role": "umpire", "device": "u", **scope}
            status, reply = await server.api("POST", "/api/tokens", body, token=scoped)
            assert status == 201, (scope, reply)
        for scope in outside:
            body = {"role": "admin", "device": "boss", **scope}
            status, reply = await server.api("POST", "/api/tokens", body, token=scoped)
            assert (status, reply["code"]) == (403, "out_of_scope"), (scope, reply)
    status, _ = await server.api("POST", "/api/tokens", {"role": "admin", "device": "boss"})
    assert status == 201  # the unscoped admin still may


@pytest.mark.parametrize("role", ["umpire", "referee", "timekeeper", "display"])
async def test_a_device_token_without_a_scope_is_refused_even_if_signed(server: Server, role: str) -> None:
    """``issue`` never signs one, but one signed anyway (an older build, a script with the
    secret) was taken as "every game"."""
    await server.setup_game()
    claims = {"sub": "rogue", "role": role, "exp": int(time.time()) + 60, "jti": "0123456789abcdef"}
    signed = "v1." + _b64(json.dumps(claims).encode())
    token = f"{signed}.{_b64(hmac.new(server.svc.secret, signed.encode(), hashlib.sha256).digest())}"
    await assert_refused_at_auth(server, token, "bad_token")


def _spellings(token: str) -> dict[str, str]:
    """The same signature bytes spelled another way than the canonical unpadded base64url:
    with ``=`` padding, in the standard alphabet (``+/``), with non-zero unused trailing bits."""
    version, payload, sig = token.split(".")
    raw = _unb64(sig)
    last = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    dirty = sig[:-1] + last[last.index(sig[-1]) | 1]  # 32 bytes: 43 characters, 2 bits unused
    assert _unb64(dirty) == raw and dirty != sig
    standard = base64.b64encode(raw).rstrip(b"=").decode()
    assert standard != sig, "the signature has no - or _ to spell in the standard alphabet"
    return {"padded": f"{version}.{payload}.{sig}=",
            "standard alphabet": f"{version}.{payload}.{standard}",
            "trailing bits": f"{version}.{payload}.{dirty}"}


async def test_a_signature_is_accepted_in_its_canonical_spelling_alone(server: Server) -> None:
    """docs/protocol.md, "Tokens and roles": the signature is unpadded base64url, and any other
    spelling of the same bytes is a forged token (``bad_token``) on every door."""
    await server.setup_game()
    token = server.admin
    while not {"-", "_"} & set(token.split(".")[2]):  # a token with something to respell
        token = server.token("admin", "admin-2")
    status, _ = await server.api("GET", "/api/log", token=token)
    first, _ = await auth_attempt(server, token)
    assert status == 200 and first["type"] == "welcome"
    for name, spelling in _spellings(token).items():
        before = server.log_rows()
        status, text = await _raw_request(server, "GET", "/api/log", None,
                                          {"Authorization": f"Bearer {spelling}"})
        assert (status, text.partition(":")[0]) == (401, "bad_token"), (name, status, text)
        first, then = await auth_attempt(server, spelling)
        assert (first.get("code"), then) == ("bad_token", {"type": "closed", "code": 4401}), (name, first)
        raw = await Raw.connect(server.watch_url)
        await raw.send(json.dumps({"type": "auth", "token": spelling}))
        first, then = await raw.reply(), await raw.reply()
        await raw.close()
        assert (first.get("code"), then) == ("bad_token", {"type": "closed", "code": 4401}), (name, first)
        assert server.log_rows() == before
