"""The frames' way out: a feed's frame encoded once and written to every viewer of its
game, each viewer bounded, a slow one skipped to a snapshot or dropped, never holding
up the others (``fanout.py``); the viewers' pings from one timer (``pings.py``); a
game's broadcast graphics as the overlay control page drives them (``graphics.py``).

Imports: hub, ops, wire; outside stream.live: stream.errors, stream.rules.
Imported by: service, viewers."""
