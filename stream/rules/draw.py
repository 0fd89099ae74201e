"""An event's draw (L3): its format, the games it makes, and what their results mean.

House rules
-----------
* A draw is an event of the log (``draw.made``): the event, its format (``knockout``
  or ``round_robin``), its teams in seed order, and for a knockout whether the first
  round's losers play a ``consolation`` bracket or go to a ``subsidiary`` event. A
  draw of a subsidiary event (``subsidiary_of``) makes its first round's games
  ``subsidiary_first_round``. It changes no game and no obligation.
* The bracket is a pure function of the draw and the games as the fold holds them
  (``bracket``): every game of the draw with a stable id (``{event}-qf-1``,
  ``{event}-sf-2``, ``{event}-final``; ``{event}-c-…`` for the consolation bracket;
  ``{event}-rr{round}-{n}`` for a round robin), its round, its kind, its two sides (a
  team, or the winner or loser of an earlier game; ``bye``: a top seed that reached it
  on a bye), and its state (``waiting`` for a side, ``ready`` to set up, ``set_up``,
  ``live``, ``ended``). A game of the draw is the game set up with its id.
* A knockout of n teams is n - 1 games on a bracket of the next power of two: seed k
  meets seed size + 1 - k in the first round, and the top seeds take the byes.
* The winner of a game is the side with more points when it ends (a 5.c(2) shootout's
  goals are goals of the game, A4). A game ended level has no winner: the game it
  feeds waits, and ``problem`` says why.
* A round robin's standings are ranked by wins, then goal difference, then goals for, then
  seed order (``TIE_BREAKS``); each row says which of them placed it (``placed_by``: the
  first on which it differs from the row above it, the first row from the row below it).
* The draw never eliminates a team: a team with no game left in the draw (beaten, or
  its last consolation game played) is a ``proposal`` for the committee to confirm
  with ``team.eliminated`` (R15 then re-judges what its players owe); an event whose
  draw is played out is a proposal to complete it.
* The rules hold a game set up with a draw's id to the draw (``check_setup``): its
  event, its kind (so that R16 follows the draw) and its two teams, either way round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

import msgspec

from ..errors import Refused
from . import events as ev
from .notices import Text
from .state import Game
from .tournaments import Tournament

__all__ = ["TIE_BREAKS", "Bracket", "DrawGame", "DrawSide", "Proposal", "Standing", "TieBreak", "bracket",
           "check_draw", "check_setup", "game_ids", "place"]

MAX_ID = 128  # a game id's length (events.Ident)

TieBreak = Literal["won", "goal_difference", "goals_for", "seed"]
#: What ranks a round robin's standings, in order (register A34).
TIE_BREAKS: tuple[TieBreak, ...] = ("won", "goal_difference", "goals_for", "seed")


class DrawSide(msgspec.Struct, kw_only=True):
    """One side of a game of the draw: a team, once known, and where it comes from."""

    team: str | None = None
    winner_of: str | None = None   # the game whose winner takes this side
    loser_of: str | None = None    # ... or whose loser does (a consolation bracket)
    bye: bool = False              # a top seed that reached this game on a bye


class DrawGame(msgspec.Struct, kw_only=True):
    game: str                      # the id it is set up with
    event: str
    bracket: Literal["main", "consolation", "round_robin"]
    round: int                     # 1 first
    name: str                      # "final", "sf", "qf", "r1", …; "rr1", … in a round robin
    kind: ev.GameKind
    home: DrawSide
    away: DrawSide
    state: Literal["waiting", "ready", "set_up", "live", "ended"] = "waiting"
    score: list[int | float] | None = None  # [home, away] as it stands (goals on handicap in), once set up
    winner: str | None = None
    loser: str | None = None
    # Why an ended game decides nothing ("tied"), or why the game set up with this id is not
    # the draw's ("teams_differ": a correction changed who won a game before it).
    problem: str | None = None


class Proposal(msgspec.Struct, kw_only=True):
    """What the draw asks the committee to confirm: never applied by itself."""

    action: Literal["eliminate", "complete"]
    event: str
    team: str | None = None
    game: str | None = None        # the game that settled it
    # "lost": beaten with no game left in the draw; "last_game": its last game in the draw
    # played (a consolation bracket's winner); "to_subsidiary": out of this event, into the
    # ``subsidiary`` one; "finished": every game of the draw is played.
    reason: Literal["lost", "last_game", "to_subsidiary", "finished"]
    subsidiary: str | None = None
    # What it asks, in English and Spanish, naming the team, the game (by its teams and
    # round) and the subsidiary event as people do (``text.proposal``).
    text: Text | None = None


class Standing(msgspec.Struct, kw_only=True):
    """One team's line in a round robin, from its games that have ended."""

    team: str
    played: int = 0
    won: int = 0
    lost: int = 0
    tied: int = 0
    goals_for: int | float = 0   # goals on handicap included (A5)
    goals_against: int | float = 0
    # The first of ``Bracket.tie_breaks`` on which this row differs from the row above it (the
    # first row: from the row below it; a table of one row: None).
    placed_by: TieBreak | None = None


