"""Elo ratings per player over time: a strong player rises above a weak one; a snapshot starts at its parent's."""

import pytest

from distrl.league import EloRatings


def test_the_winner_rises_and_a_snapshot_starts_at_its_parents_rating():
    r = EloRatings(k=32)
    r.add("main")
    r.add("random")
    for step in range(50):
        r.record("main", "random", "win", step)
    assert r.ratings["main"] > 1200 > 800 > r.ratings["random"]
    assert r.ratings["main"] + r.ratings["random"] == pytest.approx(2000)
    r.add("main@0", steps=50, like="main")
    assert r.ratings["main@0"] == r.ratings["main"] and r.history[-1] == (50, "main@0", r.ratings["main"])


def test_an_unknown_result_is_refused():
    r = EloRatings()
    r.add("a")
    r.add("b")
    with pytest.raises(ValueError):
        r.record("a", "b", "resigned", 0)
