"""Device tokens: signed, scoped to a role and to one game or one arena, with an expiry.

A token is ``v1.<payload>.<signature>``: the payload is the claims as JSON,
base64url-encoded; the signature is HMAC-SHA256 over ``v1.<payload>`` with
the service's secret, in unpadded base64url: that spelling alone, so one token
has one fingerprint (padded, in ``+/``, or with unused bits set: ``bad_token``).
Tokens travel only in the first WebSocket message or in an ``Authorization: Bearer``
header, never in a URL, and never appear in the service's logs (``fingerprint`` names a token safely).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Any, Literal, Protocol

import msgspec

from ...errors import AuthError, MalformedEvent, Refused

Role = Literal["umpire", "referee", "timekeeper", "display", "committee", "admin"]

#: What each role may send, by event type (docs/protocol.md, "Tokens and roles").
ROLE_EVENTS: dict[str, frozenset[str]] = {
    "umpire": frozenset({
        "whistle", "goal", "card", "card.amended", "box.left_early", "arena.left", "substitution",
        "mount.removed", "mount.replaced", "postgame.card", "void", "game.end"}),
    "timekeeper": frozenset({"clock.start", "clock.stop", "horn", "game.end", "void"}),
    "display": frozenset(),
}
ROLE_EVENTS["referee"] = ROLE_EVENTS["umpire"]
#: What only an *unscoped* admin token, or a committee token within its event, may send:
#: setting up tournament events and games, rosters, and the committee's decisions. None is
#: one game's, so no game or arena scope can hold it.
UNSCOPED_EVENTS = frozenset({
    "event.setup", "event.complete", "team.eliminated", "draw.made", "game.setup",
    "team.registered", "player.registered",
    "committee.increase", "committee.rescind", "committee.decrease", "game.scheduled", "game.handicap"})
ROLE_EVENTS["admin"] = ROLE_EVENTS["umpire"] | ROLE_EVENTS["timekeeper"] | UNSCOPED_EVENTS
#: A committee runs one tournament event: it sets it up, corrects it and decides on it.
ROLE_EVENTS["committee"] = ROLE_EVENTS["admin"]
#: The device roles a committee token may mint, each scoped to one game of its event.
COMMITTEE_MINTS = frozenset({"umpire", "referee", "timekeeper", "display"})
#: The only events a timekeeper may void: its own kind.
TIMEKEEPER_VOIDABLE = frozenset({"clock.start", "clock.stop", "horn"})


class Claims(msgspec.Struct, frozen=True, kw_only=True):
    sub: str                      # the device
    role: Role
    exp: int                      # expiry, Unix seconds
    jti: str                      # the token's own id, for revocation
    official: str = ""            # the person holding the device
    game: str | None = None       # scope: one game ...
    arena: str | None = None      # ... or one arena; neither: every game (admin only)
    event: str | None = None      # a committee's: the tournament event it runs


_enc = msgspec.json.Encoder()
_dec = msgspec.json.Decoder(Claims)


def _b64(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def _unb64(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def new_secret() -> bytes:
    return secrets.token_bytes(32)


def _scope_problem(role: str, game: str | None, arena: str | None, event: str | None) -> str | None:
    if role == "committee":
        if event is None or game is not None or arena is not None:
            return "a committee token is scoped to one tournament event (and no game or arena)"
    elif event is not None:
        return "only a committee token is scoped to a tournament event"
    elif role != "admin" and game is None and arena is None:
        return "a device token is scoped to one game or one arena"
    return None


def issue(secret: bytes, *, sub: str, role: Role, exp: int, official: str = "",
          game: str | None = None, arena: str | None = None,
          event: str | None = None) -> tuple[str, Claims]:
    problem = _scope_problem(role, game, arena, event)
    if problem is not None:
        raise AuthError("unscoped", problem)
    claims = Claims(sub=sub, role=role, exp=exp, jti=secrets.token_hex(8), official=official,
                    game=game, arena=arena, event=event)
    body = "v1." + _b64(_enc.encode(claims))
    sig = hmac.new(secret, body.encode(), hashlib.sha256).digest()
    return f"{body}.{_b64(sig)}", claims


def verify(secret: bytes, token: str, *, now_s: float, revoked: set[str] | frozenset[str]) -> Claims:
    """The token's claims, or ``AuthError`` (``bad_token``, ``expired``, ``revoked``)."""
    try:
        version, payload, sig = token.split(".")
        if version != "v1":
            raise ValueError
        expected = _b64(hmac.new(secret, f"v1.{payload}".encode(), hashlib.sha256).digest())
        if not hmac.compare_digest(expected.encode(), sig.encode()):  # the one spelling
            raise ValueError
        claims = _dec.decode(_unb64(payload))
    except (ValueError, msgspec.DecodeError):
        raise AuthError("bad_token", "the token is not one this service signed") from None
    problem = _scope_problem(claims.role, claims.game, claims.arena, claims.event)
    if problem is not None:
        # ``issue`` never signs one; refused all the same rather than taken as "every game"
        raise AuthError("bad_token", problem)
    if claims.exp <= now_s:
        raise AuthError("expired", "the token has expired; ask the committee for a new one")
    if claims.jti in revoked:
        raise AuthError("revoked", "the token has been revoked")
    return claims


