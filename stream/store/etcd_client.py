"""Reaching etcd: its v3 JSON gateway over aiohttp, across the cluster's members.

The store's URL names the members and the store's key prefix::

    etcd://[user:password@]host:port[,host:port...]/<prefix>      (etcds:// for TLS)

Every call is a ``POST`` of JSON to one member (``/v3/kv/txn``, ``/v3/kv/range``…;
keys and values in base64, 64-bit numbers as strings), with a **deadline** of its own
(``deadline``: about half of etcd's election timeout). A member that can't be reached,
doesn't answer within the deadline, or answers that it can't serve now (no leader, a
leader change, a proposal timed out) is left for the next one in the list, round the
list until ``budget`` seconds have passed since the call began; the member in use stays
the one that last answered (``member``).

Reads are linearizable (etcd's default), so any member's answer is the cluster's.

**What a write's failure means** (``Gateway.txn``). A request refused before it could be
sent (no connection to any member) stored nothing: ``Unreachable``. A request that was
sent and not answered may have been committed or not: etcd may apply a proposal after
the client gave up on it. The caller resends the same transaction (its compares make a
resend harmless: ``etcd.py``) until the budget is spent, then answers ``Unanswered``.
An answer of etcd's that the request is wrong (``InvalidArgument``), not allowed
(``PermissionDenied``) or over the quota (``ResourceExhausted``, "database space
exceeded"), or a plain-text HTTP 4xx from a member's gateway, is ``EtcdRefused``: not
applied.

With ``user:password``, the client authenticates (``/v3/auth/authenticate``: one call at
a time, the others wait for its token) and sends the token with every call. etcd's
simple tokens live in each member's memory, expire there (``--auth-token-ttl``, 5
minutes unused) and are gone when the member restarts: a call answered
``Unauthenticated`` ("invalid auth token") authenticates again and is sent again, and so
is a watch that ends that way. A wrong password is ``EtcdRefused``.

``etcds://`` verifies the members' certificates against ``ca`` and presents
``cert``/``key`` when given. A TLS refusal, either way (the member's certificate not
signed by ``ca``, or the member refusing this client's certificate, or its absence), is
a setting to change, not an outage: once every member has refused, ``EtcdRefused``
names what failed, without waiting out the budget. With etcd's authentication on and
``--client-cert-auth``, etcd 3.4's gateway refuses (HTTP 400) a client certificate that
carries a Common Name: a node's certificate must have none (docs/deployment.md).
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import aiohttp
import msgspec

from ..errors import NotStored

SCHEMES = ("etcd", "etcds")

#: gRPC codes etcd answers with that say the request was not applied and never will be.
_REFUSED_CODES = {3: "InvalidArgument", 7: "PermissionDenied", 8: "ResourceExhausted"}
_UNAUTHENTICATED = 16


def tls_refusal(err: BaseException) -> str | None:
    """What refused a connection's TLS (a certificate not verified, by either side), or None:
    aiohttp's own TLS errors, or an ``ssl.SSLError`` it passed on as the cause of another."""
    seen: BaseException | None = err
    for _ in range(4):
        if seen is None:
            return None
        if isinstance(seen, (aiohttp.ClientSSLError, ssl.SSLError)):
            return str(seen)
        seen = seen.__cause__
    return None


class Unreachable(NotStored):
    """No member took the request: nothing was sent, nothing stored."""


class Unanswered(NotStored):
    """Sent, and no member answered within the budget: it may be committed or not."""


class EtcdRefused(NotStored):
    """etcd answered that it will not apply the request (wrong, not allowed, over quota)."""


@dataclass(frozen=True)
class EtcdURL:
    members: tuple[tuple[str, int], ...]
    prefix: str
    tls: bool = False
    user: str | None = None
    password: str | None = None


def is_etcd(url: str) -> bool:
    return url.startswith(tuple(s + "://" for s in SCHEMES))


def parse_url(url: str) -> EtcdURL:
    """``etcd[s]://[user:password@]host:port[,host:port...]/prefix``; ValueError otherwise.
    The prefix (default ``arena``) is every key's, ended with ``/``."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise ValueError("not an etcd:// or etcds:// URL")
    auth, _, hosts = parts.netloc.rpartition("@")
    user = password = None
    if auth:
        name, _, secret = auth.partition(":")
        user, password = unquote(name) or None, unquote(secret) or None
    members: list[tuple[str, int]] = []
    for item in hosts.split(","):
        host, _, port = item.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"{item!r} is not host:port (an etcd member's client address)")
        members.append((host.strip("[]"), int(port)))
    prefix = unquote(parts.path.strip("/")) or "arena"
    return EtcdURL(tuple(members), prefix + "/", parts.scheme == "etcds", user, password)


def redacted(url: str) -> str:
    """The URL without its user and password, for the logs."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}{parts.path}"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def unb64(text: str | None) -> bytes:
    return base64.b64decode(text) if text else b""


