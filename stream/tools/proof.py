"""``arena-stream proof``: run the proof suites (``tests/proof/``, docs/reliability.md).

The suites live in the source checkout, beside the package, and need its test
extras (``pip install -e '.[test]'``). Without ``--full`` each suite runs its
bounded size, as CI does; with it, the long one (``ARENA_PROOF_FULL=1``).
Every suite prints its figures at the end, under "proof figures";
``--report FILE`` also writes them as JSON lines.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

SUITES = Path(__file__).resolve().parents[2] / "tests" / "proof"


def run(args: argparse.Namespace) -> int:
    if not SUITES.is_dir():
        print(f"arena-stream proof: no proof suites at {SUITES}; they ship with the source "
              "checkout (git clone, then pip install -e '.[test]')", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env["ARENA_PROOF_FULL"] = "1" if args.full else "0"
    if args.report is not None:
        report = args.report.resolve()
        report.unlink(missing_ok=True)
        env["ARENA_PROOF_REPORT"] = str(report)
    cmd = [sys.executable, "-m", "pytest", str(SUITES), "-p", "no:cacheprovider", *args.pytest_args]
    return subprocess.call(cmd, cwd=SUITES.parent.parent, env=env)
