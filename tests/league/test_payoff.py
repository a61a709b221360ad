"""The payoff table: decayed counts per ordered pair (AlphaStar's 0.99), mirrored results, draws as halves, an
unplayed pair at 0.5, the undecayed totals for reports, and a saved table that loads only if it is one."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from distrl.league import PayoffTable


def _table(decay=0.5):
    t = PayoffTable(decay)
    for p in ("a", "b", "c"):
        t.add(p)
    return t


def test_decayed_win_rate_by_hand():
    """decay 0.5: win, loss, win -> games 1.75 = (1 * .5 + 1) * .5 + 1, wins 1.25 = (1 * .5 + 0) * .5 + 1."""
    t = _table()
    for result in ("win", "loss", "win"):
        t.record("a", "b", result)
    assert np.isclose(t.win_rate("a", "b"), 1.25 / 1.75)
    assert np.isclose(t.win_rate("b", "a"), 0.5 / 1.75)  # the mirror
    assert t.games("a", "b") == t.games("b", "a") == 3
    assert t.win_rate("a", "c") == 0.5 and np.isnan(t.matrix()[0, 2])
    np.testing.assert_allclose(t.matrix()[0, 1], 2 / 3)  # undecayed


def test_a_draw_counts_half_for_both():
    t = _table(1.0)
    t.record("a", "b", "draw")
    assert t.win_rate("a", "b") == t.win_rate("b", "a") == 0.5


def test_bad_records_are_refused():
    t = _table()
    with pytest.raises(ValueError):
        t.record("a", "b", "won")
    with pytest.raises(ValueError):
        t.add("a")
    with pytest.raises(ValueError):
        PayoffTable(0.0)


def test_the_table_round_trips():
    t = _table(0.9)
    t.record("a", "b", "win")
    t.record("c", "a", "draw")
    back = PayoffTable.from_state(t.state_dict())
    assert back.players == t.players and back.win_rate("a", "b") == t.win_rate("a", "b")
    np.testing.assert_array_equal(back.matrix(), t.matrix())


@given(st.integers(0, 4), st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=8),
       st.booleans())
def test_a_damaged_state_is_refused(n, values, duplicate):
    players = [f"p{i}" for i in range(n)] + (["p0"] if duplicate and n else [])
    counts = np.resize(np.asarray(values or [0.0]), (3, len(players), len(players)))
    state = {"decay": 0.99, "players": players, "counts": counts, "totals": counts}
    sound = np.isfinite(counts).all() and (counts >= 0).all() and not (duplicate and n)
    with np.errstate(all="ignore"):
        excess = counts[1] + counts[2] - counts[0]  # more wins and draws than games
        beyond_rounding = (excess > 1e-6 * (1 + np.abs(counts[0]))).any()
    assume(not sound or beyond_rounding or (excess <= 0).all())  # decayed counts may be off by a rounding error
    valid = sound and (excess <= 0).all()
    if valid:
        assert PayoffTable.from_state(state).players == players
    else:
        with pytest.raises(ValueError):
            PayoffTable.from_state(state)


@given(st.lists(st.sampled_from(["win", "draw", "loss"]), min_size=1, max_size=300))
def test_a_table_of_decayed_counts_loads_again_and_one_with_more_wins_than_games_does_not(results):
    t = _table(0.99)
    for result in results:
        t.record("a", "b", result)
    assert PayoffTable.from_state(t.state_dict()).games("a", "b") == len(results)  # rounding is not damage
    state = t.state_dict()
    state["totals"][1, 0, 1] = state["totals"][0, 0, 1] + 1  # a win more than the games played
    with pytest.raises(ValueError, match="more wins and draws than games"):
        PayoffTable.from_state(state)
