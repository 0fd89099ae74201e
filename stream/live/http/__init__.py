"""The service's HTTP layer: one way to answer, one table per resource.

* ``responses.py``: the one JSON answer (``send``), the one problem (``problem``), and
  how an event's ``ack`` or ``error`` is answered (``answer``: the error → status map);
* ``submit.py``: a route that submits a log event, as a device sends it;
* ``route.py``: a route table's entry (method, path, handler and its OpenAPI operation);
* one table per resource, each with its handlers: ``site.py`` (the index, probes,
  metrics and the two WebSockets), ``games.py``, ``events.py``, ``ledger.py``,
  ``tokens.py``, ``rosters.py``, ``admin.py``, ``pages.py``, ``reports.py``;
* ``routes.py``: every table, in the order the OpenAPI document lists them.

``schemas.py`` adds the two documents' own routes and builds ``/openapi.json`` from the
whole table; ``app.py`` registers that same table. A route added to a table is served
and documented, with no second list to edit.
"""
