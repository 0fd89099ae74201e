"""The officials' handhelds in: the device socket (``ingest.py``: its first frame
authenticates it; each event frame is rate-limited, stamped with the time it was
received, authorized, given its dedup digest and submitted to the hub, and answered
with an ``ack`` once committed, or an ``error``), and the same submission for the
HTTP routes that send a log event.

Imports: hub, ops, service, wire; outside stream.live: stream.errors, stream.rules.
Imported by: http."""
