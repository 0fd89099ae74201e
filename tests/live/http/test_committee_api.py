"""The committee over HTTP, against the real service (real SQLite): what a committee
token may do in its own event and may not do in another, pairing a handheld by a
link and its QR code, the token list and revocation, a scheduled game's preview,
and the event's reports and log."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jsonschema
import numpy as np
import zxingcpp

from stream.live.http.documents import schemas
from stream.tools.device_client import Device, DeviceError

from ..conftest import Raw, Server

HOME = ["h1", "h2", "h3"]
AWAY = ["a1", "a2", "a3"]


def _event(event: str, teams: list[str], cls: str = "uspa") -> dict[str, Any]:
    return {"id": f"{event}-setup", "event": event, "class": cls, "handicap": 8, "teams": teams}


def _game(game: str, event: str, home: str, away: str, *, home_players: list[str] | None = None,
          arena: str = "main") -> dict[str, Any]:
    return {"id": f"setup-{game}", "game": game, "event": event, "handicap": 8, "arena": arena,
            "teams": {"home": {"team": home, "players": home_players or HOME, "subs": [f"{home}4"]},
                      "away": {"team": away, "players": AWAY, "subs": ["a4"]}}}


async def _two_events(server: Server) -> str:
    """``cup`` (games g1, g2), set up by its committee; ``open`` (game o1), by the admin.
    The committee token of ``cup``."""
    htc = await server.committee_token()
    for path, body in (("/api/events", _event("cup", ["blue", "red", "gold"])),
                       ("/api/games", _game("g1", "cup", "blue", "red")),
                       ("/api/games", _game("g2", "cup", "gold", "red", home_players=["x1", "x2", "x3"]))):
        status, ack = await server.api("POST", path, body, token=htc)
        assert (status, ack["type"]) == (201, "ack"), ack
    status, _ = await server.api("POST", "/api/events", _event("open", ["teal", "rose"]))
    assert status == 201
    status, _ = await server.api("POST", "/api/games", _game("o1", "open", "teal", "rose", arena="side"))
    assert status == 201
    return htc


def _conforms(name: str, doc: Any) -> None:
    """``doc`` is what /openapi.json says the route answers (its schema ``name``)."""
    components = schemas.openapi()["components"]
    jsonschema.Draft202012Validator({"$ref": f"#/components/schemas/{name}",
                                     "components": components}).validate(doc)


async def _pair(server: Server, token: str, game: str, role: str = "umpire", **more: Any
                ) -> tuple[int, Any]:
    return await server.api("POST", "/api/pairings", {"game": game, "role": role, **more}, token=token)


# ------------------------------------------------------------------ scope


async def test_a_committee_runs_its_own_event_and_nothing_of_another(server: Server) -> None:
    htc = await _two_events(server)
    # Writes into the other event: typed refusals, nothing stored.
    before = len(server.log_rows())
    for path, body in (("/api/events", _event("open2", ["teal"]) | {"event": "open"}),
                       ("/api/games", _game("o2", "open", "teal", "rose")),
                       ("/api/events/open/complete", None),
                       ("/api/events/open/eliminate", {"team": "teal"})):
        status, err = await server.api("POST", path, body, token=htc)
        assert (status, err["type"], err["code"]) == (403, "error", "out_of_scope"), (path, err)
        assert "cup" in err["detail"]
    assert len(server.log_rows()) == before
    # Its own event: an elimination goes through.
    status, ack = await server.api("POST", "/api/events/cup/eliminate", {"team": "gold"}, token=htc)
    assert status == 201, ack
    # A second set-up of one game id is refused with the rule, whoever sends it.
    status, err = await server.api("POST", "/api/games", _game("g1", "cup", "blue", "red") | {"id": "again"},
                                   token=htc)
    assert (status, err["code"], err["clause"]) == (409, "duplicate_game", "L1")
    assert "g1" in err["detail"]
    # A device token is no committee: setting up needs an admin or committee token.
    umpire = server.token("umpire", "u-1", game="g1")
    status, text = await server.api("POST", "/api/events", _event("cup3", ["blue"]), token=umpire)
    assert status == 403 and "committee" in text


async def test_a_committee_mints_device_tokens_for_its_event_s_games_only(server: Server) -> None:
    htc = await _two_events(server)
    cases = [({"role": "admin", "device": "x"}, 403, "forbidden"),
             ({"role": "committee", "device": "x", "event": "cup"}, 403, "forbidden"),
             ({"role": "committee", "device": "x", "event": "open"}, 403, "forbidden"),
             ({"role": "umpire", "device": "x", "game": "o1"}, 403, "out_of_scope"),
             ({"role": "umpire", "device": "x", "arena": "main"}, 403, "out_of_scope"),
             ({"role": "umpire", "device": "x", "game": "nowhere"}, 403, "out_of_scope")]
    for body, status_wanted, code in cases:
        status, doc = await server.api("POST", "/api/tokens", body, token=htc)
        assert (status, doc["code"]) == (status_wanted, code), body
    for role in ("umpire", "referee", "timekeeper", "display"):
        status, doc = await server.api("POST", "/api/tokens", {"role": role, "device": f"{role}-g2",
                                                               "game": "g2"}, token=htc)
        assert status == 201, doc
        assert (doc["claims"]["role"], doc["claims"]["game"], doc["claims"]["event"]) == (role, "g2", None)
    # A committee token is the admin's to issue, and names its event.
    status, doc = await server.api("POST", "/api/tokens", {"role": "committee", "device": "htc2"})
    assert (status, doc["code"]) == (400, "unscoped")
    scoped_admin = server.token("admin", "scoped", game="g1")
    status, doc = await server.api("POST", "/api/tokens", {"role": "committee", "device": "htc2",
                                                           "event": "cup"}, token=scoped_admin)
    assert (status, doc["code"]) == (403, "out_of_scope")
    # Every token issued is recorded (claims, when, by whom): the admin's list has them all.
    status, rows = await server.api("GET", "/api/tokens")
    assert status == 200
    assert [(r["claims"]["role"], r["claims"]["game"], r["by"]) for r in rows] == [
        ("committee", None, "admin"), ("umpire", "g2", "htc-cup"), ("referee", "g2", "htc-cup"),
        ("timekeeper", "g2", "htc-cup"), ("display", "g2", "htc-cup")]


async def test_a_committee_reads_its_own_event_s_log(server: Server) -> None:
    htc = await _two_events(server)
    other = await server.committee_token("open")
    ump = Device(server.device_url, server.token("umpire", "u-o1", game="o1"), prefix="u")
    await ump.connect()
    await ump.send({"type": "whistle", "game": "o1"})
    await ump.close()

    def events_of(text: str) -> list[tuple[Any, ...]]:
        lines = [json.loads(line) for line in text.splitlines()]
        return [(e["type"], e.get("game"), e.get("event")) for e in lines]

    status, mine = await server.api("GET", "/api/log", token=htc)
    assert status == 200
    assert events_of(mine) == [("event.setup", None, "cup"), ("game.setup", "g1", "cup"),
                               ("game.setup", "g2", "cup")]
    status, theirs = await server.api("GET", "/api/log", token=other)
    assert events_of(theirs) == [("event.setup", None, "open"), ("game.setup", "o1", "open"),
                                 ("whistle", "o1", None)]
    status, whole = await server.api("GET", "/api/log")
    assert len(whole.splitlines()) == 6
    # The event's own log, for its committee and the admin; the same records. Another
    # event's committee is refused (docs/security.md).
    status, doc = await server.api("GET", "/api/events/cup/log", token=htc)
    assert (status, doc) == (200, mine)
    status, doc = await server.api("GET", "/api/events/cup/log")
    assert (status, doc) == (200, mine)
    status, doc = await server.api("GET", "/api/events/cup/log", token=other)
    assert (status, doc["code"]) == (403, "out_of_scope")
    status, doc = await server.api("GET", "/api/events/nope/log", token=htc)
    assert (status, doc["code"]) == (404, "unknown_event")


# ------------------------------------------------------------------ pairing


def _qr_text(svg: str) -> str:
    """Decode the QR code an SVG draws (segno's: one path of horizontal runs, one module each)."""
    size = int(re.search(r'width="(\d+)"', svg).group(1))  # type: ignore[union-attr]
    scale = int(re.search(r"scale\((\d+)\)", svg).group(1))  # type: ignore[union-attr]
    path = re.search(r'class="qrline"[^>]* d="([^"]+)"', svg).group(1)  # type: ignore[union-attr]
    n = size // scale
    grid = np.full((n, n), 255, dtype=np.uint8)
    x = y = 0.0
    for cmd, a, b in re.findall(r"([Mmh])(-?[\d.]+)(?:\s+(-?[\d.]+))?", path):
        if cmd == "M":
            x, y = float(a), float(b)
        elif cmd == "m":
            x, y = x + float(a), y + float(b)
        else:
            grid[int(y), int(x):int(x + float(a))] = 0
            x += float(a)
    image = np.kron(grid, np.ones((8, 8), dtype=np.uint8))
    # QR codes only: a QR code's modules can also read, by chance, as a short linear barcode
    # (Codabar), which a reader looking for QR codes never reports.
    (found,) = zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormats(zxingcpp.BarcodeFormat.QRCode))
    return str(found.text)


