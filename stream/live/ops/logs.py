"""Structured JSON logs, one object per line on stderr. Tokens never appear:
code logs ``auth.fingerprint(token)``, and the formatter drops any field
whose name says it holds a token or a secret."""

from __future__ import annotations

import logging
import sys
from typing import Any

import msgspec

_enc = msgspec.json.Encoder()
_SKIP = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}
_SECRET = ("token", "secret", "password")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "ts": round(record.created, 3), "level": record.levelname.lower(),
            "logger": record.name, "msg": record.getMessage(),
        }
        for k, v in record.__dict__.items():
            if k not in _SKIP and not any(s in k.lower() for s in _SECRET):
                doc[k] = v if isinstance(v, str | int | float | bool | type(None)) else repr(v)
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return _enc.encode(doc).decode()


class BadRequests(logging.Filter):
    """aiohttp logs every request it can't parse (a bad request line, a header
    line over 8 KiB, bytes that aren't HTTP) at ERROR with a traceback, and the
    message quotes the start of the offending line: a hostile client could fill
    the log with tracebacks, or get an ``Authorization`` header into it. That is
    the client's error, answered 400: one line at INFO, with no content."""

    def filter(self, record: logging.LogRecord) -> bool:
        from aiohttp.http_exceptions import HttpProcessingError

        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError) and 400 <= exc.code < 500:
            record.msg, record.args = "bad request (%s): %s", (exc.code, type(exc).__name__)
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


_bad_requests = BadRequests()


def quiet_bad_requests() -> None:
    """Install ``BadRequests`` on aiohttp's server logger (idempotent)."""
    logging.getLogger("aiohttp.server").addFilter(_bad_requests)


def setup(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger("arena_stream")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
