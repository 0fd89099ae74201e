"""A game's broadcast graphics, as the overlay control page drives them
(docs/protocol-viewer.md, "Broadcast graphics").

An operator's page sends ``graphics`` commands on ``/ws/watch`` (take, hide or replay the
score bug, the box panel or a lower third; queue or skip lower thirds; switch the language
or the rule citation). Each game's state is one small immutable ``GraphicsState``, kept here
in memory with its frame encoded once; every command that is valid replaces it whole, and
the fan-out sends the new one to every viewer of the game's graphics. Everything is
bounded: states only of games that are set up, at most ``MAX_QUEUE`` lower thirds queued,
each holding only the notices of one event. Nothing here awaits or starts a task.

The state is per node: it is not in the log or the store. Overlays and their control page
must be connected to the same node (docs/protocol-viewer.md says so).
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from ...errors import AuthError, ProtocolError
from ...rules.engine import Engine
from ...rules.notices import Notice
from ..hub.feeds import Feeds, Frames
from ..wire import auth
from ..wire import protocol as pr

#: Lower thirds queued for one game, at most.
MAX_QUEUE = 8
#: How far back (deltas of the game) an event may be to be made a lower third.
LOOKBACK = 64
#: The notices a lower third is made of (the overlay composes its words from them).
LOWER_TYPES = frozenset({"card.recorded", "box.enter", "box.eligible", "box.release", "sent_off",
                         "sub.allowed", "mount.deadline", "goal.scored", "penalty.awarded"})
#: The roles whose tokens may control a game's graphics (within their scope).
CONTROL_ROLES = frozenset({"display", "committee", "admin"})


def may_control(engine: Engine, claims: auth.Claims | None, game: str) -> None:
    """Refuse (``AuthError``) a socket that may not control ``game``'s graphics: an anonymous
    one, an official's token, or a token whose scope is another game, arena or event."""
    if claims is None:
        raise AuthError("auth_required", "controlling the graphics needs a display, committee or admin "
                                         "token: send an auth frame first")
    if claims.role not in CONTROL_ROLES:
        raise AuthError("forbidden", f"a {claims.role} token may not control the graphics")
    if claims.role == "committee":
        if engine.event_of(game) != claims.event:
            raise AuthError("out_of_scope", f"this committee token is for event {claims.event!r}")
        return
    auth.check_scope(claims, game, engine.arena_of(game))


def _initial(game: str) -> pr.GraphicsState:
    return pr.GraphicsState(
        game=game, version=0, lang="en", cite=False,
        bug=pr.GraphicOn(on=True, take=0), box=pr.GraphicOn(on=True, take=0),
        lower=pr.LowerState(on_air=None, take=0, queue=[], last=None), by=None, at=None)


@dataclass(slots=True)
class _Game:
    state: pr.GraphicsState
    frames: Frames
    next_id: int = 1


def _tag(n: Notice) -> str:
    return str(type(n).__struct_config__.tag)


def _notices_of(feeds: Feeds, game: str, cause: str) -> list[Notice]:
    """The notices of ``cause`` that a lower third shows (a card's and, later, its box trip's):
    in the game's last ``LOOKBACK`` deltas, else among its latest notices."""
    feed = feeds[game]
    found = [n for frames in feed.deltas[-LOOKBACK:] for n in frames.msg.notices if n.cause == cause]
    if not found:
        found = [n for n in feed.recent if n.cause == cause]
    return [n for n in found if _tag(n) in LOWER_TYPES]


