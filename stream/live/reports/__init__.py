"""What leaves the arena on paper: the game report as one projection of the engine's state
(``report.py``), its CSV (``report_csv.py``), its printable page (``report_html.py``,
with its play-time timeline, ``report_timeline.py``, and the words it prints,
``report_words.py``), the report as the public reads it (``public_report.py``), and the
committee's decisions read back (``audit.py``).

Imports: hub, ops, wire; outside stream.live: stream.errors, stream.rules, stream.store.
Imported by: http."""
