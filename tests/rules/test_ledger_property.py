"""The ledger over a season: Hypothesis draws a few events (club or USPA, with a
handicap, their teams, some already completed) and 3-6 games (random
handicaps, kinds, events, and whether the followed player ``p`` plays for team
A or C, starts, sits on the bench or is not rostered at all). The games are set
up in a random order, each played to its end before the next is set up; in
each, ``p`` gets random yellows (1-3 at once), reds, departures from the arena
or the box, box time still owed at the end, a 5.c(2) shootout, and post-game
cards. Then:

* every obligation is derived as the rule says from how ``p`` left the game
  (R6/R14 sent off, R10 box time, R12 three yellows received, R9 post-game);
* each is created once and served at most once: in exactly one game's
  ``carried`` list, with one ``obligation.applied`` and one
  ``obligation.served``, never in two games;
* the game it was served in is "his next game" by R13/R15/R16, recomputed
  here from the drawn season (handicap, kind, event class; for the same team,
  his team's game whether or not he is listed; for any team, once his team is
  in no further event, judged at the origin's end and at each completion, a
  game he is listed in): every qualifying game played between the origin and
  it took an earlier suspension of his (one per game), and an obligation still
  pending was never passed over by a qualifying game;
* within one origin game, suspensions are served most severe first (R9);
* no set-up is refused for its team sheet, and ``preview_setup`` says exactly
  what the game then takes when it begins;
* a fresh replay of the accepted log gives byte-identical ``engine.state()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import msgspec
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from stream.rules import codec
from stream.rules import notices as nt
from stream.rules.engine import Engine
from stream.rules.events import GameSetup
from stream.rules.ledger import Obligation

from .clause_helpers import P, Season, roster

EXCLUDED = {"consolation", "subsidiary_first_round", "shootout"}
OPPONENT = {"A": "B", "C": "D"}
#: R9: "two yellow cards [...] the first two minutes of play", "three [...] the first four
#: minutes", "a red card [...] suspended for the entirety [...] until [...] four minutes".
POSTGAME = {"2y": ("sit_out", 120_000, "R9"), "3y": ("sit_out", 240_000, "R9"),
            "red": ("suspension", 240_000, "R9")}
_msgpack = msgspec.msgpack.Encoder()


@dataclass
class EventSpec:
    id: str
    cls: str
    handicap: int
    teams: list[str]
    completed: bool


@dataclass
class GameSpec:
    id: str
    event: str                 # "friendly": never set up (a Club event, A-register)
    handicap: int
    kind: str
    team: str                  # p's team, A or C
    role: str                  # lineup, bench, absent
    option: bool               # 5.c(2) chosen
    shootout: bool             # ... and the game went to a shootout
    actions: list[tuple[str, int]]
    box_at_end: bool           # a two-yellow card just before the end (R10)
    postgame: list[str]
    complete_after: str | None  # an event completed once this game is over


@dataclass
class Played:
    """What the test knows of a game once played (its own model, not the engine's)."""

    spec: GameSpec
    index: int                 # its turn in the order of play
    cls: str
    rostered: bool             # p is on its team sheet
    done: set[str]             # the events completed when it began (R15)
    carried: list[str] = field(default_factory=list)   # obligation ids it took


_YELLOW = st.tuples(st.just("yellow"), st.sampled_from([1, 1, 1, 2, 3]))
ACTION = st.one_of(
    _YELLOW, _YELLOW, _YELLOW,
    st.tuples(st.just("red"), st.just(0)),
    st.tuples(st.just("arena"), st.just(0)),
    st.tuples(st.just("left_early"), st.just(0)),
    st.tuples(st.just("stop"), st.just(0)),
    st.tuples(st.just("run"), st.sampled_from([1_000, 30_000, 119_999, 120_000, 200_000, 240_000])),
)


@st.composite
def seasons(draw: st.DrawFn) -> tuple[list[EventSpec], list[GameSpec]]:
    events = [EventSpec(f"ev{i}", draw(st.sampled_from(["club", "club", "uspa"])),
                        draw(st.sampled_from([4, 6, 8, 10])),
                        draw(st.lists(st.sampled_from(["A", "B", "C", "D"]), unique=True, min_size=1)),
                        draw(st.sampled_from([False, False, False, True])))
              for i in range(draw(st.integers(1, 3)))]
    names = [e.id for e in events]
    games = []
    for i in draw(st.permutations(range(draw(st.integers(3, 6))))):   # set-up order != id order
        option = draw(st.booleans())
        games.append(GameSpec(
            id=f"g{i}", event=draw(st.sampled_from([*names, "friendly"])),
            handicap=draw(st.sampled_from([6, 8, 8, 10])),
            kind=draw(st.sampled_from(["regular"] * 5 + sorted(EXCLUDED))),
            team=draw(st.sampled_from(["A", "A", "C"])),
            role=draw(st.sampled_from(["lineup", "lineup", "lineup", "bench", "absent"])),
            option=option, shootout=option and draw(st.booleans()),
            actions=draw(st.lists(ACTION, max_size=7)),
            box_at_end=draw(st.booleans()),
            postgame=draw(st.lists(st.sampled_from(["2y", "3y", "red"]), max_size=2)),
            complete_after=draw(st.one_of(st.none(), st.sampled_from(names))),
        ))
    return events, games


def rosters(team: str, role: str) -> tuple[dict[str, Any], dict[str, Any]]:
    t = team.lower()
    mates = [f"{t}2", f"{t}3"]
    home = {"lineup": roster(team, [P, *mates], [f"{t}4"]),
            "bench": roster(team, [f"{t}4", *mates], [P]),
            "absent": roster(team, [f"{t}4", *mates])}[role]
    o = OPPONENT[team]
    return home, roster(o, [f"{o.lower()}{k}" for k in (1, 2, 3)], [f"{o.lower()}4"])


class Driver:
    def __init__(self, events: list[EventSpec]) -> None:
        self.s = Season()
        self.accepted: list[Any] = []
        self.events = {e.id: e for e in events}
        self.played: dict[str, Played] = {}
        for e in events:
            self.send("event.setup", event=e.id, **{"class": e.cls}, handicap=e.handicap, teams=e.teams,
                      completed=e.completed)

    def send_body(self, body: dict[str, Any]) -> list[Any]:
        out = self.s.send_raw(body)
        if not any(isinstance(n, nt.Rejected) for n in out):
            self.accepted.append(codec.decode_event(msgspec.json.encode(body)))
        return out

    def send(self, type: str, game: str | None = None, **fields: Any) -> list[Any]:
        return self.send_body(self.s.body(type, game, **fields))

    # ------------------------------------------------------------------ play

    def done(self) -> set[str]:
        return {e.id for e in self.events.values() if e.completed}

    def play(self, g: GameSpec) -> None:
        index = len(self.played)
        home, away = rosters(g.team, g.role)
        body = self.s.setup_body(g.id, event=g.event, handicap=g.handicap, kind=g.kind, home=home,
                                 away=away, shootout_option=g.option)
        e = codec.decode_event(msgspec.json.encode(body))
        assert isinstance(e, GameSetup)
        before = _msgpack.encode(self.s.engine.state())
        preview = self.s.engine.preview_setup(e)
        assert _msgpack.encode(self.s.engine.state()) == before
        out = self.send_body(body)
        assert not any(isinstance(n, nt.Rejected) for n in out), out   # never for the team sheet
        assert not any(isinstance(n, nt.ObligationApplied) for n in out)
        played = Played(spec=g, index=index, cls=ev.cls if (ev := self.events.get(g.event)) else "club",
                        rostered=g.role != "absent", done=self.done())
        out = self.send("clock.start", g.id)
        took = [n.obligation for n in out if isinstance(n, nt.ObligationApplied)]
        assert took == [o.id for o in preview]
        self.s.run(5_000)
        for what, n in g.actions:
            if what == "run":
                self.s.run(n)
            elif what == "yellow":
                self.send("card", g.id, player=P, color="yellow", count=n, conduct="arguing")
            elif what == "red":
                self.send("card", g.id, player=P, color="red", conduct="striking")
            elif what == "arena":
                self.send("arena.left", g.id, player=P)
            elif what == "left_early":
                self.send("box.left_early", g.id, player=P)
            else:
                self.send("whistle", g.id)
                self.s.run(1_000)
                self.send("clock.start", g.id)
            self.s.run(1_000)
        if g.box_at_end:
            self.send("card", g.id, player=P, color="yellow", count=2, conduct="arguing")
            self.s.run(1_000)
        end = self.send("game.end", g.id, shootout=g.shootout)
        assert not any(isinstance(n, nt.Rejected) for n in end), end
        self.played[g.id] = played
        self.check_derived(g, end)
        in_game = P in {x.id for x in self.s.view(g.id).players}
        for level in g.postgame:
            out = self.send("postgame.card", g.id, player=P, level=level)
            assert in_game != any(isinstance(n, nt.Rejected) for n in out), out
            if in_game:     # R9, in the rule's own numbers
                created = [(n.kind, n.owed_ms, n.clause) for n in out if isinstance(n, nt.ObligationCreated)]
                assert created == [POSTGAME[level]]
        self.s.run(60_000)
        if g.complete_after is not None:
            self.send("event.complete", event=g.complete_after)
            self.events[g.complete_after].completed = True

    def check_derived(self, g: GameSpec, end: list[Any]) -> None:
        """R6/R14, R10, R12: what the end of the game creates, from how p left it."""
        created = sorted((n.kind, n.owed_ms, n.clause) for n in end if isinstance(n, nt.ObligationCreated))
        expected: list[tuple[str, int, str]] = []
        if P in {x.id for x in self.s.view(g.id).players}:   # listed, or holding a slot
            v = self.s.player(g.id)
            if v.sent_off:
                sent = [n for n in self.s.notices if isinstance(n, nt.CardRecorded) and n.game == g.id
                        and n.player == P and n.color == "red"]
                expected.append(("suspension", 0, "R14" if sent[-1].converted == "left_arena" else "R6"))
            elif v.box is not None:
                assert not g.shootout, "R11: a shootout excludes a boxed player"
                expected.append(("sit_out", v.box.remaining_ms, "R10"))
            if v.yellows - (1 if v.carried_yellow else 0) >= 3 and not v.sent_off:
                expected.append(("yellow_status", 0, "R12"))
        assert created == sorted(expected), (g.id, created, expected)

    # ---------------------------------------------------------------- checks

    def any_team(self, origin: Played, done: set[str]) -> bool:
        """R15: the origin's team entered in no uncompleted event of its handicap or more."""
        team, handicap = origin.spec.team, origin.spec.handicap
        return not any(e.id not in done and e.handicap >= handicap and team in e.teams
                       for e in self.events.values())

    def qualifies(self, ob: Obligation, game: Played) -> bool:
        """R13/R15/R16 from the drawn season: is ``game`` one of p's next games for ``ob``?"""
        origin = self.played[ob.origin_game]
        g = game.spec
        if not (game.index > origin.index and g.handicap >= origin.spec.handicap
                and g.kind not in EXCLUDED and (origin.cls == "club" or game.cls == "uspa")):
            return False
        if self.any_team(origin, game.done):
            return game.rostered                       # his next game, for any team
        return g.team == origin.spec.team              # his team's next game, listed or not

    def check(self) -> None:
        engine = self.s.engine
        obs = engine.obligations(P)
        assert set(engine.state().ledger) <= {P}
        by_id = {o.id: o for o in obs}
        assert len(by_id) == len(obs)
        count: dict[tuple[type, str], int] = {}
        for n in self.s.notices:
            if isinstance(n, nt._ObligationNotice):
                count[type(n), n.obligation] = count.get((type(n), n.obligation), 0) + 1
        assert not any(k[0] is nt.ObligationWithdrawn for k in count)
        for gid, game in self.played.items():
            game.carried = [c.id for c in engine.view(gid).carried]
            assert all(c.player == P for c in engine.view(gid).carried)
            heavy = [i for i in game.carried if by_id[i].kind != "yellow_status"]
            assert len(heavy) <= 1, (gid, heavy)          # one suspension or sit-out a game
        taken_in = {i: gid for gid, game in self.played.items() for i in game.carried}
        assert sum(len(game.carried) for game in self.played.values()) == len(taken_in)  # never two games
        ordered = sorted(self.played.values(), key=lambda x: x.index)
        for ob in obs:
            assert count.get((nt.ObligationCreated, ob.id)) == 1, ob
            done = ob.status != "pending"
            assert count.get((nt.ObligationApplied, ob.id), 0) == int(done), ob
            assert count.get((nt.ObligationServed, ob.id), 0) == int(done), ob
            assert ob.status in ("pending", "served"), ob   # every game has ended
            assert ob.applied_in == taken_in.get(ob.id), ob
            upto = self.played[ob.applied_in].index if ob.applied_in else len(ordered)
            if ob.applied_in is not None:
                assert self.qualifies(ob, self.played[ob.applied_in]), ob
            # Every qualifying game before the one that served it (or ever, if
            # pending) was taken by an earlier suspension of his.
            for game in ordered[:upto]:
                if not self.qualifies(ob, game):
                    continue
                # A game starts him with one yellow at most (R12): an earlier yellow status
                # takes it first; a suspension, an earlier one of his.
                yellow = ob.kind == "yellow_status"
                earlier = [by_id[i] for i in game.carried if (by_id[i].kind == "yellow_status") == yellow]
                assert earlier and earlier[0].order < ob.order, (ob, game.spec.id, game.carried)
        self.check_sequence(obs)

    def check_sequence(self, obs: list[Obligation]) -> None:
        """R9: within one origin game, the most severe first: post-game red, then a
        red or departure in the game, then sit-outs by length."""

        def rank(o: Obligation) -> tuple[int, int]:
            if o.kind == "suspension":
                return (3, 0) if o.postgame else (2, 0)
            return (1, o.owed_ms)

        for origin in {o.origin_game for o in obs}:
            heavy = sorted((o for o in obs if o.origin_game == origin and o.kind != "yellow_status"),
                           key=rank, reverse=True)
            for a, b in pairwise(heavy):
                if b.applied_in is not None:
                    assert a.applied_in is not None, (a, b)
                    if rank(a) > rank(b):
                        assert self.played[a.applied_in].index < self.played[b.applied_in].index, (a, b)

    def replay_state(self) -> bytes:
        fresh = Engine()
        for e in self.accepted:
            out = fresh.feed(e)
            assert not any(isinstance(n, nt.Rejected) for n in out), (e, out)
        fresh.advance(self.s.t)
        return _msgpack.encode(fresh.state())


def _game(i: int, kind: str, actions: list[tuple[str, int]], box: bool) -> GameSpec:
    return GameSpec(id=f"g{i}", event="ev0", handicap=6, kind=kind, team="A", role="lineup", option=False,
                    shootout=False, actions=actions, box_at_end=box, postgame=[], complete_after=None)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seasons())
# Two yellow statuses (R12), the second from a consolation game the first skipped: the next
# game takes the first; the second waits for the game after.
@example(([EventSpec(id="ev0", cls="club", handicap=4, teams=["A"], completed=False)],
          [_game(0, "regular", [("yellow", 1)], True), _game(1, "consolation", [("yellow", 1)], True),
           _game(2, "regular", [], False)]))
def test_every_obligation_is_served_once_in_the_next_qualifying_game(
        season: tuple[list[EventSpec], list[GameSpec]]) -> None:
    events, games = season
    d = Driver(events)
    for g in games:
        d.play(g)
    d.check()
    assert _msgpack.encode(d.s.engine.state()) == d.replay_state()
