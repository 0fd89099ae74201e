"""The HTTP API: one way to answer, one table per resource.

* ``responses.py``: the one JSON answer (``send``), the one problem (``problem``), and
  how an event's ``ack`` or ``error`` is answered (``answer``: the error → status map);
* ``submit.py``: a route that submits a log event, as a device sends it;
* ``route.py``: a route table's entry (method, path, handler, who may call it and its
  OpenAPI operation);
* one table per resource, each with its handlers: ``site.py`` (the index, probes,
  metrics and the two WebSockets), ``games.py``, ``events.py``, ``ledger.py``,
  ``tokens.py``, ``rosters.py``, ``admin.py``, ``pages.py``, ``reports.py``, ``public.py``
  (the tournament in public: its pages, data and calendars);
* ``routes.py``: every table, in the order the OpenAPI document lists them;
* ``committee_api.py``: what a staff token may issue, list, revoke and read (a
  committee token: its own event); ``headers.py``: the browser headers on every answer;
* ``documents/``: ``/openapi.json`` and ``/asyncapi.json``; its ``schemas.py`` adds the
  two documents' own routes to the table, and ``app.py`` registers that same table. A
  route added to a table is served and documented, with no second list to edit.

Imports: devices, ops, public, reports, service, viewers, wire;
  outside stream.live: stream.errors, stream.rules, stream.store.
Imported by: app.
"""
