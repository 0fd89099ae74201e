"""One socket for a whole tournament event (docs/protocol-viewer.md, "Subscribe"): every game
of the event, each game set up later, live deltas in order per game, a resume that gets
exactly what was missed of each game, a token's scope that does not widen itself, and a
viewer that leaves every topic it followed."""

from __future__ import annotations

import json
from typing import Any

from ..conftest import Server, Viewer, eventually, view_after
from .test_resume import quiet


async def two_events(server: Server) -> None:
    """``g1`` and ``g2`` of "cup", ``g3`` of "plate", all three on arena ``a1``."""
    await server.setup_game("g1")
    await server.setup_game("g2")
    await server.setup_game("g3", event="plate")


def of(frames: list[dict[str, Any]], game: str, *kinds: str) -> list[tuple[str, int]]:
    """``game``'s snapshots and deltas (or ``kinds``) among ``frames``: (type, seq)."""
    kinds = kinds or ("snapshot", "delta")
    return [(f["type"], f.get("seq", -1)) for f in frames if f.get("game") == game and f["type"] in kinds]


class Play:
    """A timekeeper and an umpire of each game, sending goals."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.devices: dict[str, tuple[Any, Any]] = {}

    async def goal(self, game: str, team: str = "home") -> int:
        """A goal in ``game`` (its clock started first, if it was not): the goal's seq."""
        if game not in self.devices:
            tk = await self.server.device("timekeeper", game, name=f"tk-{game}")
            ump = await self.server.device("umpire", game, name=f"ump-{game}")
            self.devices[game] = (tk, ump)
            await tk.send({"type": "clock.start", "game": game})
        player = "h1" if team == "home" else "a1"
        ack = await self.devices[game][1].send({"type": "goal", "game": game, "team": team, "player": player})
        return int(ack["seq"])

    async def close(self) -> None:
        for tk, ump in self.devices.values():
            await tk.close()
            await ump.close()


async def test_an_event_viewer_gets_every_game_of_its_event_and_no_other(server: Server) -> None:
    await two_events(server)
    viewer = await Viewer.open(server.watch_url, event="cup")
    first = [await viewer.next("snapshot"), await viewer.next("snapshot")]
    assert [(s["game"], s["seq"], s["reset"]) for s in first] == [("g1", 1, False), ("g2", 1, False)]
    assert [f["type"] for f in viewer.frames if f.get("game") == "g1"] == ["snapshot", "roster"]

    # a game of the event set up later joins, from its first frame; one of another event does not
    await server.setup_game("g4", arena="a2")
    await server.setup_game("g5", event="plate")
    later = await viewer.next("snapshot")
    assert (later["game"], later["seq"], later["view"]["event"]) == ("g4", 1, "cup")

    play = Play(server)
    sent: dict[str, list[int]] = {"g1": [], "g2": [], "g4": []}
    for game in ("g1", "g2", "g1", "g4", "g2", "g1"):
        sent[game].append(await play.goal(game))
    await play.goal("g3")
    rest = await quiet(viewer)
    for game, goals in sent.items():
        got = of(rest, game, "delta")
        assert [s for _, s in got] == sorted(s for _, s in got)   # in seq order, each once
        assert set(goals) <= {s for _, s in got}
    assert not of(viewer.frames, "g3", "snapshot", "delta", "roster")
    assert not of(viewer.frames, "g5", "snapshot", "delta", "roster")
    for game in ("g1", "g2", "g4"):
        _, now = await server.api("GET", f"/api/games/{game}")
        assert view_after([f for f in viewer.frames if f.get("game") == game]) == now["view"]
    await play.close()
    await viewer.close()


async def test_a_dropped_event_viewer_resumes_each_game_with_exactly_what_it_missed(
        server: Server) -> None:
    await two_events(server)
    play = Play(server)
    viewer = await Viewer.open(server.watch_url, event="cup")
    snaps = {s["game"]: s for s in [await viewer.next("snapshot"), await viewer.next("snapshot")]}
    epoch = snaps["g1"]["epoch"]
    seen = {"g1": await play.goal("g1"), "g2": await play.goal("g2")}
    for game, seq in seen.items():
        await viewer.until_seq(game, seq)
    await viewer.close()

    # missed while away: deltas of both games, and a new game of the event
    missed = {"g1": [await play.goal("g1"), await play.goal("g1", "away")],
              "g2": [await play.goal("g2", "away")]}
    await server.setup_game("g4")
    back = await Viewer.open(server.watch_url)
    for game, seq in seen.items():   # the games it had, resumed; then the event
        await back.ws.send(json.dumps({"type": "subscribe", "game": game, "since": seq, "epoch": epoch}))
    await back.ws.send(json.dumps({"type": "subscribe", "event": "cup"}))
    got = await quiet(back)
    for game in ("g1", "g2"):
        _, now = await server.api("GET", f"/api/games/{game}")
        assert of(got, game) == [("delta", s) for s in range(seen[game] + 1, now["seq"] + 1)]
        assert set(missed[game]) <= {s for _, s in of(got, game)}
        assert view_after([f for f in [*viewer.frames, *got] if f.get("game") == game]) == now["view"]
    assert of(got, "g4") == [("snapshot", 1)]   # the game it did not have: a snapshot
    # then live, each once
    nxt = await play.goal("g2")
    assert of(await back.until_seq("g2", nxt), "g2") == [("delta", nxt)]
    assert await quiet(back) == []
    await play.close()
    await back.close()


