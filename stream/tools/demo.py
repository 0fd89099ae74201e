"""The demo game: one scripted arena game that shows every common Rule 14 path,
eventful from the start.

Four periods of 7:30. A watcher joins period 1 at 6:14 on the game clock (``LIVE_FROM``),
with #1 Beck (WEL) already in the penalty box for a second yellow. Then, in real time:
#2 Ortega's first yellow at 6:06 (10 s in); a goal at 5:26; Beck released at the
whistle at 4:56, once his two minutes of play are served, and Ortega's second
yellow right after it (about 1:34 in); Ortega out until the goal at 2:46 that follows
his two minutes of play. Later a red leaves a team short until the first stoppage
after four minutes of play; a mount is replaced; a mistaken card is voided; a player
leaves the box early and owes the rest and two minutes more; a 2-point goal comes
from a Penalty 2.

Before the game both teams are registered (name, score-bug letters, colours) and
so are their players (names and shirt numbers, "Díaz" among them), so that every
display shows "#2 Ortega", "AIK" and the teams' colours.

``demo_events(t0)`` gives the log as dicts (the pinned format); the bundled
``stream/examples/demo-game.jsonl`` is ``demo_events(DEMO_T0)`` and a test
keeps the two the same.
"""

from __future__ import annotations

from typing import Any

DEMO_T0 = 1_780_000_000_000  # 2026-05-28, an arbitrary fixed start for the bundled log
GAME = "demo-final"
EVENT = "demo-cup"

HOME = {"team": "aiken-arena", "players": ["ruiz", "ortega", "mahoney"], "subs": ["diaz"]}
AWAY = {"team": "wellington-blue", "players": ["beck", "salas", "kerr"], "subs": ["frey"]}

# What the displays show: (team, name, short, primary, secondary), and (player, name, number).
TEAMS = [("aiken-arena", "Aiken Arena", "AIK", "#0b3d2e", "#f2c230"),
         ("wellington-blue", "Wellington Blue", "WEL", "#f4f7fc", "#1c4fd8")]
PLAYERS = {"aiken-arena": [("ruiz", "Ruiz", 1), ("ortega", "Ortega", 2), ("mahoney", "Mahoney", 3),
                           ("diaz", "Díaz", 4)],
           "wellington-blue": [("beck", "Beck", 1), ("salas", "Salas", 2), ("kerr", "Kerr", 3),
                               ("frey", "Frey", 4)]}

# (offset ms from the first clock start, device role, event without id/at/game). Period 1's
# game clock counts down from 7:30 while the clock runs; the comments give it.
#: The script's offset that plays live: ``serve``'s demo and ``simulate`` join the game there,
#: the events before it sent at once with the times they happened (as a handheld's outbox
#: sends what it recorded offline), so the game is under way when a watcher arrives.
LIVE_FROM = 90_000
#: ``--demo-speed`` and ``simulate --speed``: 1 is real time, the play time Rule 14 counts.
DEFAULT_SPEED = 1.0

