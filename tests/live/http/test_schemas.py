"""/openapi.json and /asyncapi.json: served, complete, self-consistent, and
true to what the running service actually sends."""

from __future__ import annotations

import json
from typing import Any, get_args

import aiohttp
import jsonschema
import openapi_spec_validator
import websockets
from aiohttp import web

from stream.live.http.documents import schemas
from stream.live.wire import protocol as pr

from ..conftest import Server, Viewer

UNIONS: dict[str, Any] = {"DeviceIn": pr.DeviceIn, "DeviceOut": pr.DeviceOut,
                          "WatchIn": pr.WatchIn, "WatchOut": pr.WatchOut}
NOT_IN_OPENAPI = {"/", "/openapi.json", "/asyncapi.json"}


async def fetch(server: Server, path: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as s, s.get(server.http + path) as r:
        assert r.status == 200
        assert r.content_type == "application/json"
        doc: dict[str, Any] = json.loads(await r.read())
        return doc


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in refs(v)]
    return []


def resolve(doc: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), f"not a local ref: {ref}"
    node: Any = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        assert isinstance(node, dict) and part in node, f"{ref} does not resolve (at {part!r})"
        node = node[part]
    return node


def payload_schema(doc: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    payload = message["payload"]
    out: dict[str, Any] = resolve(doc, payload["$ref"]) if "$ref" in payload else payload
    return out


async def test_both_documents_are_served_as_json_with_their_versions(server: Server) -> None:
    openapi = await fetch(server, "/openapi.json")
    asyncapi = await fetch(server, "/asyncapi.json")
    assert openapi["openapi"] == "3.1.0"
    assert asyncapi["asyncapi"] == "3.0.0"
    assert openapi["info"]["title"] and asyncapi["info"]["title"]
    # served exactly as built, and built once
    assert openapi == json.loads(schemas.openapi_json())
    assert schemas.openapi() is schemas.openapi() and schemas.asyncapi() is schemas.asyncapi()


async def test_every_route_of_the_app_is_in_the_openapi_paths(server: Server) -> None:
    doc = await fetch(server, "/openapi.json")
    routes = set()
    for route in server.app.router.routes():
        path = route.resource.canonical if route.resource is not None else ""
        if isinstance(route.resource, web.StaticResource):  # a directory: one file per request
            path = f"{path.rstrip('/')}/{{filename}}"
        if route.method == "HEAD" or path in NOT_IN_OPENAPI or path.startswith("/ws/"):
            continue
        routes.add((path, route.method.lower()))
    assert routes, "the router has routes"
    missing = {(p, m) for p, m in routes if m not in doc["paths"].get(p, {})}
    assert not missing, f"routes missing from /openapi.json: {sorted(missing)}"
    documented = {(p, m) for p, ops in doc["paths"].items() for m in ops
                  if p not in NOT_IN_OPENAPI and not p.startswith("/ws/")}
    optional = {("/clients/{filename}", "get")}  # routed only when the browser clients are installed
    assert documented - optional == routes - optional, f"not routed: {sorted(documented - routes)}"


async def test_admin_routes_need_the_bearer_token(server: Server) -> None:
    doc = await fetch(server, "/openapi.json")
    assert doc["components"]["securitySchemes"]["bearerAuth"] == {
        **doc["components"]["securitySchemes"]["bearerAuth"], "type": "http", "scheme": "bearer"}
    admin = {("/api/log", "get"), ("/api/state", "get"), ("/api/events", "post"),
             ("/api/events/{event}/complete", "post"), ("/api/events/{event}/eliminate", "post"),
             ("/api/games", "post"), ("/api/tokens", "post"), ("/api/tokens/revoke", "post"),
             ("/api/games/preview", "post"), ("/api/committee/increase", "post"),
             ("/api/committee/rescind", "post"), ("/api/committee/decrease", "post"),
             ("/api/games/{game}/schedule", "post"), ("/api/games/{game}/handicap", "post"),
             ("/api/pairings", "post"), ("/api/tokens", "get"),
             ("/api/games/{game}/preview", "get"), ("/api/events", "get"),
             ("/api/events/{event}/reports.csv", "get"), ("/api/events/{event}/log", "get"),
             ("/api/events/{event}/decisions", "get"), ("/api/events/{event}/decisions.csv", "get"),
             ("/api/teams", "get"), ("/api/teams", "post"), ("/api/teams/{team}", "get"),
             ("/api/teams/{team}/logo", "post"), ("/api/players", "get"), ("/api/players", "post"),
             ("/api/players/{player}", "get"), ("/api/rosters/import", "post"),
             ("/api/events/{event}/draw", "post"), ("/api/events/{event}/draw", "get")}
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            if (path, method) in admin:
                assert op["security"] == [{"bearerAuth": []}], (path, method)
                assert {"401", "403"} <= set(op["responses"]), (path, method)
            else:
                assert op["security"] == [], (path, method)
    submit = doc["paths"]["/api/events"]["post"]["responses"]
    for status in ("200", "201"):
        assert submit[status]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Ack"}
    for status in ("409", "503"):
        assert submit[status]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Error"}
    log = doc["paths"]["/api/games/{game}/log"]["get"]["responses"]["200"]["content"]
    assert "application/x-ndjson" in log


async def test_every_protocol_struct_is_an_asyncapi_message(server: Server) -> None:
    doc = await fetch(server, "/asyncapi.json")
    messages = doc["components"]["messages"]
    tags = set()
    for union_name, union in UNIONS.items():
        channel = doc["channels"]["device" if union_name.startswith("Device") else "watch"]
        for cls in union.__args__:
            tag = cls.__struct_config__.tag
            tags.add(tag)
            assert cls.__name__ in messages, f"{union_name}: {cls.__name__} ({tag}) is not a message"
            schema = payload_schema(doc, messages[cls.__name__])
            assert schema["properties"]["type"]["enum"] == [tag]
            assert cls.__name__ in channel["messages"], f"{cls.__name__} not on {channel['address']}"
    message_tags = {payload_schema(doc, m)["properties"]["type"]["enum"][0] for m in messages.values()}
    assert tags == message_tags
    assert {c["address"] for c in doc["channels"].values()} == {"/ws/device", "/ws/watch"}
    assert {op["action"] for op in doc["operations"].values()} == {"send", "receive"}
    query = doc["channels"]["watch"]["bindings"]["ws"]["query"]["properties"]
    assert {"game", "arena", "since", "epoch", "format"} <= set(query)
    assert query["format"]["enum"] == ["json", "msgpack"]
    for code in ("4401", "1008", "1009", "1013"):
        assert code in doc["info"]["description"]


async def test_every_event_route_takes_its_event_without_type_and_at(server: Server) -> None:
    """The admin routes that submit a log event: each takes a request schema made from the
    event's own (the route gives `type`, the receive time `at`; `id` optional), and answers
    like a device socket (`Ack` / `Error`)."""
    doc = await fetch(server, "/openapi.json")
    comps = doc["components"]["schemas"]
    routes = {"/api/events": "EventSetup", "/api/events/{event}/complete": "EventComplete",
              "/api/events/{event}/eliminate": "TeamEliminated", "/api/games": "GameSetup",
              "/api/committee/increase": "CommitteeIncrease", "/api/committee/rescind": "CommitteeRescind",
              "/api/committee/decrease": "CommitteeDecrease", "/api/teams": "TeamRegistered",
              "/api/players": "PlayerRegistered", "/api/games/{game}/schedule": "GameScheduled",
              "/api/games/{game}/handicap": "GameHandicap",
              "/api/events/{event}/draw": "DrawMade"}
    assert set(routes.values()) == set(schemas.REQUEST_BODIES)
    for path, event in routes.items():
        op = doc["paths"][path]["post"]
        body = op["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
        assert body == schemas.REQUEST_BODIES[event], path
        request, logged = comps[body], comps[event]
        in_path = {"event"} if "{event}" in path else {"game"} if "{game}" in path else set()
        filled = {"worked"} if event == "GameHandicap" else set()  # the fold fills it in, never sent
        sent = set(logged["properties"]) - {"type", "at"} - in_path - filled
        assert set(request["properties"]) == sent, path
        assert "id" not in request.get("required", []) and "type" not in request["properties"]
        assert op["responses"]["201"]["content"]["application/json"]["schema"]["$ref"].endswith("/Ack")
        assert op["responses"]["409"]["content"]["application/json"]["schema"]["$ref"].endswith("/Error")
    assert comps["TeamEliminatedRequest"]["required"] == ["team"]
    assert set(comps["CommitteeDecreaseRequest"]["required"]) == {"obligation", "owed_ms", "by", "reason"}


async def test_every_notice_and_event_is_in_the_asyncapi_document(server: Server) -> None:
    """The notices (in `Ack.notices`, `Delta.notices`, `Snapshot.recent`) and the events a device
    may send are generated from the engine's own unions: each has its schema, tagged by its type."""
    from stream.live.wire import auth
    from stream.rules import events as ev
    from stream.rules import notices as nt

    doc = await fetch(server, "/asyncapi.json")
    comps = doc["components"]["schemas"]
    notices = {c.__struct_config__.tag for c in get_args(nt.Notice)}
    assert {"alert", "obligation.updated", "official.carded"} <= notices
    for frame, field in (("Ack", "notices"), ("Delta", "notices"), ("Snapshot", "recent")):
        union = comps[frame]["properties"][field]["items"]
        tags = [resolve(doc, r)["properties"]["type"]["enum"] for r in refs(union)]
        assert sorted(t for [t] in tags) == sorted(notices), frame
    alert = comps["Alert"]["properties"]
    assert {"code", "player", "side", "subject", "other", "origin_game", "owed_ms", "reason",
            "detail"} <= set(alert)
    assert "any_team" in comps["ObligationUpdated"]["properties"]
    assert {"side", "role", "color", "count", "conduct"} <= set(comps["OfficialCarded"]["properties"])
    sendable = {t for types in auth.ROLE_EVENTS.values() for t in types}
    assert sendable == ev.TYPE_NAMES - {"tick"}
    send_tags = {comps[f"Send{t.__name__}"]["properties"]["type"]["enum"][0] for t in ev.EVENT_TYPES
                 if f"Send{t.__name__}" in comps}
    assert send_tags == sendable
    for name in ("SendTeamEliminated", "SendCommitteeRescind", "SendCommitteeDecrease", "SendTeamRegistered",
                 "SendPlayerRegistered"):
        assert comps[name]["x-roles"] == ["admin", "committee"], name
    player_view = comps["PlayerView"]["properties"]
    assert "shootout_excluded" in player_view
    assert "officials" in comps["GameView"]["properties"]


async def test_every_ref_in_both_documents_resolves(server: Server) -> None:
    for path in ("/openapi.json", "/asyncapi.json"):
        doc = await fetch(server, path)
        found = refs(doc)
        assert found, path
        for ref in found:
            resolve(doc, ref)


async def test_openapi_document_is_valid() -> None:
    openapi_spec_validator.validate(schemas.openapi())


def _validator(doc: dict[str, Any], name: str, draft: str) -> Any:
    cls = jsonschema.Draft202012Validator if draft == "2020-12" else jsonschema.Draft7Validator
    return cls({"$ref": f"#/components/schemas/{name}", "components": doc["components"]})


async def test_live_http_responses_match_the_openapi_schemas(server: Server) -> None:
    doc = schemas.openapi()
    await server.setup_game()
    status, games = await server.api("GET", "/api/games")
    assert status == 200 and games
    for row in games:
        _validator(doc, "GameSummary", "2020-12").validate(row)
    status, game = await server.api("GET", "/api/games/g1")
    _validator(doc, "GameDocument", "2020-12").validate(game)
    status, problem = await server.api("GET", "/api/games/nope")
    assert status == 404
    _validator(doc, "Problem", "2020-12").validate(problem)
    status, issued = await server.api("POST", "/api/tokens", {"role": "umpire", "device": "u1", "game": "g1"})
    assert status == 201
    _validator(doc, "TokenIssued", "2020-12").validate(issued)
    status, ack = await server.api("POST", "/api/events", {"id": "ev1", "event": "spring", "class": "club",
                                                           "handicap": 8, "teams": ["a", "b"]})
    assert status == 201
    _validator(doc, "Ack", "2020-12").validate(ack)
    _validator(doc, "EventSetupRequest", "2020-12").validate(
        {"id": "ev1", "event": "spring", "class": "club", "handicap": 8, "teams": ["a", "b"]})
    status, obligations = await server.api("GET", "/api/players/h1/obligations")
    assert status == 200
    _validator(doc, "PlayerObligations", "2020-12").validate(obligations)
    status, ledger = await server.api("GET", "/api/obligations?status=served")
    assert status == 200 and isinstance(ledger, list)
    setup = {"game": "g2", "event": "cup", "class": "club", "handicap": 8, "teams": {
        "home": {"team": "g1-home", "players": ["h1", "h2", "h3"]},
        "away": {"team": "g1-away", "players": ["a1", "a2", "a3"]}}}
    _validator(doc, "GameSetupRequest", "2020-12").validate(setup)
    status, preview = await server.api("POST", "/api/games/preview", setup)
    assert status == 200, preview
    _validator(doc, "GamePreview", "2020-12").validate(preview)


async def test_live_frames_match_the_asyncapi_schemas(server: Server) -> None:
    doc = schemas.asyncapi()
    await server.setup_game()
    viewer = await Viewer.open(server.watch_url, game="g1", graphics=1)  # (its graphics too)
    tk = await server.device("timekeeper")
    ump = await server.device("umpire")
    event = {"id": "c1", "type": "clock.start", "game": "g1"}
    _validator(doc, "Send", "07").validate({"type": "send", "event": event})
    ack = await tk.send_once(event)
    duplicate = await tk.send_once(event)
    card = {"id": "k1", "type": "card", "game": "g1", "player": "h2", "color": "yellow", "conduct": "arguing"}
    _validator(doc, "Send", "07").validate({"type": "send", "event": card})
    card_ack = await ump.send_once(card)
    refused = await ump.send_once({"id": "k2", "type": "card", "game": "g1", "player": "nobody",
                                   "color": "yellow", "conduct": "arguing"})
    for frame in (tk.welcome, ack, duplicate, card_ack, refused):
        _validator(doc, "DeviceOut", "07").validate(frame)
    assert refused["type"] == "error"
    await viewer.until_seq("g1", 3)
    await viewer.next("heartbeat")
    await viewer.ws.send(json.dumps({"type": "ping", "device_time": 1}))
    await viewer.next("pong")
    await viewer.ws.send(json.dumps({"type": "subscribe", "game": "nope"}))
    await viewer.next("error")
    # a post-game card of g1 that reaches the log while g2 (the same teams') is played:
    # a ``notices`` frame to g2's viewers
    await server.setup_game("g2", teams={"home": {"team": "g1-home", "players": ["h1", "h2", "h3"]},
                                         "away": {"team": "g1-away", "players": ["a1", "a2", "a3"]}})
    await viewer.ws.send(json.dumps({"type": "subscribe", "game": "g2"}))
    await tk.send_once({"id": "c9", "type": "game.end", "game": "g1"})
    tk2 = await server.device("timekeeper", game="g2")
    await tk2.send_once({"id": "c10", "type": "clock.start", "game": "g2"})
    await ump.send_once({"id": "k9", "type": "postgame.card", "game": "g1", "player": "h1", "level": "2y"})
    assert (await viewer.next("notices"))["game"] == "g2"
    # every frame the viewer got, presence included (the ``next`` calls skip it, not drop it)
    assert {f["type"] for f in viewer.frames} == {c.__struct_config__.tag for c in get_args(pr.WatchOut)}
    for frame in viewer.frames:
        _validator(doc, "WatchOut", "07").validate(frame)
    async with websockets.connect(server.device_url) as ws:
        await ws.send(json.dumps({"type": "auth", "token": "v1.forged.token"}))
        _validator(doc, "DeviceOut", "07").validate(json.loads(await ws.recv()))
    await viewer.close()
    await tk.close()
    await tk2.close()
    await ump.close()