def fingerprint(token: str) -> str:
    """A short, safe name for a token in logs."""
    return hashlib.sha256(token.encode()).hexdigest()[:12]


def check_scope(claims: Claims, game: str | None, arena: str | None) -> None:
    """Refuse a game outside the token's scope."""
    if claims.game is not None and claims.game != game:
        raise AuthError("out_of_scope", f"this token is for game {claims.game!r}, not {game!r}")
    if claims.arena is not None and claims.arena != arena:
        raise AuthError("out_of_scope", f"this token is for arena {claims.arena!r}")


def check_event_scope(claims: Claims, event: str) -> None:
    """Refuse every game of a tournament event to a token scoped to one game or one arena:
    a scope does not widen itself to an event."""
    if claims.game is not None:
        raise AuthError("out_of_scope", f"this token is for game {claims.game!r}, not event {event!r}")
    if claims.arena is not None:
        raise AuthError("out_of_scope", f"this token is for arena {claims.arena!r}, not event {event!r}")


def check_may_send(claims: Claims, event_type: str) -> None:
    if event_type not in ROLE_EVENTS[claims.role]:
        raise AuthError("forbidden", f"a {claims.role} may not send {event_type}")


class Games(Protocol):
    """What authorization asks of the fold (``Engine``'s read-only face)."""

    def arena_of(self, game: str) -> str | None: ...
    def game_of(self, event_id: str) -> str | None: ...
    def event_type_of(self, event_id: str) -> str | None: ...
    def event_of(self, game: str) -> str | None: ...
    def obligation_event(self, oid: str) -> str | None: ...
    def team_events(self, team: str) -> frozenset[str]: ...
    def player_events(self, player: str) -> frozenset[str]: ...


def _committee_event(games: Games, etype: str, fields: dict[str, Any]) -> object:
    """The tournament event a set-up, roster or decision event names (None: none, which a
    committee may send: a player, or a team registered for no event; what the roster
    events change is ``committee_rosters``'s to check)."""
    if etype == "player.registered":
        return None
    if etype == "committee.increase":
        game = fields.get("origin_game")
        return games.event_of(game) if isinstance(game, str) else ""
    if etype in ("game.scheduled", "game.handicap"):
        game = fields.get("game")
        return games.event_of(game) if isinstance(game, str) else ""
    if etype in ("committee.rescind", "committee.decrease"):
        oid = fields.get("obligation")
        return games.obligation_event(oid) if isinstance(oid, str) else ""
    return fields.get("event")


def _names(events: frozenset[str]) -> str:
    return ", ".join(repr(e) for e in sorted(events))


