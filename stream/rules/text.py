"""Display text for notices, in English and Spanish, each ending with its citation.

``render(notice, names)`` returns the notice with ``text`` filled. It is called once
per notice where notices leave the process (the replay printer, the
broadcaster, the game report), never inside the fold, with the names of the roster
as of the event that raised it (``stream.rules.names``): "#4 José Díaz (Aiken Arena)",
or the ids where nothing is registered.

The words and numbers these texts share with the rest of the service (the Spanish of
the codes, a draw's rounds, m:ss, a half goal) are ``vocabulary``'s; the service imports
them from here too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from . import notices as nt
from .clauses import cite, cite_es
from .draw import Proposal
from .names import NO_NAMES, Names, Words
from .vocabulary import REASONS_ES, draw_round, half, mmss, spanish

__all__ = ["REASONS_ES", "describe", "draw_round", "half", "mmss", "proposal", "render", "spanish"]

_WHY_RED = {"fourth_offense": " (fourth offense: red without exception)",
            "left_arena": " (left the arena without permission: automatic red)"}
_WHY_RED_ES = {"fourth_offense": " (cuarta infracción: roja sin excepción)",
               "left_arena": " (abandonó la arena sin permiso: roja automática)"}


def _card(n: nt.CardRecorded, w: Words) -> tuple[str, str]:
    who, who_es = w.who(n.player, n.side), w.who_es(n.player, n.side)
    if n.color == "red":
        why = _WHY_RED.get(n.converted or "", "")
        why_es = _WHY_RED_ES.get(n.converted or "", "")
        return (f"Red card to {who}, offense {n.offense}{why}",
                f"Tarjeta roja para {who_es}, infracción {n.offense}{why_es}")
    many = f"{n.count} yellow cards" if n.count > 1 else "Yellow card"
    many_es = f"{n.count} tarjetas amarillas" if n.count > 1 else "Tarjeta amarilla"
    return (f"{many} to {who}: {n.yellows} yellow in this game, offense {n.offense}",
            f"{many_es} para {who_es}: {n.yellows} amarilla(s) en el partido, "
            f"infracción {n.offense}")


def _penalty(n: nt.PenaltyAwarded, w: Words) -> tuple[str, str]:
    sev = "" if n.severity is None else f" ({n.severity})"
    return (f"Penalty{sev} to {w.side(n.to)}",
            f"Penal{sev} a favor {w.de(n.to)}")


def _box_enter(n: nt.BoxEnter, w: Words) -> tuple[str, str]:
    lead = {"card": "", "returned": "returned to the box after leaving early; ",
            "carried": "begins the game in the box; "}[n.kind]
    lead_es = {"card": "", "returned": "vuelve al área de castigo por salir antes; ",
               "carried": "empieza el partido en el área de castigo; "}[n.kind]
    return (f"{w.who(n.player, n.side)} to the penalty box: {lead}out until the first stoppage "
            f"after {mmss(n.owed_ms)} of play, no substitute",
            f"{w.who_es(n.player, n.side)} al área de castigo: {lead_es}fuera hasta la primera "
            f"detención tras {mmss(n.owed_ms)} de juego, sin sustituto")


def _alert(n: nt.Alert, w: Words) -> tuple[str, str]:
    who = w.who(n.player, n.side) if n.player else ""
    who_es = w.who_es(n.player, n.side) if n.player else ""
    owed = mmss(n.owed_ms or 0)
    og, og_es = w.game_name(n.origin_game or ""), w.game_name_es(n.origin_game or "")
    c = n.code
    if c == "suspended_in_lineup":
        return (f"{who} is suspended for this game (from game {og}) and may not play: "
                "his team is short until a substitute replaces him; bring on a substitute now",
                f"{who_es} está suspendido para este partido (del partido {og_es}) y no puede "
                "jugar: su equipo juega con uno menos hasta que entre un sustituto; hagan entrar uno ya")
    if c == "suspended_on_bench":
        return (f"{who} is suspended for this game (from game {og}) and is listed as a "
                "substitute: he may not come on; his team plays with its other players",
                f"{who_es} está suspendido para este partido (del partido {og_es}) y figura "
                "como sustituto: no puede entrar; su equipo juega con los demás")
    if c == "suspended_in_lineup" and n.reason == "sit_out":
        return (f"{who} owes {owed} of play in the penalty box from game {og} and is listed "
                "to start: he begins in the box, his team plays short until the first stoppage after "
                "that play, and no substitution avoids it",
                f"{who_es} debe {owed} de juego en el área de castigo del partido {og_es} y "
                "figura como titular: empieza en el área de castigo, su equipo juega con uno menos hasta "
                "la primera detención tras ese tiempo de juego, y ninguna sustitución lo evita")
    if c == "suspended_in_lineup" and n.owed_ms:
        return (f"{who} is suspended for this game (a red after game {og}) and is listed to "
                f"start: he may not play; his team plays short until the first stoppage after {owed} of "
                "play, then a substitute may take his slot",
                f"{who_es} está suspendido para este partido (roja tras el partido {og_es}) y "
                f"figura como titular: no puede jugar; su equipo juega con uno menos hasta la primera "
                f"detención tras {owed} de juego, y luego puede entrar un sustituto")
    if c == "next_game_begun":
        what = (f"owes {owed} of play in the penalty box" if n.reason == "sit_out" else
                "is suspended" + (f" (his team short for {owed} of play)" if n.owed_ms else ""))
        what_es = (f"debe {owed} de juego en el área de castigo" if n.reason == "sit_out" else
                   "está suspendido" + (f" (su equipo con uno menos {owed} de juego)" if n.owed_ms else ""))
        when = "is under way" if n.detail == "live" else "has been played"
        when_es = "está en juego" if n.detail == "live" else "ya se jugó"
        return (f"{who} {what} for this game under Rule 14 (from game {og}, recorded only "
                f"now), and this game {when} without him serving it. Umpires: is he on the field? "
                "Committee: the record leaves it for his following qualifying game; decide whether that "
                "stands",
                f"{who_es} {what_es} para este partido según la Regla 14 (del partido {og_es}, "
                f"registrado recién ahora), y este partido {when_es} sin que la cumpla. Umpires: ¿está en "
                "la cancha? Comité: el registro la deja para su siguiente partido que califique; decidan "
                "si eso se mantiene")
    if c == "left_arena_in_interval":
        return (f"{who} left the arena during an interval, not during a period: no card (Rule 14 "
                "forbids leaving during the course of a period); umpires, had he your permission?",
                f"{who_es} abandonó la arena durante un intervalo, no durante un período: sin tarjeta "
                "(la Regla 14 lo prohíbe durante un período); umpires, ¿tenía su permiso?")
    if c == "slot_held":
        held = (f"; he holds the slot of {w.p(n.other)}, who goes to the bench" if n.other
                else "; he holds his team's empty slot")
        held_es = (f"; ocupa el lugar de {w.p(n.other)}, que pasa al banco" if n.other
                   else "; ocupa el lugar libre de su equipo")
        if n.reason == "sit_out":
            return (f"{who} owes {owed} of play in the penalty box from game {og} and was "
                    f"not listed to start: his team plays short while he sits out, and no substitution "
                    f"avoids it{held}",
                    f"{who_es} debe {owed} de juego en el área de castigo del partido {og_es} y "
                    f"no figuraba como titular: su equipo juega con uno menos mientras cumple, y ninguna "
                    f"sustitución lo evita{held_es}")
        return (f"{who} is suspended for this game (from game {og}) and was not listed to "
                f"start: his team plays short until the first stoppage after {owed} of play, then a "
                f"substitute may take his slot{held}",
                f"{who_es} está suspendido para este partido (del partido {og_es}) y no figuraba "
                f"como titular: su equipo juega con uno menos hasta la primera detención tras {owed} de "
                f"juego, y luego puede entrar un sustituto{held_es}")
    if c == "scorer_not_on_field":
        side = n.side or ""
        return (f"Goal credited to {w.p(n.player or '')}, who was not on the field for {w.side(side)}: "
                "the goal counts; umpires, check the scorer",
                f"Gol atribuido a {w.p(n.player or '')}, que no estaba en la cancha para {w.el(side)}: "
                "el gol vale; "
                "umpires, verifiquen el autor")
    if c == "set_aside":
        return (f"{n.detail}: after this correction it can no longer apply and is set aside; "
                "confirm it, or void it",
                f"{n.subject}: tras esta corrección ya no puede aplicarse "
                f"({REASONS_ES.get(n.reason or '', n.reason)}) y queda en suspenso; confírmenlo o anúlenlo")
    if c in ("team_handicap_over", "team_handicap_under"):
        over = c == "team_handicap_over"
        es_detail = n.detail.replace("goals", "goles").replace("limits", "límites")
        return (f"{_starters(w, n.side or '')} add up to {n.detail}, "
                f"{'over' if over else 'under'} the event's team handicap; check the team sheet",
                f"Los titulares {w.de(n.side or '')} suman {es_detail}, "
                f"{'por encima' if over else 'por debajo'} del hándicap de equipo del evento; revisen la "
                "planilla")
    if c == "team_handicap_unknown":
        es_detail = n.detail.replace(" of ", " de ").replace("starters", "titulares")
        return (f"{_starters(w, n.side or '')}: {n.detail} have no handicap registered, so the team "
                "handicap can't be checked against the event's limits; register them",
                f"{w.el(n.side or '', cap=True)}: {es_detail} no tienen hándicap inscrito y no se puede "
                "comprobar el hándicap de equipo del evento; inscríbanlo")
    if c == "handicap_goals_unknown":
        return (f"The goals on handicap could not be worked out ({n.detail}): the game starts with none "
                "until the committee sets them",
                f"No se pudieron calcular los goles de hándicap ({_es_unknown(n.detail)}): el partido "
                "empieza sin ellos hasta que el Comité los fije")
    if c == "no_longer_owed":
        what, what_es = _OWED.get(n.reason or "", (n.reason or "", n.reason or ""))
        return (f"{w.who(n.player or '', n.side)} no longer owes {what} here (from game {og}): "
                "the committee rescinded it, so an earlier alert about him no longer stands; he may play",
                f"{w.who_es(n.player or '', n.side)} ya no debe {what_es} aquí (del partido "
                f"{og_es}): el Comité la anuló, así que una alerta anterior sobre él ya no vale; "
                "puede jugar")
    if c == "short_lineup":
        return (f"{w.side(n.side or '')} lists {n.detail} with substitutes on the bench: check the team "
                "sheet",
                f"{w.el(n.side or '', cap=True)} presenta {n.detail.replace('starters', 'titulares')} con "
                "sustitutos en "
                "el banco: revisen la planilla")
    return _ALERTS[c]


def _es_unknown(detail: str) -> str:
    """The Spanish of why goals on handicap could not be worked out (``Season.worked_out``)."""
    return (detail.replace("starter(s) with no registered handicap", "titular(es) sin hándicap inscrito")
            .replace("the handicap matrix has no row for", "la tabla de hándicap no tiene fila para")
            .replace("periods", "períodos"))


_OWED = {"sit_out": ("his sit-out", "su tiempo fuera"), "suspension": ("his suspension", "su suspensión"),
         "yellow_status": ("his yellow status", "su amarilla pendiente")}


def _starters(w: Words, side: str) -> str:
    """ "Aiken Arena's starters", or "The home starters" for a team not registered."""
    name = w.side(side)
    return f"The {side} starters" if name == side else f"{name}'s starters"


#: The alerts whose text needs no field.
_ALERTS: dict[str, tuple[str, str]] = {
    "clock_already_running": (
        "The clock was started while it was already running: nothing changed; timekeeper, check the clock",
        "Se puso en marcha el reloj cuando ya corría: no cambió nada; cronometrista, revise el reloj"),
    "clock_not_running": (
        "The clock was stopped while it was not running: taken as a play stoppage; timekeeper, check "
        "the clock",
        "Se detuvo el reloj cuando no corría: se toma como detención del juego; cronometrista, revise "
        "el reloj"),
    "horn_before_start": (
        "Horn before the game began: taken as a play stoppage; no period had started",
        "Bocina antes de empezar el partido: se toma como detención del juego; no había comenzado "
        "ningún período"),
    "period_already_over": (
        "Horn after the period had already ended: taken as a play stoppage",
        "Bocina con el período ya terminado: se toma como detención del juego"),
    "goal_before_clock": (
        "Goal recorded before the clock was ever started: the goal counts and the game is under way; "
        "timekeeper, start the clock",
        "Gol registrado antes de poner en marcha el reloj: el gol vale y el partido está en juego; "
        "cronometrista, ponga en marcha el reloj"),
    "no_shootout_option": (
        "A shootout was recorded, but this game did not choose Arena Rule 5.c(2): box time is carried "
        "to the next game, not deemed served",
        f"Se registró una {spanish('shootout')}, pero este partido no eligió la Regla de Arena 5.c(2): el "
        "tiempo de castigo pasa al siguiente partido, no se considera cumplido"),
}


def _official(n: nt.OfficialCarded, w: Words) -> tuple[str, str]:
    what = ("Red card" if n.color == "red" else
            f"{n.count} yellow cards" if n.count > 1 else "Yellow card")
    what_es = ("Tarjeta roja" if n.color == "red" else
               f"{n.count} tarjetas amarillas" if n.count > 1 else "Tarjeta amarilla")
    return (f"{what} to the {w.side(n.side)} {n.role} (team organization)",
            f"{what_es} al {n.role} {w.de(n.side)} (organización del equipo)")


def _conduct_named(n: nt.ConductNamed, w: Words) -> tuple[str, str]:
    whom = w.named(n.player) if n.player else "a team official"
    whom_es = w.named(n.player) if n.player else "un miembro de la organización del equipo"
    what = n.conduct.replace("_", " ")
    return (f"The card to {whom} was for {what}", f"La tarjeta a {whom_es} fue por {spanish(n.conduct)}")


def _handicap_set(n: nt.HandicapSet, w: Words) -> tuple[str, str]:
    given = [(side, g) for side, g in (("home", n.on_home), ("away", n.on_away)) if g]
    what = ", ".join(f"{w.side(side)} {half(g)}" for side, g in given) or "none"
    what_es = ", ".join(f"{w.side_es(side)} {half(g)}" for side, g in given) or "ninguno"
    if n.source == "matrix":
        how = f"from the team handicaps, {n.home_handicap} v {n.away_handicap}"
        how_es = f"según los hándicaps de equipo, {n.home_handicap} contra {n.away_handicap}"
    else:
        how, how_es = "set by the committee", "fijados por el Comité"
    why = f" ({n.by}: {n.reason})" if n.by else ""
    return (f"Goals on handicap: {what}, {how}{why}; the game starts {half(n.home)}-{half(n.away)}",
            f"Goles de hándicap: {what_es}, {how_es}{why}; el partido empieza "
            f"{half(n.home)}-{half(n.away)}")


def _decided_en(n: nt.ObligationUpdated) -> str:
    return "" if n.by is None else f" to {mmss(n.owed_ms)} of play ({n.by}: {n.reason}; beyond Rule 14)"


def _decided_es(n: nt.ObligationUpdated) -> str:
    return "" if n.by is None else (f" a {mmss(n.owed_ms)} de juego ({n.by}: {n.reason}; "
                                    "fuera de la Regla 14)")


_RENDER: dict[type, Callable[[Any, Words], tuple[str, str]]] = {
    nt.Alert: _alert,
    nt.ConductNamed: _conduct_named,
    nt.OfficialCarded: _official,
    nt.ObligationUpdated: lambda n, w: (
        (f"{w.named(n.player)}: the {_ob_en(n)} from game {w.game_name(n.origin_game)} may now be served "
         "with any team" if n.clause == "R15" else
         f"{w.named(n.player)}: the committee decreased the {_ob_en(n)} from game "
         f"{w.game_name(n.origin_game)}{_decided_en(n)}"),
        (f"{w.named(n.player)}: la {_ob_es(n)} del partido {w.game_name_es(n.origin_game)} puede cumplirse "
         "ahora con cualquier equipo" if n.clause == "R15" else
         f"{w.named(n.player)}: el Comité redujo la {_ob_es(n)} del partido {w.game_name_es(n.origin_game)}"
         f"{_decided_es(n)}")),
    nt.CardRecorded: _card,
    nt.PenaltyAwarded: _penalty,
    nt.BoxEnter: _box_enter,
    nt.BoxEligible: lambda n, w: (
        f"{w.who(n.player, n.side)} has served the play time: returns at the next stoppage",
        f"{w.who_es(n.player, n.side)} cumplió el tiempo de juego: vuelve en la próxima detención"),
    nt.BoxRelease: lambda n, w: (
        f"{w.who(n.player, n.side)} released from the penalty box",
        f"{w.who_es(n.player, n.side)} sale del área de castigo"),
    nt.SentOff: lambda n, w: (
        f"{w.who(n.player, n.side)} sent off for the rest of the game; no substitute until the first "
        f"stoppage after {mmss(n.no_sub_ms)} of play",
        f"{w.who_es(n.player, n.side)} expulsado el resto del partido; sin sustituto hasta la "
        f"primera detención tras {mmss(n.no_sub_ms)} de juego"),
    nt.SubEligible: lambda n, w: (
        f"{w.side(n.side)} has played short for four minutes: a substitute for {w.p(n.player)} at the "
        "next stoppage",
        f"{w.el(n.side, cap=True)} jugó cuatro minutos con uno menos: sustituto de {w.p(n.player)} en "
        "la próxima detención"),
    nt.SubAllowed: lambda n, w: (
        f"{w.side(n.side)} may now bring on a substitute for {w.p(n.player)}",
        f"{w.el(n.side, cap=True)} ya puede hacer entrar un sustituto de {w.p(n.player)}"),
    nt.SubstitutionMade: lambda n, w: (
        f"Substitution ({w.side(n.side)}): {w.p(n.in_)} on for {w.p(n.out)}",
        f"Sustitución ({w.side_es(n.side)}): entra {w.p(n.in_)} por {w.p(n.out)}"),
    nt.GoalScored: lambda n, w: (
        f"Goal {w.side(n.side)}{' by ' + w.p(n.player) if n.player else ''}"
        f"{' (2 points)' if n.points == 2 else ''}: {half(n.home)}-{half(n.away)}",
        f"Gol {w.de(n.side)}{' de ' + w.p(n.player) if n.player else ''}"
        f"{' (2 puntos)' if n.points == 2 else ''}: {half(n.home)}-{half(n.away)}"),
    nt.HandicapSet: _handicap_set,
    nt.ClockChanged: lambda n, w: (
        (f"Period {n.period} over" if n.period_over else
         f"Period {n.period} under way, {mmss(n.remaining_ms)} to play"),
        (f"Fin del período {n.period}" if n.period_over else
         f"Comienza el período {n.period}, {mmss(n.remaining_ms)} de juego")),
    nt.GameReady: lambda n, w: (f"Game set up: {w.team(n.home)} v {w.team(n.away)}",
                                f"Partido preparado: {w.team(n.home)} contra {w.team(n.away)}"),
    nt.GameEnded: lambda n, w: (
        f"Game over: {half(n.home)}-{half(n.away)}{' after a shootout' if n.shootout else ''}",
        f"Fin del partido: {half(n.home)}-{half(n.away)}"
        f"{' tras una ' + spanish('shootout') if n.shootout else ''}"),
    nt.ShootoutExcluded: lambda n, w: (
        f"{w.who(n.player, n.side)} had {mmss(n.owed_ms)} left in the box: excluded from the shootout, "
        f"time deemed served",
        f"{w.who_es(n.player, n.side)} tenía {mmss(n.owed_ms)} de castigo: excluido de la "
        f"{spanish('shootout')}, tiempo cumplido"),
    nt.MountDeadline: lambda n, w: (
        (f"Mount of {w.who(n.player, n.side)} removed: replacement due within 5:00"
         if n.status == "open" else
         f"Mount replacement time for {w.who(n.player, n.side)} has run out"),
        (f"Caballo de {w.who_es(n.player, n.side)} retirado: reemplazo en un máximo de 5:00"
         if n.status == "open" else
         f"Se agotó el tiempo de reemplazo del caballo de {w.who_es(n.player, n.side)}")),
    nt.MountReplacedNotice: lambda n, w: (
        f"Mount of {w.who(n.player, n.side)} replaced",
        f"Caballo de {w.who_es(n.player, n.side)} reemplazado"),
    nt.PostgameRecorded: lambda n, w: (
        f"After the game: {n.level} for {w.who(n.player, n.side)}, carried to the next qualifying game",
        f"Después del partido: {'tarjeta roja' if n.level == 'red' else spanish(n.level)} para "
        f"{w.who_es(n.player, n.side)}, para su siguiente partido válido"),
    nt.ObligationCreated: lambda n, w: (
        f"{w.named(n.player)}: {_ob_en(n)} carried to the next qualifying game",
        f"{w.named(n.player)}: {_ob_es(n)} para el siguiente partido válido"),
    nt.ObligationApplied: lambda n, w: (
        f"{w.named(n.player)} begins this game {_ob_start_en(n)} (from game {w.game_name(n.origin_game)})",
        f"{w.named(n.player)} empieza este partido {_ob_start_es(n)} "
        f"(del partido {w.game_name_es(n.origin_game)})"),
    nt.ObligationServed: lambda n, w: (
        f"{w.named(n.player)} has served the {_ob_en(n)} from game {w.game_name(n.origin_game)}",
        f"{w.named(n.player)} cumplió la {_ob_es(n)} del partido {w.game_name_es(n.origin_game)}"),
    nt.ObligationWithdrawn: lambda n, w: (
        f"{w.named(n.player)}: the {_ob_en(n)} from game {w.game_name(n.origin_game)} is withdrawn",
        f"{w.named(n.player)}: se retira la {_ob_es(n)} del partido {w.game_name_es(n.origin_game)}"),
    nt.Correction: lambda n, w: (
        f"Correction ({'voided' if n.reason == 'void' else 'late event'} {n.target}): "
        f"{len(n.changes)} change(s)",
        f"Corrección ({'anulado' if n.reason == 'void' else 'evento tardío'} {n.target}): "
        f"{len(n.changes)} cambio(s)"),
    nt.Rejected: lambda n, w: (
        f"Refused {n.event_type}: {n.detail}",
        f"Rechazado {n.event_type}: {REASONS_ES.get(n.reason, n.reason)}"),
}


def _ob_en(n: Any) -> str:
    if n.kind == "yellow_status":
        return "yellow-card status"
    if n.kind == "sit_out":
        return f"sit-out of {mmss(n.owed_ms)} of play"
    return "suspension" + (f" (team short until the stoppage after {mmss(n.owed_ms)})" if n.owed_ms else "")


def _ob_es(n: Any) -> str:
    if n.kind == "yellow_status":
        return "condición de tarjeta amarilla"
    if n.kind == "sit_out":
        return f"sanción de {mmss(n.owed_ms)} de juego fuera"
    return "suspensión" + (f" (equipo con uno menos hasta la detención tras {mmss(n.owed_ms)})"
                           if n.owed_ms else "")


def _ob_start_en(n: Any) -> str:
    return {"yellow_status": "with one yellow card", "sit_out": "in the penalty box",
            "suspension": "suspended"}[n.kind]


def _ob_start_es(n: Any) -> str:
    return {"yellow_status": "con una tarjeta amarilla", "sit_out": "en el área de castigo",
            "suspension": "suspendido"}[n.kind]


def describe(n: nt.Notice, names: Names = NO_NAMES) -> nt.Text:
    """The notice's text, naming players and teams as ``names`` registers them
    (``stream.rules.names``; by id where they are not)."""
    en, es = _RENDER[type(n)](n, Words(names, n.game))
    return nt.Text(en=f"{en}. ({cite(n.clause)})", es=f"{es}. ({cite_es(n.clause)})")


def render(n: nt.Notice, names: Names) -> nt.Notice:
    """The notice with its bilingual ``text`` filled in, in the names of the roster as of
    the event that raised it (``Face.names()`` right after that event is folded)."""
    return msgspec.structs.replace(n, text=describe(n, names))


def proposal(p: Proposal, team: str, game: nt.Text, subsidiary: str) -> nt.Text:
    """What a draw's proposal asks the committee, in English and Spanish, naming the team, the
    game that settled it and the subsidiary event as people do (``Face.game_named``)."""
    if p.action == "complete":
        return nt.Text("Every game of the draw is played: mark the event complete.",
                       "Se jugaron todos los partidos del cuadro: marcar el evento como terminado.")
    if p.reason == "last_game":
        return nt.Text(f"{team} has played its last game of the draw ({game.en}): eliminate it from the "
                       "event (R15).",
                       f"{team} jugó su último partido del cuadro ({game.es}): eliminarlo del evento (R15).")
    if p.reason == "to_subsidiary":
        return nt.Text(f"{team} lost {game.en}: eliminate it from this event; it goes to {subsidiary}.",
                       f"{team} perdió {game.es}: eliminarlo de este evento; pasa a {subsidiary}.")
    return nt.Text(f"{team} lost {game.en} and has no game left: eliminate it from the event (R15).",
                   f"{team} perdió {game.es} y no le quedan partidos: eliminarlo del evento (R15).")
