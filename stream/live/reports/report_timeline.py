"""The play-time timeline of the printable report (``report_html``), as an inline SVG:
play time on the x axis, the periods, goals and cards as marks, box trips and red cards'
no-substitute windows as bars, each player named as displays name him ("#2 Ortega", cut
where room is short). The page's palette is the timeline's: a side's colour is the same
in the bars, the marks and the page's legend."""

from __future__ import annotations

from collections.abc import Sequence

from ...rules.text import mmss
from .report import Report, who
from .report_words import esc, said, words

HOME, AWAY = "#1d64c8", "#d9730d"
YELLOW, RED, GREEN = "#f0c000", "#d32f2f", "#2e9d57"


def _mark(r: Report, player: str) -> str:
    """A player on the timeline, where room is short: "#2 Ortega" cut to 16 characters."""
    shown = who(r.roster, player)
    return shown if len(shown) <= 16 else shown[:15] + "…"


def timeline_svg(report: Report, lang: str = "en") -> str:
    """Play time on the x axis: periods, goals and cards as marks, box trips as bars."""
    # Where each period starts on the play-time axis: as played, then (a game still to
    # finish) a full period each.
    starts = list(report.period_starts) or [0]
    if report.status != "ended":
        while len(starts) < report.periods:
            starts.append(starts[-1] + report.period_ms)
        total = max(report.play_ms, starts[-1] + report.period_ms)
    else:
        total = report.play_ms
    total = max(total, 60_000)
    trips = report.box_trips
    red_windows = _red_windows(report)
    lanes = [(t.player, t.side) for t in trips] + [(p, s) for p, s, _, _ in red_windows]
    left, right, top = 120, 980, 34
    width = right - left
    lane_h = 22

    def x(ms: int) -> float:
        return round(left + width * min(ms, total) / total, 1)

    # Labels that would overlap go on another line.
    goal_rows = _stagger([x(g.moment.play_ms) for g in report.goals], 30)
    card_rows = _stagger([x(c.moment.play_ms) for c in report.cards], 44)
    goals_y = top + 26 + 11 * max(goal_rows, default=0)
    cards_y = goals_y + 32
    box_top = cards_y + 30 + 11 * max(card_rows, default=0)
    height = box_top + max(1, len(lanes)) * lane_h + 26

    w = words(lang)
    parts = [f'<svg class="timeline" viewBox="0 0 1000 {height}" xmlns="http://www.w3.org/2000/svg" '
             f'role="img" aria-label="{esc(w("timeline_label"))}">',
             "<defs><pattern id=\"wait\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
             "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fff3c4\"/>"
             f"<rect width=\"3\" height=\"6\" fill=\"{YELLOW}\"/></pattern></defs>"]
    # period bands and the minute ruler
    for k, start in enumerate(starts):
        x0, x1 = x(start), x(starts[k + 1] if k + 1 < len(starts) else total)
        fill = "#f4f6fa" if k % 2 == 0 else "#ffffff"
        label = f"P{k + 1}" if k < report.periods else f"OT{k + 1 - report.periods}"
        parts.append(f'<rect x="{x0}" y="{top}" width="{round(x1 - x0, 1)}" height="{height - top - 18}" '
                     f'fill="{fill}"/><text x="{round((x0 + x1) / 2, 1)}" y="{top - 8}" '
                     f'class="t-period">{label}</text>')
    minute = 60_000
    every = 1 if total <= 10 * minute else 5   # a label every minute, or every five
    for m in range(0, total + 1, minute):
        big = m % (every * minute) == 0
        parts.append(f'<line x1="{x(m)}" x2="{x(m)}" y1="{height - 18}" y2="{height - (12 if big else 15)}" '
                     f'stroke="#8a94a6"/>')
        if big:
            parts.append(f'<text x="{x(m)}" y="{height - 2}" class="t-tick">{m // minute}′</text>')
    parts.append(f'<line x1="{left}" x2="{right}" y1="{height - 18}" y2="{height - 18}" stroke="#8a94a6"/>')
    # row labels
    parts.append(f'<text x="{left - 8}" y="{goals_y + 4}" class="t-lane">{esc(w("goals"))}</text>')
    parts.append(f'<text x="{left - 8}" y="{cards_y + 4}" class="t-lane">{esc(w("cards"))}</text>')
    for g, row in zip(report.goals, goal_rows, strict=True):
        color = HOME if g.side == "home" else AWAY
        score = "×" if g.voided else g.detail.rsplit("· ", 1)[-1]
        cx = x(g.moment.play_ms)
        parts.append(f'<g><title>{esc(said(g.text, lang))}</title><circle cx="{cx}" cy="{goals_y}" r="6" '
                     f'fill="{color}"/><text x="{cx}" y="{goals_y - 9 - 11 * row}" class="t-mark">'
                     f"{esc(score)}</text></g>")
    for c, row in zip(report.cards, card_rows, strict=True):
        color = RED if c.color == "red" else YELLOW
        dash = ' stroke-dasharray="2 2" fill-opacity="0.25"' if c.voided else ""
        cx = x(c.moment.play_ms)
        parts.append(f'<g><title>{esc(said(c.text, lang))}</title>'
                     f'<rect x="{round(cx - 4, 1)}" y="{cards_y - 7}" '
                     f'width="8" height="12" rx="1.5" fill="{color}" stroke="#333" stroke-width="0.6"{dash}/>'
                     f'<text x="{cx}" y="{cards_y + 17 + 11 * row}" class="t-mark">'
                     f'{esc(_mark(report, c.player) if c.player else c.role or "")}</text></g>')
    # box trips: solid while play time is owed, hatched while waiting for the stoppage
    end = report.play_ms
    for i, t in enumerate(trips):
        y = box_top + i * lane_h
        color = HOME if t.side == "home" else AWAY
        x0 = x(t.enter.play_ms)
        served = t.eligible.play_ms if t.eligible else min(end, t.enter.play_ms + t.owed_ms)
        out = t.release.play_ms if t.release else end
        parts.append(f'<text x="{left - 8}" y="{y + 12}" class="t-lane" fill="{color}">'
                     f'{esc(_mark(report, t.player))}</text>')
        parts.append(f'<g><title>{esc(who(report.roster, t.player))}: {esc(w("trips"))} {mmss(t.owed_ms)} '
                     f'{esc(w("of_play"))} ({esc(t.clause)}), '
                     f'{esc(w("in"))} {mmss(t.enter.play_ms)}, {esc(w("released"))} '
                     f'{mmss(out) if t.release else esc(w("the_end"))}</title>'
                     f'<rect x="{x0}" y="{y + 3}" width="{max(1.0, round(x(served) - x0, 1))}" height="12" '
                     f'fill="{YELLOW}" stroke="{color}" stroke-width="1"/>')
        if out > served:
            wide = max(1.0, round(x(out) - x(served), 1))
            parts.append(f'<rect x="{x(served)}" y="{y + 3}" width="{wide}" '
                         f'height="12" fill="url(#wait)" stroke="{color}" stroke-width="1"/>')
        parts.append("</g>")
    for j, (player, side, start, stop) in enumerate(red_windows):
        y = box_top + (len(trips) + j) * lane_h
        color = HOME if side == "home" else AWAY
        parts.append(f'<text x="{left - 8}" y="{y + 12}" class="t-lane" fill="{color}">'
                     f'{esc(_mark(report, player))}</text>'
                     f'<g><title>{esc(who(report.roster, player))}: {esc(w("lg_red"))}</title>'
                     f'<rect x="{x(start)}" y="{y + 3}" width="{max(1.0, round(x(stop) - x(start), 1))}" '
                     f'height="12" fill="{RED}" fill-opacity="0.8" stroke="{color}"/></g>')
    if not lanes:
        parts.append(f'<text x="{left + 6}" y="{box_top + 14}" class="t-none">'
                     f'{esc(w("no_trips_short"))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _stagger(xs: Sequence[float], gap: float) -> list[int]:
    """A line for each label at ``xs`` (in order): the first line where it doesn't touch the last one."""
    ends: list[float] = []
    rows = []
    for v in xs:
        row = next((i for i, end in enumerate(ends) if v - end >= gap), len(ends))
        if row == len(ends):
            ends.append(v)
        ends[row] = v
        rows.append(row)
    return rows


def _red_windows(report: Report) -> list[tuple[str, str, int, int]]:
    """(player, side, from, to) in play time: a red card's no-substitute window."""
    out = []
    for s in report.sent_off:
        if s.player is None:
            continue
        allowed = next((r for r in report.releases if r.kind == "sub.allowed" and r.player == s.player
                        and r.moment.play_ms >= s.moment.play_ms), None)
        out.append((s.player, s.side or "", s.moment.play_ms,
                    allowed.moment.play_ms if allowed else report.play_ms))
    return out
