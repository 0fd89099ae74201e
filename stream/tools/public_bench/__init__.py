"""``arena-stream bench public``, by job: ``spectators`` (the viewers of every game of an
event, or of one game, in worker processes), ``pages`` (the event page's HTTP load, a
process of its own), ``run`` (the service, the devices and the rounds) and ``report``
(the table). The entry point and what it all means: ``stream/tools/bench_public.py``."""
