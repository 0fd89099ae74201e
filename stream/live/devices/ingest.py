"""``/ws/device``: the officials' handhelds (docs/protocol-device.md, "Device protocol").

The socket must authenticate in its first frame within ``auth_timeout``.
Then the device sends events; each gets exactly one answer: an ``ack`` once
the event and its dedup key are on disk, or an ``error`` (``retry: true``
only when it was not stored). Events from one socket are applied in the
order they arrive.

Clock sync: the server pings every ``ping_interval`` with its time; the
device answers with its own. The sample with the smallest round trip gives
the device's offset, and from then on an event's own ``at`` (device time)
is translated to server time, so an event recorded offline keeps the moment
it happened. Without a sync, or without ``at``, the receive time is used.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import Any

import msgspec
from aiohttp import WSMsgType, web

from ...errors import ArenaStreamError, AuthError, Conflict, MalformedEvent, NotStored, ProtocolError, Refused
from ...rules import codec
from ...rules.events import TYPE_NAMES
from ..hub.dedup import digest
from ..ops import failpoints
from ..ops.wallclock import now_ms
from ..service import Service
from ..wire import auth
from ..wire import protocol as pr

log = logging.getLogger("arena_stream.ingest")
_canonical = msgspec.json.Encoder(order="sorted")



class ClockSync:
    """The device's clock offset from the best (shortest round trip) of its
    last few samples, so a device whose clock is reset is followed."""

    WINDOW = 8

    def __init__(self) -> None:
        self.samples: deque[tuple[int, int]] = deque(maxlen=self.WINDOW)  # (rtt, offset)
        self.offset: int | None = None
        self.rtt: int | None = None

    def sample(self, sent: int, device_time: int, received: int) -> None:
        rtt = received - sent
        if rtt < 0 or rtt > 5_000:
            return
        self.samples.append((rtt, device_time - (sent + rtt // 2)))
        self.rtt, self.offset = min(self.samples)

    def to_server(self, device_at: int | None, received: int) -> int:
        if device_at is None or self.offset is None:
            return received
        return min(device_at - self.offset, received)


# Codes of frames that are not valid at all (not refusals by the rules or by auth).
_INVALID = frozenset({"malformed_json", "invalid_frame", "invalid_field", "missing_type",
                      "unknown_type", "too_deep"})


def _error(err: ArenaStreamError, client_id: str | None) -> pr.Error:
    return pr.Error(code=err.code, detail=err.detail, id=client_id,
                    clause=getattr(err, "clause", None), retry=isinstance(err, NotStored))


class DeviceSession:
    def __init__(self, svc: Service, ws: web.WebSocketResponse, claims: auth.Claims) -> None:
        self.svc = svc
        self.ws = ws
        self.claims = claims
        self.sync = ClockSync()
        self.junk = svc.junk_bucket()

    async def send(self, msg: Any) -> None:
        await self.ws.send_frame(pr.json_out.encode(msg), WSMsgType.TEXT)

    async def ping(self) -> None:
        await self.send(pr.ServerPing(server_time=now_ms()))

    async def run(self) -> None:
        await self.ping()
        interval = self.svc.config.ping_interval
        last_ping = time.monotonic()
        while True:
            try:
                msg = await self.ws.receive(timeout=interval)
            except TimeoutError:
                await self.ping()
                last_ping = time.monotonic()
                continue
            if msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                return
            if time.monotonic() - last_ping > interval:
                await self.ping()
                last_ping = time.monotonic()
            await self.handle(msg.data)

    async def handle(self, data: Any) -> None:
        try:
            frame = pr.device_in.decode(data)
        except (msgspec.DecodeError, RecursionError, TypeError) as err:
            self.svc.metrics.events.labels("malformed").inc()
            await self.refuse(_error(_malformed(err), None))
            return
        if isinstance(frame, pr.Pong):
            self.sync.sample(frame.server_time, frame.device_time, now_ms())
        elif isinstance(frame, pr.Ping):
            await self.send(pr.ServerPong(server_time=now_ms(), device_time=frame.device_time))
        elif isinstance(frame, pr.Auth):
            await self.send(pr.Error(code="already_authenticated", detail="this socket has a token"))
        else:
            reply = await self.event(frame)
            if isinstance(reply, pr.Ack) and not reply.duplicate:
                failpoints.hit("after_commit")  # committed, not yet acked: see failpoints.py
            if isinstance(reply, pr.Error) and reply.code in _INVALID:
                await self.refuse(reply)
            else:
                await self.send(reply)

    async def refuse(self, error: pr.Error) -> None:
        """The typed error for a frame that isn't valid; past the socket's allowance,
        close it (1008) instead: a flood of junk is not answered frame by frame."""
        if self.junk.take():
            await self.send(error)
        else:
            await self.ws.close(code=pr.CloseCode.POLICY, message=b"too many invalid frames")

    async def event(self, frame: pr.Send) -> pr.Ack | pr.Error:
        metrics = self.svc.metrics
        try:
            fields = _fields(frame.event)
        except MalformedEvent as err:
            metrics.events.labels("malformed").inc()
            return _error(err, None)
        if not self.svc.bucket(self.claims.sub).take():
            metrics.events.labels("limited").inc()
            cid = fields.get("id")
            return pr.Error(code="rate_limited", retry=True, id=cid if isinstance(cid, str) else None,
                            detail="too many events from this device; send the same event again shortly")
        return await submit_fields(self.svc, self.claims, fields, self.sync)


async def submit_fields(svc: Service, claims: auth.Claims, fields: dict[str, Any],
                        sync: ClockSync | None) -> pr.Ack | pr.Error:
    """One event from a device or the admin API: authorize, stamp, decode, submit.
    Every outcome is one ``ack`` or one ``error``, counted in the metrics.

    ``fields`` is the event decoded once from the frame; the dedup digest is taken once,
    over its canonical bytes (keys sorted); it is converted once to its own typed Struct
    (``codec.event_from_fields``), which the hub encodes once as the log's body."""
    received = now_ms()
    t0 = time.perf_counter()
    client_id: str | None = None
    metrics = svc.metrics
    try:
        cid = fields.get("id")
        if not isinstance(cid, str) or not 0 < len(cid) <= 64:
            raise MalformedEvent("invalid_field", "`id` must be a string of 1 to 64 characters")
        client_id = cid
        # The digest of the event as the device sent it, keys sorted: a retry in
        # any key order is the same event.
        payload = _canonical.encode(fields)
        etype = fields.get("type")
        if not isinstance(etype, str):
            raise MalformedEvent("missing_type", 'every event needs a "type"')
        if etype not in TYPE_NAMES:
            raise MalformedEvent("unknown_type", f"unknown event type {etype!r}")
        device_at = fields.get("at")
        if device_at is not None and (not isinstance(device_at, int) or isinstance(device_at, bool)
                                      or not 0 <= device_at <= 2**53):
            raise MalformedEvent("invalid_field", "`at` must be the device's time in ms since the epoch")
        try:
            auth.authorize(svc.hub.engine, claims, etype, fields)
        except Refused:
            # A game or a void's target that this node has not folded yet (set up or logged
            # through another node): judged again once the node has read the whole log.
            if not await svc.hub.behind_the_log():
                raise
            auth.authorize(svc.hub.engine, claims, etype, fields)
        fields["at"] = sync.to_server(device_at, received) if sync else received
        fields["id"] = f"{claims.sub}/{cid}"
        event = codec.event_from_fields(fields)
        ack = await svc.hub.submit(device=claims.sub, official=claims.official, client_id=cid,
                                   payload_digest=digest(payload), event=event, received_at=received)
    except ArenaStreamError as err:
        result = {Refused: "refused", Conflict: "conflict", NotStored: "not_stored",
                  AuthError: "forbidden", ProtocolError: "limited"}.get(type(err), "malformed")
        metrics.events.labels(result).inc()
        if isinstance(err, Conflict):
            log.warning("id conflict", extra={"device": claims.sub, "client_id": client_id})
        return _error(err, client_id)
    metrics.events.labels("duplicate" if ack.duplicate else "acked").inc()
    metrics.ack_seconds.observe(time.perf_counter() - t0)
    return ack


