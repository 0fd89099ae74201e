"""The game report (``report*.py``): every card, penalty, box trip and release with its clause,
the obligations the game created, a timeline of play time; as a page that prints on A4 (in
Spanish with ``?lang=es``), as JSON, and as CSV."""

from __future__ import annotations

from aiohttp import web

from ..reports import report, report_csv, report_html
from ..service import Service
from .ops import document, html, json_doc, op
from .responses import filename, problem
from .route import get


async def _report(request: web.Request) -> report.Report | web.Response:
    hub = request.app[Service.KEY].hub
    gid = request.match_info["game"]
    if gid not in hub.feeds or hub.feeds[gid].view is None:
        return problem(404, "unknown_game", "no such game")
    return await report.build(hub, gid)


async def game_report(request: web.Request) -> web.Response:
    r = await _report(request)
    if isinstance(r, web.Response):
        return r
    lang = "es" if request.query.get("lang", "").lower().startswith("es") else "en"
    return web.Response(text=report_html.to_html(r, lang), content_type="text/html")


async def game_report_json(request: web.Request) -> web.Response:
    r = await _report(request)
    if isinstance(r, web.Response):
        return r
    return web.Response(body=report.to_json(r), content_type="application/json")


async def game_report_csv(request: web.Request) -> web.Response:
    r = await _report(request)
    if isinstance(r, web.Response):
        return r
    return web.Response(text=report_csv.to_csv(r), content_type="text/csv", charset="utf-8", headers={
        "Content-Disposition": f'attachment; filename="{filename(r.game)}-report.csv"'})


_NO_GAME = json_doc("Problem", "no such game")

ROUTES = (
    get("/games/{game}/report", game_report, op(
        "gameReport", "The game report: every card, penalty, box trip and release with its clause, "
        "the obligations it created, and an SVG timeline of play time; prints well", "games",
        {"200": html("the report"), "404": _NO_GAME}, params=["game"])),
    get("/games/{game}/report.json", game_report_json, op(
        "gameReportJson", "The game report as JSON", "games",
        {"200": document("the report"), "404": _NO_GAME}, params=["game"])),
    get("/games/{game}/report.csv", game_report_csv, op(
        "gameReportCsv", "The game report's rows as CSV", "games",
        {"200": {"description": "one row per card, penalty, box trip or release",
                 "content": {"text/csv": {"schema": {"type": "string"}}}},
         "404": _NO_GAME}, params=["game"])),
)
