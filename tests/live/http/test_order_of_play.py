"""The order of play from outside, on a real service on loopback with real clients: a game's
start time and its officials by name, given at its set-up and changed later through
`POST /api/games/{game}/schedule`; every display of the game gets them in its `roster` frame,
the games' list carries them, a restart keeps them, and a card names who gave it."""

from __future__ import annotations

from pathlib import Path

from stream.tools.harness import Device, Viewer

from ..conftest import RunningServer
from .test_rosters import frames_until, raw

T = 1_796_148_000_000   # 2026-12-01 14:00 UTC, say
CREW = {"umpires": ["Marta Pérez", "J. Lee"], "referee": "Ana Soto", "timekeeper": "Raúl Díaz"}


async def test_a_schedule_and_officials_reach_the_game_s_displays_and_survive_a_restart(tmp_path: Path
                                                                                       ) -> None:
    async with RunningServer(tmp_path) as server:
        await server.setup_game(starts_at=T, officials=CREW)
        await server.setup_game("g2")
        viewer = await Viewer.open(server.watch_url, game="g1")
        roster = (await frames_until(viewer, "roster"))[-1]
        sched = roster["schedule"]
        assert (sched["starts_at"], sched["officials"], sched["revision"]) == (T, CREW, 1)
        assert sched["cause"] == "admin/setup-g1"

        # The referee changes and the game moves by half an hour: one new roster, whole.
        crew = {**CREW, "referee": "Lucía Vega"}
        status, ack = await server.api("POST", "/api/games/g1/schedule",
                                       {"id": "move-g1", "starts_at": T + 1_800_000, "officials": crew})
        assert status == 201 and ack["game"] is None, ack
        sched = (await viewer.next("roster"))["schedule"]
        assert (sched["starts_at"], sched["officials"], sched["revision"]) == (T + 1_800_000, crew, 2)
        # The other game's viewers get nothing; its row has no schedule.
        _, games = await server.api("GET", "/api/games")
        rows = {g["game"]: g for g in games}
        assert rows["g1"]["roster"]["schedule"]["officials"]["referee"] == "Lucía Vega"
        assert rows["g2"]["roster"]["schedule"] is None

        # Refused, with nothing logged: a game never set up; three umpires; a blank name.
        before = len(server.log_rows())
        status, err = await server.api("POST", "/api/games/nope/schedule", {"starts_at": T})
        assert (status, err["code"]) == (409, "unknown_game"), err
        status, err = await server.api("POST", "/api/games/g1/schedule",
                                       {"officials": {"umpires": ["a", "b", "c"]}})
        assert status == 400 and "$.officials.umpires" in err["detail"], err
        status, err = await server.api("POST", "/api/games/g1/schedule", {"officials": {"referee": " "}})
        assert status == 400 and "$.officials.referee" in err["detail"], err
        assert len(server.log_rows()) == before

        # A card names who gave it: the umpire's device is paired to her by name.
        ump = Device(server.device_url, server.token("umpire", "ump-1", game="g1", official="Marta Pérez"),
                     prefix="ump")
        await ump.connect()
        await (await server.device("timekeeper")).send({"type": "clock.start", "game": "g1"})
        await ump.send({"type": "card", "game": "g1", "player": "a1", "color": "yellow",
                        "conduct": "arguing"})
        _, report = await server.api("GET", "/games/g1/report.json")
        assert [c["official"] for c in report["cards"]] == ["Marta Pérez"]
        state_before = server.svc.hub.engine.state()
        await viewer.close()

    async with RunningServer(tmp_path) as again:   # a restart folds the same order of play
        _, doc = await again.api("GET", "/api/games/g1")
        assert doc["roster"]["schedule"]["officials"]["referee"] == "Lucía Vega"
        assert again.svc.hub.engine.state().schedules == state_before.schedules


async def test_a_schedule_change_is_a_decision_in_the_event_s_trail_and_log(tmp_path: Path) -> None:
    """Who moved a game or changed its officials is kept: the event's decisions and its log."""
    async with RunningServer(tmp_path) as server:
        status, _ = await server.api("POST", "/api/events", {"event": "cup", "class": "club", "handicap": 8,
                                                             "teams": ["g1-home", "g1-away"]})
        assert status == 201
        await server.setup_game()
        committee = server.token("committee", "htc-1", official="M. Ortiz", event="cup")
        status, ack = await server.api("POST", "/api/games/g1/schedule",
                                       {"id": "move", "starts_at": T, "officials": CREW}, token=committee)
        assert status == 201, ack
        _, rows = await server.api("GET", "/api/events/cup/decisions", token=committee)
        moved = [r for r in rows if r["type"] == "game.scheduled"]
        assert [(r["game"], r["by"], r["event"]) for r in moved] == [("g1", "M. Ortiz", "cup")]
        text = moved[0]["text"]
        assert "umpire Marta Pérez" in text["en"] and "árbitro Marta Pérez" in text["es"]
        status, _, log = await raw(server, "GET", "/api/events/cup/log", token=committee)
        assert status == 200 and b'"game.scheduled"' in log
