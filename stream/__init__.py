"""Arena Stream: a real-time match event service for USPA arena polo.

``stream.rules`` is the pure Rule 14 engine (events in, state and notices
out); everything else is the shell around it.
"""

__version__ = "0.1.0"