def _fields(raw: msgspec.Raw) -> dict[str, Any]:
    try:
        fields = pr.event_fields.decode(raw)
    except (msgspec.DecodeError, RecursionError) as err:
        raise _malformed(err, "invalid_field") from None
    return fields


def _malformed(err: BaseException, code: str = "invalid_frame") -> MalformedEvent:
    if isinstance(err, RecursionError):
        return MalformedEvent("too_deep", "the JSON is nested too deeply")
    if isinstance(err, msgspec.ValidationError):
        return MalformedEvent(code, str(err))
    return MalformedEvent("malformed_json", str(err))


async def device_ws(request: web.Request) -> web.StreamResponse:
    svc: Service = request.app[Service.KEY]
    refusal = svc.admit(request)
    if refusal is not None:
        return refusal
    # aiohttp refuses a message of max_msg_size bytes or more: +1 lets a frame of exactly the limit in.
    ws = web.WebSocketResponse(max_msg_size=svc.config.max_frame + 1, compress=svc.config.compress,
                               decode_text=False, autoping=True)
    await ws.prepare(request)
    svc.sockets.add(ws)
    svc.open_sockets += 1
    svc.metrics.connections.labels("device").inc()
    try:
        claims = await _authenticate(svc, ws)
        if claims is None:
            return ws
        if not svc.device_opened(claims.sub):
            await ws.send_frame(pr.json_out.encode(pr.Error(
                code="too_many_connections", detail="this device has too many sockets open")),
                WSMsgType.TEXT)
            await ws.close(code=pr.CloseCode.POLICY, message=b"too many connections")
            return ws
        svc.track(claims.jti, ws)
        svc.devices_online[ws] = (claims, now_ms())
        svc.presence_changed(claims)
        try:
            session = DeviceSession(svc, ws, claims)
            await session.send(pr.Welcome(device=claims.sub, role=claims.role, official=claims.official,
                                          game=claims.game, arena=claims.arena, server_time=now_ms(),
                                          epoch=svc.hub.store.epoch))
            await session.run()
        except ConnectionResetError:
            pass  # the device went away mid-reply; its outbox resends and gets the same ack
        finally:
            svc.untrack(claims.jti, ws)
            svc.device_closed(claims.sub)
            svc.devices_online.pop(ws, None)
            svc.presence_changed(claims)
    finally:
        svc.open_sockets -= 1
        svc.metrics.connections.labels("device").dec()
        if not ws.closed:
            await ws.close()
    return ws


async def _authenticate(svc: Service, ws: web.WebSocketResponse) -> auth.Claims | None:
    """The first frame must be ``auth`` with a valid token, within the timeout."""
    try:
        msg = await ws.receive(timeout=svc.config.auth_timeout)
    except TimeoutError:
        await ws.close(code=pr.CloseCode.AUTH, message=b"authenticate first")
        return None
    if msg.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
        return None
    try:
        frame = pr.device_in.decode(msg.data)
        if not isinstance(frame, pr.Auth):
            raise AuthError("auth_required", "the first frame must be {\"type\": \"auth\", \"token\": …}")
        claims = svc.verify(frame.token)
        if claims.role == "display":
            raise AuthError("forbidden", "a display token can't send events; use /ws/watch")
        return claims
    except (msgspec.DecodeError, RecursionError, AuthError) as err:
        e = err if isinstance(err, AuthError) else AuthError("auth_required", "the first frame must be auth")
        await ws.send_frame(pr.json_out.encode(pr.Error(code=e.code, detail=e.detail)), WSMsgType.TEXT)
        await ws.close(code=pr.CloseCode.AUTH, message=e.code.encode())
        return None