SCRIPT: list[tuple[int, str, dict[str, Any]]] = [
    (0, "timekeeper", {"type": "clock.start"}),                                       # P1 7:30
    (18_000, "umpire", {"type": "whistle"}),                                          # 7:12
    (20_000, "umpire", {"type": "card", "player": "beck", "color": "yellow", "conduct": "arguing"}),
    (25_000, "timekeeper", {"type": "clock.start"}),
    (40_000, "umpire", {"type": "whistle"}),                                          # 6:57
    (42_000, "umpire", {"type": "card", "player": "beck", "color": "yellow",
                        "conduct": "abusive_language"}),                              # Beck to the box
    (47_000, "timekeeper", {"type": "clock.start"}),
    # LIVE_FROM: what a watcher sees live starts here (90 s in, 6:14 on the clock).
    (98_000, "umpire", {"type": "whistle"}),                                          # 6:06
    (100_000, "umpire", {"type": "card", "player": "ortega", "color": "yellow", "conduct": "arguing"}),
    (105_000, "timekeeper", {"type": "clock.start"}),
    (145_000, "umpire", {"type": "goal", "team": "home", "player": "ruiz"}),          # 5:26
    (152_000, "timekeeper", {"type": "clock.start"}),
    (182_000, "umpire", {"type": "whistle"}),                                         # 4:56: Beck out
    (184_000, "umpire", {"type": "card", "player": "ortega", "color": "yellow",
                         "conduct": "abusive_language"}),                             # Ortega to the box
    (190_000, "timekeeper", {"type": "clock.start"}),
    (320_000, "umpire", {"type": "goal", "team": "away", "player": "kerr"}),          # 2:46: Ortega out
    (330_000, "timekeeper", {"type": "clock.start"}),
    (496_000, "timekeeper", {"type": "horn"}),                                        # 0:00
    (736_000, "timekeeper", {"type": "clock.start"}),
    (786_000, "umpire", {"type": "whistle"}),
    (788_000, "umpire", {"type": "mount.removed", "player": "beck", "reason": "unfit"}),
    (886_000, "umpire", {"type": "mount.replaced", "player": "beck"}),
    (891_000, "timekeeper", {"type": "clock.start"}),
    (986_000, "umpire", {"type": "whistle"}),
    (991_000, "umpire", {"type": "card", "player": "salas", "color": "red",
                         "conduct": "striking", "penalty": "Penalty 2"}),
    (996_000, "timekeeper", {"type": "clock.start"}),
    (1_086_000, "umpire", {"type": "goal", "team": "home", "player": "mahoney", "points": 2}),
    (1_096_000, "timekeeper", {"type": "clock.start"}),
    (1_186_000, "umpire", {"type": "whistle"}),
    (1_196_000, "timekeeper", {"type": "clock.start"}),
    (1_286_000, "umpire", {"type": "goal", "team": "away", "player": "beck"}),
    (1_291_000, "umpire", {"type": "substitution", "team": "away", "out": "salas", "in": "frey"}),
    (1_296_000, "timekeeper", {"type": "clock.start"}),
    (1_331_000, "timekeeper", {"type": "horn"}),
    (1_931_000, "timekeeper", {"type": "clock.start"}),
    (1_986_000, "umpire", {"type": "whistle"}),
    (1_991_000, "umpire", {"type": "card", "player": "kerr", "color": "yellow",
                         "conduct": "appealing", "penalty": "Penalty 2"}),
    (1_996_000, "timekeeper", {"type": "clock.start"}),
    (2_036_000, "umpire", {"type": "goal", "team": "home", "player": "ruiz", "points": 2}),
    (2_046_000, "timekeeper", {"type": "clock.start"}),
    (2_086_000, "umpire", {"type": "whistle"}),
    (2_088_000, "umpire", {"type": "card", "player": "mahoney", "color": "yellow",
                         "conduct": "unwelcome_talking"}),
    (2_096_000, "referee", {"type": "void", "target": "@-1"}),
    (2_101_000, "timekeeper", {"type": "clock.start"}),
    (2_416_000, "timekeeper", {"type": "horn"}),
    (2_656_000, "timekeeper", {"type": "clock.start"}),
    (2_686_000, "umpire", {"type": "whistle"}),
    (2_688_000, "umpire", {"type": "card", "player": "kerr", "color": "yellow",
                         "conduct": "dangerous_riding"}),
    (2_696_000, "timekeeper", {"type": "clock.start"}),
    (2_766_000, "umpire", {"type": "box.left_early", "player": "kerr"}),
    (2_886_000, "umpire", {"type": "goal", "team": "away", "player": "beck"}),
    (2_896_000, "timekeeper", {"type": "clock.start"}),
    (3_126_000, "timekeeper", {"type": "horn"}),
    (3_127_000, "referee", {"type": "game.end"}),
]


def registrations(t0: int) -> list[dict[str, Any]]:
    """The teams and players registered before the game (fixed ids: sent again, they are
    acknowledged as the same events)."""
    out: list[dict[str, Any]] = []
    for team, name, short, primary, secondary in TEAMS:
        out.append({"type": "team.registered", "id": f"{team}-registered", "at": t0 - 3_000_000,
                    "team": team, "name": name, "short": short,
                    "colors": {"primary": primary, "secondary": secondary}})
        for player, pname, number in PLAYERS[team]:
            out.append({"type": "player.registered", "id": f"{player}-registered", "at": t0 - 3_000_000,
                        "player": player, "name": pname, "number": number, "team": team})
    return out


def setup_events(t0: int, game: str = GAME, event: str = EVENT) -> list[dict[str, Any]]:
    return [
        {"type": "event.setup", "id": f"{event}-setup", "at": t0 - 3_600_000, "event": event,
         "class": "club", "handicap": 8, "teams": [HOME["team"], AWAY["team"]], "completed": False},
        *registrations(t0),
        {"type": "game.setup", "id": f"{game}-setup", "at": t0 - 600_000, "game": game,
         "event": event, "handicap": 8, "kind": "regular", "shootout_option": False,
         "periods": 4, "period_ms": 450_000, "teams": {"home": HOME, "away": AWAY}},
    ]


def script_events(t0: int, game: str = GAME) -> list[tuple[str, dict[str, Any]]]:
    """(role, event) for the scripted play, with ids, times and voids resolved."""
    out: list[tuple[str, dict[str, Any]]] = []
    for n, (offset, role, body) in enumerate(SCRIPT, 1):
        e = {"id": f"{game}-{n:03d}", "at": t0 + offset, "game": game, **body}
        if e.get("target") == "@-1":
            e["target"] = out[-1][1]["id"]
        out.append((role, e))
    return out


def demo_events(t0: int = DEMO_T0, game: str = GAME, event: str = EVENT) -> list[dict[str, Any]]:
    return [*setup_events(t0, game, event), *(e for _, e in script_events(t0, game))]


def wall_s(offset_ms: int, speed: float = DEFAULT_SPEED) -> float:
    """Seconds after the simulator starts at which the script's ``offset_ms`` plays (0 for
    what happened before ``LIVE_FROM``: it is sent at once)."""
    return max(0, offset_ms - LIVE_FROM) / 1000 / speed
