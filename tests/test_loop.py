"""The serving loop: uvloop by default where it is installed, asyncio on request
(``--loop``, ``ARENA_STREAM_LOOP``); the tests run on the one ``serve`` would."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from stream.cli import main
from stream.live.ops.loops import default_loop
from stream.tools.harness import ServiceProcess


def _loop_name() -> str:
    return "uvloop" if type(asyncio.get_running_loop()).__module__.startswith("uvloop") else "asyncio"


async def test_the_tests_run_on_the_loop_serve_runs_on() -> None:
    assert _loop_name() == default_loop()


def test_the_environment_chooses_the_default_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_STREAM_LOOP", "asyncio")
    assert default_loop() == "asyncio"
    monkeypatch.setenv("ARENA_STREAM_LOOP", "uvloop")
    assert default_loop() == "uvloop"
    monkeypatch.delenv("ARENA_STREAM_LOOP")
    assert default_loop() == "uvloop"  # installed with the package (pyproject.toml)
    with pytest.raises(SystemExit):
        main(["serve", "--loop", "tokio"])


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
async def test_serve_says_which_loop_serves_it(tmp_path: Path, loop: str) -> None:
    log = tmp_path / "serve.log"
    proc = ServiceProcess(tmp_path / "data", args=["--loop", loop], log=log)
    await proc.astart()
    try:
        assert f"loop: {loop})" in log.read_text()
    finally:
        await proc.astop()
