"""Moving a log between stores, and events out of one: ``arena-stream import`` (an exported
log into an empty store, as the live service would have written it: ``importer.py``) and
``arena-stream archive`` (an ended, completed event out of an etcd store into a file that
``replay`` reads: ``archive.py``). ``records.py`` turns a log's lines into the records the
service writes, ``stores.py`` opens the store a command names (docs/deployment.md)."""
