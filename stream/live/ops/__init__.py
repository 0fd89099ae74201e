"""Running a node: the settings ``arena-stream serve`` runs on (``config.py``), JSON logs
(``logs.py``), Prometheus metrics (``metrics.py``), the loop-stall probe (``stall.py``),
the garbage collector kept from stalling the loop (``heap.py``), crashes on purpose
where the proofs need them (``failpoints.py``), the wall clock in the log's unit
(``wallclock.py``) and the event loop a node serves on (``loops.py``).

Imports: wire; outside stream.live: stream.errors, stream.store.
Imported by: app, broadcast, devices, http, hub, lifecycle, reports, service, viewers."""