async def test_a_pairing_link_and_its_qr_code_pair_one_role_for_one_game(server: Server) -> None:
    htc = await _two_events(server)
    status, doc = await _pair(server, htc, "g1", official="A. Rivera")
    assert status == 201, doc
    url = doc["url"]
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == ("http", f"127.0.0.1:{server.port}", "/handheld")
    assert parse_qs(parts.query) == {"game": ["g1"]}
    assert parts.fragment == f"pair={doc['token']}"
    assert (doc["claims"]["role"], doc["claims"]["game"], doc["claims"]["official"]) == (
        "umpire", "g1", "A. Rivera")
    assert doc["qr_svg"].startswith("<svg") and _qr_text(doc["qr_svg"]) == url
    _conforms("Pairing", doc)

    # The fragment's token works on /ws/device: as an umpire, for g1 only.
    token = parts.fragment.removeprefix("pair=")
    dev = Device(server.device_url, token, prefix="paired")
    await dev.connect()
    welcome = dev.welcome
    assert (welcome["role"], welcome["game"], welcome["official"]) == ("umpire", "g1", "A. Rivera")
    ack = await dev.send({"type": "whistle", "game": "g1"})
    assert ack["seq"] == 2
    for event, code in (({"type": "whistle", "game": "g2"}, "out_of_scope"),
                        ({"type": "whistle", "game": "o1"}, "out_of_scope"),
                        ({"type": "clock.start", "game": "g1"}, "forbidden"),
                        ({"type": "game.setup", **_game("g7", "cup", "blue", "red")}, "forbidden")):
        try:
            await dev.send(event)
        except DeviceError as err:
            assert err.reply["code"] == code, event
        else:
            raise AssertionError(f"{event} was acked")
    await dev.close()

    # A display pairs with the scoreboard; other games, roles and bodies are refused.
    status, doc = await _pair(server, htc, "g2", "display")
    assert status == 201 and urlsplit(doc["url"]).path == "/scoreboard"
    status, doc = await _pair(server, htc, "o1")
    assert (status, doc["code"]) == (403, "out_of_scope")
    status, doc = await _pair(server, htc, "g1", "admin")
    assert (status, doc["code"]) == (400, "invalid_field")
    status, doc = await _pair(server, htc, "nowhere")
    assert (status, doc["code"]) == (404, "unknown_game")


