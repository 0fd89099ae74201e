"""The tournament in public (docs/public.md): the front door ``/``, an event's page, a team's
page, a game's public report, the calendars, and the same data as JSON with ETags. No token:
every route is ``anyone``'s, answers 404 while the service runs without public pages
(``--no-public-pages``) and for an event the committee keeps private. Everything is built
from the state in memory (``public.projection``), never a store read per request."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from urllib.parse import quote

import msgspec
from aiohttp import web
from aiohttp.typedefs import Handler

from ..ops.wallclock import now_ms
from ..public import calendar, pages
from ..public.projection import Public, timezone
from ..reports import public_report, report, report_html
from ..service import Service
from ..wire import public_types
from . import headers
from .ops import html, json_doc, op
from .responses import problem
from .route import get

_json = msgspec.json.Encoder()
_CAL = {"200": {"description": "an iCalendar feed (RFC 5545)",
                "content": {"text/calendar": {"schema": {"type": "string"}}}},
        "404": json_doc("Problem", "no such public event or team")}


PublicHandler = Callable[[web.Request, Public], Awaitable[web.Response]]


def public_only(handler: PublicHandler) -> Handler:
    """``handler``, given the node's public face (built from what it holds, now); every public
    route answers 404 ``not_public`` while the service runs without public pages."""

    async def route(request: web.Request) -> web.Response:
        svc = request.app[Service.KEY]
        if not svc.config.public_pages:
            return problem(404, "not_public", "this service runs without public pages")
        hub = svc.hub
        p = Public(hub.engine, {gid: f.view for gid, f in hub.feeds.items()}, svc.config.base_url, now_ms())
        return await handler(request, p)

    return route


def _lang(request: web.Request) -> str:
    return "es" if request.query.get("lang", "").lower().startswith("es") else "en"


def _page(request: web.Request, body: str) -> web.Response:
    return web.Response(text=body, content_type="text/html", headers={
        "Cache-Control": "no-cache", "Content-Security-Policy": headers.public_csp(request.host)})


def _etagged(request: web.Request, doc: object) -> web.Response:
    """``doc`` as JSON with a strong ETag of its bytes; 304 when the client has them."""
    body = _json.encode(doc)
    tag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
    if tag in [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]:
        return web.Response(status=304, headers={"ETag": tag, "Cache-Control": "no-cache"})
    return web.Response(body=body, content_type="application/json",
                        headers={"ETag": tag, "Cache-Control": "no-cache"})


def _none(what: str) -> web.Response:
    """404 with the unknown thing's own code (a private event answers as one never set up)."""
    code = {"event": "unknown_event", "team": "unknown_team", "game": "unknown_game"}[what]
    return problem(404, code, f"no such public {what}")


def _names(p: Public) -> dict[str, str]:
    return {t.team: t.name for t in p.engine.teams()}


def _team_zone(p: Public, doc: public_types.TeamPage) -> str:
    """A team's times: its event's zone when all its games are of one event, else UTC."""
    events = {c.event for c in doc.games}
    return timezone(p.engine.tournament(events.pop())) if len(events) == 1 else "UTC"


async def front(request: web.Request, p: Public) -> web.Response:
    return _page(request, pages.render_front(p.front_doc(), _lang(request)))


async def event_page(request: web.Request, p: Public) -> web.Response:
    doc = p.event_doc(request.match_info["event"])
    if doc is None:
        return _none("event")
    return _page(request, pages.render_event(doc, _lang(request), _names(p)))


async def scores(request: web.Request, p: Public) -> web.Response:
    doc = p.event_doc(request.match_info["event"])
    return _none("event") if doc is None else _page(request, pages.render_scores(doc, _lang(request)))


async def team_page(request: web.Request, p: Public) -> web.Response:
    doc = p.team_doc(request.match_info["team"])
    return _none("team") if doc is None else _page(request, pages.render_team(doc, _lang(request),
                                                                                _team_zone(p, doc)))


