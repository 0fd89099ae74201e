"""The OpenAPI 3.1 _document of the HTTP API (``app.py``), served at ``/openapi.json``.

The schemas are generated (``schema_gen.py``) from the request and response
types of ``api_types.py`` and the log events; what is written here is the map
around them: which route takes and returns what, with which status codes.
"""

from __future__ import annotations

import functools
from typing import Any

from . import api_types
from .openapi_ops import (
    _TOO_LARGE,
    _admin_responses,
    _document,
    _either,
    _html,
    _json,
    _list,
    _ndjson,
    _op,
    _roster_paths,
    _scoped,
    _submit_responses,
    _text,
    _ws_upgrade,
)
from .schema_gen import generated, ref, version

OPENAPI_VERSION = "3.1.0"

@functools.cache
def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 _document of the HTTP API (``app.py``), built once."""

    comps = generated()
    games_list = {"description": "every game the log holds",
                  "content": {"application/json": {"schema": {"type": "array",
                                                              "items": ref("GameSummary")}}}}
    unknown_game = _json("Problem", "no such game (`unknown_game`)")
    paths: dict[str, Any] = {
        "/": {"get": _op("index", "A human index page: the games, and links to the API documents",
                         "docs", {"200": _html("the index")})},
        "/healthz": {"get": _op("healthz", "Liveness", "health", {"200": _json("Health", "alive")})},
        "/readyz": {"get": _op("readyz", "Readiness: the log is loaded, not being reloaded, and the store "
                               "takes writes", "health",
                               {"200": _json("Ready", "ready"),
                                "503": _json("Ready", "loading or reloading the log, or the store takes no "
                                                      "writes (`reason` says why and what to do)")})},
        "/metrics": {"get": _op("metrics", "Prometheus metrics", "health",
                                {"200": _text("Prometheus text exposition format")})},
        "/ws/device": _ws_upgrade("device", "officials' handhelds"),
        "/ws/watch": _ws_upgrade("watch", "scoreboards, overlays, viewers"),
        "/api/games": {
            "get": _op("listGames", "Every game, with its score and status", "games",
                       {"200": games_list}),
            "post": _op("setupGame", "Set up a game and its rosters (a `game.setup` event)", "admin",
                        _submit_responses(), admin=True, body="GameSetupRequest"),
        },
        "/api/games/{game}": {"get": _op(
            "getGame", "The game's committed view: what a `snapshot` frame holds", "games",
            {"200": _json("GameDocument", "`seq` and `epoch` to resume a watch socket from"),
             "404": unknown_game}, params=["game"])},
        "/api/games/{game}/log": {"get": _op(
            "getGameLog", "The game's log as JSON Lines (the pinned format)", "log",
            {"200": _ndjson("the game's events, `seq` 1 first (a download: "
                            "`Content-Disposition: attachment`)"),
             "404": unknown_game}, params=["game"])},
        "/api/log": {"get": _op("getLog", "The whole log as JSON Lines", "log",
                                _admin_responses(**{"200": _ndjson("every event, in append order (a "
                                                                   "committee token: its event's)")}),
                                admin=True)},
        "/api/state": {"get": _op(
            "getStateDigest", "The SHA-256 of the live folded state", "log",
            _admin_responses(**{"200": _json("StateDigest", "equal to `arena-stream replay LOG --hash` "
                                                            "of this service's `/api/log`")}),
            admin=True)},
        "/api/events": {
            "post": _op("setupEvent", "Set up a tournament event (an `event.setup` event)",
                        "admin", _submit_responses(), admin=True, body="EventSetupRequest"),
            "get": _op("listEvents", "Every tournament event", "admin", _admin_responses(**{
                "200": _list("Tournament", "class, handicap, teams, completed, eliminated, rules; by id")}),
                admin=True)},
        "/api/events/{event}/reports.csv": {"get": _op(
            "eventReportsCsv", "Every game report of a tournament event, as one CSV", "admin",
            _admin_responses(**{
                "200": {"description": "a `game` column, then the columns of `/games/{game}/report.csv`; "
                                       "the games in set-up order (a download)",
                        "content": {"text/csv": {"schema": {"type": "string"}}}},
                "403": _scoped("`out_of_scope`: a committee token asking for another event's reports"),
                "404": _json("Problem", "`unknown_event`: never set up, and no game names it")}),
            admin=True, params=["event"])},
        "/api/events/{event}/decisions": {"get": _op(
            "eventDecisions", "Every decision of a tournament event's committee, oldest first", "admin",
            _admin_responses(**{
                "200": _list("CommitteeDecision", "its set-up, completion, eliminations, roster changes and "
                                                  "the committee's increases, rescinds and decreases, each "
                                                  "with who (`by`), when (`at`), why and what it changed"),
                "403": _scoped("`out_of_scope`: a committee token asking for another event's decisions"),
                "404": _json("Problem", "`unknown_event`: never set up, and no game names it")}),
            admin=True, params=["event"])},
        "/api/events/{event}/decisions.csv": {"get": _op(
            "eventDecisionsCsv", "The same decisions, as CSV", "admin",
            _admin_responses(**{
                "200": {"description": "one row per decision, the fields of `CommitteeDecision` with "
                                       "`text_en` and `text_es` (a download)",
                        "content": {"text/csv": {"schema": {"type": "string"}}}},
                "403": _scoped("`out_of_scope`: a committee token asking for another event's decisions"),
                "404": _json("Problem", "`unknown_event`: never set up, and no game names it")}),
            admin=True, params=["event"])},
        "/api/events/{event}/log": {"get": _op(
            "eventLog", "A tournament event's records as JSON Lines", "log",
            _admin_responses(**{
                "200": _ndjson("its games' records, its own set-up, completion and eliminations, the "
                               "committee's decisions on obligations from its games, and the "
                               "registrations that enter no other event; in log order (a download)"),
                "403": _scoped("`out_of_scope`: a committee token asking for another event's log"),
                "404": _json("Problem", "`unknown_event`: never set up, and no game names it")}),
            admin=True, params=["event"])},
        "/api/events/{event}/complete": {"post": _op(
            "completeEvent", "Mark a tournament event completed (an `event.complete` event)", "admin",
            _submit_responses(), admin=True, body="EventCompleteRequest", body_required=False,
            params=["event"],
            description="The body is optional. Without an `id` the event's is `complete-<event>`: "
                        "a repeated call is acked as a duplicate. Obligations of teams left in no "
                        "uncompleted event of equal or higher handicap become servable with any "
                        "team (R15: `obligation.updated` notices).")},
        "/api/events/{event}/eliminate": {"post": _op(
            "eliminateTeam", "A team is out of a tournament event (a `team.eliminated` event, R15)",
            "admin", _submit_responses(), admin=True, body="TeamEliminatedRequest", params=["event"],
            description="The body names the `team`. Without an `id` the event's is "
                        "`eliminate-<event>-<team>`: a repeated call is acked as a duplicate. Refused "
                        "`unknown_event`, `unknown_team` (not entered in the event) or "
                        "`already_eliminated`. What the team's players still owe becomes servable "
                        "with any team once it is left in no uncompleted event of equal or higher "
                        "handicap (R15: `obligation.updated` notices).")},
        "/api/events/{event}/draw": {
            "post": _op("makeDraw", "Make a tournament event's draw (a `draw.made` event, L3)", "admin",
                        _submit_responses(), admin=True, body="DrawMadeRequest", params=["event"],
                        description="The format (`knockout`, `round_robin`), the teams in seed order, and "
                                    "for a knockout a `consolation` bracket or a `subsidiary` event for the "
                                    "first round's losers. Made again before any of its games is set up, it "
                                    "replaces the draw; refused `already_drawn` after, and `draw_format`, "
                                    "`unknown_team`, `duplicate_team`, `event_completed` "
                                    "(docs/log-format.md)."),
            "get": _op("getDraw", "A tournament event's draw as it stands", "admin", _admin_responses(**{
                "200": _json("Bracket", "every game of the draw (its id, round, kind, sides, state, winner), "
                                        "a round robin's standings, and the eliminations and completion it "
                                        "proposes for the committee to confirm"),
                "403": _scoped("`out_of_scope`: a committee token asking for another event's draw"),
                "404": _json("Problem", "`unknown_event`, or `not_drawn`: the event has no draw yet")}),
                admin=True, params=["event"])},
        "/api/games/preview": {"post": _op(
            "previewGame", "What a game would apply to its rosters (carried obligations) if set up now",
            "admin", _admin_responses(**{
                "200": _json("GamePreview", "the obligations it would take; nothing is stored"),
                "400": _either("the body is not a JSON object (text), or not a valid `game.setup` "
                               "(`Problem`: `invalid_field`, …)", "Problem"),
                "403": _scoped("`out_of_scope`: a committee token previewing a game of another event, "
                               "or naming a team entered only in other events"),
                "409": _json("Problem", "the rules refuse the setup (`clause` names the clause)"),
                "413": _TOO_LARGE}),
            admin=True, body="GameSetupRequest",
            description="The body is a `game.setup` as for `POST /api/games` (`id` defaults to "
                        "`preview`). Nothing is logged.")},
        "/api/games/{game}/preview": {"get": _op(
            "previewScheduledGame", "What a game set up and not yet begun will take when it begins",
            "admin", _admin_responses(**{
                "200": _json("GamePreview", "the obligations it would take if it began now"),
                "403": _scoped("`out_of_scope`: a committee token asking for a game of another event"),
                "404": unknown_game,
                "409": _json("Problem", "`game_begun`: it has begun (it took its obligations then: "
                                        "`GET /api/obligations`)")}),
            admin=True, params=["game"])},
        "/api/players/{player}/obligations": {"get": _op(
            "getPlayerObligations", "What a player owes, where it may be served, and what was served "
            "where", "games", {"200": _json("PlayerObligations", "the player's obligations, in "
                                                                "serving order (empty if none)")},
            params=["player"])},
        "/api/obligations": {"get": {**_op(
            "listObligations", "Every obligation of the ledger, or its history", "games",
            {"200": {"description": "the obligations",
                     "content": {"application/json": {"schema": {"type": "array",
                                                                 "items": ref("Obligation")}}}}}),
            "parameters": [{"name": "status", "in": "query", "required": False,
                            "description": "only those in this status (`served`: the history)",
                            "schema": {k: v for k, v in comps["Obligation"]["properties"]["status"].items()
                                       if k != "default"}}]}},
        "/api/committee/increase": {"post": _op(
            "committeeIncrease", "The committee increases a penalty (a `committee.increase` event)",
            "admin", _submit_responses(), admin=True, body="CommitteeIncreaseRequest")},
        "/api/games/{game}/schedule": {"post": _op(
            "scheduleGame", "Set a game's place in the order of play (a `game.scheduled` event)",
            "admin", _submit_responses(), admin=True, body="GameScheduledRequest", params=["game"],
            description="`starts_at` (Unix ms) and `officials` (`umpires`: up to two names, "
                        "`referee`, `timekeeper`) replace the game's schedule whole; the game's "
                        "viewers get a new `roster` frame with it. Refused `unknown_game`.")},
        "/api/committee/rescind": {"post": _op(
            "committeeRescind", "The committee rescinds an obligation (a `committee.rescind` event)",
            "admin", _submit_responses(), admin=True, body="CommitteeRescindRequest",
            description="`obligation` is an obligation's `id` (`GET /api/obligations`). The ack's "
                        "notices hold its `obligation.withdrawn`. Refused `unknown_obligation`, or "
                        "`record_closed` once the game that serves it has begun.")},
        "/api/committee/decrease": {"post": _op(
            "committeeDecrease", "The committee lowers the play time an obligation owes "
            "(a `committee.decrease` event)", "admin", _submit_responses(), admin=True,
            body="CommitteeDecreaseRequest",
            description="`owed_ms` is the play time it owes from now on. The ack's notices hold its "
                        "`obligation.updated`. Refused `unknown_obligation`, `record_closed` once the "
                        "game that serves it has begun, `not_decreasable` (it owes no play time: "
                        "rescind it instead) or `not_a_decrease` (not less than it owes; a sit-out "
                        "must still owe some).")},
        "/api/tokens": {"post": _op(
            "issueToken", "Issue a device token", "admin",
            {**_admin_responses(**{
                "201": _json("TokenIssued", "the token (send it only in an `auth` frame or an "
                                            "`Authorization` header) and its claims (`jti` revokes it)"),
                "400": _json("Problem", "`invalid_field` (the body), or `unscoped`: a token for any "
                                        "role but admin and committee needs a `game` or an `arena`, a "
                                        "committee token an `event` (and only it)"),
                "413": _TOO_LARGE,
                "503": _json("Problem", "`not_stored`: the store could not record the token (none is given)",
                             **{"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}})}),
             "403": _scoped("`out_of_scope`: a _scoped admin token asking for a token outside its own "
                            "scope or for a committee token, a committee token for one not _scoped to a "
                            "game of its event; `forbidden`: a committee token asking for an admin or "
                            "committee token")},
            admin=True, body="TokenRequest",
            description="The token is recorded (its claims, when, by whom; never the token): "
                        "`GET /api/tokens`. While the store can't record it, none is given: 503 "
                        "`not_stored`."),
            "get": {**_op(
                "listTokens", "The tokens issued, never a token itself", "admin",
                {**_admin_responses(**{"200": _list("TokenInfo", "oldest first; `connected`: the sockets "
                                                                 "each has open on this node now")}),
                 "403": _scoped("`out_of_scope`: a committee token asking for another event's game")},
                admin=True, description="A committee token lists those of its event's games."),
                "parameters": [{"name": "game", "in": "query", "required": False,
                                "description": "only the tokens _scoped to this game",
                                "schema": {"type": "string"}}]}},
        "/api/pairings": {"post": _op(
            "pairDevice", "A device token for one game and role, as a link and a QR code", "admin",
            {**_admin_responses(**{
                "201": _json("Pairing", "`url` opens the handheld (a display's: the scoreboard) for the "
                                        "game with the token in its `#pair=` fragment, which browsers never "
                                        "send; `qr_svg` is an SVG QR code of exactly `url`"),
                "400": _json("Problem", "`invalid_field`: the body (a role other than umpire, referee, "
                                        "timekeeper or display)"),
                "404": unknown_game, "413": _TOO_LARGE,
                "503": _json("Problem", "`not_stored`: the store could not record the token (none is given)",
                             **{"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}})}),
             "403": _scoped("`out_of_scope`: a game outside the token's scope (a committee token's: "
                            "outside its event)")},
            admin=True, body="PairingRequest",
            description="Recorded like any token issued (`GET /api/tokens`); revoked by its `jti`.")},
        "/api/tokens/revoke": {"post": _op(
            "revokeToken", "Revoke a token by its `jti`", "admin",
            {**_admin_responses(**{
                "200": _json("Revoked", "revoked: refused at its next authentication"),
                "400": _json("Problem", "`invalid_field`"), "413": _TOO_LARGE}),
             "403": _scoped("`out_of_scope`: a committee token revoking a token that is not one issued "
                            "for a game of its event")},
            admin=True, body="RevokeRequest")},
        **_roster_paths(),
        "/api/admin/store/accept": {"post": _op(
            "acceptStoreHistory", "Take the history the store holds as the log, while it is in question",
            "admin", {**_admin_responses(**{
                "200": _json("StoreAccepted", "accepted: a new epoch; this node has reloaded the log and "
                                              "sent every viewer a snapshot (`reset: true`, "
                                              "`history_replaced`); the other nodes follow by themselves"),
                "400": _json("Problem", "`invalid_field`: the body is not `{reason}`"),
                "409": _json("Problem", "`not_diverged`: the store's history is not in question"),
                "413": _TOO_LARGE,
                "503": _json("Problem", "`not_stored`: the store could not be reached",
                             **{"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}})}),
             "403": _either("not an admin token (text), or a _scoped one (`Problem` `out_of_scope`)",
                            "Problem")},
            admin=True, body="AcceptRequest",
            description="On Redis, when the store no longer holds the history the service showed "
                        "(`GET /readyz`: 503 with the reason; the metric `arena_store_diverged` is 1), "
                        "it takes no writes until the right history is back or this is called. The "
                        "store then makes its game counters, dedup keys and games' streams agree with "
                        "its log (`repaired`), writes a new epoch and an `accepted` record, and the "
                        "nodes reload. Needs an unscoped admin token.")},
        **{route: {"get": _op(
            f"{route.strip('/')}Page", f"The browser client `{file}`, configured by URL parameters",
            "clients", {"200": _html("the page")})}
           for route, file in api_types.PAGES.items()},
        "/clients/{filename}": {"get": _op(
            "clientFile", "The browser clients' files (scripts, styles, fonts, icons)", "clients",
            {"200": {"description": "the file", "content": {"*/*": {"schema": {"type": "string"}}}},
             "404": _text("no such file")}, params=["filename"])},
        "/games/{game}/report": {"get": _op(
            "gameReport", "The game report: every card, penalty, box trip and release with its clause, "
            "the obligations it created, and an SVG timeline of play time; prints well", "games",
            {"200": _html("the report"), "404": _json("Problem", "no such game")}, params=["game"])},
        "/games/{game}/report.json": {"get": _op(
            "gameReportJson", "The game report as JSON", "games",
            {"200": _document("the report"), "404": _json("Problem", "no such game")}, params=["game"])},
        "/games/{game}/report.csv": {"get": _op(
            "gameReportCsv", "The game report's rows as CSV", "games",
            {"200": {"description": "one row per card, penalty, box trip or release",
                     "content": {"text/csv": {"schema": {"type": "string"}}}},
             "404": _json("Problem", "no such game")}, params=["game"])},
        "/openapi.json": {"get": _op("openapi", "This _document", "docs", {"200": _document("OpenAPI 3.1")})},
        "/asyncapi.json": {"get": _op("asyncapi", "The WebSocket protocols", "docs",
                                      {"200": _document("AsyncAPI 3.0")})},
    }
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Arena Stream HTTP API",
            "version": version(),
            "summary": "Real-time match events for USPA arena polo",
            "description": (api_types.__doc__ or "").strip() + "\n\nThe WebSocket protocols are described at "
                           "`/asyncapi.json`; both, with examples, in docs/protocol-device.md "
                           "and docs/protocol-viewer.md, and this API in docs/protocol-http.md.",
        },
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "tags": [{"name": n, "description": d} for n, d in (
            ("games", "what viewers can read"), ("log", "the event log, JSON Lines"),
            ("admin", "setup and tokens: `Authorization: Bearer <admin or committee token>` (a committee "
                      "token within its tournament event)"),
            ("rosters", "teams and players as registered, their logos, and the CSV import"),
            ("health", "probes and metrics"), ("websocket", "the two WebSocket endpoints"),
            ("docs", "this _document and its companion"),
            ("clients", "the browser clients: scoreboard, overlay, handheld"))],
        "paths": paths,
        "components": {
            "schemas": comps,
            "securitySchemes": {"bearerAuth": {
                "type": "http", "scheme": "bearer", "bearerFormat": "v1.<payload>.<signature>",
                "description": "An admin token (`admin.token` in the data directory, or one issued by "
                               "`POST /api/tokens` with `role: admin`), or a committee token (issued "
                               "with `role: committee` and its `event`), within its event."}},
        },
    }
