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


def setup(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger("arena_stream")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
