"""The public documents built from the fold and each game's feed: what is public, and how
a game, an event and a team are shown. One owner for "is this public": ``shown``.

Everything is read from the engine's read-only face and the feeds' views, in memory: a
page costs no store read. Times are the log's (ms since the epoch); ``now`` is the node's
wall clock, passed in."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from urllib.parse import quote

import msgspec
import segno

from ...rules.draw import Bracket
from ...rules.engine import Engine
from ...rules.timing import GameTimes
from ...rules.tournaments import Tournament
from ...rules.view import GameView
from ..wire.public_types import Clock, EventCard, EventPage, Front, GameCard, Player, Side, Status, TeamPage

UTC = "UTC"


def readable(ident: str) -> str:
    """An id as words where nothing is registered: "aiken-arena" -> "Aiken Arena"."""
    return " ".join(w.capitalize() for w in ident.replace("_", "-").split("-") if w) or ident


def timezone(t: Tournament | None) -> str:
    return (t.timezone if t is not None else None) or UTC


class Public:
    """The public face of one node's state: built per request from what it holds."""

    def __init__(self, engine: Engine, views: Mapping[str, GameView | None], base_url: str, now: int) -> None:
        self.engine, self.base_url, self.now = engine, base_url.rstrip("/"), now
        self.by_game = views

    # ------------------------------------------------------------ what is public

    def shown(self, game: str) -> bool:
        """A game is public once set up, unless its event is private."""
        event = self.engine.event_of(game)
        return self.by_game.get(game) is not None and not (event and self.engine.private(event))

    def views(self) -> list[GameView]:
        return [v for gid, v in self.by_game.items() if v is not None and self.shown(gid)]

    def events(self) -> list[str]:
        """Every public event: each set-up tournament not kept private, and the event of each
        public game (a Club game's event need not be set up)."""
        out = {t.id for t in self.engine.tournaments_all() if not self.engine.private(t.id)}
        out.update(v.event for v in self.views())
        return sorted(out)

    # ------------------------------------------------------------ a game

    def side(self, game: str, view: GameView, which: str) -> Side:
        roster = self.engine.roster(game)
        team = view.teams.home.team if which == "home" else view.teams.away.team
        entry = roster.home if which == "home" else roster.away
        colors = roster.kits.get(which) or (entry.colors if entry is not None else None)
        return Side(team=team, name=entry.name if entry else readable(team),
                    short=(entry.short if entry else team[:3]).upper(), colors=colors,
                    url=f"/teams/{quote(team)}")

    def card(self, view: GameView, rounds: dict[str, str], times: Mapping[str, GameTimes]) -> GameCard:
        g = view.game
        roster = self.engine.roster(g)
        c = view.clock
        status: Status = "ended" if view.status == "ended" else "scheduled" if view.status == "scheduled" \
            else "live"
        return GameCard(
            game=g, event=view.event, arena=view.arena, kind=view.kind, round=rounds.get(g),
            home=self.side(g, view, "home"), away=self.side(g, view, "away"), status=status,
            score=view.score, goals_on_handicap=view.goals_on_handicap,
            clock=Clock(running=c.running, period=c.period, periods=c.periods, remaining_ms=c.remaining_ms,
                        at=c.at, overtime=c.overtime),
            planned_start=roster.schedule.starts_at if roster.schedule is not None else None,
            box=sum(1 for p in view.players if p.box is not None),
            sent_off=sum(1 for p in view.players if p.sent_off),
            report=f"/games/{quote(g)}/public",
            # register A35: a game not begun on an arena that runs late, and when to expect it
            # (to the minute, as the page says it: the data changes when what it says does)
            expected_start=(-(-t.expected_start // 60_000) * 60_000 if (t := times.get(g)) is not None
                            and status == "scheduled" and t.late else None),
            late=t is not None and status == "scheduled" and t.late)

    def rounds(self, event: str) -> dict[str, str]:
        d = self.engine.draw(event)
        return {} if d is None else {g.game: g.name for g in d.games}

    def cards(self, views: list[GameView]) -> list[GameCard]:
        """In the order of play: by planned start (games with none after), then arena, then id."""
        rounds: dict[str, dict[str, str]] = {}
        times = {t.game: t for t in self.engine.expected_times(self.now)} if views else {}
        out = [self.card(v, rounds.setdefault(v.event, self.rounds(v.event)), times) for v in views]
        return sorted(out, key=lambda c: (c.planned_start is None, c.planned_start or 0, c.arena, c.game))

    def event_name(self, event: str) -> str:
        """As displays name it; an event with no name set, by its id made readable."""
        name = self.engine.event_named(event)
        return readable(name) if name == event else name

    # ------------------------------------------------------------ pages

    def front_doc(self) -> Front:
        cards = self.cards(self.views())
        events = [self.event_card(e, [c for c in cards if c.event == e]) for e in self.events()]
        upcoming: dict[str, GameCard] = {}
        for c in cards:
            if c.status == "scheduled":
                upcoming.setdefault(c.arena, c)
        return Front(events=events, live=[c for c in cards if c.status == "live"],
                     next=sorted(upcoming.values(), key=lambda c: c.arena))

    def event_card(self, event: str, cards: list[GameCard]) -> EventCard:
        starts = [c.planned_start for c in cards if c.planned_start is not None]
        return EventCard(event=event, name=self.event_name(event), url=f"/events/{quote(event)}",
                         timezone=timezone(self.engine.tournament(event)),
                         arenas=sorted({c.arena for c in cards}), first_start=min(starts, default=None),
                         last_start=max(starts, default=None), games=len(cards),
                         live=sum(1 for c in cards if c.status == "live"))

    def event_doc(self, event: str) -> EventPage | None:
        """None: no such public event."""
        if event not in self.events():
            return None
        cards = self.cards([v for v in self.views() if v.event == event])
        draw = self.engine.draw(event)
        url = f"{self.base_url}/events/{quote(event)}"
        return EventPage(event=event, name=self.event_name(event),
                         timezone=timezone(self.engine.tournament(event)), games=cards,
                         draw=None if draw is None else public_draw(draw),
                         results=sorted((c for c in cards if c.status == "ended"),
                                        key=lambda c: (c.planned_start or 0, c.game), reverse=True),
                         qr=qr_svg(url))

    def team_doc(self, team: str) -> TeamPage | None:
        """None: no such team, or none of its games is public and it is registered in no public event."""
        entry = self.engine.team(team)
        cards = [c for c in self.cards(self.views()) if team in (c.home.team, c.away.team)]
        in_public = any(team in (t.teams or []) for t in self.engine.tournaments_all()
                        if not self.engine.private(t.id))
        if entry is None and not cards:
            return None
        if not cards and not in_public:
            return None
        players = sorted((p for p in self.engine.players() if p.team == team),
                         key=lambda p: (p.number is None, p.number or 0, p.name))
        known = [p.handicap for p in players]
        return TeamPage(team=team, name=entry.name if entry else readable(team),
                        short=(entry.short if entry else team[:3]).upper(),
                        colors=entry.colors if entry else None, logo=entry.logo if entry else None,
                        handicap=sum(h for h in known if h is not None) if known and None not in known
                        else None,
                        players=[Player(player=p.player, name=p.name, number=p.number, handicap=p.handicap)
                                 for p in players],
                        games=cards, next=next((c for c in cards if c.status != "ended"), None))


def public_draw(d: Bracket) -> Bracket:
    """The draw as the public sees it: without the committee's proposals."""
    return msgspec.structs.replace(d, proposals=[])


@functools.lru_cache(maxsize=256)
def qr_svg(url: str) -> str:
    """The QR code of ``url`` as inline SVG, made once per address (a page's address changes
    only with ``--public-url``: making it is most of a page's render)."""
    return str(segno.make(url, error="m").svg_inline(scale=4, dark="#141a24", light="#ffffff"))