async def test_the_token_list_shows_connections_and_a_revocation_closes_the_device(server: Server) -> None:
    htc = await _two_events(server)
    status, paired = await _pair(server, htc, "g1", "timekeeper")
    assert status == 201
    jti = paired["claims"]["jti"]
    raw = await Raw.device(server, paired["token"])
    status, o1 = await server.api("POST", "/api/tokens", {"role": "umpire", "device": "u-o1", "game": "o1"})
    assert status == 201

    async def rows(game: str | None = None, token: str = htc) -> list[dict[str, Any]]:
        status, doc = await server.api("GET", "/api/tokens" + (f"?game={game}" if game else ""), token=token)
        assert status == 200, doc
        return list(doc)

    (row,) = await rows("g1")
    assert (row["claims"]["jti"], row["by"], row["revoked"], row["connected"]) == (jti, "htc-cup", False, 1)
    assert "token" not in row
    _conforms("TokenInfo", row)
    assert [r["claims"]["game"] for r in await rows()] == ["g1"]  # the committee's: its games only
    assert [r["claims"]["game"] for r in await rows(token=server.admin)] == [None, "g1", "o1"]
    status, doc = await server.api("GET", "/api/tokens?game=o1", token=htc)
    assert (status, doc["code"]) == (403, "out_of_scope")

    # Another event's token is not the committee's to revoke.
    status, doc = await server.api("POST", "/api/tokens/revoke", {"jti": o1["claims"]["jti"]}, token=htc)
    assert (status, doc["code"]) == (403, "out_of_scope")
    assert o1["claims"]["jti"] not in server.svc.revoked

    status, doc = await server.api("POST", "/api/tokens/revoke", {"jti": jti, "reason": "lost"}, token=htc)
    assert (status, doc) == (200, {"revoked": jti, "sockets_closed": 1})
    assert await raw.reply() == {"type": "closed", "code": 4401}
    (row,) = await rows("g1")
    assert (row["revoked"], row["connected"]) == (True, 0)
    again = await Raw.connect(server.device_url)
    await again.send(json.dumps({"type": "auth", "token": paired["token"]}))
    assert (await again.reply())["code"] == "revoked"
    await again.close()


