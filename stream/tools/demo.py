"""The demo game: one scripted arena game that shows every common Rule 14 path.

Four periods of 7:30. A second yellow sits a player out until the goal that
follows his two minutes of play; a red leaves a team short until the first
stoppage after four minutes of play; a mount is replaced; a mistaken card is
voided; a player leaves the box early and is released by a goal that lands
exactly on his new boundary; a 2-point goal comes from a Penalty 2.

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

# (offset ms from the first clock start, device role, event without id/at/game)
SCRIPT: list[tuple[int, str, dict[str, Any]]] = [
    (0, "timekeeper", {"type": "clock.start"}),
    (40_000, "umpire", {"type": "whistle"}),
    (45_000, "umpire", {"type": "card", "player": "ortega", "color": "yellow", "conduct": "arguing"}),
    (60_000, "timekeeper", {"type": "clock.start"}),
    (100_000, "umpire", {"type": "goal", "team": "home", "player": "ruiz"}),
    (110_000, "timekeeper", {"type": "clock.start"}),
    (150_000, "umpire", {"type": "whistle"}),
    (155_000, "umpire", {"type": "card", "player": "ortega", "color": "yellow",
                         "conduct": "abusive_language"}),
    (170_000, "timekeeper", {"type": "clock.start"}),
    (320_000, "umpire", {"type": "goal", "team": "away", "player": "kerr"}),
    (330_000, "timekeeper", {"type": "clock.start"}),
    (510_000, "timekeeper", {"type": "horn"}),
    (750_000, "timekeeper", {"type": "clock.start"}),
    (800_000, "umpire", {"type": "whistle"}),
    (802_000, "umpire", {"type": "mount.removed", "player": "beck", "reason": "unfit"}),
    (900_000, "umpire", {"type": "mount.replaced", "player": "beck"}),
    (905_000, "timekeeper", {"type": "clock.start"}),
    (1_000_000, "umpire", {"type": "whistle"}),
    (1_005_000, "umpire", {"type": "card", "player": "salas", "color": "red",
                           "conduct": "striking", "penalty": "Penalty 2"}),
    (1_010_000, "timekeeper", {"type": "clock.start"}),
    (1_100_000, "umpire", {"type": "goal", "team": "home", "player": "mahoney", "points": 2}),
    (1_110_000, "timekeeper", {"type": "clock.start"}),
    (1_200_000, "umpire", {"type": "whistle"}),
    (1_210_000, "timekeeper", {"type": "clock.start"}),
    (1_300_000, "umpire", {"type": "goal", "team": "away", "player": "beck"}),
    (1_305_000, "umpire", {"type": "substitution", "team": "away", "out": "salas", "in": "frey"}),
    (1_310_000, "timekeeper", {"type": "clock.start"}),
    (1_345_000, "timekeeper", {"type": "horn"}),
    (1_945_000, "timekeeper", {"type": "clock.start"}),
    (2_000_000, "umpire", {"type": "whistle"}),
    (2_005_000, "umpire", {"type": "card", "player": "kerr", "color": "yellow",
                           "conduct": "appealing", "penalty": "Penalty 2"}),
    (2_010_000, "timekeeper", {"type": "clock.start"}),
    (2_050_000, "umpire", {"type": "goal", "team": "home", "player": "ruiz", "points": 2}),
    (2_060_000, "timekeeper", {"type": "clock.start"}),
    (2_100_000, "umpire", {"type": "whistle"}),
    (2_102_000, "umpire", {"type": "card", "player": "mahoney", "color": "yellow",
                           "conduct": "unwelcome_talking"}),
    (2_110_000, "referee", {"type": "void", "target": "@-1"}),
    (2_115_000, "timekeeper", {"type": "clock.start"}),
    (2_430_000, "timekeeper", {"type": "horn"}),
    (2_670_000, "timekeeper", {"type": "clock.start"}),
    (2_700_000, "umpire", {"type": "whistle"}),
    (2_702_000, "umpire", {"type": "card", "player": "kerr", "color": "yellow",
                           "conduct": "dangerous_riding"}),
    (2_710_000, "timekeeper", {"type": "clock.start"}),
    (2_780_000, "umpire", {"type": "box.left_early", "player": "kerr"}),
    (2_900_000, "umpire", {"type": "goal", "team": "away", "player": "beck"}),
    (2_910_000, "timekeeper", {"type": "clock.start"}),
    (3_140_000, "timekeeper", {"type": "horn"}),
    (3_141_000, "referee", {"type": "game.end"}),
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
