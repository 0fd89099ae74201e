"""The game report as the public reads it (``/games/{game}/public``; docs/security.md,
"What is public"): the report of ``report.py``, with what only the officials and the
committee may read taken out."""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from .report import Report


def public(r: Report) -> Report:
    """The report as the public reads it (docs/security.md, "What is public"): no device and
    no official's entry behind a line (an event's id, which names the device that sent it,
    becomes an opaque one), no alert (what the officials were told of the record), and the
    committee's decisions and obligations without their reasons or who took them."""

    def opaque(ident: str) -> str:
        return "e-" + hashlib.blake2b(ident.encode(), digest_size=6).hexdigest() if "/" in ident else ident

    def clean(node: Any) -> Any:
        if isinstance(node, list):
            return [clean(x) for x in node if not (isinstance(x, dict) and x.get("kind") == "alert")]
        if not isinstance(node, dict):
            return node
        out = {}
        for k, v in node.items():
            if k in ("official", "device") and isinstance(v, str):
                v = ""
            elif k in ("voided_by", "reason"):
                v = None
            elif k == "by" and isinstance(v, str) and v:
                v = "the committee"
            elif k in ("cause", "id", "made_by", "origin") and isinstance(v, str):
                v = opaque(v)
            out[k] = clean(v)
        return out

    doc = clean(msgspec.to_builtins(r))
    doc["alerts"] = []
    return msgspec.convert(doc, Report)
