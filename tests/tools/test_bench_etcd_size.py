"""``arena-stream bench etcd-size`` at a small size, on its own real three-member cluster:
the database grows with the records, compaction and defragmentation bring it back down to
what the log itself takes, a snapshot holds it, and the quotas' figures follow from that."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream.cli import main
from stream.tools.bench_etcd_size import GIB, measure, report

pytestmark = pytest.mark.etcd   # it starts an EtcdCluster of its own


def test_the_sizes_grow_with_the_log_and_compaction_takes_back_the_history(tmp_path: Path) -> None:
    said: list[str] = []
    s = measure(600, tmp_path, said.append)
    assert said[0].startswith("bench etcd-size: 3 members started")
    assert s.events == 600 and s.keys == 2 * 600 + 2     # each record, its dedup key; epoch, head
    assert s.db_empty < s.db_compacted <= s.db_after
    assert s.per_event >= s.body_bytes / s.events        # the body is in every record
    assert s.snapshot >= s.db_compacted - s.db_empty
    assert s.holds(8 * GIB) > 3 * s.holds(2 * GIB) > 0
    lines = report(s)
    assert lines[-1].startswith("the default quota (2 GiB) holds about ")


def test_the_command_refuses_a_size_that_is_not_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match="--events must be positive"):
        main(["bench", "etcd-size", "--events", "0"])
    assert capsys.readouterr().out == ""
