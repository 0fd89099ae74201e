"""Display text for notices, in English and Spanish, each ending with its citation.

``render(notice)`` returns the notice with ``text`` filled. It is called once
per notice where notices leave the process (the replay printer, the
broadcaster), never inside the fold.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from . import notices as nt
from .clauses import cite, cite_es

_SIDE_ES = {"home": "local", "away": "visitante"}

#: Spanish for each refusal code (the English detail comes from the engine).
REASONS_ES: dict[str, str] = {
    "duplicate_id": "el id del evento ya está en el registro",
    "unknown_game": "ese partido no existe",
    "unknown_player": "el jugador no está en ninguna de las dos listas",
    "unknown_event": "ese evento no existe",
    "unknown_target": "no hay ningún evento con ese id para anular",
    "already_voided": "ese evento ya fue anulado",
    "cannot_void_void": "una anulación no se anula; vuelva a cargar el evento",
    "cannot_void_setup": "una configuración no se anula; cargue una corregida",
    "cannot_void": "ese evento no se puede anular",
    "wrong_game": "ese evento es de otro partido",
    "duplicate_game": "el partido ya está configurado",
    "duplicate_event": "el evento ya está configurado",
    "duplicate_player": "un jugador figura dos veces en las listas",
    "same_team": "un equipo no puede jugar contra sí mismo",
    "clock_running": "el reloj ya está en marcha",
    "clock_not_running": "el reloj no está en marcha",
    "period_over": "el período ya terminó",
    "no_shootout_option": "este partido no eligió la opción 5.c(2)",
    "player_not_on_field": "el jugador no está en la cancha",
    "player_sent_off": "el jugador fue expulsado",
    "bad_count": "una tarjeta roja es una sola tarjeta",
    "not_in_box": "el jugador no está en el área de castigo",
    "not_in_lineup": "el jugador no está en la formación",
    "not_on_bench": "el jugador no es un sustituto en el banco",
    "sitting_out": "el jugador cumple una suspensión; el equipo juega con uno menos",
    "no_substitute_yet": "todavía no se permite un sustituto",
    "mount_window_open": "ya hay un caballo en reemplazo",
    "no_mount_window": "no hay ningún caballo en reemplazo",
    "game_over": "el partido ya terminó",
    "game_not_started": "el reloj todavía no se puso en marcha",
    "game_not_over": "el partido todavía no terminó",
    "suspended_player": "el jugador está suspendido para este partido",
    "suspended_player_not_listed":
        "el jugador suspendido debe figurar en la formación; el equipo juega con uno menos",
    "player_suspended": "el jugador está suspendido para este partido",
    "record_closed": "un partido posterior ya aplicó estas sanciones; corrige el Comité",
}


def mmss(ms: int) -> str:
    """Milliseconds as m:ss, rounding up so that a display never shows 0:00 early."""
    s = max(0, (ms + 999) // 1000)
    return f"{s // 60}:{s % 60:02d}"


_WHY_RED = {"fourth_offense": " (fourth offense: red without exception)",
            "left_arena": " (left the arena without permission: automatic red)"}
_WHY_RED_ES = {"fourth_offense": " (cuarta infracción: roja sin excepción)",
               "left_arena": " (abandonó la arena sin permiso: roja automática)"}


def _card(n: nt.CardRecorded) -> tuple[str, str]:
    if n.color == "red":
        why = _WHY_RED.get(n.converted or "", "")
        why_es = _WHY_RED_ES.get(n.converted or "", "")
        return (f"Red card to {n.player} ({n.side}), offense {n.offense}{why}",
                f"Tarjeta roja para {n.player} ({_SIDE_ES[n.side]}), infracción {n.offense}{why_es}")
    many = f"{n.count} yellow cards" if n.count > 1 else "Yellow card"
    many_es = f"{n.count} tarjetas amarillas" if n.count > 1 else "Tarjeta amarilla"
    return (f"{many} to {n.player} ({n.side}): {n.yellows} yellow in this game, offense {n.offense}",
            f"{many_es} para {n.player} ({_SIDE_ES[n.side]}): {n.yellows} amarilla(s) en el partido, "
            f"infracción {n.offense}")


def _penalty(n: nt.PenaltyAwarded) -> tuple[str, str]:
    sev = "" if n.severity is None else f" ({n.severity})"
    return (f"Penalty{sev} to {n.to}",
            f"Penal{sev} a favor del {_SIDE_ES[n.to]}")


def _box_enter(n: nt.BoxEnter) -> tuple[str, str]:
    lead = {"card": "", "returned": "returned to the box after leaving early; ",
            "carried": "begins the game in the box; "}[n.kind]
    lead_es = {"card": "", "returned": "vuelve al área de castigo por salir antes; ",
               "carried": "empieza el partido en el área de castigo; "}[n.kind]
    return (f"{n.player} ({n.side}) to the penalty box: {lead}out until the first stoppage "
            f"after {mmss(n.owed_ms)} of play, no substitute",
            f"{n.player} ({_SIDE_ES[n.side]}) al área de castigo: {lead_es}fuera hasta la primera "
            f"detención tras {mmss(n.owed_ms)} de juego, sin sustituto")


_RENDER: dict[type, Callable[[Any], tuple[str, str]]] = {
    nt.CardRecorded: _card,
    nt.PenaltyAwarded: _penalty,
    nt.BoxEnter: _box_enter,
    nt.BoxEligible: lambda n: (
        f"{n.player} ({n.side}) has served the play time: returns at the next stoppage",
        f"{n.player} ({_SIDE_ES[n.side]}) cumplió el tiempo de juego: vuelve en la próxima detención"),
    nt.BoxRelease: lambda n: (
        f"{n.player} ({n.side}) released from the penalty box",
        f"{n.player} ({_SIDE_ES[n.side]}) sale del área de castigo"),
    nt.SentOff: lambda n: (
        f"{n.player} ({n.side}) sent off for the rest of the game; no substitute until the first "
        f"stoppage after {mmss(n.no_sub_ms)} of play",
        f"{n.player} ({_SIDE_ES[n.side]}) expulsado el resto del partido; sin sustituto hasta la "
        f"primera detención tras {mmss(n.no_sub_ms)} de juego"),
    nt.SubEligible: lambda n: (
        f"{n.side} has played short for four minutes: a substitute for {n.player} at the next stoppage",
        f"El {_SIDE_ES[n.side]} jugó cuatro minutos con uno menos: sustituto de {n.player} en la "
        f"próxima detención"),
    nt.SubAllowed: lambda n: (
        f"{n.side} may now bring on a substitute for {n.player}",
        f"El {_SIDE_ES[n.side]} ya puede hacer entrar un sustituto de {n.player}"),
    nt.SubstitutionMade: lambda n: (
        f"Substitution ({n.side}): {n.in_} on for {n.out}",
        f"Sustitución ({_SIDE_ES[n.side]}): entra {n.in_} por {n.out}"),
    nt.GoalScored: lambda n: (
        f"Goal {n.side}{' by ' + n.player if n.player else ''}"
        f"{' (2 points)' if n.points == 2 else ''}: {n.home}-{n.away}",
        f"Gol del {_SIDE_ES[n.side]}{' de ' + n.player if n.player else ''}"
        f"{' (2 puntos)' if n.points == 2 else ''}: {n.home}-{n.away}"),
    nt.ClockChanged: lambda n: (
        (f"Period {n.period} over" if n.period_over else
         f"Period {n.period} under way, {mmss(n.remaining_ms)} to play"),
        (f"Fin del período {n.period}" if n.period_over else
         f"Comienza el período {n.period}, {mmss(n.remaining_ms)} de juego")),
    nt.GameReady: lambda n: (f"Game set up: {n.home} v {n.away}",
                             f"Partido preparado: {n.home} contra {n.away}"),
    nt.GameEnded: lambda n: (
        f"Game over: {n.home}-{n.away}{' after a shootout' if n.shootout else ''}",
        f"Fin del partido: {n.home}-{n.away}{' tras un shootout' if n.shootout else ''}"),
    nt.ShootoutExcluded: lambda n: (
        f"{n.player} ({n.side}) had {mmss(n.owed_ms)} left in the box: excluded from the shootout, "
        f"time deemed served",
        f"{n.player} ({_SIDE_ES[n.side]}) tenía {mmss(n.owed_ms)} de castigo: excluido del shootout, "
        f"tiempo cumplido"),
    nt.MountDeadline: lambda n: (
        (f"Mount of {n.player} ({n.side}) removed: replacement due within 5:00"
         if n.status == "open" else
         f"Mount replacement time for {n.player} ({n.side}) has run out"),
        (f"Caballo de {n.player} ({_SIDE_ES[n.side]}) retirado: reemplazo en un máximo de 5:00"
         if n.status == "open" else
         f"Se agotó el tiempo de reemplazo del caballo de {n.player} ({_SIDE_ES[n.side]})")),
    nt.MountReplacedNotice: lambda n: (
        f"Mount of {n.player} ({n.side}) replaced",
        f"Caballo de {n.player} ({_SIDE_ES[n.side]}) reemplazado"),
    nt.PostgameRecorded: lambda n: (
        f"After the game: {n.level} for {n.player} ({n.side}), carried to the next qualifying game",
        f"Después del partido: {n.level} para {n.player} ({_SIDE_ES[n.side]}), para su siguiente "
        f"partido válido"),
    nt.ObligationCreated: lambda n: (
        f"{n.player}: {_ob_en(n)} carried to the next qualifying game",
        f"{n.player}: {_ob_es(n)} para el siguiente partido válido"),
    nt.ObligationApplied: lambda n: (
        f"{n.player} begins this game {_ob_start_en(n)} (from game {n.origin_game})",
        f"{n.player} empieza este partido {_ob_start_es(n)} (del partido {n.origin_game})"),
    nt.ObligationServed: lambda n: (
        f"{n.player} has served the {_ob_en(n)} from game {n.origin_game}",
        f"{n.player} cumplió la {_ob_es(n)} del partido {n.origin_game}"),
    nt.ObligationWithdrawn: lambda n: (
        f"{n.player}: the {_ob_en(n)} from game {n.origin_game} is withdrawn by a correction",
        f"{n.player}: se retira la {_ob_es(n)} del partido {n.origin_game} por una corrección"),
    nt.Correction: lambda n: (
        f"Correction ({'voided' if n.reason == 'void' else 'late event'} {n.target}): "
        f"{len(n.changes)} change(s)",
        f"Corrección ({'anulado' if n.reason == 'void' else 'evento tardío'} {n.target}): "
        f"{len(n.changes)} cambio(s)"),
    nt.Rejected: lambda n: (
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


def describe(n: Any) -> nt.Text:
    en, es = _RENDER[type(n)](n)
    return nt.Text(en=f"{en}. ({cite(n.clause)})", es=f"{es}. ({cite_es(n.clause)})")


def render(n: Any) -> Any:
    """The notice with its bilingual ``text`` filled in."""
    return msgspec.structs.replace(n, text=describe(n))
