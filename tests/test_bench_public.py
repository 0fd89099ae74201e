"""``arena-stream bench public --quick`` at a tiny size: it runs, stops by itself and prints
each round (A: spectators on the event's socket, without the page load and with it; B:
single-game viewers), then each figure beside its goal, the median round and the worst,
never a best one, every figure a number, and no frame lost or repeated. No assertion on
speed: the figures are for the full benchmark to print (docs/performance.md)."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

import pytest

from stream.tools.bench_public import add_arguments, options

pytestmark = pytest.mark.slow

FIG = r"(\d+\.\d+)x?"
GOALS = {  # each row of the table: its goal ("-": printed for reference, no goal)
    "memory per idle spectator (KiB)": "<= 8",
    "spectators' p99, ack to frame (ms)": "-",
    "  the same, with the page load (ms)": "-",
    "single-game viewers' p99 (ms)": "-",
    "event / single-game p99": "<= 1.00x",
    "GET /events/bench-cup p99 at 200/s (ms)": "<= 50",
    "devices' ack p99, no page load (ms)": "-",
    "devices' ack p99, page load (ms)": "-",
    "ack p99 with / without page load": "<= 1.00x",
}


def test_bench_public_quick_prints_every_figure_beside_its_goal() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "stream", "bench", "public", "--quick", "--spectators", "50", "--games", "2",
         "--seconds", "2"],
        capture_output=True, text=True, timeout=400)
    out = res.stdout
    assert res.returncode == 0, out + res.stderr
    assert "Traceback" not in res.stderr, res.stderr
    assert not re.search(r"\bbest\b", out, re.I), "a best round reported:\n" + out
    assert re.search(r"^bench public: 50 spectators, 2 games live in event bench-cup, .* 1 round\(s\) of A "
                     r"and of B, interleaved .*--quick: small sizes", out, re.M), out
    m = re.search(r"^  A1 \(event sockets, load average \d+\.\d\d\): 50 viewers; the service's RSS "
                  rf"\+(-?\d+\.\d+) KiB each \(each sent {FIG} KiB to join\)", out, re.M)
    assert m and float(m[2]) > 0, out
    assert re.search(r"^  B1 \(single-game sockets, ", out, re.M), out
    stretches = re.findall(r"^    (without|with) the page load: (\d+) events acked, 0 refused, ([\d,]+) "
                           rf"frames timed, p99 {FIG} ms, ack p99 {FIG} ms, lost 0, repeated 0", out, re.M)
    assert [s[0] for s in stretches][-1] == "without" and len(stretches) == 3, out  # A: both; B: without
    for _, acked, timed, *_ in stretches:
        # 2 games at 1 event/s for 2 s; every viewer gets each delta of the games it follows.
        assert int(acked) == 4 and int(timed.replace(",", "")) in (4 * 50, 2 * 50), out
    assert re.search(r"; [\d,]+ pages answered, p99 \d+\.\d ms, failed 0$", out, re.M), out
    for label, goal in GOALS.items():
        row = re.search(rf"^{re.escape(label)}\s+{re.escape(goal)}\s+{FIG}\s+{FIG}(\s+(met|missed))?$",
                        out, re.M)
        assert row, f"no row {label!r} in:\n{out}"
        assert bool(row[4]) == (goal != "-"), row[0]
        assert float(row[1]) <= float(row[2]), f"the median round above the worst: {row[0]}"
    assert re.search(r"^frames lost 0, repeated 0; events refused 0; pages failed 0$", out, re.M), out


def parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_arguments(p)
    return p.parse_args(argv)


def test_quick_takes_small_sizes_and_the_open_file_limit_caps_the_spectators() -> None:
    opts, note = options(parse("--quick"), 20_000)
    assert (opts.spectators, opts.rounds) == (500, 1) and "--quick" in note
    opts, note = options(parse(), 20_000)
    assert (opts.spectators, opts.games, opts.rounds, note) == (5000, 8, 3, "")
    opts, note = options(parse(), 3000)
    assert opts.spectators < 3000 and "open-file limit (3000)" in note, note
    with pytest.raises(SystemExit, match="must be positive"):
        options(parse("--spectators", "0"), 20_000)
