"""The pure Rule 14 engine: no I/O, no asyncio, no wall clock, no randomness.

Follow one card: ``events.Card`` is decoded by ``codec``; ``engine.Engine``
hands it to ``game.apply``, which finds ``game.card`` in ``game.TRANSITIONS``
(the events that are not a game's are ``season``'s); the handler updates
``state.Player`` and appends ``notices.CardRecorded``, ``PenaltyAwarded`` and
``BoxEnter`` (``steps.box``); ``text.render`` adds the English and Spanish
display text, and ``view.game_view`` is what a scoreboard shows.

What follows a player out of a game: ``ledger`` (what an obligation is, which
game qualifies, how a team sheet is fitted to it), ``book`` (the ledger as the
fold keeps it, with the committee's decisions), ``tournaments`` (R15, R16).
"""
