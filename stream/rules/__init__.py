"""The pure Rule 14 engine: no I/O, no asyncio, no wall clock, no randomness.

Follow one card: ``events.Card`` is decoded by ``codec``; ``engine.Engine``
routes it to ``game.card`` through ``game.TRANSITIONS``; the handler updates
``state.Player`` and appends ``notices.CardRecorded``, ``PenaltyAwarded`` and
``BoxEnter``; ``text.render`` adds the English and Spanish display text, and
``view.game_view`` is what a scoreboard shows.
"""
