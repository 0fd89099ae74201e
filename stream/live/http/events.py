"""The tournament events: set up, listed, completed, a team eliminated (R15), the draw (L3,
``stream/rules/draw.py``), and what an event's committee reads: every game report as one
CSV, the event's records, and its decisions (``audit.py``).

Every route takes an admin or a committee token; a committee token reads and changes its
own event only (403 ``out_of_scope``: ``committee_api.event_refusal``, and
``auth.authorize`` for what it submits). A route that submits an event answers its
``ack`` (201) or its ``error`` (``responses.answer``).
"""

from __future__ import annotations

import hashlib
import io
from typing import Any

import msgspec
from aiohttp import web

from ..reports import audit, report, report_csv
from ..service import Service
from ..wire import api_types
from . import committee_api
from .ops import UNKNOWN_EVENT, admin_responses, json_doc, list_of, ndjson, op, scoped, submit_responses
from .responses import filename, jsonl, problem, send
from .route import get, post
from .submit import json_body, submit, submit_body

_CSV = {"text/csv": {"schema": {"type": "string"}}}


async def post_event(request: web.Request) -> web.Response:
    return await submit_body(request, "event.setup")


async def events(request: web.Request) -> web.Response:
    """Every tournament event: class, handicap, teams, completed, eliminated, rules, and
    whether it has a draw yet."""
    committee_api.staff(request)
    engine = request.app[Service.KEY].hub.engine
    return send([api_types.EventListed(**msgspec.structs.asdict(t), drawn=t.id in engine.draws)
                 for t in engine.tournaments_all()])


def _derived_id(kind: str, *parts: str) -> str:
    """The id of an event a route can only mean once (an event completes once, a team
    is eliminated once): a repeated call is the same event, acked as a duplicate. A
    device id is at most 64 characters: a longer one is shortened by a digest."""
    plain = "-".join((kind, *parts))
    if len(plain) <= 64:
        return plain
    digest = hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]
    return f"{kind}-{digest}"


async def complete_event(request: web.Request) -> web.Response:
    committee_api.staff(request)
    body = await json_body(request) if request.can_read_body else {}
    event = request.match_info["event"]
    # One completion per event: a repeated call is the same event, acked as a duplicate.
    body.setdefault("id", _derived_id("complete", event))
    return await submit(request, "event.complete", {**body, "event": event})


async def eliminate_team(request: web.Request) -> web.Response:
    """A team is out of the event (R15): what it still owes may then be served with any team."""
    committee_api.staff(request)
    body = await json_body(request)
    event = request.match_info["event"]
    team = body.get("team")
    if isinstance(team, str):
        # One elimination per team and event: a repeated call is acked as a duplicate.
        body.setdefault("id", _derived_id("eliminate", event, team))
    return await submit(request, "team.eliminated", {**body, "event": event})


async def make_draw(request: web.Request) -> web.Response:
    """The event's draw: format, teams in seed order, consolation or subsidiary."""
    return await submit_body(request, "draw.made", event=request.match_info["event"])


async def get_draw(request: web.Request) -> web.Response:
    """The draw as it stands: its games, their sides, states, winners, and what it asks the
    committee to confirm."""
    claims = committee_api.staff(request)
    event = request.match_info["event"]
    if (refusal := committee_api.event_refusal(claims, event)) is not None:
        return refusal
    engine = request.app[Service.KEY].hub.engine
    if not engine.has_event(event):
        return problem(404, "unknown_event", f"no event {event!r} has been set up")
    found = engine.draw(event)
    if found is None:
        return problem(404, "not_drawn", f"event {event!r} has no draw yet: POST one")
    return send(found)
