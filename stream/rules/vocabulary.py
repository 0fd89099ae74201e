"""The words and numbers every text of the service writes alike: the Spanish of the log
format's codes (``spanish``) and of its refusal codes (``REASONS_ES``), a draw's rounds in
both languages, play time as m:ss and a score with its half goal. The notices' texts
(``text``), the game report, the committee's audit and the displays all take them from here.
"""

from __future__ import annotations

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
    "player_suspended": "el jugador está suspendido para este partido",
    "record_closed": "un partido que ya comenzó cumple esa sanción; no se puede cambiar",
    "nothing_to_add": "un aumento agrega partidos o tiempo fuera",
    "card_target": "una tarjeta se muestra a un jugador o a un miembro del equipo, no a ambos",
    "class_mismatch": "el evento es de otra clase",
    "unknown_team": "el equipo no está inscrito en ese evento",
    "already_eliminated": "el equipo ya quedó eliminado de ese evento",
    "unknown_obligation": "no hay ninguna sanción pendiente con ese id",
    "not_decreasable": "esa sanción no debe tiempo de juego; el Comité puede revocarla",
    "not_a_decrease": "una reducción debe dejar menos tiempo que el actual",
    "bad_limits": "el hándicap de equipo mínimo es mayor que el máximo",
    "game_begun": "el partido ya empezó: lo que tomó y sus goles de hándicap quedaron fijados entonces",
    "bad_matrix": "la tabla de hándicap repite un número de períodos",
    "bad_timezone": "la zona horaria no es una que conozca la base de zonas horarias",
    "not_worked_out": "no se pueden calcular los goles de hándicap: indíquenlos",
    "draw_format": "ese formato de cuadro no es posible",
    "duplicate_team": "un equipo figura dos veces en el cuadro",
    "already_drawn": "el cuadro ya tiene partidos configurados; no se sortea de nuevo",
    "draw_event": "ese partido es del cuadro de otro evento",
    "draw_kind": "el tipo del partido no es el que dice el cuadro",
    "draw_not_ready": "el partido del cuadro espera a sus equipos",
    "draw_teams": "los equipos no son los que dice el cuadro",
}


#: The Spanish word for each code of the log format that a Spanish text names: a colour
#: (as on a card: "tarjeta amarilla"), a conduct, a game's kind, a post-game card's level, a
#: mount's reason, a box trip's kind, a draw's format, an obligation's kind and status. Every
#: Spanish text the service writes takes its words from here (``spanish``).
CODES_ES: dict[str, str] = {
    # Color
    "yellow": "amarilla", "red": "roja",
    # Conduct (R1, its appeal forms, R8, R14)
    "appealing": "apelación", "unwelcome_talking": "hablar sin ser invitado",
    "abusive_language": "lenguaje abusivo", "disrespect": "falta de respeto", "arguing": "discusión",
    "team_member_behavior": "conducta de un miembro del equipo",
    "tack_time_out": "tiempo muerto por el apero",
    "mallet_windmill": "molinete con el taco", "dangerous_riding": "monta peligrosa",
    "improper_mallet": "uso indebido del taco", "rough_play": "juego brusco", "striking": "agresión",
    "artificial_aids": "ayudas artificiales", "hit_after_whistle": "golpe después del silbato",
    "dangerous_ball": "pelota peligrosa", "appeal_demeaning": "apelación denigrante",
    "appeal_mallet_raised": "apelación con el taco en alto",
    "left_box_deliberately": "salida deliberada del área de castigo",
    "left_arena": "abandono de la arena sin permiso", "other": "otra conducta",
    # GameKind
    "regular": "regular", "consolation": "consolación",
    "subsidiary_first_round": "subsidiario, primera ronda", "shootout": "definición",
    # PostgameLevel
    "2y": "dos amarillas", "3y": "tres amarillas",
    # MountReason
    "unfit": "no apto", "abuse": "maltrato",
    # a box trip's kind
    "card": "tarjeta", "returned": "vuelve al área", "carried": "traído de otro partido",
    # a draw's format
    "knockout": "eliminación directa", "round_robin": "todos contra todos",
    # an obligation's kind and status
    "sit_out": "tiempo fuera", "suspension": "suspensión", "yellow_status": "amarilla pendiente",
    "pending": "pendiente", "serving": "en curso", "served": "cumplida", "rescinded": "anulada",
}


def spanish(code: str) -> str:
    """A code of the log format in Spanish (``"yellow"`` -> "amarilla"); itself if it has no word."""
    return CODES_ES.get(code, code)


#: A round of a draw (``DrawGame.name``): "sf" -> ("semi-final", "semifinal"); "r3", "rr3" by number.
ROUNDS: dict[str, tuple[str, str]] = {
    "final": ("final", "final"), "sf": ("semi-final", "semifinal"),
    "qf": ("quarter-final", "cuartos de final"),
}


def draw_round(name: str, consolation: bool = False) -> tuple[str, str]:
    """A game's round in a draw, in English and Spanish: "semi-final", "consolation final",
    "round 3" ("ronda 3")."""
    en, sp = ROUNDS.get(name) or (
        (f"round {name[2:]}", f"fecha {name[2:]}") if name.startswith("rr") else (f"round {name[1:]}",
                                                                                  f"ronda {name[1:]}"))
    return (f"consolation {en}", f"{sp} de consolación") if consolation else (en, sp)


def mmss(ms: int) -> str:
    """Milliseconds as m:ss, rounding up so that a display never shows 0:00 early."""
    s = max(0, (ms + 999) // 1000)
    return f"{s // 60}:{s % 60:02d}"


def half(x: float) -> str:
    """A score as people write it: ``5½``, ``½``, ``4``."""
    whole = int(x)
    if x == whole:
        return str(whole)
    return f"{whole or ''}½"
