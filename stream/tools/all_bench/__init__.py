"""``arena-stream bench all``, by job: ``sections`` (the order, and the replay and
fan-out sections), ``cold`` (cold start), ``commits`` (group commit, end to end,
one device's ack), ``report`` (rows, table, Markdown, the machine) and
``options`` (the sizes). The entry point and what it all means:
``stream/tools/bench_all.py``."""
