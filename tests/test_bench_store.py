"""``arena-stream bench store`` at a tiny size: it starts a SQLite node and a three-member
etcd cluster with two nodes, runs every case in interleaved rounds, stops by itself, and
prints each round, then per case the median and the worst (never a best), every figure a
number and every case with acks. No assertion on speed: the figures are for the full
benchmark to print (docs/performance.md)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.etcd]

NUM = r"([\d,]+)"


def test_bench_store_prints_each_case_median_and_worst_in_interleaved_rounds() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "stream", "bench", "store", "--rounds", "2", "--seconds", "1",
         "--devices", "4", "--games", "1,4"],
        capture_output=True, text=True, timeout=300)
    out = res.stdout
    assert res.returncode == 0, out + res.stderr
    assert "Traceback" not in res.stderr, res.stderr
    assert not re.search(r"\bbest\b", out, re.I), out
    rounds = re.findall(r"^round (\d): (.*)$", out, re.M)
    assert [r[0] for r in rounds] == ["1", "2"], out
    first = [c.split(" ")[0] for c in rounds[0][1].split("; ")]
    second = [c.split(" ")[0] for c in rounds[1][1].split("; ")]
    assert first == ["sqlite,", "etcd,", "sqlite,", "etcd,"] and second == first[::-1], out  # interleaved
    assert "2 interleaved rounds of 1 s, 4 devices closed loop: median (worst)" in out, out
    for games in (1, 4):
        for what in ("one node on SQLite", "two nodes on 3 etcd members"):
            row = re.search(rf"^\s+{games} games, {re.escape(what)}\s*: +{NUM} acked/s \({NUM}\), ack p99 +"
                            r"(\d+\.\d) ms \((\d+\.\d)\)$", out, re.M)
            assert row, f"no {games}-game {what} row in:\n{out}"
            median, worst = (int(row[i].replace(",", "")) for i in (1, 2))
            assert 0 < worst <= median, row[0]
            assert float(row[3]) <= float(row[4]), row[0]
        ratio = rf"^\s+{games} games, etcd / SQLite acked/s: \d+\.\d\d x \(\d+\.\d\d x\)$"
        assert re.search(ratio, out, re.M), out