class Bracket(msgspec.Struct, kw_only=True):
    """``GET /api/events/{event}/draw``: the draw and where it stands."""

    event: str
    format: Literal["knockout", "round_robin"]
    teams: list[str]
    consolation: bool
    subsidiary: str | None
    subsidiary_of: str | None
    made_by: str                   # the ``draw.made`` event's id
    at: int
    games: list[DrawGame]
    standings: list[Standing]      # a round robin's, best first (empty for a knockout)
    champion: str | None           # a knockout final's winner
    proposals: list[Proposal]
    tie_breaks: list[TieBreak] = []  # what ranks ``standings``, in order (empty for a knockout)


# ------------------------------------------------------------------ shape


def _round_name(games_in_round: int, r: int) -> str:
    return {1: "final", 2: "sf", 4: "qf"}.get(games_in_round, f"r{r}")


def _seeding(size: int) -> list[int]:
    order = [1]
    while len(order) < size:
        order = [x for seed in order for x in (seed, 2 * len(order) + 1 - seed)]
    return order


def _knockout(prefix: str, event: str, part: Literal["main", "consolation"], entrants: list[DrawSide],
              first_kind: ev.GameKind, later_kind: ev.GameKind) -> list[DrawGame]:
    """A knockout among ``entrants`` (seed order): its games, round by round."""
    n = len(entrants)
    if n < 2:
        return []
    size = 1 << (n - 1).bit_length()
    order = _seeding(size)
    # The first round's pairs: seed k v seed size + 1 - k; None where a top seed has a bye.
    pairs: list[tuple[DrawSide, DrawSide | None]] = [
        (entrants[a - 1], entrants[b - 1] if b <= n else None)
        for a, b in zip(order[::2], order[1::2], strict=True)]
    out: list[DrawGame] = []
    r = 1
    while pairs:
        name = _round_name(len(pairs), r)
        nxt: list[DrawSide] = []
        for i, (home, away) in enumerate(pairs, 1):
            if away is None:  # a bye: the top seed goes straight on
                nxt.append(msgspec.structs.replace(home, bye=True))
                continue
            gid = f"{prefix}final" if name == "final" else f"{prefix}{name}-{i}"
            out.append(DrawGame(game=gid, event=event, bracket=part, round=r, name=name,
                                kind=first_kind if r == 1 else later_kind,
                                home=msgspec.structs.replace(home), away=msgspec.structs.replace(away)))
            nxt.append(DrawSide(winner_of=gid))
        pairs = list(zip(nxt[::2], nxt[1::2], strict=True)) if len(nxt) > 1 else []
        r += 1
    return out


