"""The live service: ingest, the hub, the fan-out, both WebSocket protocols and the HTTP API.

It sits on the pure rule engine (``stream.rules``) and a store (``stream.store``) and imports
nothing from ``stream.tools``."""
