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

from ...rules.events import TYPES_BY_NAME, Colors, GameEventBase, Void
from ...rules.notices import Notice
from ...rules.rosters import PlayerEntry, TeamEntry
from ...rules.schedule import ScheduleEntry
from ...rules.view import GameView


class CloseCode(enum.IntEnum):
    """The codes the service closes a WebSocket with (docs/protocol.md, "Close codes")."""

    GOING_AWAY = 1001      # the service is shutting down: reconnect, then resume
    PROTOCOL_ERROR = 1002  # a frame that breaks RFC 6455 (closed by the WebSocket layer)
    POLICY = 1008          # too many invalid frames, or too many sockets for one device
    TOO_BIG = 1009         # a frame over the size limit (closed by the WebSocket layer)
    TOO_SLOW = 1013        # a viewer that could not take a frame within the send timeout
    AUTH = 4401            # no valid authentication in time, or the token was revoked

#: The largest message a viewer may send on ``/ws/watch`` (a 4096-character token fits in an
#: ``auth`` frame); a larger one closes the socket with 1009.
WATCH_MAX_FRAME = 8192

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


#: The event types that are no one game's: in the log, in no game's sequence, so their
#: ``ack`` has ``game`` and ``seq`` null (docs/protocol-device.md, "Send an event").
NO_GAME: tuple[str, ...] = tuple(name for name, t in TYPES_BY_NAME.items()
                                 if not issubclass(t, GameEventBase) and t is not Void)


class Ack(_Frame, tag="ack", kw_only=True, frozen=True):
    """The event and its dedup key are committed to disk."""

    id: str                  # the device's id
    log_id: str              # the event's id in the log (device/id): what notices name as cause
    game: Annotated[str | None, msgspec.Meta(description=(
        f"the game whose log the event is in; null for an event of no game ({', '.join(NO_GAME)}), "
        "even one that names a game"))]
    seq: Annotated[int | None, msgspec.Meta(description=(
        "the event's place in its game's log; null for an event of no game"))]
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
    """Watch one game, or every game of an arena or of a tournament event (``arena`` wins
    over ``event``, which wins over ``game``). ``since`` (the last ``seq`` seen, with its
    ``epoch``) resumes a game with exactly what was missed."""

    game: Ident | None = None
    arena: Annotated[str, msgspec.Meta(max_length=64)] | None = None
    event: Ident | None = None   # every game of this tournament event, and each one set up later
    since: Annotated[int, msgspec.Meta(ge=0)] | None = None
    epoch: Annotated[str, msgspec.Meta(max_length=64)] | None = None
    graphics: bool = False   # a game's: also its broadcast graphics (``graphics`` frames)


GraphicName = Literal["bug", "box", "lower"]
GraphicsAction = Literal["take", "hide", "replay", "queue", "skip", "lang", "cite"]
Lang = Literal["en", "es"]


class Graphics(_Frame, tag="graphics", kw_only=True, frozen=True):
    """An operator's command for a game's broadcast graphics (the overlay control page): take,
    hide or replay a graphic, queue or skip a lower third, switch the language or the rule
    citation. Needs a token that may control the game's graphics (``display`` within its
    scope, ``committee`` of the game's event, ``admin``); answered by the new ``graphics``
    state, sent to every viewer of the game's graphics, or by one ``error``."""

    game: Ident
    action: GraphicsAction
    graphic: GraphicName | None = None          # take, hide, replay
    cause: Annotated[str, msgspec.Meta(min_length=1, max_length=200)] | None = None  # queue, take lower
    player: Ident | None = None                 # queue, take lower: whose lower third of that event
    notice: Annotated[str, msgspec.Meta(max_length=32)] | None = None  # queue, take lower: which one
    item: Annotated[int, msgspec.Meta(ge=1)] | None = None  # skip: which queued one (default: the next)
    lang: Lang | None = None                    # lang
    cite: bool | None = None                    # cite
    id: Annotated[str, msgspec.Meta(max_length=64)] | None = None  # echoed by an error's ``id``


