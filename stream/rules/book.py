"""The carry-over ledger as the fold keeps it (R6, R9-R16): every player's
obligations in serving order, the committee's decisions on them, and the
bookkeeping of which game takes what. ``ledger.py`` says what an obligation
is and which game qualifies; this module keeps them.

Everything here changes only through the engine's fold, and every change
comes back as the notices that announce it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from ..errors import Refused
from . import events as ev
from . import ledger as lg
from . import notices as nt
from .clock import play_at
from .state import Game

#: A committee's decision on one obligation: ("decrease", owed_ms), or ("rescind", owed_ms as it
#: stood then); who, when and why are in ``Book.decreases`` and ``Book.rescinds``.
Decision = tuple[str, int]
#: What a game's end implies (new) against what the ledger had from it (old).
Derived = tuple[list[lg.Obligation], list[lg.Obligation]]


def _closed(o: lg.Obligation) -> bool:
    """A game has begun serving it: it is part of that game's record (R16)."""
    return o.status in ("serving", "served")


def _notice(cls: Any, o: lg.Obligation, cause: str, at: int, game: str, clause: str | None = None,
            **extra: Any) -> Any:
    return cls(cause=cause, at=at, game=game, clause=clause or o.clause, player=o.player,
               obligation=o.id, kind=o.kind, owed_ms=o.owed_ms, origin_game=o.origin_game, **extra)


