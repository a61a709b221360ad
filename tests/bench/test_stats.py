"""The seed spread against hand-worked cases and the definition rliable uses (scipy's trim_mean, 25%)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from distrl.bench.stats import bootstrap_ci, iqm, spread

scores = st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40)


def test_iqm_hand_cases():
    assert iqm([1, 2, 3, 100]) == 2.5  # n = 4: one trimmed from each end
    assert iqm([7, 1, 3, 5, 100, -50, 2, 4]) == pytest.approx(np.mean([2, 3, 4, 5]))  # n = 8: two each end
    assert iqm([500, 480, 120]) == pytest.approx((500 + 480 + 120) / 3)  # n = 3: floor(3/4) = 0 trimmed
    assert np.isnan(iqm([]))


@given(scores)
def test_iqm_is_the_trimmed_mean(x):
    k = len(x) // 4
    expected = np.mean(sorted(x)[k:len(x) - k])
    assert iqm(x) == pytest.approx(expected, rel=1e-9, abs=1e-6)
    assert min(x) - 1e-6 <= iqm(x) <= max(x) + 1e-6
    assert iqm(list(reversed(x))) == pytest.approx(iqm(x), rel=1e-9, abs=1e-6)


@given(scores, st.floats(-1e3, 1e3))
def test_iqm_shifts_with_the_scores(x, c):
    assert iqm([v + c for v in x]) == pytest.approx(iqm(x) + c, rel=1e-6, abs=1e-3)


def test_bootstrap_interval():
    lo, hi = bootstrap_ci([500.0] * 5)
    assert lo == hi == 500.0  # no spread, no width
    x = [100.0, 200.0, 300.0, 400.0, 500.0, 480.0, 20.0, 350.0]
    lo, hi = bootstrap_ci(x)
    assert min(x) <= lo <= iqm(x) <= hi <= max(x)
    assert bootstrap_ci(x) == bootstrap_ci(x)  # seeded: the report does not change between renders
    assert all(np.isnan(v) for v in bootstrap_ci([1.0]))


def test_spread_leaves_out_runs_that_never_got_there():
    s = spread([10.0, None, 30.0, float("nan"), 20.0])
    assert (s["n"], s["min"], s["median"], s["max"]) == (3, 10.0, 20.0, 30.0)
    assert s["iqm_ci"] is not None and spread([1.0, 2.0])["iqm_ci"] is None
    assert spread([None]) == {"n": 0}