def _round_robin(d: ev.DrawMade, first_kind: ev.GameKind) -> list[DrawGame]:
    """Every pair once, by the circle method: the first team stays, the others turn."""
    ring: list[str | None] = [*d.teams, *([None] if len(d.teams) % 2 else [])]
    m = len(ring)
    out: list[DrawGame] = []
    for r in range(1, m):
        k = 0
        for i in range(m // 2):
            a, b = ring[i], ring[m - 1 - i]
            if a is None or b is None:
                continue
            if i == 0 and r % 2 == 0:
                a, b = b, a  # the fixed team plays away every other round
            k += 1
            out.append(DrawGame(game=f"{d.event}-rr{r}-{k}", event=d.event, bracket="round_robin", round=r,
                                name=f"rr{r}", kind=first_kind if r == 1 else "regular",
                                home=DrawSide(team=a), away=DrawSide(team=b)))
        ring = [ring[0], ring[-1], *ring[1:-1]]
    return out


def _shape(d: ev.DrawMade) -> list[DrawGame]:
    """The draw's games, feeders before the games they feed, no results yet."""
    first: ev.GameKind = "subsidiary_first_round" if d.subsidiary_of is not None else "regular"
    if d.format == "round_robin":
        return _round_robin(d, first)
    main = _knockout(f"{d.event}-", d.event, "main", [DrawSide(team=t) for t in d.teams], first, "regular")
    if not d.consolation:
        return main
    losers = [DrawSide(loser_of=g.game) for g in main if g.round == 1]
    return main + _knockout(f"{d.event}-c-", d.event, "consolation", losers, "consolation", "consolation")


def game_ids(d: ev.DrawMade) -> list[str]:
    return [g.game for g in _shape(d)]


def place(d: ev.DrawMade, game: str) -> DrawGame | None:
    """The game of the draw ``d`` set up with the id ``game`` (its round, its bracket); None."""
    return next((g for g in _shape(d) if g.game == game), None)


# ------------------------------------------------------------------ checks


def _draw_refusal(detail: str) -> Refused:
    return Refused("draw_format", detail, "L3")


def check_draw(d: ev.DrawMade, tournaments: Mapping[str, Tournament], earlier: ev.DrawMade | None,
               set_up: Callable[[str], bool]) -> None:
    """``Refused`` unless ``d`` may be made now (``set_up(game)``: a game with that id exists)."""
    if d.format == "round_robin" and (d.consolation or d.subsidiary is not None):
        raise _draw_refusal("a round robin has no first round to lose: no consolation or subsidiary")
    if d.consolation and d.subsidiary is not None:
        raise _draw_refusal("the first round's losers play a consolation bracket or a subsidiary event, "
                            "not both")
    t = tournaments.get(d.event)
    if t is None:
        raise Refused("unknown_event", f"no event {d.event!r} has been set up", "L1")
    if t.completed:
        raise Refused("event_completed", f"event {d.event!r} is completed: it is drawn no more", "L3")
    if earlier is not None and (begun := [g for g in game_ids(earlier) if set_up(g)]):
        raise Refused("already_drawn", f"event {d.event!r} is drawn and its game {begun[0]!r} is set up: "
                                       "it is drawn again only before any of its games is", "L3")
    for other in (d.subsidiary, d.subsidiary_of):
        if other == d.event:
            raise _draw_refusal(f"event {d.event!r} can't be its own subsidiary")
        if other is not None and other not in tournaments:
            raise Refused("unknown_event", f"no event {other!r} has been set up", "L1")
    if len(set(d.teams)) != len(d.teams):
        twice = next(x for x in d.teams if d.teams.count(x) > 1)
        raise Refused("duplicate_team", f"team {twice!r} is drawn twice", "L3")
    for team in d.teams:
        if team not in t.teams:
            raise Refused("unknown_team", f"team {team!r} is not entered in event {d.event!r}", "L3")
        if team in t.eliminated:
            raise Refused("already_eliminated", f"team {team!r} is already out of {d.event!r}", "L3")
    games = _shape(d)
    if d.consolation and sum(1 for g in games if g.bracket == "main" and g.round == 1) < 2:
        raise _draw_refusal(f"{len(d.teams)} teams leave fewer than two first-round losers: no "
                            "consolation bracket")
    if too_long := next((g.game for g in games if len(g.game) > MAX_ID), None):
        raise _draw_refusal(f"the game id {too_long[:40]!r}… would be longer than {MAX_ID} characters: "
                            "use a shorter event id")
    if taken := next((g.game for g in games if set_up(g.game)), None):
        raise Refused("duplicate_game", f"game {taken!r} is already set up, outside the draw", "L3")


def check_setup(e: ev.GameSetup, brackets: Mapping[str, Bracket]) -> None:
    """``Refused`` if ``e`` sets up a game of a draw otherwise than the draw says."""
    for b in brackets.values():
        g = next((x for x in b.games if x.game == e.game), None)
        if g is None:
            continue
        if e.event != g.event:
            raise Refused("draw_event", f"game {e.game!r} is a game of the draw of event {g.event!r}", "L3")
        if e.kind != g.kind:
            raise Refused("draw_kind", f"game {e.game!r} is a {g.kind} game of the draw (R16), "
                                       f"not {e.kind}", "L3")
        if g.home.team is None or g.away.team is None:
            waiting = [f"the {'winner' if s.winner_of else 'loser'} of {s.winner_of or s.loser_of}"
                       for s in (g.home, g.away) if s.team is None]
            raise Refused("draw_not_ready", f"game {e.game!r} waits for {' and '.join(waiting)}", "L3")
        teams = {e.teams.home.team, e.teams.away.team}
        if teams != {g.home.team, g.away.team}:
            raise Refused("draw_teams", f"game {e.game!r} of the draw is {g.home.team} v {g.away.team}", "L3")
        return


# ------------------------------------------------------------------ results


def _result(g: DrawGame, game: Game | None) -> None:
    """Fill ``g`` from the game set up with its id (None: not set up)."""
    if game is None:
        g.state = "ready" if g.home.team is not None and g.away.team is not None else "waiting"
        return
    g.state = "set_up" if game.status == "scheduled" else game.status
    # The score on the total, goals on handicap included (A5), in the draw's order of its sides.
    home, away = game.totals()
    g.score = [home, away] if game.home.team == g.home.team or game.away.team == g.away.team else [away, home]
    if {game.home.team, game.away.team} != {g.home.team, g.away.team}:
        g.problem = "teams_differ"
    if game.status != "ended":
        return
    if home == away:
        g.problem = "tied"
        return
    home_won = home > away
    g.winner, g.loser = ((game.home.team, game.away.team) if home_won else (game.away.team, game.home.team))


def _standings(d: ev.DrawMade, games: list[DrawGame]) -> list[Standing]:
    lines = {t: Standing(team=t) for t in d.teams}
    for g in games:
        if g.state != "ended" or g.score is None or g.problem == "teams_differ":
            continue
        for side, mine, theirs in ((g.home, g.score[0], g.score[1]), (g.away, g.score[1], g.score[0])):
            s = lines.get(side.team or "")
            if s is None:
                continue
            s.played += 1
            s.goals_for += mine
            s.goals_against += theirs
            if mine > theirs:
                s.won += 1
            elif mine < theirs:
                s.lost += 1
            else:
                s.tied += 1
    seed = {t: i for i, t in enumerate(d.teams)}

    def key(s: Standing) -> tuple[int | float, ...]:  # TIE_BREAKS' figures, the best first
        return -s.won, -(s.goals_for - s.goals_against), -s.goals_for, seed[s.team]

    rows = sorted(lines.values(), key=key)
    for i, s in enumerate(rows):
        if len(rows) > 1:
            here, there = key(s), key(rows[i - 1] if i else rows[1])
            s.placed_by = next(t for t, a, b in zip(TIE_BREAKS, here, there, strict=True) if a != b)
    return rows


def _proposals(d: ev.DrawMade, t: Tournament, games: list[DrawGame]) -> list[Proposal]:
    if t.completed:
        return []
    out: list[Proposal] = []
    if d.format == "knockout":
        # A team still has a game in the draw while a game not yet ended has its side, or
        # will (a side that is to be its winner's or loser's).
        still: set[str] = set()
        for g in games:
            if g.state != "ended":
                still.update(s.team for s in (g.home, g.away) if s.team is not None)
        for g in games:
            if g.state != "ended" or g.winner is None or g.loser is None:
                continue
            fed = [s for x in games for s in (x.home, x.away) if g.game in (s.winner_of, s.loser_of)]
            for team, took in ((g.loser, "loser_of"), (g.winner, "winner_of")):
                if team in still or team in t.eliminated or any(getattr(s, took) == g.game for s in fed):
                    continue
                if team == g.winner and g.bracket == "main":
                    continue  # the champion: the event completes
                reason: Literal["lost", "last_game", "to_subsidiary"] = (
                    "last_game" if team == g.winner else
                    "to_subsidiary" if d.subsidiary is not None and g.bracket == "main" and g.round == 1
                    else "lost")
                out.append(Proposal(action="eliminate", event=d.event, team=team, game=g.game, reason=reason,
                                    subsidiary=d.subsidiary if reason == "to_subsidiary" else None))
    done = all(g.state == "ended" and (g.winner is not None or d.format == "round_robin") for g in games)
    if done:
        out.append(Proposal(action="complete", event=d.event, reason="finished"))
    return out


def bracket(d: ev.DrawMade, t: Tournament, game_of: Callable[[str], Game | None]) -> Bracket:
    """The draw ``d`` of tournament ``t`` as it stands, ``game_of(id)`` giving the games set up."""
    games = _shape(d)
    outcome: dict[str, tuple[str | None, str | None]] = {}
    for g in games:  # feeders come first
        for side in (g.home, g.away):
            if side.winner_of is not None:
                side.team = outcome.get(side.winner_of, (None, None))[0]
            elif side.loser_of is not None:
                side.team = outcome.get(side.loser_of, (None, None))[1]
        game = game_of(g.game)
        _result(g, game if game is not None and game.event == d.event else None)
        outcome[g.game] = (g.winner, g.loser)
    final = next((g for g in games if g.bracket == "main" and g.name == "final"), None)
    return Bracket(event=d.event, format=d.format, teams=list(d.teams), consolation=d.consolation,
                   subsidiary=d.subsidiary, subsidiary_of=d.subsidiary_of, made_by=d.id, at=d.at,
                   games=games, standings=_standings(d, games) if d.format == "round_robin" else [],
                   champion=final.winner if final is not None and d.format == "knockout" else None,
                   proposals=_proposals(d, t, games),
                   tie_breaks=list(TIE_BREAKS) if d.format == "round_robin" else [])
