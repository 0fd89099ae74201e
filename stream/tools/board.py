"""A scoreboard as plain text: what the arena board shows, for a terminal, in English
or Spanish (the web scoreboard's words, clients/web/displays/live.js). With the game's roster,
teams show by name ("AIK" letters beside) and players as "#2 Ortega"; by id when
nothing is registered."""

from __future__ import annotations

from ..rules.names import shirt
from ..rules.rosters import GameRoster
from ..rules.text import mmss
from ..rules.view import GameView, SitoutView

#: The board's words. Spanish as the web scoreboard words them.
WORDS: dict[str, dict[str, str]] = {
    "en": {"final": "FINAL", "period": "P{n}", "ot": " OT", "run": "RUN", "stop": "STOP",
           "period_over": " (period over)", "on_field": "{n} on the field", "no_sub": ", no substitute",
           "box": "BOX", "returns": "returns at next stoppage", "sub_next": "sub at next stoppage",
           "owed": "{t} of play owed", "sent_off": "SENT OFF", "suspended": "SUSPENDED",
           "shootout": "out of the shootout", "mount_expired": "mount expired", "mount": "mount {t}",
           "yellow": "{n} yellow", "yellows": "{n} yellow", "red": "{n} red", "reds": "{n} red",
           "home": "home", "away": "away",
           "official": "team official"},
    "es": {"final": "FINAL", "period": "P{n}", "ot": " TS", "run": "EN MARCHA", "stop": "DETENIDO",
           "period_over": " (fin del período)", "on_field": "{n} en la cancha",
           "no_sub": ", sin sustituto", "box": "ÁREA", "returns": "vuelve en la próxima detención",
           "sub_next": "sustituto en la próxima detención", "owed": "{t} de tiempo de juego debido",
           "sent_off": "EXPULSADO", "suspended": "SUSPENDIDO", "shootout": "fuera de los penales",
           "mount_expired": "venció el tiempo del caballo", "mount": "caballo {t}",
           "yellow": "{n} amarilla", "yellows": "{n} amarillas", "red": "{n} roja", "reds": "{n} rojas",
           "home": "local", "away": "visitante",
           "official": "oficial del equipo"},
}


def _sitout(so: SitoutView, w: dict[str, str]) -> str:
    if so.eligible:
        return w["returns"] if so.kind == "box" else w["sub_next"]
    return w["owed"].format(t=mmss(so.remaining_ms))


def _who(roster: GameRoster | None, player: str) -> str:
    p = roster.players.get(player) if roster is not None else None
    return player if p is None else shirt(p)


def _team(roster: GameRoster | None, side: str, team: str) -> str:
    entry = (roster.home if side == "home" else roster.away) if roster is not None else None
    return f"{entry.name} ({entry.short.upper()})" if entry is not None and entry.team == team else team


def _cards(w: dict[str, str], color: str, n: int) -> str:
    return w[color if n == 1 else f"{color}s"].format(n=n)


def render_board(v: GameView, roster: GameRoster | None = None, lang: str = "en") -> str:
    w = WORDS["es" if lang == "es" else "en"]
    home, away = _team(roster, "home", v.teams.home.team), _team(roster, "away", v.teams.away.team)
    c = v.clock
    period = w["period"].format(n=c.period) + (w["ot"] if c.overtime else "")
    clock = w["final"] if v.status == "ended" else (
        f"{period} {mmss(c.remaining_ms)} {w['run'] if c.running else w['stop']}"
        + (w["period_over"] if c.period_over else ""))
    lines = [
        f"{home:>20}  {v.score.home:>2} - {v.score.away:<2}  {away}",
        f"{clock:^50}",
    ]
    for side, name in ((v.teams.home, home), (v.teams.away, away)):
        line = f"  {name}: " + w["on_field"].format(n=side.on_field)
        if not side.substitute_allowed:
            line += w["no_sub"]
        lines.append(line)
    for p in v.players:
        bits = []
        if p.box is not None:
            bits.append(f"{w['box']} {_sitout(p.box, w)}")
        if p.sent_off:
            bits.append(w["sent_off"] + (f", {_sitout(p.no_sub, w)}" if p.no_sub else ""))
        elif p.suspended:
            bits.append(w["suspended"] + (f", {_sitout(p.no_sub, w)}" if p.no_sub else ""))
        if p.shootout_excluded:
            bits.append(w["shootout"])
        if p.mount is not None:
            bits.append(w["mount_expired"] if p.mount.expired
                        else w["mount"].format(t=mmss(p.mount.remaining_ms)))
        if p.yellows and not bits:
            bits.append(_cards(w, "yellow", p.yellows))
        if bits:
            lines.append(f"    {_who(roster, p.id)} ({w[p.side]}): " + "; ".join(bits))
    for o in v.officials:  # cards to team officials (R1)
        cards = [_cards(w, "yellow", o.yellows)] if o.yellows else []
        cards += [_cards(w, "red", o.reds)] if o.reds else []
        lines.append(f"    {o.role} ({w[o.side]}, {w['official']}): " + ", ".join(cards))
    return "\n".join(lines)
