"""The public pages' words in English and Spanish, and how a time is written in an event's
time zone."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

#: key -> (English, Spanish)
WORDS: dict[str, tuple[str, str]] = {
    "site": ("Arena polo, live", "Polo de arena, en vivo"),
    "events": ("Events", "Eventos"),
    "live_now": ("Live now", "En juego ahora"),
    "next_up": ("Next on each arena", "Lo próximo en cada arena"),
    "no_live": ("No game is live right now.", "Ningún partido en juego ahora."),
    "no_next": ("Nothing more is scheduled.", "No hay más partidos programados."),
    "no_events": ("No event is on.", "No hay eventos."),
    "order": ("Order of play", "Orden de juego"),
    "bracket": ("Bracket", "Cuadro"), "consolation": ("Consolation", "Consolación"),
    "standings": ("Standings", "Posiciones"), "results": ("Results", "Resultados"),
    "no_results": ("No game has ended yet.", "Todavía no terminó ningún partido."),
    "times_in": ("Times in {tz}", "Horarios en {tz}"),
    "arena": ("Arena {a}", "Arena {a}"),
    "scheduled": ("to come", "por jugar"), "live": ("live", "en juego"), "ended": ("ended", "terminado"),
    "not_before": ("not before about {t}", "no antes de las {t} aprox."),
    "tbd": ("time to be set", "hora a confirmar"),
    "report": ("report", "informe"),
    "period": ("Period {p} of {n}", "Período {p} de {n}"), "overtime": ("Overtime", "Suplementario"),
    "incl_hcp": ("incl. {n} on handicap", "incl. {n} de hándicap"),
    "in_box": ("{n} in the box", "{n} en el área de castigo"),
    "sent_off": ("{n} sent off", "{n} expulsado(s)"),
    "as_of": ("as of {t}", "al {t}"), "reconnecting": ("reconnecting…", "reconectando…"),
    "team_hcp": ("Team handicap", "Hándicap del equipo"), "unknown": ("not known", "sin dato"),
    "roster": ("Roster", "Plantel"), "games": ("Games", "Partidos"),
    "next": ("Next: {t}, Arena {a}, v {o}", "Próximo: {t}, Arena {a}, contra {o}"),
    "no_next_game": ("No game to come.", "Sin partidos por jugar."),
    "number": ("No.", "N.º"), "player": ("Player", "Jugador"), "handicap": ("Handicap", "Hándicap"),
    "tie_break_order": ("Placed by: wins, then goal difference, then goals for, then seed.",
                        "Orden: victorias, luego diferencia de goles, luego goles a favor, luego siembra."),
    "played": ("P", "PJ"), "won": ("W", "G"), "lost": ("L", "P"), "tied": ("T", "E"),
    "gf": ("GF", "GF"), "ga": ("GA", "GC"), "placed_by": ("Placed by", "Definido por"),
    "by_won": ("wins", "victorias"), "by_goal_difference": ("goal difference", "diferencia de goles"),
    "by_goals_for": ("goals for", "goles a favor"), "by_seed": ("seed", "siembra"),
    "champion": ("Champion: {t}", "Campeón: {t}"), "winner": ("winner", "ganador"),
    "calendar": ("Add to calendar (.ics)", "Agregar al calendario (.ics)"),
    "scan": ("Scan for this page", "Escaneá para abrir esta página"),
    "lang": ("Español", "English"), "team": ("Team", "Equipo"), "bye": ("bye", "libre"),
    "winner_of": ("winner of {g}", "ganador de {g}"), "loser_of": ("loser of {g}", "perdedor de {g}"),
    "v": ("v", "vs."),
}


def words(lang: str) -> Callable[..., str]:
    """The page's word for ``key`` in ``lang`` ("es", else English), filled in with ``kw``."""
    i = 1 if lang == "es" else 0

    def say(key: str, **kw: object) -> str:
        text = WORDS[key][i] if key in WORDS else key
        return text.format(**kw) if kw else text

    return say


def zone(name: str) -> dt.tzinfo:
    """An event's time zone (UTC for a name this machine doesn't know)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return dt.UTC


def local(ms: int, tz: str) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, zone(tz))


def hhmm(ms: int, tz: str) -> str:
    return local(ms, tz).strftime("%H:%M")


def day(ms: int, tz: str, lang: str) -> str:
    """"Saturday 5 December" / "sábado 5 de diciembre", in the event's zone."""
    d = local(ms, tz)
    if lang == "es":
        days = ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"]
        months = ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre",
                  "octubre", "noviembre", "diciembre"]
        return f"{days[d.weekday()]} {d.day} de {months[d.month - 1]}"
    return f"{d:%A} {d.day} {d:%B}"