def _event_games(request: web.Request) -> tuple[str, list[str]] | web.Response:
    """The path's event and its games (in set-up order), for a token that may read it: an admin
    or committee token (``staff``), a committee token's own event only (403 ``out_of_scope``);
    404 ``unknown_event`` for an event never set up that no game names."""
    claims = committee_api.staff(request)
    hub = request.app[Service.KEY].hub
    event = request.match_info["event"]
    games = [g for g, feed in hub.feeds.items()
             if feed.view is not None and hub.engine.event_of(g) == event]
    if not games and hub.engine.tournament(event) is None:
        return problem(404, "unknown_event", f"no event {event!r} has been set up, and no game names it")
    if (refusal := committee_api.event_refusal(claims, event)) is not None:
        return refusal
    return event, games


async def event_reports_csv(request: web.Request) -> web.Response:
    """Every game report of the event as one CSV: the game's id first, then the columns of
    ``GET /games/{game}/report.csv``; the games in the order they were set up. A committee
    token: its own event's only."""
    hub = request.app[Service.KEY].hub
    found = _event_games(request)
    if isinstance(found, web.Response):
        return found
    event, games = found
    buf = io.StringIO()
    out = report_csv.SafeWriter(buf)
    out.writerow(["game", *report_csv.ENTRY_COLUMNS])
    for gid in games:
        out.writerows([gid, *row] for row in report_csv.rows(await report.build(hub, gid)))
    return web.Response(text=buf.getvalue(), content_type="text/csv", charset="utf-8", headers={
        "Content-Disposition": f'attachment; filename="{filename(event)}-reports.csv"'})


async def event_log(request: web.Request) -> web.Response:
    """The event's records as JSON Lines, in log order (``event_records``). A committee token:
    its own event's only."""
    hub = request.app[Service.KEY].hub
    found = _event_games(request)
    if isinstance(found, web.Response):
        return found
    event, _ = found
    body = jsonl(committee_api.event_records(hub.engine, await hub.store.records(), event))
    return web.Response(body=body, content_type="application/x-ndjson", headers={
        "Content-Disposition": f'attachment; filename="{filename(event)}.jsonl"'})


async def _decisions(request: web.Request) -> list[api_types.CommitteeDecision] | web.Response:
    hub = request.app[Service.KEY].hub
    found = _event_games(request)
    if isinstance(found, web.Response):
        return found
    event, _ = found
    records = committee_api.event_records(hub.engine, await hub.store.records(), event)
    return audit.of_records(hub.engine, records)


async def decisions(request: web.Request) -> web.Response:
    """Every committee decision of the event, oldest first. A committee token: its own event's."""
    rows = await _decisions(request)
    if isinstance(rows, web.Response):
        return rows
    return send(rows)


async def decisions_csv(request: web.Request) -> web.Response:
    """The same as CSV (``COLUMNS``), every cell neutralised as every CSV of the service is."""
    rows = await _decisions(request)
    if isinstance(rows, web.Response):
        return rows
    buf = io.StringIO()
    out = report_csv.SafeWriter(buf)
    out.writerow(audit.COLUMNS)
    for d in rows:
        doc = msgspec.structs.asdict(d)
        out.writerow([*("" if doc[c] is None else doc[c] for c in audit.COLUMNS[:-2]), d.text.en, d.text.es])
    event = request.match_info["event"]
    return web.Response(text=buf.getvalue(), content_type="text/csv", charset="utf-8", headers={
        "Content-Disposition": f'attachment; filename="{filename(event)}-decisions.csv"'})


def _event_read(op_id: str, summary: str, tag: str, ok: dict[str, Any], what: str) -> dict[str, Any]:
    """A read of one event's: admin or committee token (403 another event's), 404 no such event."""
    return op(op_id, summary, tag, admin_responses(**{
        "200": ok, "403": scoped(f"`out_of_scope`: a committee token asking for another event's {what}"),
        "404": UNKNOWN_EVENT}), params=["event"])


