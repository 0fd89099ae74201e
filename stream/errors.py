"""The exceptions Arena Stream raises, as one small tree.

    ArenaStreamError            anything the service refuses or can't do
    ├── MalformedEvent          bytes that are not an event of the log format
    ├── Refused                 a well-formed event that Rule 14 refuses
    ├── ProtocolError           a frame the WebSocket protocols don't allow
    ├── AuthError               no valid token, or a token that may not do this
    ├── Conflict                an event id reused with a different payload
    └── NotStored               the store could not commit: nothing was acked, retry
        └── WriteUnknown        the store can't tell whether it committed: retry, dedup settles it

Each carries a stable ``code`` (snake_case, documented in docs/log-format.md)
that handhelds and scripts switch on, and a human ``detail``. ``Refused`` also
names the clause it applies. Nothing that raises one of these has changed any
state.
"""

from __future__ import annotations


class ArenaStreamError(Exception):
    """Base class: a clear, typed refusal. ``code`` is stable; ``detail`` is prose."""

    code: str = "error"

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


class MalformedEvent(ArenaStreamError):
    """The input is not an event: bad JSON, an unknown type, a missing or
    ill-typed field, nesting too deep, or invalid UTF-8."""


class Refused(ArenaStreamError):
    """The rule engine refuses a well-formed event. The state is untouched."""

    def __init__(self, code: str, detail: str, clause: str) -> None:
        super().__init__(code, detail)
        self.clause = clause


class ProtocolError(ArenaStreamError):
    """A frame out of turn, of an unknown kind, too large, or too frequent."""


class AuthError(ArenaStreamError):
    """Missing, forged, expired or revoked token; or a role or scope that may not act."""


class Conflict(ArenaStreamError):
    """The same device reused an event id for a different event. The first one stands."""


class StartupRefused(ArenaStreamError):
    """The service refuses to start as configured (a store that could lose acked
    events, a damaged signing secret): the operator must change something."""

    def __init__(self, detail: str) -> None:
        super().__init__("startup_refused", detail)


class NotStored(ArenaStreamError):
    """The store did not commit the event. Nothing was acknowledged; send it again."""

    def __init__(self, detail: str) -> None:
        super().__init__("not_stored", detail)


class WriteUnknown(NotStored):
    """The write was sent but its answer was lost (the connection dropped after the
    store may have committed it): it may be stored or not. Nothing was acknowledged;
    send the same event again with the same id, and dedup settles it."""

    def __init__(self, detail: str) -> None:
        super(NotStored, self).__init__("unknown", detail)