# ------------------------------------------------------------------ preview, events, reports


async def _red_card_in_g1(server: Server, htc: str) -> None:
    """a2 (red) is sent off in g1, which ends: he owes a suspension for red's next game, g2."""
    devices = []
    for role in ("timekeeper", "umpire"):
        status, doc = await _pair(server, htc, "g1", role)
        assert status == 201
        devices.append(Device(server.device_url, doc["token"], prefix=role))
    tk, ump = devices
    await tk.send({"type": "clock.start", "game": "g1"})
    await ump.send({"type": "goal", "game": "g1", "team": "home", "player": "h1"})
    await ump.send({"type": "card", "game": "g1", "player": "a2", "color": "red", "conduct": "striking"})
    await ump.send({"type": "game.end", "game": "g1"})
    await tk.close()
    await ump.close()


async def test_a_scheduled_game_s_preview_lists_a_carried_suspension_until_it_is_rescinded(
        server: Server) -> None:
    htc = await _two_events(server)
    status, doc = await server.api("GET", "/api/games/g2/preview", token=htc)
    assert (status, doc) == (200, {"game": "g2", "applies": []})
    await _red_card_in_g1(server, htc)
    status, doc = await server.api("GET", "/api/games/g2/preview", token=htc)
    assert status == 200
    (ob,) = doc["applies"]
    assert (ob["player"], ob["kind"], ob["origin_game"], ob["clause"]) == ("a2", "suspension", "g1", "R6")
    _conforms("GamePreview", doc)

    # Another event's committee may neither read it nor rescind it.
    other = await server.committee_token("open")
    status, err = await server.api("GET", "/api/games/g2/preview", token=other)
    assert (status, err["code"]) == (403, "out_of_scope")
    status, err = await server.api("POST", "/api/committee/rescind", {
        "obligation": ob["id"], "by": "Open HTC", "reason": "not ours"}, token=other)
    assert (status, err["code"]) == (403, "out_of_scope")
    status, ack = await server.api("POST", "/api/committee/rescind", {
        "obligation": ob["id"], "by": "Host Tournament Committee", "reason": "mistaken identity"}, token=htc)
    assert status == 201, ack
    assert [n["type"] for n in ack["notices"]] == ["obligation.withdrawn"]
    status, doc = await server.api("GET", "/api/games/g2/preview", token=htc)
    assert (status, doc["applies"]) == (200, [])

    # Once the game has begun there is nothing to preview.
    tk = Device(server.device_url, server.token("timekeeper", "tk-g2", game="g2"), prefix="tk")
    await tk.send({"type": "clock.start", "game": "g2"})
    await tk.close()
    status, doc = await server.api("GET", "/api/games/g2/preview", token=htc)
    assert (status, doc["code"], doc["clause"]) == (409, "game_begun", "R15")
    status, doc = await server.api("GET", "/api/games/nowhere/preview", token=htc)
    assert (status, doc["code"]) == (404, "unknown_game")
    umpire = server.token("umpire", "u9", game="g1")
    status, _ = await server.api("GET", "/api/games/g1/preview", token=umpire)
    assert status == 403


