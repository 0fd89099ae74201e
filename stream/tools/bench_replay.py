"""``arena-stream bench replay``: the fold's speed against a msgspec decode of the
same log, on a synthetic season that plays like real games (``synthetic_season``;
``game_events`` makes one game of it, for tests that want a plausible game)."""

from __future__ import annotations

import gc
import random
import statistics
import time
from typing import Any

import msgspec

from ..errors import Refused
from ..live.hub.snapshot import no_gc
from ..rules import codec
from ..rules.engine import Engine

_enc = msgspec.json.Encoder()


def game_events(rng: random.Random, gid: str, event: str, t0: int, n: int,
                 cls: str | None = None) -> list[dict[str, Any]]:
    """About ``n`` events of one plausible game: play segments ended by whistles
    and goals, cards at stoppages, box trips, a red now and then, substitutions,
    a mount change, a void and a late card. ``cls``: "club" for a game whose
    event is never set up."""
    home = [f"{gid}-h{i}" for i in range(4)]
    away = [f"{gid}-a{i}" for i in range(4)]
    out: list[dict[str, Any]] = [{
        "type": "game.setup", "id": f"{gid}-s", "at": t0, "game": gid, "event": event,
        "handicap": rng.choice([4, 8, 12]), "kind": "regular", "periods": 4, "period_ms": 450_000,
        "teams": {"home": {"team": f"t{rng.randrange(40)}a", "players": home[:3], "subs": home[3:]},
                  "away": {"team": f"t{rng.randrange(40)}b", "players": away[:3], "subs": away[3:]}},
    }]
    if cls is not None:
        out[0]["class"] = cls
    at = t0 + 60_000
    seq = 0

    def add(body: dict[str, Any], when: int | None = None) -> str:
        nonlocal seq
        seq += 1
        eid = f"{gid}-{seq}"
        out.append({"id": eid, "at": at if when is None else when, "game": gid, **body})
        return eid

    yellows: dict[str, int] = {}
    sent: set[str] = set()
    for _period in range(4):
        left = 450_000
        while left > 0 and len(out) < n - 4:
            add({"type": "clock.start"})
            run = min(left, rng.randrange(5_000, 40_000))
            at += run
            left -= run
            if left == 0:
                add({"type": "horn"})
                break
            r = rng.random()
            if r < 0.12:
                add({"type": "goal", "team": rng.choice(["home", "away"]),
                     "points": 2 if rng.random() < 0.15 else 1})
            else:
                add({"type": "whistle"})
            at += rng.randrange(2_000, 15_000)
            r = rng.random()
            if r < 0.06:
                p = rng.choice([x for x in home[:3] + away[:3] if x not in sent])
                yellows[p] = yellows.get(p, 0) + 1
                color = "red" if rng.random() < 0.05 else "yellow"
                if color == "red" or yellows[p] >= 4:
                    sent.add(p)
                cid = add({"type": "card", "player": p, "color": color, "conduct": "arguing"})
                if rng.random() < 0.05:
                    at += 1_000
                    add({"type": "void", "target": cid})
                    yellows[p] -= 1
                    sent.discard(p)
            elif r < 0.08:
                # A card that reaches the server late: stamped 2 s before the whistle.
                p = rng.choice([x for x in home[:3] + away[:3] if x not in sent])
                yellows[p] = yellows.get(p, 0) + 1
                if yellows[p] >= 4:
                    sent.add(p)
                add({"type": "card", "player": p, "color": "yellow", "conduct": "rough_play"},
                    when=at - 4_000)
            elif r < 0.09:
                add({"type": "mount.removed", "player": rng.choice(home[:3]), "reason": "unfit"})
                at += rng.randrange(30_000, 120_000)
                add({"type": "mount.replaced", "player": out[-1]["player"]})
            at += rng.randrange(1_000, 5_000)
        at += 240_000
    add({"type": "game.end"})
    return out


def synthetic_season(n_events: int, seed: int) -> bytes:
    """A season log of about ``n_events`` events as JSON Lines."""
    rng = random.Random(seed)
    lines: list[bytes] = []
    count = 0
    t0 = 1_780_000_000_000
    e = 0
    while count < n_events:
        event = f"ev{e}"
        lines.append(_enc.encode({"type": "event.setup", "id": f"{event}-s", "at": t0, "event": event,
                                  "class": rng.choice(["club", "uspa"]), "handicap": 8,
                                  "teams": [], "completed": False}))
        count += 1
        for g in range(16):
            evs = game_events(rng, f"{event}g{g}", event, t0, 400)
            lines.extend(_enc.encode(x) for x in evs)
            count += len(evs)
            t0 += 4_000_000
            if count >= n_events:
                break
        e += 1
    return b"\n".join(lines) + b"\n"


def bench_replay(n_events: int, seed: int, repeats: int = 5) -> dict[str, float]:
    """Fold rate against a msgspec decode of the same log, in ``repeats`` interleaved
    rounds (decode, then fold, each round): the median and the worst of each, and
    of the per-round ratio; never the best. The decode and the fold run as the service's
    start runs them (``Hub._load``): with the cycle collector off."""
    t = time.perf_counter()
    log = synthetic_season(n_events, seed)
    made = time.perf_counter() - t
    lines = log.splitlines()
    print(f"synthetic season: {len(lines):,} events, {len(log) / 1e6:.1f} MB, built in {made:.1f} s")

    decode_s: list[float] = []
    fold_s: list[float] = []
    refused = 0
    engine = Engine()
    for _ in range(repeats):
        del engine
        gc.collect()
        with no_gc():  # both halves as the service's start runs them (``Hub._load``)
            t = time.perf_counter()
            decoded = [codec.decode_event(line) for line in lines]
            decode_s.append(time.perf_counter() - t)

        gc.collect()
        engine = Engine()
        refused = 0
        with no_gc():
            t = time.perf_counter()
            for x in decoded:
                try:
                    engine.apply(x)
                except Refused:
                    refused += 1
            fold_s.append(time.perf_counter() - t)

    n = len(decoded)
    ratios = [f / d for f, d in zip(fold_s, decode_s, strict=True)]
    dec_med, fold_med = statistics.median(decode_s), statistics.median(fold_s)
    figures = {
        "events": float(n),
        "decode_eps": n / dec_med,
        "fold_eps": n / fold_med,
        "fold_eps_worst": n / max(fold_s),
        "ratio": statistics.median(ratios),
        "ratio_worst": max(ratios),
        "refused": float(refused),
    }
    print(f"{repeats} interleaved rounds: median (worst)")
    print(f"msgspec decode alone : {dec_med:7.3f} s  {n / dec_med:12,.0f} events/s"
          f"   ({n / max(decode_s):,.0f})")
    print(f"fold (Rule 14 engine): {fold_med:7.3f} s  {n / fold_med:12,.0f} events/s"
          f"   ({n / max(fold_s):,.0f})   (goal >= 200,000 events/s)")
    print(f"fold / decode time   : {figures['ratio']:7.2f} x   ({figures['ratio_worst']:.2f} x)"
          f"   (goal <= 3.00 x)")
    print(f"games {len(engine.games):,}; refused by the rules {refused:,} "
          f"({100 * refused / n:.2f} %, the generator's own mistakes)")
    return figures
