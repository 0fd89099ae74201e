"""The machine-readable API documents, built from the route table and the wire types:
``/openapi.json`` (``openapi_doc.py``) and ``/asyncapi.json`` (``asyncapi_doc.py``),
each built once, and the whole route table with their two routes (``schemas.py``)."""
