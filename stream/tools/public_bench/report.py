"""The lines and the table of ``arena-stream bench public``: each round as it ends, then
each figure beside its goal, the median round and the worst (never the best), met or
missed on the median, and for a missed goal where the time or the memory went."""

from __future__ import annotations

import math
import os
from collections.abc import Callable

from ..harness import percentile
from .measures import PublicOptions, Round, Stretch

EVENT_URL = "/ws/watch?event="


def fmt(x: float, spec: str = ".1f") -> str:
    return "n/a" if math.isnan(x) else format(x, spec)


def median(xs: list[float]) -> float:
    """The median round's (the lower middle one for an even count); NaN for none."""
    got = sorted(x for x in xs if not math.isnan(x))
    return percentile(got, 0.5)


def worst(xs: list[float]) -> float:
    """The worst round's: the largest."""
    got = [x for x in xs if not math.isnan(x)]
    return max(got) if got else math.nan


def start(opts: PublicOptions, nofile: int, event: str, note: str) -> None:
    events = opts.games * opts.rate
    print(f"bench public: {opts.spectators} spectators, {opts.games} games live in event {event}, "
          f"{opts.rate:g} event per game per second ({events:g} events/s: the clock, goals, cards), "
          f"{opts.seconds:g} s a stretch; GET /events/{event} at {opts.page_rate:g}/s from a process of its "
          f"own; {opts.rounds} round(s) of A and of B, interleaved (A1, B1, A2, ...), a fresh service each "
          f"round; open-file limit {nofile}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
          + (f"; {note}" if note else ""), flush=True)
    print(f"  A: the spectators on one socket each, {EVENT_URL}{event} (every game), a stretch without the "
          "page load and one with it (the order alternating); B: as many viewers, each on one game's "
          "/ws/watch?game=G (spread over the games), a stretch without", flush=True)


def stretch_text(s: Stretch) -> str:
    f = s.frames
    text = (f"{'with' if s.pages else 'without'} the page load: {len(s.sent.sends)} events acked, "
            f"{len(s.sent.refused)} refused, {len(f.lat_ms):,} frames timed, p99 {fmt(f.p99())} ms, ack p99 "
            f"{fmt(percentile(s.sent.ack_ms, 0.99))} ms, lost {f.lost}, repeated {f.dup}; the service's CPU "
            f"{fmt(100 * s.cpu, '.0f')} % of a core (the viewer workers' "
            f"{fmt(100 * s.viewer_cpu, '.0f')} %; other processes' {fmt(100 * s.others, '.0f')} % of the "
            f"{os.cpu_count()} cores), "
            f"its loop late p99 {fmt(s.lag_p99_ms)} ms (max "
            f"{fmt(s.lag_max_ms)} ms), collections {fmt(s.gc_ms)} ms")
    if s.page is not None:
        text += (f"; {len(s.page.ms):,} pages answered, p99 {fmt(percentile(s.page.ms, 0.99))} ms, "
                 f"failed {s.page.failed}" + (f" ({s.page.first_failure})" if s.page.failed else ""))
    if s.sent.refused:
        text += f"; the first refusal: {s.sent.refused[0]}"
    return text


def round_line(r: Round) -> None:
    what = "event sockets" if r.kind == "event" else "single-game sockets"
    print(f"  {r.name} ({what}, load average {r.load_avg:.2f}): {r.viewers} viewers; the service's RSS "
          f"+{fmt(r.mem_kib, '.2f')} KiB each (each sent {fmt(r.joined_kib, '.1f')} KiB to join); resyncs "
          f"{r.resets}, dropped {r.dropped}", flush=True)
    for s in r.stretches:
        print(f"    {stretch_text(s)}", flush=True)


def _of(rounds: list[Round], kind: str, pages: bool, get: Callable[[Stretch], float]) -> list[float]:
    out = []
    for r in rounds:
        s = r.stretch(pages) if r.kind == kind else None
        if s is not None:
            out.append(get(s))
    return out


