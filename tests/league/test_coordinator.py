"""The coordinator: the next opponents chosen per request (one per other seat) with the episode before counted
(payoff, ratings, tally: one result per seat), a player against its own latest weights counted in the tally only,
the pool's versions, and every request that is not one refused in one line with nothing changed."""

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.torch import load

from distrl.league import EloRatings, Matchmaker
from distrl.league.coordinator import Coordinator


def _coordinator(mode="naive") -> Coordinator:
    c = Coordinator(Matchmaker(mode, seed=0), EloRatings(keep_history=False), {"system": "ppo", "settings": {},
                                                                               "game": "pettingzoo:g"})
    c.add_player("main", "main")
    c.publish("main", {"w": torch.zeros(3)})
    return c


def _ask(c: Coordinator, **message) -> dict:
    return json.loads(c.answer(json.dumps(message).encode()))


def test_hello_gives_the_recipe():
    assert _ask(_coordinator(), op="hello") == {"system": "ppo", "settings": {}, "game": "pettingzoo:g"}


def test_a_result_is_counted_once_and_the_next_opponent_comes_with_its_version():
    c = _coordinator()
    frozen, reset = c.snapshot("main", {"w": torch.ones(3)})
    assert (frozen, reset) == ("main@0", False)
    c.matchmaker.mode = "uniform"  # every choice is the one snapshot
    assert _ask(c, op="next", player="main", last=None) == {"opponents": [{"opponent": "main@0", "version": 1}]}
    for result in ("win", "win", "draw", "loss"):
        _ask(c, op="next", player="main", last=[{"opponent": "main@0", "result": result}])
    assert c.matchmaker.payoff.games("main", "main@0") == 4
    assert c.ratings.ratings["main"] > c.ratings.ratings["main@0"]  # two wins, a draw, a loss
    assert np.isclose(c.ratings.ratings["main"] + c.ratings.ratings["main@0"], 2000.0)
    games, tally, opponents = c.take("main")
    assert games == 4 and tally.tolist() == [2, 1, 1] and opponents == {"main@0": 4}
    assert c.take("main")[1].tolist() == [0, 0, 0]  # taken


def test_a_game_of_three_counts_a_result_per_seat_and_draws_an_opponent_per_seat():
    """A three-player game: two opponents per episode, each drawn on its own; its results, one per other seat, each
    move that pair's payoff and ratings as a game of two would; the tally counts one game."""
    c = _coordinator()
    c.snapshot("main", {"w": torch.ones(3)})
    c.add_fixed("random")
    c.matchmaker.mode = "uniform"  # each seat's choice: the snapshot or random play
    drawn = [o["opponent"] for _ in range(40) for o in _ask(c, op="next", player="main", last=None, seats=2)[
        "opponents"]]
    assert len(drawn) == 80 and set(drawn) == {"main@0", "random"}
    _ask(c, op="next", player="main", seats=2, last=[{"opponent": "main@0", "result": "win"},
                                                    {"opponent": "random", "result": "loss"}])
    assert c.matchmaker.payoff.games("main", "main@0") == c.matchmaker.payoff.games("main", "random") == 1
    assert c.matchmaker.payoff.win_rate("main", "main@0") == 1.0 and c.matchmaker.payoff.win_rate("main", "random") == 0
    assert c.ratings.ratings["main@0"] < 1000.0 < c.ratings.ratings["random"]
    games, tally, opponents = c.take("main")
    assert games == 1 and tally.tolist() == [1, 0, 1] and opponents == {"main@0": 1, "random": 1}


def test_self_play_is_tallied_but_moves_no_rate_and_no_rating():
    c = _coordinator("naive")
    for _ in range(3):
        assert _ask(c, op="next", player="main", last=[{"opponent": "main", "result": "win"}])["opponents"] == [
            {"opponent": "main", "version": 1}]
    assert c.take("main")[1].tolist() == [3, 0, 0]
    assert c.matchmaker.payoff.games("main", "main") == 0 and c.ratings.ratings["main"] == 1000.0


