"""The viewers' sockets: the listening socket that hands a fresh ``GET /ws/watch`` to the
task-free viewer endpoint and everything else to aiohttp (``front_door.py``), that
endpoint (``viewer_socket.py``: websockets' Sans-I/O protocol over an
``asyncio.Protocol``), and a viewer's session whichever socket serves it (``watch.py``:
its subscriptions, auth, resume and answers).

Imports: broadcast, hub, ops, service, wire; outside stream.live: stream.errors, stream.tasks.
Imported by: http."""
