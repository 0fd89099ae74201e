"""``arena-stream bench fanout`` at a tiny size: it runs, stops by itself and prints its
table. No assertion on speed: the figures are for the full benchmark to print."""

from __future__ import annotations

import re
import subprocess
import sys

NUM = r"(\d+\.\d+|n/a)"


def test_bench_fanout_runs_and_prints_the_table() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "stream", "bench", "fanout", "--viewers", "20", "--rate", "20",
         "--seconds", "2", "--idle-viewers", "200"],
        capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert "Traceback" not in res.stderr, res.stderr
    assert re.search(r"^fanout: 20 viewers, 20 events/s for 2 s, delta \d+\.\d KiB", out, re.M), out
    for label in ("bare websockets", "arena-stream"):
        m = re.search(rf"^{label}\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+)\s+(\d+)$", out, re.M)
        assert m, out
        assert (m[3], m[4]) == ("0", "0"), f"{label}: lost {m[3]}, duplicated {m[4]}"
    assert re.search(rf"^viewer p99 ratio\s+{NUM}\s+\(goal <= 1\.25\)$", out, re.M), out
    assert re.search(rf"^ack p99\s+{NUM} ms\s+raw SQLite FULL commit p99 {NUM} ms", out, re.M), out
    m = re.search(rf"^idle viewers\s+(\d+) opened: {NUM} KiB each \(bare websockets: {NUM} KiB\)", out, re.M)
    assert m and int(m[1]) > 0, out
    # Every frame timed: 40 events to each of 20 viewers, on both servers, in each of two rounds.
    assert out.count("40 acked, 800 frames timed over 20 viewers") == 4, out
