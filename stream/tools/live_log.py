"""Logs as a live service writes them, for the tests and the sizing figures that need one.

A hand-written log (the bundled demo's) names its events as its author chose. The live
service names each one ``DEVICE/ID`` (the token's subject, and the device's own id:
docs/protocol-device.md) and writes a ``tick`` (``system:tick:GAME:AT``) whenever a
deadline falls due (``stream/live/hub/timer.py``). ``as_live`` gives a log those names and
those ticks: each event is folded in order, and before it, every deadline that falls due
by its time is ticked, the way the service's timer would have. ``demo_tournament`` is the
demo's event played as two games, one after the other, then completed: cards, a red, a
void, box trips, ticks, an obligation from the first game served in the second.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

from ..rules import codec
from ..rules.engine import Engine
from . import demo

__all__ = ["as_live", "demo_season", "demo_tournament", "jsonl", "owed"]

SYSTEM = "system"   # the device name of the service's own events (stream/live/hub/hub.py)

def as_live(events: Iterable[dict[str, Any]],
            device: Callable[[dict[str, Any]], str]) -> list[dict[str, Any]]:
    """``events`` (folded in order; none may be refused) as the live service logs them:
    each named ``DEVICE/N`` (``device(event)`` names its device, ``N`` counts that
    device's events from 1), voids aimed at the new names, and a tick before each event
    for every deadline that falls due by its time. Raises ``Refused`` if the fold refuses
    one."""
    engine = Engine()
    counters: dict[str, itertools.count[int]] = {}
    renamed: dict[str, str] = {}
    out: list[dict[str, Any]] = []

    def apply(e: dict[str, Any]) -> None:
        engine.apply(codec.event_from_fields(dict(e)))
        out.append(e)

    for original in events:
        at = int(original["at"])
        while (due := engine.next_deadline()) is not None and due[0] <= at:
            t, game = due
            apply({"type": "tick", "id": f"{SYSTEM}:tick:{game}:{t}", "at": t, "game": game})
        name = device(original)
        n = next(counters.setdefault(name, itertools.count(1)))
        e = {**original, "id": f"{name}/{n}"}
        renamed[original["id"]] = e["id"]
        if e.get("type") == "void":
            e["target"] = renamed[e["target"]]
        apply(e)
    return out


def _demo_device(roles: dict[str, str]) -> Callable[[dict[str, Any]], str]:
    """A device per official: the committee's laptop for what is not a game's play."""
    def device(e: dict[str, Any]) -> str:
        role = roles.get(e["id"])
        return f"{role}-{e['game']}" if role is not None else "committee"
    return device


def demo_tournament(t0: int = demo.DEMO_T0, *, event: str = demo.EVENT,
                    games: tuple[str, str] = ("demo-semi", "demo-final"),
                    complete: bool = True, settle: bool = False) -> list[dict[str, Any]]:
    """The demo's event as the live service logs it: its set-up and registrations, the demo
    game's script played as ``games[0]`` and then, 80 minutes later, as ``games[1]`` (the
    first game's red card is a suspension the second one serves; the second's is owed to
    the team's next game), then, with ``settle``, the committee's rescind of what is still
    owed, and with ``complete``, ``event.complete``."""
    roles: dict[str, str] = {}
    log = _demo_event(t0, event, games, roles, registrations=True)
    device = _demo_device(roles)
    at = log[-1]["at"] + 60_000
    if settle:  # the ids the obligations get once the log is renamed (``as_live`` renames alike)
        for n, oid in enumerate(owed(as_live(log, device)), 1):
            log.append({"type": "committee.rescind", "id": f"{event}-rescind-{n}", "at": at,
                        "obligation": oid, "by": "the committee", "reason": "settled before the archive"})
    if complete:
        log.append({"type": "event.complete", "id": f"{event}-complete", "at": at, "event": event})
    return as_live(log, device)


def _demo_event(t0: int, event: str, games: tuple[str, str], roles: dict[str, str], *,
                registrations: bool) -> list[dict[str, Any]]:
    """The demo's event before ``as_live``: its set-up (and, with ``registrations``, its teams'
    and players'), its two games (each event's role kept in ``roles``), not completed."""
    first, second = games
    t1 = t0 + 80 * 60_000
    setup = demo.setup_events(t0, first, event)
    if not registrations:
        setup = [setup[0], setup[-1]]
    second_setup = {**setup[-1], "id": f"{second}-setup", "game": second, "at": t1 - 600_000}
    played: list[dict[str, Any]] = []
    for game, start in ((first, t0), (second, t1)):
        for role, e in demo.script_events(start, game):
            roles[e["id"]] = role
            played.append(e)
    split = next(i for i, e in enumerate(played) if e["game"] == second)
    return [*setup, *played[:split], second_setup, *played[split:]]


def demo_season(events: int, t0: int = demo.DEMO_T0) -> list[dict[str, Any]]:
    """``events`` of the demo's, one after the other, each completed, as the live service
    logs them (the teams and players registered once, before the first): about 130 records
    an event, in the demo's mix of cards, goals, clock events, voids and ticks."""
    roles: dict[str, str] = {}
    log: list[dict[str, Any]] = []
    for k in range(events):
        start = t0 + k * 4 * 3_600_000
        one = _demo_event(start, f"cup-{k}", (f"semi-{k}", f"final-{k}"), roles, registrations=k == 0)
        log += [*one, {"type": "event.complete", "id": f"cup-{k}-complete", "at": one[-1]["at"] + 60_000,
                       "event": f"cup-{k}"}]
    return as_live(log, _demo_device(roles))


def owed(log: Iterable[dict[str, Any]]) -> list[str]:
    """The ids of the obligations still pending once ``log`` is folded."""
    engine = Engine()
    for e in log:
        engine.apply(codec.event_from_fields(dict(e)))
    return [o.id for obs in engine.book.ledger.values() for o in obs if o.status == "pending"]


def jsonl(events: Iterable[dict[str, Any]]) -> bytes:
    """Events as JSON Lines, one a line (the pinned format's encoding, as ``GET /api/log``
    writes each record's body)."""
    return b"".join(codec.encode_event(codec.event_from_fields(dict(e))) + b"\n" for e in events)

