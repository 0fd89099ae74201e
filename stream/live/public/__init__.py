"""The tournament in public (docs/public.md): what spectators, players, grooms, parents and
the press see of an event, built from the state in memory. ``projection.py`` decides what is
public and builds each page's document (``wire/public_types.py``); ``pages.py`` renders
them as HTML on the server (``words.py``: EN/ES, times in the event's zone);
``calendar.py`` writes the iCalendar feeds. The routes are ``http/public.py``'s; the pages'
script and style are ``clients/web/public/``.

Imports: wire; outside stream.live: stream.rules.
Imported by: http.
"""