def prefix_end(prefix: bytes) -> bytes:
    """The ``range_end`` that makes a range every key starting with ``prefix``."""
    end = bytearray(prefix)
    while end:
        if end[-1] < 0xFF:
            end[-1] += 1
            return bytes(end)
        end.pop()
    return b"\x00"


class KV(msgspec.Struct, frozen=True):
    key: bytes
    value: bytes
    mod_revision: int
    create_revision: int


def kvs(reply: dict[str, Any]) -> list[KV]:
    """The key-values of a range's answer."""
    return [KV(unb64(kv.get("key")), unb64(kv.get("value")), int(kv.get("mod_revision", 0)),
               int(kv.get("create_revision", 0))) for kv in reply.get("kvs", ())]


def revision(reply: dict[str, Any]) -> int:
    """The store's revision an answer was made at."""
    return int(reply.get("header", {}).get("revision", 0))


@dataclass
class Gateway:
    """Calls to the members of one cluster (the module docstring)."""

    members: tuple[tuple[str, int], ...]
    tls: bool = False
    user: str | None = None
    password: str | None = None
    deadline: float = 0.5
    budget: float = 3.0
    ca: str | None = None
    cert: str | None = None
    key: str | None = None
    #: Called with every call's time to its answer, and with a call no member answered.
    on_answer: Callable[[float], None] | None = None
    on_failure: Callable[[BaseException], None] | None = None
    member: int = 0
    _session: aiohttp.ClientSession | None = field(default=None, repr=False)
    _token: str | None = field(default=None, repr=False)
    _auth_lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    @property
    def address(self) -> str:
        host, port = self.members[self.member]
        return f"{host}:{port}"

    def _url(self, index: int, path: str) -> str:
        host, port = self.members[index]
        return f"{'https' if self.tls else 'http'}://{host}:{port}{path}"

    async def open(self) -> None:
        context: ssl.SSLContext | bool = False
        if self.tls:
            context = ssl.create_default_context(cafile=self.ca)
            if self.cert:
                context.load_cert_chain(self.cert, self.key)
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=context, limit=0, enable_cleanup_closed=True),
            json_serialize=lambda o: msgspec.json.encode(o).decode())

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    # ------------------------------------------------------------------ calls

    async def call(self, path: str, body: dict[str, Any], *, write: bool = False) -> dict[str, Any]:
        """``body`` to ``path`` on the member in use, then the next ones, until one answers
        or the budget is spent (the module docstring). ``write``: a request whose fate is
        unknown once sent (``Unanswered`` rather than ``Unreachable`` at the end)."""
        return (await self.resending(path, body, write=write))[0]

    async def resending(self, path: str, body: dict[str, Any], *,
                        write: bool = False) -> tuple[dict[str, Any], bool]:
        """``call``'s answer, and whether the request had been sent before without an answer
        (the answer may then be to a resend of a request that was committed)."""
        started = time.monotonic()
        sent: set[int] = set()          # the members that may have read the request
        last: BaseException | None = None
        tries = 0
        refusals: dict[int, str] = {}   # the members that refused this client's TLS, this call
        while True:
            index = self.member
            try:
                reply = await self._once(index, path, body)
            except _Retry as err:
                last = err.cause
                tries += 1
                refused = tls_refusal(err.cause)
                if refused is not None:  # refused at the handshake: it reads none of this client's requests
                    refusals[index] = refused
                    sent.discard(index)
                elif err.sent and index not in refusals:
                    sent.add(index)
                if index == self.member:
                    self.member = (index + 1) % len(self.members)
                if len(refusals) == len(self.members):
                    raise EtcdRefused(f"every etcd member refused this client's TLS ({refused or last}): "
                                      "check the CA (--etcd-ca) and the client certificate and key "
                                      "(--etcd-cert, --etcd-key)") from None
                if time.monotonic() - started >= self.budget:
                    break
                if tries % len(self.members) == 0:  # a whole round failed: a leader is being elected
                    await asyncio.sleep(min(0.1, self.deadline / 4))
                continue
            if self.on_answer is not None:
                self.on_answer(time.monotonic() - started)
            return reply, bool(sent)
        what = f"{type(last).__name__}: {last}" if last is not None else "no member"
        failure: NotStored = (
            Unanswered(f"etcd did not answer within {self.budget:.1f} s ({what}): the write may be "
                       "committed or not") if write and sent else
            Unreachable(f"no etcd member answered within {self.budget:.1f} s ({what})"))
        if self.on_failure is not None:  # the cluster, not one member: an outage
            self.on_failure(failure)
        raise failure

    async def _once(self, index: int, path: str, body: dict[str, Any]) -> dict[str, Any]:
        session = self._session
        if session is None or session.closed:
            raise Unreachable("the store is closed")
        token = await self._token_for(index)
        headers = {"Authorization": token} if token else None
        try:
            async with asyncio.timeout(self.deadline):
                async with session.post(self._url(index, path), json=body, headers=headers) as resp:
                    raw = await resp.read()
                    status = resp.status
        except aiohttp.ClientConnectorError as err:
            raise _Retry(err, sent=False) from None
        except (TimeoutError, aiohttp.ClientError) as err:
            raise _Retry(err, sent=True) from None
        reply = _decoded(raw, status)
        if status == 200:
            return reply
        code = int(reply.get("code", 0))
        message = str(reply.get("error") or reply.get("message") or f"HTTP {status}")
        if code == _UNAUTHENTICATED and self.user is not None:
            self._forget(token)  # expired, or its member restarted: authenticate again
            raise _Retry(EtcdError(code, message), sent=False)
        if code in _REFUSED_CODES:
            raise EtcdRefused(f"etcd refused the request ({_REFUSED_CODES[code]}): {message}")
        # Unavailable, a leader change, a proposal timed out, too many requests…: another
        # member (or the same, once a leader is elected) may answer.
        raise _Retry(EtcdError(code, message), sent=True)

    async def _token_for(self, index: int) -> str | None:
        """The token to send (None without a user): the one held, or a new one from member
        ``index``; calls that need one at the same time wait for the first to get it."""
        if self.user is None or self._token is not None:
            return self._token
        async with self._auth_lock:
            if self._token is None:
                self._token = await self._authenticate(index)
            return self._token

    def _forget(self, token: str | None) -> None:
        """etcd no longer knows ``token``: the next call authenticates (unless one has already)."""
        if self._token == token:
            self._token = None

    async def _authenticate(self, index: int) -> str:
        assert self._session is not None
        try:
            async with asyncio.timeout(self.deadline):
                async with self._session.post(self._url(index, "/v3/auth/authenticate"),
                                              json={"name": self.user, "password": self.password}) as resp:
                    reply = _decoded(await resp.read(), resp.status)
        except (TimeoutError, aiohttp.ClientError) as err:
            raise _Retry(err, sent=False) from None
        if resp.status != 200 or "token" not in reply:
            raise EtcdRefused(f"etcd refused the store's user {self.user!r}: "
                              f"{reply.get('error') or reply.get('message') or resp.status}")
        return str(reply["token"])

    # ------------------------------------------------------------ operations

    async def txn(self, compare: list[dict[str, Any]], success: list[dict[str, Any]],
                  failure: list[dict[str, Any]]) -> dict[str, Any]:
        return (await self.txn_resent(compare, success, failure))[0]

    async def txn_resent(self, compare: list[dict[str, Any]], success: list[dict[str, Any]],
                         failure: list[dict[str, Any]]) -> tuple[dict[str, Any], bool]:
        """A transaction's answer, and whether it was sent more than once (``resending``)."""
        return await self.resending("/v3/kv/txn", {"compare": compare, "success": success,
                                                   "failure": failure}, write=True)

    async def range(self, key: bytes, end: bytes | None = None, *, limit: int = 0,
                    revision: int = 0, keys_only: bool = False, descend: bool = False,
                    min_mod_revision: int = 0) -> dict[str, Any]:
        body: dict[str, Any] = {"key": b64(key)}
        if end is not None:
            body["range_end"] = b64(end)
        if limit:
            body["limit"] = str(limit)
        if revision:
            body["revision"] = str(revision)
        if keys_only:
            body["keys_only"] = True
        if descend:
            body["sort_order"] = "DESCEND"
            body["sort_target"] = "KEY"
        if min_mod_revision:
            body["min_mod_revision"] = str(min_mod_revision)
        return await self.call("/v3/kv/range", body)

    async def put(self, key: bytes, value: bytes) -> dict[str, Any]:
        return await self.call("/v3/kv/put", {"key": b64(key), "value": b64(value)}, write=True)

    async def delete(self, key: bytes, end: bytes | None = None) -> dict[str, Any]:
        body = {"key": b64(key)} | ({"range_end": b64(end)} if end is not None else {})
        return await self.call("/v3/kv/deleterange", body, write=True)

    async def status(self) -> dict[str, Any]:
        """The member in use's own status (its leader, its revision, its database size)."""
        return await self.call("/v3/maintenance/status", {})

    async def watch(self, key: bytes, end: bytes, start_revision: int) -> AsyncIterator[dict[str, Any]]:
        """The changes to keys in ``[key, end)`` from ``start_revision``, as etcd's watch
        answers come, on the member in use (one stream: the caller starts another, on the
        next member, when it ends or goes quiet)."""
        session = self._session
        if session is None or session.closed:
            raise Unreachable("the store is closed")
        token = await self._token_for(self.member)
        headers = {"Authorization": token} if token else None
        body = {"create_request": {"key": b64(key), "range_end": b64(end),
                                   "start_revision": str(start_revision)}}
        try:
            async with asyncio.timeout(self.deadline):
                resp = await session.post(self._url(self.member, "/v3/watch"), json=body,
                                          headers=headers, timeout=aiohttp.ClientTimeout(total=None))
        except (TimeoutError, aiohttp.ClientError) as err:
            self.member = (self.member + 1) % len(self.members)
            raise Unreachable(f"etcd's watch did not start: {type(err).__name__}: {err}") from None
        async with resp:
            pending = b""
            try:
                async for chunk in resp.content.iter_any():
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        if line.strip():
                            message: dict[str, Any] = msgspec.json.decode(line)
                            if "error" in message:
                                error = message["error"]
                                if isinstance(error, dict) and error.get("grpc_code") == _UNAUTHENTICATED:
                                    self._forget(token)
                                raise Unreachable(f"etcd's watch ended: {error}")
                            yield message.get("result", {})
            except (aiohttp.ClientError, msgspec.DecodeError) as err:
                raise Unreachable(f"etcd's watch ended: {type(err).__name__}: {err}") from None


