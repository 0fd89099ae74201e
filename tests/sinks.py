"""A ``Sink`` for a hub built in a test (``stream/live/hub/feeds.py``): each delta it shows goes
to ``publish``; the rest (a new game, a roster, notices) goes nowhere: the test
watches the deltas."""

from __future__ import annotations

from collections.abc import Callable

from stream.live.hub.feeds import Frames


class Deltas:
    def __init__(self, publish: Callable[[str, Frames], None] = lambda game, frames: None) -> None:
        self.publish = publish

    def new_game(self, game: str, arena: str, event: str, snapshot: Frames, roster: Frames) -> None:
        pass

    def publish_roster(self, game: str, frames: Frames) -> None:
        pass

    def publish_notices(self, game: str, frames: Frames) -> None:
        pass