class Board:
    """Every game's graphics state on this node, by game id (only games that are set up)."""

    def __init__(self) -> None:
        self._games: dict[str, _Game] = {}

    def _game(self, game: str) -> _Game:
        g = self._games.get(game)
        if g is None:
            state = _initial(game)
            g = self._games[game] = _Game(state, Frames.of(state))
        return g

    def frames(self, game: str) -> Frames:
        """The game's state as a frame, encoded once."""
        return self._game(game).frames

    def state(self, game: str) -> pr.GraphicsState:
        return self._game(game).state

    def execute(self, feeds: Feeds, cmd: pr.Graphics, by: str, at: int) -> Frames:
        """Apply one command (the game is set up, the sender may control it): the new state's
        frame; or ``ProtocolError`` and nothing changed."""
        g = self._game(cmd.game)
        s = g.state
        changes: dict[str, object]
        if cmd.action in ("take", "hide", "replay"):
            if cmd.graphic is None:
                raise ProtocolError("invalid_graphics", f"{cmd.action} needs a graphic: bug, box or lower")
            if cmd.graphic == "lower":
                changes = self._lower(g, feeds, cmd)
            else:
                now: pr.GraphicOn = getattr(s, cmd.graphic)
                if cmd.action == "hide":
                    new = pr.GraphicOn(on=False, take=now.take)
                elif cmd.action == "take" and now.on:
                    new = now                                   # on air already: no new entrance
                else:
                    new = pr.GraphicOn(on=True, take=now.take + 1)
                changes = {cmd.graphic: new}
        elif cmd.action == "queue":
            if len(s.lower.queue) >= MAX_QUEUE:
                raise ProtocolError("queue_full", f"{MAX_QUEUE} lower thirds are queued already: "
                                                  "take or skip one first")
            item = self._item(g, feeds, cmd)
            changes = {"lower": msgspec.structs.replace(s.lower, queue=[*s.lower.queue, item])}
        elif cmd.action == "skip":
            queue = s.lower.queue
            if not queue:
                raise ProtocolError("nothing_queued", "no lower third is queued")
            skipped = next((q for q in queue if q.id == cmd.item), None) if cmd.item else queue[0]
            if skipped is None:
                raise ProtocolError("nothing_queued", f"lower third {cmd.item} is not queued")
            rest = [q for q in queue if q is not skipped]
            changes = {"lower": msgspec.structs.replace(s.lower, queue=rest)}
        elif cmd.action == "lang":
            if cmd.lang is None:
                raise ProtocolError("invalid_graphics", "lang needs a lang: en or es")
            changes = {"lang": cmd.lang}
        else:  # cite
            if cmd.cite is None:
                raise ProtocolError("invalid_graphics", "cite needs cite: true or false")
            changes = {"cite": cmd.cite}
        g.state = msgspec.structs.replace(s, **changes, version=s.version + 1, by=by, at=at)
        g.frames = Frames.of(g.state)
        return g.frames

    def _item(self, g: _Game, feeds: Feeds, cmd: pr.Graphics) -> pr.LowerThird:
        if cmd.cause is None:
            raise ProtocolError("invalid_graphics", f"{cmd.action} needs the cause: the event's log id")
        notices = _notices_of(feeds, cmd.game, cmd.cause)
        if not any((cmd.player is None or getattr(n, "player", None) == cmd.player)
                   and (cmd.notice is None or _tag(n) == cmd.notice) for n in notices):
            raise ProtocolError("unknown_cause", f"no lower third can be made of {cmd.cause!r}"
                                + (f" for {cmd.player!r}" if cmd.player else "")
                                + (f" of {cmd.notice!r}" if cmd.notice else "")
                                + f": it is not among game {cmd.game!r}'s latest events")
        item = pr.LowerThird(id=g.next_id, cause=cmd.cause, player=cmd.player, notice=cmd.notice,
                             notices=notices)
        g.next_id += 1
        return item

    def _lower(self, g: _Game, feeds: Feeds, cmd: pr.Graphics) -> dict[str, object]:
        lower = g.state.lower
        if cmd.action == "hide":
            return {"lower": msgspec.structs.replace(lower, on_air=None)}
        if cmd.action == "replay":
            if lower.last is None:
                raise ProtocolError("nothing_aired", "no lower third has been on air yet")
            return {"lower": msgspec.structs.replace(lower, on_air=lower.last, take=lower.take + 1)}
        queue = lower.queue
        if cmd.cause is not None:                     # straight to air, past the queue
            item = self._item(g, feeds, cmd)
        elif queue:
            item, queue = queue[0], queue[1:]
        else:
            raise ProtocolError("nothing_queued", "no lower third is queued: queue one, or name its cause")
        return {"lower": pr.LowerState(on_air=item, take=lower.take + 1, queue=list(queue), last=item)}
