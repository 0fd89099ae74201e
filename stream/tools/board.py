"""A scoreboard as plain text: what the arena board shows, for a terminal. With the
game's roster, teams show by name ("AIK" letters beside) and players as "#2 Ortega";
by id when nothing is registered."""

from __future__ import annotations

from ..rules.rosters import GameRoster
from ..rules.text import mmss
from ..rules.view import GameView, SitoutView


def _sitout(so: SitoutView) -> str:
    if so.eligible:
        return "returns at next stoppage" if so.kind == "box" else "sub at next stoppage"
    return f"{mmss(so.remaining_ms)} of play owed"


def _who(roster: GameRoster | None, player: str) -> str:
    p = roster.players.get(player) if roster is not None else None
    if p is None:
        return player
    return p.name if p.number is None else f"#{p.number} {p.name}"


def _team(roster: GameRoster | None, side: str, team: str) -> str:
    entry = (roster.home if side == "home" else roster.away) if roster is not None else None
    return f"{entry.name} ({entry.short.upper()})" if entry is not None and entry.team == team else team


def render_board(v: GameView, roster: GameRoster | None = None) -> str:
    home, away = _team(roster, "home", v.teams.home.team), _team(roster, "away", v.teams.away.team)
    c = v.clock
    period = f"P{c.period}" + (" OT" if c.overtime else "")
    clock = "FINAL" if v.status == "ended" else (
        f"{period} {mmss(c.remaining_ms)} {'RUN' if c.running else 'STOP'}"
        + (" (period over)" if c.period_over else ""))
    lines = [
        f"{home:>20}  {v.score.home:>2} - {v.score.away:<2}  {away}",
        f"{clock:^50}",
    ]
    for side, name in ((v.teams.home, home), (v.teams.away, away)):
        line = f"  {name}: {side.on_field} on the field"
        if not side.substitute_allowed:
            line += ", no substitute"
        lines.append(line)
    for p in v.players:
        bits = []
        if p.box is not None:
            bits.append(f"BOX {_sitout(p.box)}")
        if p.sent_off:
            bits.append("SENT OFF" + (f", {_sitout(p.no_sub)}" if p.no_sub else ""))
        elif p.suspended:
            bits.append("SUSPENDED" + (f", {_sitout(p.no_sub)}" if p.no_sub else ""))
        if p.shootout_excluded:
            bits.append("out of the shootout")
        if p.mount is not None:
            bits.append("mount expired" if p.mount.expired else f"mount {mmss(p.mount.remaining_ms)}")
        if p.yellows and not bits:
            bits.append(f"{p.yellows} yellow")
        if bits:
            lines.append(f"    {_who(roster, p.id)} ({p.side}): " + "; ".join(bits))
    for o in v.officials:  # cards to team officials (R1)
        cards = [f"{o.yellows} yellow"] if o.yellows else []
        cards += [f"{o.reds} red"] if o.reds else []
        lines.append(f"    {o.role} ({o.side}, team official): " + ", ".join(cards))
    return "\n".join(lines)
