"""The games and the log: every game, one game's view and log, a game set up, the whole log
and the digest of the folded state."""

from __future__ import annotations

from aiohttp import web

from ..service import Service
from ..wire import api_types
from . import committee_api
from .ops import UNKNOWN_GAME, admin_responses, json_doc, list_of, ndjson, op, submit_responses
from .responses import filename, jsonl, problem, send
from .route import get, post
from .submit import submit_body


async def games(request: web.Request) -> web.Response:
    hub = request.app[Service.KEY].hub
    return send([api_types.GameSummary(game=gid, event=v.event, arena=v.arena, status=v.status,
                                       home=v.teams.home.team, away=v.teams.away.team, score=v.score,
                                       seq=feed.seq, roster=hub.engine.roster(gid), kind=v.kind,
                                       goals_on_handicap=v.goals_on_handicap)
                 for gid, feed in hub.feeds.items() if (v := feed.view) is not None])


async def post_game(request: web.Request) -> web.Response:
    return await submit_body(request, "game.setup")


async def game(request: web.Request) -> web.Response:
    hub = request.app[Service.KEY].hub
    gid = request.match_info["game"]
    feed = hub.feeds.get(gid)
    if feed is None or feed.view is None:  # (no view yet: its set-up is still being committed)
        return problem(404, "unknown_game", "no such game")
    return send(api_types.GameDocument(seq=feed.seq, epoch=hub.store.epoch, view=feed.view,
                                       roster=hub.engine.roster(gid)))


async def game_log(request: web.Request) -> web.StreamResponse:
    hub = request.app[Service.KEY].hub
    gid = request.match_info["game"]
    if gid not in hub.feeds:
        return problem(404, "unknown_game", "no such game")
    records = [r for r in await hub.store.game_records(gid) if r.seq is not None]
    return web.Response(body=jsonl(records), content_type="application/x-ndjson",
                        headers={"Content-Disposition": f'attachment; filename="{filename(gid)}.jsonl"'})


async def whole_log(request: web.Request) -> web.Response:
    claims = committee_api.staff(request)
    hub = request.app[Service.KEY].hub
    records = await hub.store.records()
    if claims.role == "committee" and claims.event is not None:  # its event's records only
        records = committee_api.event_records(hub.engine, records, claims.event)
    return web.Response(body=jsonl(records), content_type="application/x-ndjson")


async def state_digest(request: web.Request) -> web.Response:
    committee_api.staff(request)
    engine = request.app[Service.KEY].hub.engine
    return send(api_types.StateDigest(sha256=engine.state_hash(), events=engine.event_count(),
                                      games=len(engine.game_ids())))


ROUTES = (
    get("/api/games", games, op("listGames", "Every game, with its score and status", "games",
                                {"200": list_of("GameSummary", "every game the log holds")})),
    post("/api/games", post_game, op("setupGame", "Set up a game and its rosters (a `game.setup` event)",
                                     "admin", submit_responses(), body="GameSetupRequest"), who="staff"),
    get("/api/games/{game}", game, op(
        "getGame", "The game's committed view: what a `snapshot` frame holds", "games",
        {"200": json_doc("GameDocument", "`seq` and `epoch` to resume a watch socket from"),
         "404": UNKNOWN_GAME}, params=["game"])),
    get("/api/games/{game}/log", game_log, op(
        "getGameLog", "The game's log as JSON Lines (the pinned format)", "log",
        {"200": ndjson("the game's events, `seq` 1 first (a download: "
                       "`Content-Disposition: attachment`)"),
         "404": UNKNOWN_GAME}, params=["game"])),
    get("/api/log", whole_log, op("getLog", "The whole log as JSON Lines", "log",
                                  admin_responses(**{"200": ndjson("every event, in append order (a "
                                                                   "committee token: its event's)")})),
        who="staff"),
    get("/api/state", state_digest, op(
        "getStateDigest", "The SHA-256 of the live folded state", "log",
        admin_responses(**{"200": json_doc("StateDigest", "equal to `arena-stream replay LOG --hash` "
                                                          "of this service's `/api/log`")})), who="staff"),
)
