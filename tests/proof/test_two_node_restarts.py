"""Proof 7, restarts: ``arena-stream bench nodes`` in small. Two nodes on one etcd cluster
(three members); officials' devices send to both nodes at once for one game (the nodes
race for its ``seq``) and move over when theirs is down; viewers on both nodes resume with
``since``/``epoch`` on whichever is up; node A, node B and etcd (the member leading at
that moment) are each restarted at least once per run, SIGKILLed or stopped cleanly, at
seeded random moments.

Each run: every acked event logged once, in its device's order, nothing unsent; no viewer
saw a gap or a repeat, and all caught up; each node's live state equals a fresh replay of
its log."""

from __future__ import annotations

from pathlib import Path

from stream.tools.bench_nodes import NodesOptions, bench_nodes, summary

from .conftest import Figures, scale


async def test_two_nodes_restarted_at_random_show_no_gap(tmp_path: Path, figures: Figures) -> None:
    opts = NodesOptions(runs=scale(2, 5), seconds=scale(8, 20), seed=2026, viewers=scale(3, 4))
    lines: list[str] = []
    results = await bench_nodes(opts, workdir=tmp_path, out=lines.append)
    for line in lines + summary(results):
        figures(line)
    figures.values.update(runs=len(results), ok=sum(r.ok for r in results),
                          acked=sum(r.acked for r in results),
                          restarts=sum(len(r.faults) for r in results))
    assert len(results) == opts.runs
    for r in results:
        assert r.log is not None, "\n".join(r.lines())
        assert {f.target for f in r.faults} == {"node-a", "node-b", "etcd"}, r.faults
        assert all(f.began >= 0 and f.out > 0 for f in r.faults), "every restart happened"
        assert r.acked > 0 and all(r.acked_on), f"both nodes took events: {r.acked_on}"
        assert (r.log.lost, r.log.doubled, r.log.unsent) == (0, 0, 0), "\n".join(r.lines())
        assert r.log.order_kept and r.log.logged == r.acked, "\n".join(r.lines())
        assert r.log_records == r.final_seq, "the log holds seq 1 to the last, nothing more"
        assert (r.gaps, r.repeats) == (0, 0), "\n".join(r.lines())
        assert r.caught_up and r.live_equals_replay == [True, True], "\n".join(r.lines())
        assert r.ok and not r.error, "\n".join(r.lines())
