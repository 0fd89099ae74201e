"""The live service, in rooms named for the way an event travels, each importing only from
the rooms below it (each room's docstring says what it may import and who imports it;
``tests/live/test_rooms.py`` holds those rules):

* ``wire/``: the frames, documents and tokens both sides speak; ``ops/``: running a node;
* ``hub/``: the log's way in, dedup, durable commit, the fold and each game's feed;
* ``broadcast/``: the frames' way out to every viewer, encoded once;
* ``service.py``: the running service that holds them (hub, fan-out, pings, limits);
* ``devices/``: the handhelds' socket in; ``viewers/``: the viewers' sockets out;
* ``reports/``: the game report, its CSV and printable, the committee's decisions;
* ``public/``: the tournament in public, its pages built from what the hub holds;
* ``http/``: the HTTP API and its documents;
* ``lifecycle.py`` and ``app.py``: the store from the settings, the tasks beside the
  handlers, and the aiohttp app that wires it all.

It sits on the pure rule engine (``stream.rules``) and a store (``stream.store``) and imports
nothing from ``stream.tools``."""
