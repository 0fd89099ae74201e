"""The Python client SDK (clients/python/arena_client.py) as the tests load it: a single
file outside the package, loaded by its path, once."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SDK = Path(__file__).resolve().parents[1] / "clients" / "python" / "arena_client.py"


def load_sdk() -> ModuleType:
    if "arena_client" in sys.modules:
        return sys.modules["arena_client"]
    spec = importlib.util.spec_from_file_location("arena_client", SDK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["arena_client"] = module
    spec.loader.exec_module(module)
    return module


sdk = load_sdk()
