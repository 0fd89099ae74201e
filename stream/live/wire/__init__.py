"""What crosses the wire, and who may send it: the two WebSocket protocols' frames
(``protocol.py``, msgspec tagged unions), the HTTP API's documents (``api_types.py``; the
public pages' own, ``public_types.py``),
their JSON Schemas, generated from those types (``schema_gen.py``), and signed tokens
with what each role may do (``auth.py``). Types and checks only: no socket, no task.

Imports: nothing; outside stream.live: stream.errors, stream.rules, stream.store.
Imported by: app, broadcast, devices, http, hub, lifecycle, ops, public, reports, service, viewers."""