class Book:
    def __init__(self, ledger: dict[str, list[lg.Obligation]] | None = None,
                 sources: dict[str, int] | None = None,
                 decisions: dict[str, Decision] | None = None,
                 withdrawn: dict[str, str] | None = None,
                 decreases: dict[str, lg.Decrease] | None = None,
                 rescinds: dict[str, lg.Decision] | None = None) -> None:
        self.ledger: dict[str, list[lg.Obligation]] = {} if ledger is None else ledger  # player -> in order
        # A game (when it first ended) or an increase -> its turn: the serving order across games.
        self.sources: dict[str, int] = {} if sources is None else sources
        # Obligation id -> the committee's decision, kept so that deriving a game's
        # obligations again (after a correction) keeps it too.
        self.decisions: dict[str, Decision] = {} if decisions is None else decisions
        # A rescinded obligation's id -> the tournament event of its origin game: who may
        # read its rescind (a committee runs one event), even once a correction of its
        # origin game has taken it out of the ledger.
        self.withdrawn: dict[str, str] = {} if withdrawn is None else withdrawn
        # A decreased obligation's id -> who decreased it, when, why, and from what.
        self.decreases: dict[str, lg.Decrease] = {} if decreases is None else decreases
        # A rescinded obligation's id -> who rescinded it, when and why. A rescinded
        # obligation stays in the ledger (status ``rescinded``): no game takes it.
        self.rescinds: dict[str, lg.Decision] = {} if rescinds is None else rescinds
        # Team -> the players who have owed it something: where a game looks for what its
        # teams' unlisted players owe (R13). Derived from the ledger.
        self.by_team: dict[str, set[str]] = {}
        self.reindex()

    def reindex(self) -> None:
        self.by_team = {}
        for obs in self.ledger.values():
            for o in obs:
                self.by_team.setdefault(o.team, set()).add(o.player)

    # ------------------------------------------------------------- reading

    def of(self, player: str) -> list[lg.Obligation]:
        return list(self.ledger.get(player, ()))

    def all(self, *, status: str | None = None, origin_game: str | None = None) -> list[lg.Obligation]:
        return [o for obs in self.ledger.values() for o in obs
                if (status is None or o.status == status)
                and (origin_game is None or o.origin_game == origin_game)]

    def find(self, oid: str) -> lg.Obligation:
        for obs in self.ledger.values():
            for o in obs:
                if o.id == oid:
                    if o.rescinded is not None:
                        r = o.rescinded
                        raise Refused("unknown_obligation", f"obligation {oid!r} was rescinded by {r.by} "
                                      f"({r.reason}): nothing is owed", "R16")
                    return o
        raise Refused("unknown_obligation", f"no obligation {oid!r} is owed", "R16")

    def plan(self, g: Game, info: lg.GameInfo) -> list[lg.Obligation]:
        """What ``g`` would take if it began now: its listed players' obligations,
        then its teams' unlisted players'."""
        teams = self.by_team.get(g.home.team, set()) | self.by_team.get(g.away.team, set())
        return lg.plan(self.ledger, g, info, sorted(teams - g.players.keys()))

    def taken_by(self, g: Game) -> list[lg.Obligation]:
        """What ``g`` took when it began, in the order it took them."""
        out: list[lg.Obligation] = []
        for c in g.carried:
            out.extend(o for o in self.ledger.get(c.player, ()) if o.id == c.id)
        return out

    # ------------------------------------------------- a game begins with them

    @staticmethod
    def applied_notices(g: Game, cause: str, at: int, taken: list[lg.Obligation]) -> list[nt.Notice]:
        out: list[nt.Notice] = []
        for ob in taken:
            out.append(_notice(nt.ObligationApplied, ob, cause, at, g.id))
            if ob.kind == "sit_out":
                p = g.players.get(ob.player)
                side: ev.Side = p.side if p is not None else ("home" if g.home.team == ob.team else "away")
                out.append(nt.BoxEnter(cause=cause, at=at, game=g.id, clause=ob.clause, player=ob.player,
                                       side=side, owed_ms=ob.owed_ms, kind="carried"))
        return out

    @staticmethod
    def mark(taken: list[lg.Obligation], game: str | None) -> None:
        """``game`` serves them from now; None: no game does (the one that began was undone)."""
        status: Literal["pending", "serving"] = "pending" if game is None else "serving"
        for ob in taken:
            ob.status, ob.applied_in = status, game

    # ----------------------------------------------------- a game ends with them

    def _decided(self, o: lg.Obligation) -> lg.Obligation:
        """``o`` as the committee's decisions leave it: decreased, rescinded (kept, marked)."""
        d = self.decisions.get(o.id)
        if d is None:
            return o
        dec = self.decreases.get(o.id)
        if dec is not None:
            o.decreased = dec
            o.owed_ms = d[1]
            if o.kind == "sit_out":
                o.severity = d[1]
        r = self.rescinds.get(o.id)
        if r is not None:
            o.status, o.rescinded = "rescinded", r
        return o

    def check(self, g: Game, any_team: dict[str, bool], event_class: str, at: int) -> Derived:
        """The game's obligations as its state now implies, and the ones it had.
        Refuses (``record_closed``) a change to one a game that has begun already serves."""
        old = [o for pid in g.players for o in self.ledger.get(pid, ())
               if o.origin_game == g.id and o.by is None]
        new: list[lg.Obligation] = []
        if g.status == "ended":
            play_end = play_at(g.clock, g.period_ms, g.ended_at or at)
            derived = lg.derive(g, g.ended_by or g.id, play_end, event_class, any_team)
            new = [self._decided(o) for o in derived]
            turn = self.sources.setdefault(g.id, len(self.sources))
            for i, o in enumerate(new):
                o.order = turn * 1000 + i
        fresh = {o.id: o for o in new}
        for o in old:
            if _closed(o):
                n = fresh.get(o.id)
                if n is None or (n.kind, n.owed_ms) != (o.kind, o.owed_ms):
                    raise Refused("record_closed", f"game {o.applied_in!r} has already begun serving "
                                  f"{o.player!r}'s {o.kind} from this game; the committee corrects it",
                                  "R16")
        return new, old

    def commit(self, g: Game, derived: Derived, at: int) -> list[nt.Notice]:
        """Keep what ``check`` found; and what ``g`` serves is served once it has ended."""
        new, old = derived
        out: list[nt.Notice] = []
        kept = {o.id for o in old if _closed(o)}
        new_ids = {o.id for o in new}
        old_ids = {o.id for o in old}
        for o in old:
            if not _closed(o):
                self.ledger[o.player].remove(o)
                if o.id not in new_ids and o.status == "pending":  # (a rescinded one was withdrawn then)
                    out.append(_notice(nt.ObligationWithdrawn, o, o.cause, at, g.id))
        for o in new:
            if o.id not in kept:
                self.by_team.setdefault(o.team, set()).add(o.player)
                self.ledger.setdefault(o.player, []).append(o)
                self.ledger[o.player].sort(key=lambda x: x.order)
                if o.id not in old_ids and o.status == "pending":
                    out.append(_notice(nt.ObligationCreated, o, o.cause, at, g.id))
        for c in g.carried:
            for o in self.ledger.get(c.player, ()):
                if o.id == c.id:
                    if g.status == "ended" and o.status != "served":
                        out.append(_notice(nt.ObligationServed, o, o.cause, at, g.id))
                    o.status = "served" if g.status == "ended" else "serving"
        return out

    # ------------------------------------------------- the committee's decisions

    def increase(self, e: ev.CommitteeIncrease, g: Game, event_class: str,
                 any_team: dict[str, bool]) -> list[nt.Notice]:
        """R6: "This penalty may be increased": more games, or a sit-out, for a player
        of the ended game ``g``."""
        p = g.players.get(e.player)
        if p is None:
            raise Refused("unknown_player", f"{e.player!r} did not play in {g.id!r}", "A3")
        if e.games == 0 and e.sit_out_ms == 0:
            raise Refused("nothing_to_add", "an increase adds games or a sit-out", "R6")
        base: dict[str, Any] = dict(
            player=p.id, origin_game=g.id, origin_event=g.event, origin_class=event_class,
            handicap=g.handicap, team=g.team(p.side).team, any_team=any_team[p.side], postgame=True,
            by=e.by, reason=e.reason, cause=e.id, clause="R6",
            increased=lg.Decision(by=e.by, reason=e.reason, cause=e.id, at=e.at))
        turn = self.sources.setdefault(e.id, len(self.sources)) * 1000
        added = [lg.Obligation(id=f"{e.id}:{p.id}:suspension:{n}", kind="suspension", owed_ms=0,
                               severity=lg.FULL, order=turn + n, **base)
                 for n in range(e.games)]
        if e.sit_out_ms:
            added.append(lg.Obligation(id=f"{e.id}:{p.id}:sit_out", kind="sit_out",
                                       owed_ms=e.sit_out_ms, severity=e.sit_out_ms,
                                       order=turn + 999, **base))
        self.ledger.setdefault(p.id, []).extend(added)
        self.by_team.setdefault(added[0].team, set()).add(p.id)
        return [_notice(nt.ObligationCreated, o, e.id, e.at, g.id, "R6") for o in added]

    def _pending(self, oid: str) -> lg.Obligation:
        o = self.find(oid)
        if o.status != "pending":
            raise Refused("record_closed", f"game {o.applied_in!r} has already begun serving {o.id!r}",
                          "R16")
        return o

    def rescind(self, e: ev.CommitteeRescind) -> list[nt.Notice]:
        """The obligation stays in the ledger, marked ``rescinded`` with who, when and why:
        no game takes it, and a correction of its origin game keeps it rescinded."""
        o = self._pending(e.obligation)
        self.decisions[o.id] = ("rescind", o.owed_ms) if o.decreased is None else self.decisions[o.id]
        self.rescinds[o.id] = lg.Decision(by=e.by, reason=e.reason, cause=e.id, at=e.at)
        self.withdrawn[o.id] = o.origin_event
        self._decided(o)
        return [_notice(nt.ObligationWithdrawn, o, e.id, e.at, o.origin_game)]

    def decrease(self, e: ev.CommitteeDecrease) -> list[nt.Notice]:
        o = self._pending(e.obligation)
        if o.kind == "yellow_status" or (o.kind == "suspension" and o.owed_ms == 0):
            raise Refused("not_decreasable", f"{o.id!r} owes no play time to decrease; "
                          "the committee rescinds it instead", "R6")
        if e.owed_ms >= o.owed_ms or (o.kind == "sit_out" and e.owed_ms == 0):
            raise Refused("not_a_decrease", f"{o.id!r} owes {o.owed_ms} ms of play: a decrease "
                          "owes less (a sit-out, more than none)", "R6")
        self.decisions[o.id] = ("decrease", e.owed_ms)
        self.decreases[o.id] = lg.Decrease(by=e.by, reason=e.reason, cause=e.id, at=e.at, from_ms=o.owed_ms)
        self._decided(o)
        return [_notice(nt.ObligationUpdated, o, e.id, e.at, o.origin_game, any_team=o.any_team,
                        by=e.by, reason=e.reason)]

    def rejudge(self, e: ev.EventBase, no_further_event: Callable[[str, int], bool]) -> list[nt.Notice]:
        """R15 after an event completes or a team is eliminated: what a team left in no
        uncompleted event of equal or higher handicap still owes, it serves with any team."""
        out: list[nt.Notice] = []
        for obs in self.ledger.values():
            for o in obs:
                if o.status == "pending" and not o.any_team and no_further_event(o.team, o.handicap):
                    o.any_team = True
                    out.append(_notice(nt.ObligationUpdated, o, e.id, e.at, o.origin_game, "R15",
                                       any_team=True))
        return out
