from stream.rules import notices as nt

from .script import Script


def test_second_yellow_released_at_first_stoppage_after_two_minutes():
    """R3: "...sit out until the first play stoppage (including a goal) that occurs
    following the next two minutes of play"."""
    s = Script()
    s.start()
    s.run(10_000)
    s.whistle()
    s.card("h2")
    s.card("h2")
    assert s.players["h2"].box is not None
    s.start()
    assert s.run(119_999) == []
    due = s.run(1)
    assert [type(n) for n in due] == [nt.BoxEligible]
    assert s.players["h2"].box.release == "next_stoppage"
    s.run(5_000)
    out = s.goal("away")
    assert [n.player for n in s.of(nt.BoxRelease, out)] == ["h2"]
    assert s.players["h2"].box is None
