"""A scoreboard as plain text: what the arena board shows, for a terminal."""

from __future__ import annotations

from ..rules.text import mmss
from ..rules.view import GameView, SitoutView


def _sitout(so: SitoutView) -> str:
    if so.eligible:
        return "returns at next stoppage" if so.kind == "box" else "sub at next stoppage"
    return f"{mmss(so.remaining_ms)} of play owed"


def render_board(v: GameView) -> str:
    c = v.clock
    period = f"P{c.period}" + (" OT" if c.overtime else "")
    clock = "FINAL" if v.status == "ended" else (
        f"{period} {mmss(c.remaining_ms)} {'RUN' if c.running else 'STOP'}"
        + (" (period over)" if c.period_over else ""))
    lines = [
        f"{v.teams.home.team:>20}  {v.score.home:>2} - {v.score.away:<2}  {v.teams.away.team}",
        f"{clock:^50}",
    ]
    for side in (v.teams.home, v.teams.away):
        line = f"  {side.team}: {side.on_field} on the field"
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
            lines.append(f"    {p.id} ({p.side}): " + "; ".join(bits))
    for o in v.officials:  # cards to team officials (R1)
        cards = [f"{o.yellows} yellow"] if o.yellows else []
        cards += [f"{o.reds} red"] if o.reds else []
        lines.append(f"    {o.role} ({o.side}, team official): " + ", ".join(cards))
    return "\n".join(lines)
