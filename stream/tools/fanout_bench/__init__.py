"""``arena-stream bench fanout``, by job: ``run`` (the processes and the phases in
order), ``phases`` (a load round, idle viewers, the delta probe, raw SQLite
commits), ``peers`` (the bare websockets server and the Node ``ws`` peer) and
``report`` (the tables). The entry point and what it all means:
``stream/tools/bench_fanout.py``."""
