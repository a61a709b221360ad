"""PFSP's weightings (AlphaStar, Methods) and Elo, against hand-worked cases and properties."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from distrl.ops.league import elo_expected, elo_update, monotonic_suffix_removed, pfsp_probabilities


def test_squared_weighting_by_hand():
    """(1 - x)^2 of [0, 0.5, 1] is [1, 0.25, 0]: 0.8 and 0.2, never the opponent A always beats."""
    np.testing.assert_allclose(pfsp_probabilities([0.0, 0.5, 1.0], "squared"), [0.8, 0.2, 0.0])


def test_variance_weighting_favours_opponents_of_the_same_level():
    np.testing.assert_allclose(pfsp_probabilities([0.1, 0.5, 0.9], "variance"), np.array([0.09, 0.25, 0.09]) / 0.43)


def test_linear_capped_by_hand():
    np.testing.assert_allclose(pfsp_probabilities([0.0, 0.8], "linear_capped"), [0.5 / 0.7, 0.2 / 0.7])


def test_an_opponent_beaten_always_everywhere_leaves_a_uniform_choice():
    np.testing.assert_allclose(pfsp_probabilities([1.0, 1.0, 1.0], "squared"), [1 / 3] * 3)


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20), st.sampled_from(["squared", "variance", "linear",
                                                                                 "linear_capped"]))
def test_probabilities_are_a_distribution_that_never_prefers_an_easier_opponent(rates, weighting):
    p = pfsp_probabilities(rates, weighting)
    assert np.isclose(p.sum(), 1.0) and (p >= 0).all()
    if weighting in ("squared", "linear"):  # monotone: a harder opponent is at least as likely
        order = np.argsort(rates)
        assert (np.diff(p[order]) <= 1e-12).all()


@pytest.mark.parametrize("rates, weighting", [([], "squared"), ([0.5, 1.5], "squared"), ([np.nan], "squared"),
                                              ([0.5], "hard")])
def test_bad_input_is_refused(rates, weighting):
    with pytest.raises(ValueError):
        pfsp_probabilities(rates, weighting)


@given(st.floats(-3000, 3000), st.floats(-3000, 3000), st.sampled_from([0.0, 0.5, 1.0]))
def test_elo_is_zero_sum_and_symmetric(a, b, score):
    assert np.isclose(elo_expected(a, b) + elo_expected(b, a), 1.0)
    new_a, new_b = elo_update(a, b, score)
    assert np.isclose(new_a + new_b, a + b)
    assert (new_a - a) * (score - elo_expected(a, b)) >= 0  # a better result than expected never lowers A


def test_elo_by_hand():
    """Equal ratings: expected 0.5, a win moves k/2; 400 points apart: expected 10/11."""
    assert elo_expected(1000, 1000) == 0.5 and elo_update(1000, 1000, 1.0, k=32) == (1016.0, 984.0)
    assert np.isclose(elo_expected(1400, 1000), 10 / 11)
    with pytest.raises(ValueError):
        elo_update(0, 0, 2.0)


@pytest.mark.parametrize("rates, keep", [([0.2, 0.5, 0.4, 0.3], 2), ([0.9, 0.5, 0.1], 0), ([0.1, 0.2, 0.3], 3),
                                         ([], 0), ([0.4], 0)])
def test_the_falling_suffix_is_cut(rates, keep):
    assert monotonic_suffix_removed(rates) == keep
