"""The committee's decisions, read back (docs/protocol-http.md, "The committee's decisions"):
what ``GET /api/events/{event}/decisions`` (and its CSV) lists, and a game report's decisions.

A decision is an event of the log that a committee (or an administrator) takes: the
event's set-up and completion, a team's elimination, a team's or player's registration
(a roster change), a game's schedule and officials (``game.scheduled``), the draw
(``draw.made``), a game's goals on handicap (``game.handicap``), and the
committee's increase, rescind and decrease of obligations.
The listing (``of_records``) reads the event's records as its log does
(``committee_api.event_records``, scoped the same way) and says who took each: a
committee decision's own ``by``; for the others, the official named by the token that
sent it, else that token's subject (the record's ``device``). None of them can be
voided (a void takes back a game's event only), so an entry never leaves the trail.

A game report lists the decisions about its game from the ledger (``of_obligations``):
the obligations it created that the committee rescinded, decreased or increased; and
``note`` is an obligation's line as the ledger and the reports show it ("Rescinded by
M. Pérez at …: shown to the wrong player").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...errors import MalformedEvent
from ...rules import codec
from ...rules import events as ev
from ...rules.face import Face
from ...rules.ledger import Obligation
from ...rules.notices import Text
from ...rules.text import half, mmss, spanish
from ...store import Record
from ..ops.wallclock import iso
from ..wire.api_types import CommitteeDecision

TYPES = frozenset({"event.setup", "event.complete", "team.eliminated", "team.registered", "player.registered",
                   "committee.increase", "committee.rescind", "committee.decrease", "game.scheduled",
                   "draw.made", "game.handicap"})
#: The CSV's columns (``GET /api/events/{event}/decisions.csv``): a decision's fields.
COLUMNS = ["type", "id", "at", "by", "device", "official", "reason", "event", "game", "team", "player",
           "obligation", "kind", "from_ms", "owed_ms", "games", "sit_out_ms", "text_en", "text_es"]
_KIND = {"sit_out": "sit-out", "suspension": "suspension", "yellow_status": "yellow status"}


def _kind(kind: str) -> tuple[str, str]:
    return _KIND.get(kind, kind), spanish(kind)


def _player(engine: Face, player: str) -> str:
    """A player as the committee knows him now: "#4 José Díaz", "José Díaz", or his id."""
    p = engine.player(player)
    if p is None:
        return player
    return p.name if p.number is None else f"#{p.number} {p.name}"


def _team(engine: Face, team: str) -> str:
    t = engine.team(team)
    return team if t is None else t.name


# ------------------------------------------------------------------ an obligation's line


def note(o: Obligation) -> Text | None:
    """What the committee decided about ``o``, with who, when and why (None: nothing)."""
    en: list[str] = []
    es: list[str] = []
    if (i := o.increased) is not None:
        en.append(f"Increased by {i.by} at {iso(i.at)}: {i.reason}")
        es.append(f"Aumentada por {i.by} el {iso(i.at)}: {i.reason}")
    if (d := o.decreased) is not None:
        a, b = mmss(d.from_ms), mmss(o.owed_ms)
        en.append(f"Decreased from {a} to {b} by {d.by} at {iso(d.at)}: {d.reason}")
        es.append(f"Reducida de {a} a {b} por {d.by} el {iso(d.at)}: {d.reason}")
    if (r := o.rescinded) is not None:
        en.insert(0, f"Rescinded by {r.by} at {iso(r.at)}: {r.reason}")
        es.insert(0, f"Anulada por {r.by} el {iso(r.at)}: {r.reason}")
    return Text(" · ".join(en), " · ".join(es)) if en else None


def of_obligations(engine: Face, obligations: Iterable[Obligation]) -> list[CommitteeDecision]:
    """The committee's decisions about these obligations (a game's), oldest first: one per
    rescind and decrease, one per increase (however many obligations it added)."""
    out: dict[str, CommitteeDecision] = {}
    for o in obligations:
        common: dict[str, Any] = dict(event=o.origin_event, game=o.origin_game, team=o.team, player=o.player)
        if (i := o.increased) is not None:
            row = out.get(i.cause) or out.setdefault(i.cause, _increase(
                engine, i.cause, i.at, i.by, i.reason, 0, 0, **common))
            if o.kind == "sit_out":
                row.sit_out_ms = o.owed_ms if o.decreased is None else o.decreased.from_ms
            else:
                row.games = (row.games or 0) + 1
            row.text = _increase_text(engine, o.player, o.origin_game, row.games or 0, row.sit_out_ms or 0,
                                      i.reason)
        if (d := o.decreased) is not None:
            out[d.cause] = _decrease(engine, d.cause, d.at, d.by, d.reason, o, d.from_ms, o.owed_ms, **common)
        if (r := o.rescinded) is not None:
            out[r.cause] = _rescind(engine, r.cause, r.at, r.by, r.reason, o, **common)
    return sorted(out.values(), key=lambda x: (x.at, x.id))


def _increase_text(engine: Face, player: str, game: str, games: int, sit_out_ms: int, reason: str) -> Text:
    en = [f"{games} more game{'s' if games != 1 else ''} of suspension"] if games else []
    es = [f"{games} partido{'s' if games != 1 else ''} más de suspensión"] if games else []
    if sit_out_ms:
        en.append(f"a sit-out of {mmss(sit_out_ms)}")
        es.append(f"un tiempo fuera de {mmss(sit_out_ms)}")
    who, named = _player(engine, player), engine.game_named(game)
    return Text(f"{who}'s penalty from game {named.en} increased: {' and '.join(en)}. Reason: {reason}",
                f"Se aumentó la sanción de {who} del partido {named.es}: {' y '.join(es)}. Motivo: {reason}")


def _increase(engine: Face, eid: str, at: int, by: str, reason: str, games: int, sit_out_ms: int,
              **common: Any) -> CommitteeDecision:
    """(``common`` names the ``player`` and the origin ``game``.)"""
    text = _increase_text(engine, common["player"], common["game"], games, sit_out_ms, reason)
    return CommitteeDecision(type="committee.increase", id=eid, at=at, by=by, reason=reason, games=games,
                             sit_out_ms=sit_out_ms, **common, text=text)


def _decrease(engine: Face, eid: str, at: int, by: str, reason: str, o: Obligation, from_ms: int | None,
              owed_ms: int, **common: Any) -> CommitteeDecision:
    """(``from_ms`` None: a decrease that a later one replaced; what it owed before is in the log.)"""
    who, (k_en, k_es), b = _player(engine, o.player), _kind(o.kind), mmss(owed_ms)
    named = engine.game_named(o.origin_game)
    a = ("", "") if from_ms is None else (f" from {mmss(from_ms)}", f" de {mmss(from_ms)}")
    return CommitteeDecision(
        type="committee.decrease", id=eid, at=at, by=by, reason=reason, obligation=o.id, kind=o.kind,
        from_ms=from_ms, owed_ms=owed_ms, **common,
        text=Text(f"{who}'s {k_en} from game {named.en} decreased{a[0]} to {b} (beyond Rule 14). "
                  f"Reason: {reason}",
                  f"Se redujo {k_es} de {who} del partido {named.es}{a[1]} a {b} (fuera de la "
                  f"Regla 14). Motivo: {reason}"))


def _rescind(engine: Face, eid: str, at: int, by: str, reason: str, o: Obligation,
             **common: Any) -> CommitteeDecision:
    who, (k_en, k_es), named = _player(engine, o.player), _kind(o.kind), engine.game_named(o.origin_game)
    return CommitteeDecision(
        type="committee.rescind", id=eid, at=at, by=by, reason=reason, obligation=o.id, kind=o.kind, **common,
        text=Text(f"{who}'s {k_en} from game {named.en} rescinded: no game applies it. Reason: {reason}",
                  f"Se anuló {k_es} de {who} del partido {named.es}: ningún partido la aplica. "
                  f"Motivo: {reason}"))


# ------------------------------------------------------------------ from the log


def _of_record(engine: Face, rec: Record, e: ev.EventBase) -> CommitteeDecision | None:
    """The decision ``e`` (a record of the log) was, as the listing shows it."""
    who = rec.official or rec.device
    base: dict[str, Any] = dict(id=e.id, at=e.at, device=rec.device, official=rec.official)
    if isinstance(e, ev.CommitteeRescind | ev.CommitteeDecrease):
        o = engine.obligation(e.obligation)
        common: dict[str, Any] = dict(device=rec.device, official=rec.official)
        if o is None:   # taken out of the ledger by a later correction of its origin game
            return CommitteeDecision(type=ev.event_type(e), by=e.by, reason=e.reason, obligation=e.obligation,
                                     event=engine.obligation_event(e.obligation), **base,
                                     text=Text(f"Obligation {e.obligation}: {e.reason}",
                                               f"Obligación {e.obligation}: {e.reason}"))
        ids = dict(event=o.origin_event, game=o.origin_game, team=o.team, player=o.player)
        if isinstance(e, ev.CommitteeRescind):
            return _rescind(engine, e.id, e.at, e.by, e.reason, o, **ids, **common)
        from_ms = o.decreased.from_ms if o.decreased is not None and o.decreased.cause == e.id else None
        return _decrease(engine, e.id, e.at, e.by, e.reason, o, from_ms, e.owed_ms, **ids, **common)
    if isinstance(e, ev.CommitteeIncrease):
        return _increase(engine, e.id, e.at, e.by, e.reason, e.games, e.sit_out_ms, device=rec.device,
                         official=rec.official, event=engine.event_of(e.origin_game), game=e.origin_game,
                         player=e.player)
    return _roster_or_event(engine, e, who, base)


def _roster_or_event(engine: Face, e: ev.EventBase, who: str,
                     base: dict[str, Any]) -> CommitteeDecision | None:
    en = es = ""
    if isinstance(e, ev.EventSetup):
        teams = ", ".join(_team(engine, t) for t in e.teams)
        base.update(event=e.event)
        event = e.name or e.event
        en = f"Event {event} set up: {e.cls.upper()}, handicap {e.handicap}; teams: {teams or 'none yet'}"
        es = (f"Evento {event} preparado: {e.cls.upper()}, hándicap {e.handicap}; "
              f"equipos: {teams or 'ninguno'}")
    elif isinstance(e, ev.EventComplete):
        base.update(event=e.event)
        event = engine.event_named(e.event)
        en, es = f"Event {event} marked complete", f"Evento {event} marcado como terminado"
    elif isinstance(e, ev.TeamEliminated):
        name = _team(engine, e.team)
        base.update(event=e.event, team=e.team)
        event = engine.event_named(e.event)
        en, es = f"{name} out of event {event} (R15)", f"{name} fuera del evento {event} (R15)"
    elif isinstance(e, ev.TeamRegistered):
        base.update(event=e.event, team=e.team)
        look = f"{e.name} ({e.short.upper()}, {e.colors.primary}/{e.colors.secondary})"
        entered = engine.event_named(e.event) if e.event else None
        en = f"Team {look} registered" + (f"; entered in {entered}" if entered else "")
        es = f"Equipo {look} registrado" + (f"; inscrito en {entered}" if entered else "")
    elif isinstance(e, ev.DrawMade):
        base.update(event=e.event)
        seeds = ", ".join(_team(engine, t) for t in e.teams)
        fmt_en, fmt_es = e.format.replace("_", " "), spanish(e.format)
        more_en = "; a consolation bracket" if e.consolation else ""
        more_es = "; con cuadro de consolación" if e.consolation else ""
        if e.subsidiary:
            sub = engine.event_named(e.subsidiary)
            more_en += f"; first-round losers go to {sub}"
            more_es += f"; los perdedores de la primera ronda pasan a {sub}"
        n, event = len(e.teams), engine.event_named(e.event)
        en = f"Draw of {event} made: {fmt_en}, {n} teams in seed order: {seeds}{more_en}"
        es = f"Cuadro de {event} sorteado: {fmt_es}, {n} equipos por orden de siembra: {seeds}{more_es}"
    elif isinstance(e, ev.GameScheduled):
        base.update(event=engine.event_of(e.game), game=e.game)
        when = iso(e.starts_at) if e.starts_at is not None else None
        o = e.officials
        crew = "; ".join([*(f"umpire {u}" for u in o.umpires),
                          *([f"referee {o.referee}"] if o.referee else []),
                          *([f"timekeeper {o.timekeeper}"] if o.timekeeper else [])])
        crew_es = "; ".join([*(f"árbitro {u}" for u in o.umpires),
                             *([f"tercer árbitro {o.referee}"] if o.referee else []),
                             *([f"cronometrista {o.timekeeper}"] if o.timekeeper else [])])
        named = engine.game_named(e.game)
        en = (f"Game {named.en} scheduled" + (f" for {when}" if when else " with no start time")
              + f"; officials: {crew or 'none named'}")
        es = (f"Partido {named.es} programado" + (f" para {when}" if when else " sin hora")
              + f"; oficiales: {crew_es or 'ninguno nombrado'}")
    elif isinstance(e, ev.GameHandicap):
        base.update(event=engine.event_of(e.game), game=e.game, reason=e.reason)
        named = engine.game_named(e.game)
        if e.goals is None:
            en = f"Goals on handicap of {named.en} worked out again from the team handicaps"
            es = f"Goles de hándicap de {named.es} calculados de nuevo según los hándicaps de equipo"
        else:
            given = f"{half(e.goals.home)}–{half(e.goals.away)}"
            en = f"Goals on handicap of {named.en} set: {given}"
            es = f"Goles de hándicap de {named.es} fijados: {given}"
        return CommitteeDecision(type=ev.event_type(e), by=e.by, **base,
                                 text=Text(f"{en}. Reason: {e.reason}", f"{es}. Motivo: {e.reason}"))
    elif isinstance(e, ev.PlayerRegistered):
        shown = e.name if e.number is None else f"#{e.number} {e.name}"
        team = _team(engine, e.team) if e.team else None
        base.update(team=e.team, player=e.player)
        en = f"Player {shown} registered" + (f", team {team}" if team else "")
        es = f"Jugador {shown} registrado" + (f", equipo {team}" if team else "")
    else:
        return None
    return CommitteeDecision(type=ev.event_type(e), by=who, **base, text=Text(en, es))


def of_records(engine: Face, records: Iterable[Record]) -> list[CommitteeDecision]:
    """The decisions among ``records`` (accepted events of the log), oldest first."""
    out: list[CommitteeDecision] = []
    for rec in records:
        if rec.game is not None and b'"game.handicap"' not in rec.body:  # a game's own decision (A5)
            continue
        try:
            e = codec.decode_event(rec.body)
        except MalformedEvent:  # a record the fold could not read is no decision of it
            continue
        if ev.event_type(e) in TYPES and engine.knows(e.id) and (row := _of_record(engine, rec, e)):
            out.append(row)
    return sorted(out, key=lambda x: x.at)