async def test_the_events_and_the_day_s_reports_as_one_csv(server: Server) -> None:
    htc = await _two_events(server)
    await _red_card_in_g1(server, htc)
    tk = Device(server.device_url, server.token("timekeeper", "tk-o1", game="o1"), prefix="tk")
    await tk.send({"type": "clock.start", "game": "o1"})
    await tk.close()
    tk = Device(server.device_url, server.token("timekeeper", "tk-g2", game="g2"), prefix="tk")
    await tk.send({"type": "clock.start", "game": "g2"})
    await tk.close()
    ump = Device(server.device_url, server.token("umpire", "u-g2", game="g2"), prefix="u")
    await ump.send({"type": "goal", "game": "g2", "team": "away", "player": "a1"})
    await ump.close()

    status, events = await server.api("GET", "/api/events", token=htc)
    assert status == 200
    assert [(e["id"], e["class"], e["handicap"], e["teams"], e["completed"]) for e in events] == [
        ("cup", "uspa", 8, ["blue", "red", "gold"], False), ("open", "uspa", 8, ["teal", "rose"], False)]
    for event in events:
        _conforms("EventListed", event)

    async with asyncio.timeout(10):
        status, text = await server.api("GET", "/api/events/cup/reports.csv", token=htc)
    assert status == 200
    table = list(csv.reader(io.StringIO(text, newline="")))
    assert table[0][:3] == ["game", "kind", "seq"]
    games = [row[0] for row in table[1:]]
    assert set(games) == {"g1", "g2"} and games == sorted(games)  # g1's rows, then g2's
    g1 = [row for row in table[1:] if row[0] == "g1"]
    assert any(row[1] == "obligation" and row[7] == "a2" for row in g1)  # the suspension it created
    # Each game's rows are its own report's, as GET /games/{game}/report.csv gives them.
    status, one = await server.api("GET", "/games/g1/report.csv")
    assert [r[1:] for r in table[1:] if r[0] == "g1"] == list(csv.reader(io.StringIO(one, newline="")))[1:]
    status, doc = await server.api("GET", "/api/events/nope/reports.csv", token=htc)
    assert (status, doc["code"]) == (404, "unknown_event")
    status, _ = await server.api("GET", "/api/events", token=server.token("display", "d", game="g1"))
    assert status == 403


# ------------------------------------------------------------------ two members at once


async def test_two_committee_members_saving_one_team_at_once_lose_no_update(server: Server) -> None:
    await _two_events(server)
    first = await server.committee_token(device="htc-ana")
    second = await server.committee_token(device="htc-luis")
    colors = {"primary": "#1f4e9c", "secondary": "#ffffff"}
    status, ack = await server.api("POST", "/api/teams", {"team": "blue", "name": "La Aguada", "short": "AGU",
                                                          "colors": colors, "revision": 0}, token=first)
    assert status == 201, ack
    # Both read revision 1 and save at once: one save lands, the other is refused with what changed.
    saves = [{"team": "blue", "name": name, "short": "AGU", "colors": colors, "revision": 1}
             for name in ("La Aguada Polo", "Aguada")]
    answers = await asyncio.gather(*(server.api("POST", "/api/teams", body, token=token)
                                     for body, token in zip(saves, (first, second), strict=True)))
    assert sorted(status for status, _ in answers) == [201, 409]
    (won,) = [body["name"] for body, (status, _) in zip(saves, answers, strict=True) if status == 201]
    (refused,) = [doc for status, doc in answers if status == 409]
    assert (refused["type"], refused["code"]) == ("error", "stale_registration")
    assert won in refused["detail"]  # the current values, to show the member whose save was refused
    status, doc = await server.api("GET", "/api/teams/blue", token=second)
    assert status == 200
    assert (doc["current"]["name"], doc["current"]["revision"]) == (won, 2)
    assert [h["name"] for h in doc["history"]] == ["La Aguada", won]
    # Saved again from the current revision, the second member's change lands on top of the first.
    status, ack = await server.api("POST", "/api/teams", {**saves[1], "name": "Aguada", "revision": 2},
                                   token=second)
    assert status == 201, ack
