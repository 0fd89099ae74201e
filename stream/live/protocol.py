"""The two WebSocket protocols, as msgspec tagged unions (docs/protocol.md).

``/ws/device`` — officials' handhelds send events and get durable acks.
``/ws/watch``  — scoreboards, overlays and any viewer get a snapshot, then
sequenced deltas, and can resume from their last sequence number.

Every frame is one JSON object (text frame) or, for viewers that ask with
``?format=msgpack``, one MessagePack map (binary frame) of the same schema.
Each decoder and encoder below is built once.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal, Union

import msgspec

from ..rules.notices import Notice
from ..rules.rosters import PlayerEntry, TeamEntry
from ..rules.view import GameView


class CloseCode(enum.IntEnum):
    """The codes the service closes a WebSocket with (docs/protocol.md, "Close codes")."""

    GOING_AWAY = 1001      # the service is shutting down: reconnect, then resume
    POLICY = 1008          # too many invalid frames, or too many sockets for one device
    TOO_BIG = 1009         # a frame over the size limit (aiohttp closes with it)
    TOO_SLOW = 1013        # a viewer that could not take a frame within the send timeout
    AUTH = 4401            # no valid authentication in time, or the token was revoked

Ident = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
Millis = Annotated[int, msgspec.Meta(ge=0, le=2**53)]


class _Frame(msgspec.Struct, tag_field="type", kw_only=True, frozen=True):
    pass


# ------------------------------------------------------------ device -> server


class Auth(_Frame, tag="auth", kw_only=True, frozen=True):
    """The first frame on either socket: the token, never in the URL."""

    token: Annotated[str, msgspec.Meta(max_length=4096)]


class Send(_Frame, tag="send", kw_only=True, frozen=True):
    """One event in the log format. ``id`` is the device's own, unique for this
    device forever; ``at`` (optional) is the device's clock in ms, used once
    the device is clock-synced; ``game`` is required for game events."""

    event: msgspec.Raw


class Pong(_Frame, tag="pong", kw_only=True, frozen=True):
    """Answer to the server's ``ping``: echo ``server_time``, add the device's clock."""

    server_time: Millis
    device_time: Millis


class Ping(_Frame, tag="ping", kw_only=True, frozen=True):
    """Either side may ping; the other answers ``pong``."""

    server_time: Millis | None = None
    device_time: Millis | None = None


DeviceIn = Union[Auth, Send, Pong, Ping]

# ------------------------------------------------------------ server -> device


class Welcome(_Frame, tag="welcome", kw_only=True, frozen=True):
    device: str
    role: str
    official: str
    game: str | None
    arena: str | None
    server_time: int
    epoch: str


class ServerPong(_Frame, tag="pong", kw_only=True, frozen=True):
    server_time: int
    device_time: int | None = None


class ServerPing(_Frame, tag="ping", kw_only=True, frozen=True):
    server_time: int


class Ack(_Frame, tag="ack", kw_only=True, frozen=True):
    """The event and its dedup key are committed to disk."""

    id: str                  # the device's id
    log_id: str              # the event's id in the log (device/id): what notices name as cause
    game: str | None
    seq: int | None          # its place in the game's log
    at: int                  # the time the rules used
    duplicate: bool          # true: a retry of an event already stored: same seq and log_id as the first
    notices: list[Notice] = []  # what the event caused; sent with the first ack only


class Error(_Frame, tag="error", kw_only=True, frozen=True):
    """Something was refused. ``retry`` true means: not stored, send the same event again."""

    code: str
    detail: str
    id: str | None = None
    clause: str | None = None
    retry: bool = False


DeviceOut = Union[Welcome, ServerPing, ServerPong, Ack, Error]

# ------------------------------------------------------------ viewer -> server


class Subscribe(_Frame, tag="subscribe", kw_only=True, frozen=True):
    """Watch one game, or every game of an arena. ``since`` (the last ``seq``
    seen, with its ``epoch``) resumes a game with exactly what was missed."""

    game: Ident | None = None
    arena: Annotated[str, msgspec.Meta(max_length=64)] | None = None
    since: Annotated[int, msgspec.Meta(ge=0)] | None = None
    epoch: Annotated[str, msgspec.Meta(max_length=64)] | None = None


WatchIn = Union[Auth, Subscribe, Ping]

# ------------------------------------------------------------ server -> viewer


class Snapshot(_Frame, tag="snapshot", kw_only=True, frozen=True):
    """Everything a display needs, as of ``seq``. ``reset`` true: drop what
    you had (``reason`` says why: ``resume_unavailable``, ``slow``, ``history_replaced``)."""

    game: str
    seq: int
    epoch: str
    view: GameView
    reset: bool = False
    reason: str | None = None
    recent: list[Notice] = []      # the game's latest notices, newest last, for late joiners


class Patch(msgspec.Struct, array_like=True, frozen=True):
    """Set ``path`` (dot-separated; list items of ``players`` by id) to ``value``."""

    path: str
    value: Any


class Delta(_Frame, tag="delta", kw_only=True, frozen=True):
    """What one logged event changed. ``seq`` increases by one per delta."""

    game: str
    seq: int
    notices: list[Notice]
    patch: list[Patch]


class Heartbeat(_Frame, tag="heartbeat", kw_only=True, frozen=True):
    """Every few seconds. No heartbeat for two intervals: show the data as stale."""

    server_time: int
    interval_ms: int
    seqs: dict[str, int]


class ConnectedDevice(msgspec.Struct, frozen=True, kw_only=True):
    device: str
    role: str
    official: str
    since: int                 # ms, when its socket authenticated


class Presence(_Frame, tag="presence", kw_only=True, frozen=True):
    """The officials' devices connected for a game: sent after the snapshot and
    whenever one connects or goes away."""

    game: str
    devices: list[ConnectedDevice]


class RosterFrame(_Frame, tag="roster", kw_only=True, frozen=True):
    """Who the game's displays name: both teams' and every player's current registration
    (a player not in ``players`` is shown by id). Sent after every snapshot of the game,
    after a resume's catch-up, and whenever a registration changes it; it replaces the
    previous one whole."""

    game: str
    home: TeamEntry | None
    away: TeamEntry | None
    players: dict[str, PlayerEntry]


#: The ``roster`` frame (named apart from the log's ``events.Roster``, a team sheet).
Roster = RosterFrame

WatchOut = Union[Snapshot, Delta, RosterFrame, Heartbeat, Presence, ServerPong, Error]

# ----------------------------------------------------------- codecs, built once

device_in = msgspec.json.Decoder(DeviceIn)
watch_in_json = msgspec.json.Decoder(WatchIn)
watch_in_msgpack = msgspec.msgpack.Decoder(WatchIn)
json_out = msgspec.json.Encoder()
msgpack_out = msgspec.msgpack.Encoder()
event_fields = msgspec.json.Decoder(dict[str, Any])

Format = Literal["json", "msgpack"]
