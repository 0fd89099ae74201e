"""``arena-stream bench all --quick``: it runs, stops by itself, prints one table with every
row (the median and the worst of the rounds, never a best) and writes it as Markdown. No
assertion on speed: the figures are for the full run."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stream.tools.bench_all import APART

# Each runs benchmarks or whole pytest sessions in processes of its own: seconds to minutes.
pytestmark = pytest.mark.slow

ROWS = (
    r"fold rate \([\d,]+ events\)",
    r"fold / decode time",
    r"cold start, [\d,]+ events logged",
    r"group commit, 50 devices \(SqliteStore\)",
    r"end to end, 50 devices \(the service\)",
    r"viewer p99 vs bare websockets",
    r"viewer p99 vs Node ws",
    r"viewer p99 vs bare websockets, contended",
    r"viewer p99 vs Node ws, contended",
    r"ack p99, one device alone, vs raw commit p99",
    r"ack p99 under fan-out vs raw commit p99",
    r"memory per idle viewer",
    r"loop stall under fan-out",
    r"the tail: worst round vs median round",
    r"loop stall, idle viewers connecting",
    r"loop stall, idle viewers leaving",
    r"instructions per delivered frame",
    r"instructions per acked event",
    r"cross-node p99 vs single node",
    r"saturation point \(viewer p99 crosses 100 ms\)",
)
#: Rows a --quick run leaves to ``bench instructions`` (valgrind is too slow for a smoke test).
NOT_IN_QUICK = ("instructions per delivered frame", "instructions per acked event")


def test_bench_all_quick_prints_every_row_and_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "performance.md"
    # A report it replaces: the section of figures measured apart is kept as it was.
    apart = f"{APART}\n\n- bench race: median 1.19×, kept as written\n"
    out.write_text(f"# Performance\n\nan older table\n\n{apart}")
    res = subprocess.run([sys.executable, "-m", "stream", "bench", "all", "--quick", "--out", str(out)],
                         capture_output=True, text=True, timeout=240)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Traceback" not in res.stderr, res.stderr
    table = res.stdout.split("bench all: every figure and its goal", 1)[1]
    for row in ROWS:
        m = re.search(rf"^{row}\s+(\S.*?)\s{{2,}}(\S.*?)\s{{2,}}(met|missed|—)$", table, re.M)
        if m is None and row.startswith("viewer p99 vs Node") and shutil.which("node") is None:
            m = re.search(rf"^{row}\s+not measured: node not found", table, re.M)
        if m is None and row.startswith("viewer p99 vs Node") and shutil.which("npm") is None:
            m = re.search(rf"^{row}\s+not measured: npm not found", table, re.M)
        if m is None and row.startswith("cross-node") and shutil.which("etcd") is None:
            m = re.search(rf"^{row}\s+not measured: etcd not found", table, re.M)
        if row in NOT_IN_QUICK:
            m = re.search(rf"^{row}\s+not measured: --quick \(arena-stream bench instructions counts them\)",
                          table, re.M)
        assert m, f"no row {row!r} in:\n{table}"
        assert "not measured" not in m[0] or "not found" in m[0] or row in NOT_IN_QUICK, m[0]
    # The median and the worst of the rounds, never the best: in the table and all the output.
    assert not re.search(r"\bbest\b", res.stdout, re.I), res.stdout
    for row in ("viewer p99 vs bare websockets", "viewer p99 vs bare websockets, contended",
                "cross-node p99 vs single node"):
        assert re.search(rf"^{row}\s+\d+\.\d\d× median \([\d.]+ vs [\d.]+ ms\); worst \d+\.\d\d×", table,
                         re.M), row
    assert re.search(r"^the tail: worst round vs median round\s+\d+\.\d\d× quiet \(seconds over 50 ms: \d+, "
                     r"outside the process \d+, not attributed \d+\)(; \d+\.\d\d× contended|\s)", table,
                     re.M), table
    assert re.search(r"^cold start.*\d+\.\d\d s restart, median of 2 \(worst \d+\.\d\d s", table, re.M)
    for row in ("loop stall under fan-out", "loop stall, idle viewers connecting",
                "loop stall, idle viewers leaving"):
        assert re.search(rf"^{row}\s+max \d+\.\d\d ms", table, re.M), row
    # The peers' own stall probes beside the service's (the Node peer where node and npm are).
    node = shutil.which("node") is not None and shutil.which("npm") is not None
    for row in ("loop stall, idle viewers connecting", "loop stall, idle viewers leaving"):
        peers = r"; bare websockets: max \d+\.\d\d ms, p99 \d+\.\d\d ms" + (
            r"; Node ws: max \d+\.\d\d ms, p99 \d+\.\d\d ms" if node else "")
        assert re.search(rf"^{row}\s+max \d+\.\d\d ms, p99 \d+\.\d\d ms \(200 viewers at once{peers}\)",
                         table, re.M), row
    assert re.search(r"^memory per idle viewer\s+-?\d+\.\d KiB \(200 viewers; bare websockets -?\d+\.\d KiB"
                     + (r"; Node ws -?\d+\.\d KiB" if node else "") + r"\)", table, re.M), table
    assert re.search(r"^group commit.*\d+\.\d× median of 1 \(worst \d+\.\d×; [\d,]+ events/s vs [\d,]+ "
                     r"single commits/s; SQLite alone at 50 rows a commit: \d+\.\d×\)", table, re.M)
    assert re.search(r"^end to end.*[\d,]+ acked events/s", table, re.M)
    # The saturation point of each server, the median round and the worst, and the service's over Node's.
    point = r"(?:[<>] )?[\d,]+"
    ratio = r"(?:(?:[<>] )?\d+\.\d\d×|ratio unknown)"
    node_cell = (rf"; Node ws {point} \(worst {point}\)" if node else "; Node ws not measured: [^;]+")
    assert re.search(rf"^saturation point \(viewer p99 crosses 100 ms\)\s+arena-stream {point} frames/s "
                     rf"median \(worst {point}\){node_cell}; bare websockets {point} \(worst {point}\); "
                     + (rf"{ratio} Node ws \(worst {ratio}\), " if node else "")
                     + rf"{ratio} bare websockets \(worst {ratio}\).*\s{{2,}}≥ Node ws\s{{2,}}"
                     r"(met|missed|—)$", table, re.M), table

    md = out.read_text()
    assert md.startswith("# Performance\n")
    assert "an older table" not in md and md.endswith("\n\n" + apart)
    assert "`arena-stream bench all --quick --out " in md
    for key in ("CPU", "cores", "memory", "kernel", "Python", "SQLite", "etcd", "Node"):
        assert re.search(rf"^\| {key} \| \S", md, re.M), key
    assert re.search(r"^\| figure \| measured \| goal \| \|$", md, re.M)
    for row in ROWS:
        assert re.search(rf"^\| {row} \| ", md, re.M), row


def test_only_a_full_run_writes_the_tracked_report_and_only_when_asked(tmp_path: Path) -> None:
    """docs/performance.md is tracked and quoted by docs/deployment.md: a run writes nothing
    unless asked, ``--write`` is the tracked report, and ``--quick`` never writes it."""
    from stream.tools.all_bench.output import TRACKED_REPORT, ReportRefused, report_path

    here = Path(__file__).resolve().parents[1] / TRACKED_REPORT
    assert report_path(write=False, out=None, quick=False) is None
    assert report_path(write=False, out=None, quick=True) is None
    assert report_path(write=True, out=None, quick=False) == TRACKED_REPORT
    assert report_path(write=False, out=tmp_path / "p.md", quick=True) == tmp_path / "p.md"
    for write, out in ((True, None), (False, TRACKED_REPORT), (False, here)):
        with pytest.raises(ReportRefused, match=r"--quick never writes docs/performance\.md"):
            report_path(write=write, out=out, quick=True)


@pytest.mark.parametrize("where", [["--write"], ["--out", "docs/performance.md"]])
def test_bench_all_quick_refuses_the_tracked_report_before_it_runs(where: list[str]) -> None:
    report = Path(__file__).resolve().parents[1] / "docs" / "performance.md"
    before = report.read_bytes() if report.exists() else None
    res = subprocess.run([sys.executable, "-m", "stream", "bench", "all", "--quick", *where],
                         cwd=report.parents[1], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert "bench all --quick never writes docs/performance.md" in res.stderr
    assert "== replay" not in res.stdout, "refused before any section ran"
    assert (report.read_bytes() if report.exists() else None) == before


def test_bench_all_help_says_what_it_writes() -> None:
    res = subprocess.run([sys.executable, "-m", "stream", "bench", "all", "--help"],
                         capture_output=True, text=True, timeout=60, check=True)
    text = " ".join(res.stdout.split())
    assert "It writes nothing unless asked" in text
    assert "--write write the report to docs/performance.md" in text and "refused with --quick" in text