ROUTES = (
    post("/api/events", post_event, op("setupEvent", "Set up a tournament event (an `event.setup` event)",
                                       "admin", submit_responses(), body="EventSetupRequest"), who="staff"),
    get("/api/events", events, op("listEvents", "Every tournament event", "admin", admin_responses(**{
        "200": list_of("EventListed", "class, handicap, teams, completed, eliminated, rules, "
                                 "and whether it has a draw yet; by id")})),
        who="staff"),
    get("/api/events/{event}/reports.csv", event_reports_csv, _event_read(
        "eventReportsCsv", "Every game report of a tournament event, as one CSV", "admin",
        {"description": "a `game` column, then the columns of `/games/{game}/report.csv`; "
                        "the games in set-up order (a download)", "content": _CSV}, "reports"), who="staff"),
    get("/api/events/{event}/decisions", decisions, _event_read(
        "eventDecisions", "Every decision of a tournament event's committee, oldest first", "admin",
        list_of("CommitteeDecision", "its set-up, completion, eliminations, roster changes and "
                                     "the committee's increases, rescinds and decreases, each "
                                     "with who (`by`), when (`at`), why and what it changed"), "decisions"),
        who="staff"),
    get("/api/events/{event}/decisions.csv", decisions_csv, _event_read(
        "eventDecisionsCsv", "The same decisions, as CSV", "admin",
        {"description": "one row per decision, the fields of `CommitteeDecision` with "
                        "`text_en` and `text_es` (a download)", "content": _CSV}, "decisions"), who="staff"),
    get("/api/events/{event}/log", event_log, _event_read(
        "eventLog", "A tournament event's records as JSON Lines", "log",
        ndjson("its games' records, its own set-up, completion and eliminations, the "
               "committee's decisions on obligations from its games, and the "
               "registrations that enter no other event; in log order (a download)"), "log"), who="staff"),
    post("/api/events/{event}/complete", complete_event, op(
        "completeEvent", "Mark a tournament event completed (an `event.complete` event)", "admin",
        submit_responses(), body="EventCompleteRequest", body_required=False,
        params=["event"],
        description="The body is optional. Without an `id` the event's is `complete-<event>`: "
                    "a repeated call is acked as a duplicate. Obligations of teams left in no "
                    "uncompleted event of equal or higher handicap become servable with any "
                    "team (R15: `obligation.updated` notices)."), who="staff"),
    post("/api/events/{event}/eliminate", eliminate_team, op(
        "eliminateTeam", "A team is out of a tournament event (a `team.eliminated` event, R15)",
        "admin", submit_responses(), body="TeamEliminatedRequest", params=["event"],
        description="The body names the `team`. Without an `id` the event's is "
                    "`eliminate-<event>-<team>`: a repeated call is acked as a duplicate. Refused "
                    "`unknown_event`, `unknown_team` (not entered in the event) or "
                    "`already_eliminated`. What the team's players still owe becomes servable "
                    "with any team once it is left in no uncompleted event of equal or higher "
                    "handicap (R15: `obligation.updated` notices)."), who="staff"),
    post("/api/events/{event}/draw", make_draw, op(
        "makeDraw", "Make a tournament event's draw (a `draw.made` event, L3)", "admin",
        submit_responses(), body="DrawMadeRequest", params=["event"],
        description="The format (`knockout`, `round_robin`), the teams in seed order, and "
                    "for a knockout a `consolation` bracket or a `subsidiary` event for the "
                    "first round's losers. Made again before any of its games is set up, it "
                    "replaces the draw; refused `already_drawn` after, and `draw_format`, "
                    "`unknown_team`, `duplicate_team`, `event_completed` "
                    "(docs/log-format.md)."), who="staff"),
    get("/api/events/{event}/draw", get_draw, op(
        "getDraw", "A tournament event's draw as it stands", "admin", admin_responses(**{
            "200": json_doc("Bracket", "every game of the draw (its id, round, kind, sides, state, winner), "
                                       "a round robin's standings, and the eliminations and completion it "
                                       "proposes for the committee to confirm"),
            "403": scoped("`out_of_scope`: a committee token asking for another event's draw"),
            "404": json_doc("Problem", "`unknown_event`, or `not_drawn`: the event has no draw yet")}),
        params=["event"]), who="staff"),
)