def _teams_named(etype: str, fields: dict[str, Any]) -> list[str]:
    """The teams an ``event.setup`` or a ``game.setup`` enters in its event."""
    teams = fields.get("teams")
    if etype == "event.setup" and isinstance(teams, list):
        return [t for t in teams if isinstance(t, str)]
    if etype == "game.setup" and isinstance(teams, dict):
        sides = [teams.get(side) for side in ("home", "away")]
        return [t for s in sides if isinstance(s, dict) and isinstance(t := s.get("team"), str)]
    return []


def committee_rosters(games: Games, c: Claims, etype: str, fields: dict[str, Any]) -> None:
    """The teams and players a committee's event changes or enters are its event's; else
    ``AuthError`` ``out_of_scope`` (docs/security.md). A team or a player of no event yet is
    any committee's to register and enter in its own event.

    * ``team.registered`` changes a team shown in every event it is of: it must be of the
      token's event only (a team of two events is the admin's to change).
    * ``player.registered`` likewise for the player, and the team it puts them on.
    * ``event.setup`` and ``game.setup`` enter teams in the token's event: each must be entered
      there already, or in no event (entering another event's team here is the admin's)."""
    mine = frozenset({c.event}) if c.event is not None else frozenset()
    if etype == "team.registered" and isinstance(team := fields.get("team"), str):
        if others := games.team_events(team) - mine:
            raise AuthError("out_of_scope", f"team {team!r} is of event {_names(others)}: this committee "
                                            f"token (event {c.event!r}) changes only its own event's teams")
    elif etype == "player.registered":
        player, team = fields.get("player"), fields.get("team")
        if isinstance(player, str) and (others := games.player_events(player) - mine):
            raise AuthError("out_of_scope", f"player {player!r} is of event {_names(others)}: this committee "
                                            f"token (event {c.event!r}) changes only its own event's players")
        if isinstance(team, str) and (others := games.team_events(team) - mine):
            raise AuthError("out_of_scope", f"team {team!r} is of event {_names(others)}: this committee "
                                            f"token (event {c.event!r}) puts players only on its own "
                                            "event's teams")
    for team in _teams_named(etype, fields):
        events = games.team_events(team)
        if events and not events & mine:
            raise AuthError("out_of_scope", f"team {team!r} is entered in event {_names(events)}, not in "
                                            f"{c.event!r}: the admin enters another event's team in this one")


def authorize(games: Games, c: Claims, etype: str, fields: dict[str, Any]) -> None:
    """The role may send this type, and the game (or a void's target's) is in the token's
    scope; else ``AuthError``. An event naming no game, or one never set up, is refused
    as the engine would refuse it."""
    check_may_send(c, etype)
    if etype in UNSCOPED_EVENTS:
        if c.role == "committee":
            concerns = _committee_event(games, etype, fields)
            if concerns is not None and concerns != c.event:
                raise AuthError("out_of_scope", f"this committee token is for event {c.event!r}")
            committee_rosters(games, c, etype, fields)
        elif c.game is not None or c.arena is not None:
            raise AuthError("out_of_scope", "setting up needs an unscoped admin token")
        return
    game = fields.get("game")
    if c.game is not None and etype != "void" and game != c.game:
        raise AuthError("out_of_scope", f"this token is for game {c.game!r}")
    if etype == "void":
        target = fields.get("target")
        owner = games.game_of(target) if isinstance(target, str) else None
        game = owner or game
        if (c.role == "timekeeper" and owner is not None and isinstance(target, str)
                and games.event_type_of(target) not in TIMEKEEPER_VOIDABLE):
            raise AuthError("forbidden", "a timekeeper may void only clock events")
    if not isinstance(game, str):
        if etype == "void":  # (a void may name no game: its target's, which is not folded here)
            raise Refused("unknown_target", f"no event {fields.get('target')!r} to void", "L1")
        raise MalformedEvent("invalid_field", "Object missing required field `game`")
    arena = games.arena_of(game)
    if arena is None:
        raise Refused("unknown_game", f"no game {game!r} has been set up", "L1")
    check_scope(c, game, arena)
    if c.role == "committee" and games.event_of(game) != c.event:
        raise AuthError("out_of_scope", f"this committee token is for event {c.event!r}")