def test_the_pool_gives_weights_by_id_and_a_new_version_per_publish():
    c = _coordinator()
    header, _, data = c.answer(b'{"op": "pull", "id": "main"}').partition(b"\n")
    assert json.loads(header) == {"id": "main", "version": 1}
    assert torch.equal(load(data)["w"], torch.zeros(3))
    assert c.publish("main", {"w": torch.full((3,), 2.0)}) == 2
    header, _, data = c.answer(b'{"op": "pull", "id": "main"}').partition(b"\n")
    assert json.loads(header)["version"] == 2 and torch.equal(load(data)["w"], torch.full((3,), 2.0))


@pytest.mark.parametrize("request_, says", [
    (b"not json", "one JSON object"),
    (b"[1, 2]", '"op" is hello, next or pull'),
    (b'{"op": "delete"}', '"op" is hello, next or pull'),
    (b'{"op": "next", "player": "nobody", "last": null}', "not a learning player"),
    (b'{"op": "next", "player": "main@0", "last": null}', "not a learning player"),
    (b'{"op": "next", "player": "main", "last": [{"opponent": "ghost", "result": "win"}]}', '"last" is null'),
    (b'{"op": "next", "player": "main", "last": [{"opponent": "main", "result": "victory"}]}', '"last" is null'),
    (b'{"op": "next", "player": "main", "last": [{"opponent": "main", "result": "win", "x": 1}]}', '"last" is null'),
    (b'{"op": "next", "player": "main", "last": {"opponent": "main", "result": "win"}}', '"last" is null'),
    (b'{"op": "next", "player": "main", "last": []}', '"last" is null'),
    (b'{"op": "next", "player": "main", "last": [{"opponent": "main", "result": "win"}, 3]}', '"last" is null'),
    (b'{"op": "next", "player": "main", "last": null, "seats": 0}', '"seats" is the number'),
    (b'{"op": "next", "player": "main", "last": null, "seats": 16}', '"seats" is the number'),
    (b'{"op": "next", "player": "main", "last": null, "seats": true}', '"seats" is the number'),
    (b'{"op": "next", "player": "main", "last": null, "seats": "2"}', '"seats" is the number'),
    (b'{"op": "pull", "id": "main@7"}', "no policy"),
    (b'{"op": "pull", "id": ["main"]}', "no policy"),
    (b"[" * 5000, "at most 4096 bytes"),
    (b"[" * 4000, "one JSON object"),
])
def test_a_request_that_is_not_one_is_refused_and_changes_nothing(request_, says):
    c = _coordinator()
    before = c.matchmaker.payoff.state_dict()
    with pytest.raises(ValueError, match=says):
        c.answer(request_)
    after = c.matchmaker.payoff.state_dict()
    games, tally, _ = c.take("main")
    assert np.array_equal(before["totals"], after["totals"]) and games == 0 and tally.sum() == 0


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300) | st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
        ["op", "player", "last", "id", "opponent", "result", "seats"]), inner, max_size=4), max_leaves=10).map(
    lambda x: json.dumps(x).encode()))
def test_any_bytes_are_an_answer_or_one_value_error(request_):
    c = _coordinator()
    try:
        reply = c.answer(request_)
    except ValueError as e:
        assert "\n" not in str(e)
    else:
        assert isinstance(reply, bytes)


def test_a_fixed_player_is_named_not_pulled():
    c = _coordinator("uniform")
    c.add_fixed("random")
    assert _ask(c, op="next", player="main", last=None) == {"opponents": [{"opponent": "random", "version": 0,
                                                                           "fixed": True}]}
    _ask(c, op="next", player="main", last=[{"opponent": "random", "result": "win"}])
    assert c.matchmaker.payoff.games("main", "random") == 1 and c.ratings.ratings["main"] > 1000
    with pytest.raises(ValueError, match="no policy"):
        c.answer(b'{"op": "pull", "id": "random"}')