def _decoded(raw: bytes, status: int) -> dict[str, Any]:
    """A member's answer as JSON. Not JSON: a plain-text HTTP 4xx of its gateway (a request
    it refuses before etcd sees it) is ``EtcdRefused`` with its text; anything else, an
    answer cut short, is tried again (the request was sent)."""
    try:
        reply = msgspec.json.decode(raw)
    except msgspec.DecodeError as err:
        text = raw.decode(errors="replace").strip()[:300]
        if 400 <= status < 500:
            raise EtcdRefused(f"etcd's gateway refused the request (HTTP {status}): {text}") from None
        raise _Retry(err, sent=True) from None
    return reply if isinstance(reply, dict) else {}


class EtcdError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Retry(Exception):
    def __init__(self, cause: BaseException, *, sent: bool) -> None:
        self.cause = cause
        self.sent = sent


# Requests, as the gateway takes them -------------------------------------------------


def created(key: bytes, revision: int = 0) -> dict[str, Any]:
    """Compare: ``key``'s create revision is ``revision`` (0: the key does not exist)."""
    return {"key": b64(key), "result": "EQUAL", "target": "CREATE", "create_revision": str(revision)}


def exists(key: bytes) -> dict[str, Any]:
    """Compare: ``key`` exists."""
    return {"key": b64(key), "result": "GREATER", "target": "CREATE", "create_revision": "0"}


def put_op(key: bytes, value: bytes) -> dict[str, Any]:
    return {"request_put": {"key": b64(key), "value": b64(value)}}


def get_op(key: bytes, end: bytes | None = None, *, limit: int = 0, descend: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"key": b64(key)}
    if end is not None:
        body["range_end"] = b64(end)
    if limit:
        body["limit"] = str(limit)
    if descend:
        body["sort_order"] = "DESCEND"
        body["sort_target"] = "KEY"
    return {"request_range": body}


def delete_op(key: bytes, end: bytes | None = None) -> dict[str, Any]:
    body = {"key": b64(key)} | ({"range_end": b64(end)} if end is not None else {})
    return {"request_delete_range": body}


def responses(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """A transaction's answers to its operations, each the inner answer itself."""
    out = []
    for r in reply.get("responses", ()):
        out.append(next(iter(r.values())) if r else {})
    return out