WatchIn = Union[Auth, Subscribe, Ping, Graphics]

# ------------------------------------------------------------ server -> viewer


class Snapshot(_Frame, tag="snapshot", kw_only=True, frozen=True):
    """Everything a display needs, as of ``seq``. ``reset`` true: drop what
    you had (``reason`` says why: ``resume_unavailable``, ``slow``)."""

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


class Notices(_Frame, tag="notices", kw_only=True, frozen=True):
    """Notices about this game that an event of another game raised: the alert that a
    post-game card or a correction there suspends a player from this game, which has begun
    (``next_game_begun``; the game's snapshots carry it in ``recent`` from then on); or that
    an event of no game raised: a committee decision on an obligation from this game, or
    R15's ``obligation.updated`` (not kept in ``recent``). Outside the ``seq`` order: it
    changes no view."""

    game: str
    notices: list[Notice]


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
    previous one whole. ``event_name``: what displays call the game's tournament event
    (null: its id, made readable). ``kits``: by side, the colours a team wears in this
    game instead of its registered ones (a kit clash the set-up resolved). ``schedule``: its
    place in the order of play, start time and officials by name (null: none given)."""

    game: str
    home: TeamEntry | None
    away: TeamEntry | None
    players: dict[str, PlayerEntry]
    event_name: str | None = None
    kits: dict[str, Colors] = msgspec.field(default_factory=dict)
    schedule: ScheduleEntry | None = None


#: The ``roster`` frame (named apart from the log's ``events.Roster``, a team sheet).
Roster = RosterFrame


class LowerThird(msgspec.Struct, frozen=True, kw_only=True):
    """A lower third: what one event made (its notices, by ``cause``), the one of ``notice``'s
    type for ``player`` (null: the event's first); the overlay composes its words from them
    and the roster."""

    id: int                    # this game's lower thirds are numbered from 1 (on this node)
    cause: str                 # the event's log id
    player: str | None
    notice: str | None         # the type of the notice it is of (``card.recorded``, ``box.eligible`` …)
    notices: list[Notice]


class GraphicOn(msgspec.Struct, frozen=True, kw_only=True):
    on: bool                   # on air (the box panel: allowed on air, shown when someone is in it)
    take: int                  # counts its takes and replays: a new value runs its entrance again


class LowerState(msgspec.Struct, frozen=True, kw_only=True):
    on_air: LowerThird | None  # the lower third on air, or null
    take: int                  # counts takes and replays: a new value runs its entrance again
    queue: list[LowerThird]    # next first, at most 8
    last: LowerThird | None    # the last one taken: what ``replay`` puts back on air


class GraphicsState(_Frame, tag="graphics", kw_only=True, frozen=True):
    """A game's broadcast graphics, whole: what is on air, the lower-third queue, the language
    and whether lower thirds cite the rule. Sent after the snapshot (or a resume's catch-up)
    to a viewer that subscribed with ``graphics: true``, and to all of them after each
    command; each replaces the one before. Kept in memory, per node."""

    game: str
    version: int               # +1 per command on this node (0: as the node started)
    lang: Lang
    cite: bool
    bug: GraphicOn
    box: GraphicOn
    lower: LowerState
    by: str | None             # the device (token ``sub``) of the last command, null before any
    at: int | None             # when (ms), null before any


WatchOut = Union[Snapshot, Delta, Notices, RosterFrame, Heartbeat, Presence, ServerPong, Error, GraphicsState]

# ----------------------------------------------------------- codecs, built once

device_in = msgspec.json.Decoder(DeviceIn)
watch_in_json = msgspec.json.Decoder(WatchIn)
watch_in_msgpack = msgspec.msgpack.Decoder(WatchIn)
json_out = msgspec.json.Encoder()
msgpack_out = msgspec.msgpack.Encoder()
event_fields = msgspec.json.Decoder(dict[str, Any])

Format = Literal["json", "msgpack"]
