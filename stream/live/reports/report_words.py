"""The game report's words in English and Spanish (``report_html``, ``report_timeline``):
its headings, column names and labels, and how they are written into the page (``esc``,
``said``). What the officials were told comes from each notice's own ``text``."""

from __future__ import annotations

import html
from collections.abc import Callable

from ...rules.clauses import CLAUSES, cite, cite_es
from ...rules.notices import Text
from ...rules.text import spanish

#: key -> (English, Spanish)
WORDS: dict[str, tuple[str, str]] = {
    "title": ("Game report", "Informe del partido"),
    "on_handicap": ("Goals on handicap", "Goles de hándicap"),
    "hcp_matrix": ("from the team handicaps", "según los hándicaps de equipo"),
    "hcp_committee": ("set by the committee", "fijados por el Comité"),
    "disallowed": ("disallowed", "anulado"),
    "voided_by": ("voided by", "anulado por"), "at_time": ("at", "a las"),
    "rule14": ("Rule 14", "Regla 14"),
    "game": ("Game", "Partido"), "event": ("Event", "Evento"), "arena": ("Arena", "Arena"),
    "handicap": ("Handicap", "Hándicap"), "kind": ("Kind", "Tipo"), "status": ("Status", "Estado"),
    "play": ("Play", "Juego"), "of": ("of", "de"), "log": ("Log", "Registro"),
    "generated": ("Generated", "Generado"), "bench": ("bench", "banco"),
    "timeline": ("Timeline", "Cronología"), "x_axis": ("x axis: play time", "eje x: tiempo de juego"),
    "cards": ("Cards", "Tarjetas"),
    "penalties": ("Penalties", "Penales"),
    "trips": ("Box trips", "Área de castigo"),
    "releases": ("Releases", "Salidas del área"),
    "sent_off": ("Sent off", "Expulsados"),
    "goals": ("Goals", "Goles"),
    "alerts": ("Alerts", "Alertas"),
    "obligations": ("Obligations created by this game", "Sanciones que deja este partido"),
    "ledger_now": ("the ledger now", "el registro hoy"),
    "decisions": ("The committee's decisions", "Las decisiones del Comité"),
    "carried": ("Carried into this game", "Traído a este partido"),
    "when": ("When", "Cuándo"), "player": ("Player", "Jugador"), "team": ("Team", "Equipo"),
    "card": ("Card", "Tarjeta"), "clause": ("Clause", "Cláusula"), "official": ("Official", "Oficial"),
    "against": ("Against", "En contra de"), "penalty": ("Penalty", "Penal"), "in": ("In", "Entra"),
    "owed": ("Owed", "Debe"), "served": ("Served", "Cumplido"), "released": ("Released", "Sale"),
    "what": ("What", "Qué"), "no_sub": ("No substitute", "Sin sustituto"), "score": ("Score", "Marcador"),
    "alert": ("Alert", "Alerta"), "told": ("What the officials were told", "Lo que se dijo a los oficiales"),
    "event_col": ("Event", "Evento"),
    "obligation": ("Obligation", "Sanción"),
    "served_in": ("Served in", "Cumplida en"),
    "from": ("From", "Origen"), "decision": ("Decision", "Decisión"), "by": ("By", "Por"),
    "changed": ("What it changed", "Qué cambió"), "from_game": ("From game", "Del partido"),
    "team_official": ("team official", "miembro del equipo"),
    "no_cards": ("No cards.", "Sin tarjetas."), "no_penalties": ("No penalties.", "Sin penales."),
    "no_trips": ("No box trips.", "Nadie pasó por el área de castigo."),
    "no_releases": ("No releases.", "Sin salidas del área."),
    "no_sent_off": ("No one was sent off.", "Nadie fue expulsado."),
    "no_goals": ("No goals.", "Sin goles."),
    "no_alerts": ("No alerts: the record and the rules agreed throughout.",
                  "Sin alertas: el registro y la regla coincidieron en todo."),
    "no_obligations": ("This game created no obligations for later games.",
                       "Este partido no deja sanciones para partidos posteriores."),
    "no_decisions": ("The committee has decided nothing about this game's obligations.",
                     "El Comité no decidió nada sobre las sanciones de este partido."),
    "no_carried": ("Nothing carried into this game.", "Nada traído a este partido."),
    "of_play": ("of play", "de juego"), "still_in": ("still in the box", "todavía en el área"),
    "at_the": ("at the", "en la detención:"), "the_end": ("the end", "el final"),
    "st_ended": ("Final", "Final"),
    "st_live": ("In progress", "En juego"),
    "st_scheduled": ("Not started", "Sin comenzar"),
    "kind_regular": ("regular", spanish("regular")),
    "kind_consolation": ("consolation", spanish("consolation")),
    "kind_subsidiary_first_round": ("subsidiary, first round", spanish("subsidiary_first_round")),
    "kind_shootout": ("shootout", spanish("shootout")),
    "lg_box": ("box: play time owed", "área: tiempo de juego que debe"),
    "lg_wait": ("served, waiting for the stoppage", "cumplido, esperando la detención"),
    "lg_red": ("sent off, no substitute", "expulsado, sin sustituto"),
    "also": ("Also as", "También en"),
    "the_log": ("the log", "el registro"),
    "scoreboard": ("scoreboard", "marcador"),
    "timeline_label": ("Timeline of play time: goals, cards and box trips",
                       "Cronología del tiempo de juego: goles, tarjetas y área de castigo"),
    "no_trips_short": ("No box trips", "Nadie en el área"),
    "sit_out": ("sit out", spanish("sit_out")), "suspension": ("suspension", spanish("suspension")),
    "yellow_status": ("yellow status", spanish("yellow_status")),
    "pending": ("pending", spanish("pending")),
    "serving": ("serving", spanish("serving")),
    "rescinded": ("rescinded", spanish("rescinded")),
}


def words(lang: str) -> Callable[[str], str]:
    """The report's word for ``key`` in ``lang`` ("es", else English); a key it lacks is itself."""
    i = 1 if lang == "es" else 0
    return lambda key: WORDS[key][i] if key in WORDS else key


def citation_in(clause: str, lang: str) -> str:
    """``"R6"`` -> "Rule 14 · Red card" / "Regla 14 · Tarjeta roja" (itself if unknown)."""
    if clause not in CLAUSES:
        return clause
    return cite_es(clause) if lang == "es" else cite(clause)


def said(t: Text, lang: str) -> str:
    """A notice's text in the report's language."""
    return t.es if lang == "es" else t.en


def esc(s: object) -> str:
    """A word or a name as the report's HTML writes it: escaped, quotes included."""
    return html.escape(str(s), quote=True)