async def test_a_token_of_one_game_or_arena_is_refused_an_event(server: Server) -> None:
    await two_events(server)
    for token, refused in ((server.token("display", "board-g1", game="g1"), "game 'g1'"),
                           (server.token("display", "board-a1", arena="a1"), "arena 'a1'"),
                           (server.token("committee", "htc", event="cup"), None)):
        viewer = await Viewer.open(server.watch_url)
        await viewer.ws.send(json.dumps({"type": "auth", "token": token}))
        await viewer.ws.send(json.dumps({"type": "subscribe", "event": "cup"}))
        got = await quiet(viewer)
        if refused is None:
            assert [(f["type"], f["game"]) for f in got] == [("snapshot", "g1"), ("snapshot", "g2")]
        else:
            assert [(f["type"], f["code"], f["detail"]) for f in got] == [
                ("error", "out_of_scope", f"this token is for {refused}, not event 'cup'")]
        await viewer.close()


async def test_an_event_with_no_game_yet_is_not_an_error(server: Server) -> None:
    viewer = await Viewer.open(server.watch_url, event="later")
    assert await quiet(viewer) == []
    await server.setup_game("g1", event="later")
    assert (await viewer.next("snapshot"))["game"] == "g1"
    await viewer.close()
    empty = await Viewer.open(server.watch_url, event="")
    error = await empty.next("error")
    assert error["code"] == "invalid_frame" and "the subscription in the URL" in error["detail"]
    await empty.close()


async def test_a_viewer_that_leaves_leaves_every_topic(server: Server) -> None:
    await two_events(server)
    fanout = server.svc.fanout
    before = set(fanout.watchers)
    viewer = await Viewer.open(server.watch_url, event="cup")
    await viewer.next("snapshot")
    await viewer.ws.send(json.dumps({"type": "subscribe", "arena": "nowhere"}))
    await viewer.ws.send(json.dumps({"type": "subscribe", "event": "nothing"}))
    await quiet(viewer)
    (w,) = set(fanout.watchers) - before
    assert w in fanout.event_topics["cup"] and w in fanout.arena_topics["nowhere"]
    assert w in fanout.topics["g1"] and w in fanout.topics["g2"]
    await viewer.close()
    await eventually(lambda: w not in fanout.watchers)
    await eventually(lambda: not any(w in f for f in fanout.topics.values()))
    # a name no viewer follows any more is forgotten (any name may be asked for)
    await eventually(lambda: not fanout.event_topics and "nowhere" not in fanout.arena_topics)


async def test_an_arena_no_viewer_follows_any_more_is_forgotten(server: Server) -> None:
    fanout = server.svc.fanout
    viewers = [await Viewer.open(server.watch_url, arena=f"made-up-{i}") for i in range(3)]
    for viewer in viewers:
        assert await quiet(viewer) == []
    assert {f"made-up-{i}" for i in range(3)} <= set(fanout.arena_topics)
    for viewer in viewers:
        await viewer.close()
    await eventually(lambda: not any(name.startswith("made-up-") for name in fanout.arena_topics))


async def test_a_private_event_is_not_followed_whole_without_a_token(server: Server) -> None:
    """docs/public.md: a private event answers a viewer with no token as an event never set
    up: nothing comes, not even a game set up later; a token's holder follows it."""
    status, ack = await server.api("POST", "/api/events", {
        "id": "ev-members", "event": "members", "class": "uspa", "handicap": 8,
        "teams": ["m1-home", "m1-away", "m2-home", "m2-away"], "private": True})
    assert status == 201, ack
    await server.setup_game("m1", event="members")
    anonymous = await Viewer.open(server.watch_url, event="members")
    staff = await Viewer.open(server.watch_url)
    await staff.ws.send(json.dumps({"type": "auth", "token": server.admin}))
    await staff.ws.send(json.dumps({"type": "subscribe", "event": "members"}))
    assert (await staff.next("snapshot"))["game"] == "m1"
    await server.setup_game("m2", event="members")
    assert (await staff.next("snapshot"))["game"] == "m2"
    frames = await quiet(anonymous)
    assert [m for m in frames if m["type"] in ("snapshot", "delta", "roster")] == [], frames
    await anonymous.close()
    await staff.close()
