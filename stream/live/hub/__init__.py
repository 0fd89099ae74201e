"""The log's way in and the fold: where an event becomes durable and is applied. The hub
(``hub.py``) takes an event, answers a retry from its dedup key (``dedup.py``), folds it
with the engine, commits it with its key, and hands each game's change to its feed
(``feeds.py``: the view viewers see, deltas in seq order, snapshots, history). Beside
it: the cached fold (``snapshot.py``), other nodes' records folded in (``follower.py``),
a seq race lost to another node (``races.py``) and the engine's next deadline turned
into a ``tick`` (``timer.py``). It knows no socket: the fan-out is handed to it.

Imports: ops, wire; outside stream.live: stream, stream.errors, stream.rules, stream.store, stream.tasks.
Imported by: broadcast, devices, lifecycle, reports, service, viewers."""
