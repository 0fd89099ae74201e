"""``tests/conftest.py``'s watchdog: a hung test fails with its tasks' stacks and the run
goes on; a test that can't be cancelled ends the run with every thread's stack."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Each runs benchmarks or whole pytest sessions in processes of its own: seconds to minutes.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent

HUNG = '''
import asyncio, time

async def test_waits_forever():
    await asyncio.sleep(3600)

async def test_next():
    assert True

def test_blocks_its_loop_forever():
    time.sleep(3600)

def test_never_reached():
    assert True

async def test_leaves_a_task_that_swallows_its_cancellation():
    async def stubborn():
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                pass
    asyncio.create_task(stubborn())
    await asyncio.sleep(0)
'''


def _run(tmp_path: Path, *select: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(
        "from tests.conftest import pytest_asyncio_loop_factories, pytest_runtest_call, "
        "pytest_runtest_teardown  # noqa: F401\n")
    (tmp_path / "test_hung.py").write_text(HUNG)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ARENA_TEST_LIMIT_S": "1",
           "ARENA_TEST_LAST_RESORT_S": "1"}
    env.pop("ARENA_PROOF_FULL", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "asyncio_mode=auto",
         "-o", "asyncio_default_fixture_loop_scope=function", *(f"test_hung.py::{s}" for s in select)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)


def test_a_hung_async_test_fails_with_its_stack_and_the_run_goes_on(tmp_path: Path) -> None:
    run = _run(tmp_path, "test_waits_forever", "test_next")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "test_hung.py::test_waits_forever still running after 1 s: hung" in run.stdout
    assert 'test_hung.py", line 5, in test_waits_forever' in run.stdout
    assert "FAILED test_hung.py::test_waits_forever - asyncio.exceptions.CancelledError" in run.stdout
    assert "1 failed, 1 passed" in run.stdout


def test_a_test_that_blocks_its_loop_ends_the_run_with_every_threads_stack(tmp_path: Path) -> None:
    run = _run(tmp_path, "test_blocks_its_loop_forever", "test_never_reached")
    assert run.returncode == 1, run.stdout + run.stderr
    said = run.stdout + run.stderr
    assert ("test_hung.py::test_blocks_its_loop_forever still running 1 s after its tasks were "
            "cancelled; every thread's stack, then the run ends") in said
    assert 'test_hung.py", line 11 in test_blocks_its_loop_forever' in said
    assert "passed" not in said


def test_a_teardown_held_by_a_task_that_will_not_end_ends_the_run_with_every_threads_stack(
        tmp_path: Path) -> None:
    """The test passes, but leaves a task that swallows every cancellation: its loop can't
    close. The run ends with the stacks instead of hanging until CI's time is up."""
    run = _run(tmp_path, "test_leaves_a_task_that_swallows_its_cancellation", "test_never_reached")
    assert run.returncode == 1, run.stdout + run.stderr
    said = run.stdout + run.stderr
    assert ("test_hung.py::test_leaves_a_task_that_swallows_its_cancellation still tearing down 1 s "
            "after its tasks were cancelled; every thread's stack, then the run ends") in said
    assert "passed" not in said