async def game_report(request: web.Request, p: Public) -> web.Response:
    gid = request.match_info["game"]
    if not p.shown(gid):
        return _none("game")
    r = public_report.public(await report.build(request.app[Service.KEY].hub, gid))
    return web.Response(text=report_html.to_html(r, _lang(request)), content_type="text/html")


async def front_json(request: web.Request, p: Public) -> web.Response:
    return _etagged(request, p.front_doc())


async def event_json(request: web.Request, p: Public) -> web.Response:
    doc = p.event_doc(request.match_info["event"])
    return _none("event") if doc is None else _etagged(request, doc)


async def team_json(request: web.Request, p: Public) -> web.Response:
    doc = p.team_doc(request.match_info["team"])
    return _none("team") if doc is None else _etagged(request, doc)


def _ics(p: Public, name: str, games: list[public_types.GameCard], tz: str, file: str) -> web.Response:
    """The calendar of ``games``: each entry's SEQUENCE and DTSTAMP are its schedule's revision."""
    revisions = {c.game: (s.revision, s.at) for c in games if (s := p.engine.roster(c.game).schedule)}
    body = calendar.feed(name, games, tz, p.base_url, revisions)
    return web.Response(body=body, content_type="text/calendar", charset="utf-8", headers={
        "Cache-Control": "no-cache", "Content-Disposition": f'inline; filename="{quote(file)}.ics"'})


async def event_ics(request: web.Request, p: Public) -> web.Response:
    event = request.match_info["event"]
    doc = p.event_doc(event)
    return _none("event") if doc is None else _ics(p, doc.name, doc.games, doc.timezone, event)


async def team_ics(request: web.Request, p: Public) -> web.Response:
    team = request.match_info["team"]
    doc = p.team_doc(team)
    return _none("team") if doc is None else _ics(p, doc.name, doc.games, _team_zone(p, doc), team)


_404 = {"404": json_doc("Problem", "no such public page")}
ROUTES = (
    # (the calendars first: "{event}" alone would take "spring-cup.ics" too)
    get("/events/{event}.ics", public_only(event_ics), op(
        "eventCalendar", "An event's games as an iCalendar feed", "public", _CAL, params=["event"])),
    get("/teams/{team}.ics", public_only(team_ics), op(
        "teamCalendar", "A team's games as an iCalendar feed", "public", _CAL, params=["team"])),
    get("/", public_only(front), op(
        "frontDoor", "The front door: the events held, the games live now, what is next on each arena "
        "(docs/public.md)", "public", {"200": html("the front door"), **_404})),
    get("/events/{event}", public_only(event_page), op(
        "eventPage", "An event's page: its order of play with expected starts, live scores, bracket, "
        "standings and results", "public", {"200": html("the event's page"), **_404}, params=["event"])),
    get("/events/{event}/scores", public_only(scores), op(
        "eventScores", "An event's compact score widget, to embed in a club's site: its games live now, "
        "else the next", "public", {"200": html("the widget"), **_404}, params=["event"])),
    get("/teams/{team}", public_only(team_page), op(
        "teamPage", "A team's page: its roster, team handicap, games and next game", "public",
        {"200": html("the team's page"), **_404}, params=["team"])),
    get("/games/{game}/public", public_only(game_report), op(
        "publicReport", "A game's public report: the game report without devices, officials' "
        "entries, alerts or the committee's reasons", "public", {"200": html("the report"), **_404},
        params=["game"])),
    get("/api/public", public_only(front_json), op("publicFront", "The front door's data", "public",
                                      {"200": json_doc("Front", "the front door"), **_404})),
    get("/api/public/events/{event}", public_only(event_json), op(
        "publicEvent", "An event's page's data", "public",
        {"200": json_doc("EventPage", "the event"), **_404}, params=["event"])),
    get("/api/public/teams/{team}", public_only(team_json), op(
        "publicTeam", "A team's page's data", "public",
        {"200": json_doc("TeamPage", "the team"), **_404}, params=["team"])),
)