def summary(opts: PublicOptions, rounds: list[Round], event: str) -> dict[str, float]:
    """The table; the figures: each as ``NAME`` (the median round) and ``NAME_worst``."""
    a = [r for r in rounds if r.kind == "event"]
    b = [r for r in rounds if r.kind == "game"]
    pairs = list(zip(a, b, strict=False))

    def p99(r: Round, pages: bool = False) -> float:
        s = r.stretch(pages)
        return s.frames.p99() if s else math.nan

    def ack(r: Round, pages: bool) -> float:
        s = r.stretch(pages)
        return percentile(s.sent.ack_ms, 0.99) if s else math.nan

    def page(r: Round) -> float:
        s = r.stretch(True)
        return percentile(s.page.ms, 0.99) if s and s.page else math.nan

    series: dict[str, list[float]] = {
        "mem_kib": [r.mem_kib for r in a],
        "event_p99_ms": [p99(r) for r in a],
        "event_pages_p99_ms": [p99(r, True) for r in a],
        "game_p99_ms": [p99(r) for r in b],
        "p99_ratio": [p99(x) / p99(y) for x, y in pairs],
        "page_p99_ms": [page(r) for r in a],
        "ack_p99_ms": [ack(r, False) for r in a],
        "ack_pages_p99_ms": [ack(r, True) for r in a],
        "ack_ratio": [ack(r, True) / ack(r, False) for r in a],
    }
    fig = {name: median(xs) for name, xs in series.items()}
    fig |= {f"{name}_worst": worst(xs) for name, xs in series.items()}
    fig["lost"] = float(sum(s.frames.lost for r in rounds for s in r.stretches))
    fig["repeated"] = float(sum(s.frames.dup for r in rounds for s in r.stretches))
    fig["refused"] = float(sum(len(s.sent.refused) for r in rounds for s in r.stretches))
    fig["page_failed"] = float(sum(s.page.failed for r in rounds for s in r.stretches if s.page))
    rows = [  # (label, figure, goal, limit: met while the median is at most it; NaN: no goal)
        ("memory per idle spectator (KiB)", "mem_kib", "<= 8", 8.0),
        ("spectators' p99, ack to frame (ms)", "event_p99_ms", "", math.nan),
        ("  the same, with the page load (ms)", "event_pages_p99_ms", "", math.nan),
        ("single-game viewers' p99 (ms)", "game_p99_ms", "", math.nan),
        ("event / single-game p99", "p99_ratio", "<= 1.00x", 1.0),
        (f"GET /events/{event} p99 at {opts.page_rate:g}/s (ms)", "page_p99_ms", "<= 50", 50.0),
        ("devices' ack p99, no page load (ms)", "ack_p99_ms", "", math.nan),
        ("devices' ack p99, page load (ms)", "ack_pages_p99_ms", "", math.nan),
        ("ack p99 with / without page load", "ack_ratio", "<= 1.00x", 1.0),
    ]
    print()
    print(f"public pages: {opts.spectators} spectators, {opts.games} games, the median and the worst of "
          f"{len(a)} round(s) each; met or missed on the median round")
    print(f"{'':44}{'goal':>10}{'median':>10}{'worst':>10}")
    missed = []
    for label, name, goal, limit in rows:
        ratio = name.endswith("ratio")
        spec = ".2f" if ratio or name == "mem_kib" else ".1f"
        unit = "x" if ratio else ""
        verdict = ""
        if not math.isnan(limit):
            ok = fig[name] <= limit
            verdict = "met" if ok else "missed"
            if not ok:
                missed.append(name)
        print(f"{label:44}{goal or '-':>10}{fmt(fig[name], spec) + unit:>10}"
              f"{fmt(fig[name + '_worst'], spec) + unit:>10}   {verdict}".rstrip())
    print(f"frames lost {int(fig['lost'])}, repeated {int(fig['repeated'])}; events refused "
          f"{int(fig['refused'])}; pages failed {int(fig['page_failed'])}")
    for name in missed:
        print(f"  {reason(name, a, b, opts)}")
    return fig


def _med(rounds: list[Round], kind: str, pages: bool, get: Callable[[Stretch], float]) -> float:
    return median(_of(rounds, kind, pages, get))


def reason(name: str, a: list[Round], b: list[Round], opts: PublicOptions) -> str:
    """Where the time or the memory went, for a missed goal, from the rounds' measures."""
    rounds = [*a, *b]

    def cpu(kind: str, pages: bool) -> str:
        return fmt(100 * _med(rounds, kind, pages, lambda s: s.cpu), ".0f")

    def lag(kind: str, pages: bool) -> str:
        return (f"{fmt(_med(rounds, kind, pages, lambda s: s.lag_p99_ms))} ms (max "
                f"{fmt(_med(rounds, kind, pages, lambda s: s.lag_max_ms))} ms)")

    if name == "mem_kib":
        return (f"memory: each spectator was sent {fmt(median([r.joined_kib for r in a]))} KiB to join (a "
                f"snapshot and a roster of each of {opts.games} games) against "
                f"{fmt(median([r.joined_kib for r in b]))} KiB for a single-game viewer, whose share of the "
                f"service's RSS was {fmt(median([r.mem_kib for r in b]), '.2f')} KiB")
    if name == "p99_ratio":
        fa = opts.spectators * opts.games * opts.rate
        fb = opts.spectators * opts.rate
        return (f"event / single-game p99: a spectator gets every game's deltas, {fa:,.0f} frames/s to send "
                f"in all against {fb:,.0f} in B; the service's CPU {cpu('event', False)} % of a core (B: "
                f"{cpu('game', False)} %), its loop late p99 {lag('event', False)} "
                f"(B: {lag('game', False)}), "
                f"collections {fmt(_med(rounds, 'event', False, lambda s: s.gc_ms))} ms a stretch (B: "
                f"{fmt(_med(rounds, 'game', False, lambda s: s.gc_ms))} ms); the viewer workers' CPU "
                f"{fmt(100 * _med(rounds, 'event', False, lambda s: s.viewer_cpu), '.0f')} % of a core (B: "
                f"{fmt(100 * _med(rounds, 'game', False, lambda s: s.viewer_cpu), '.0f')} %), other "
                f"processes' {fmt(100 * _med(rounds, 'event', False, lambda s: s.others), '.0f')} % (B: "
                f"{fmt(100 * _med(rounds, 'game', False, lambda s: s.others), '.0f')} %)")
    render = _med(a, "event", True, lambda s: s.cpu) - _med(a, "event", False, lambda s: s.cpu)
    per_page = 1000 * render / opts.page_rate
    need = opts.page_rate * per_page / 10  # % of a core
    full = ("; with them the service's loop had its core full, so requests and acks queued"
            if _med(a, "event", True, lambda s: s.cpu) >= 0.9 else "")
    renders = (f"about {fmt(per_page, '.2f')} ms of the service's CPU a page (its CPU "
               f"{cpu('event', True)} % of a core with the page load, {cpu('event', False)} % without), so "
               f"{opts.page_rate:g} pages/s need {fmt(need, '.0f')} % of a core{full}; its loop late p99 "
               f"{lag('event', True)} with them, {lag('event', False)} without")
    if name == "page_p99_ms":
        return f"the page: its render and its HTTP take {renders}"
    return ("ack with / without the page load: an ack waits behind the page renders on the one loop: "
            + renders)
