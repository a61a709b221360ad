"""Explore specs: parsing (generated bad input gets one ConfigError), draws inside their bounds, perturbations."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.errors import ConfigError
from distrl.pbt.search import Explore


def test_parse_the_three_forms():
    assert Explore.parse("lr=loguniform(1e-4, 1e-2)") == Explore("lr", "loguniform", (1e-4, 1e-2))
    assert Explore.parse(" entropy_coef = uniform(0,0.1) ") == Explore("entropy_coef", "uniform", (0.0, 0.1))
    assert Explore.parse("entropy_coef=choice(0.03,0.0,0.01)").values == (0.0, 0.01, 0.03)


@pytest.mark.parametrize("text", ["lr", "lr=normal(0,1)", "lr=loguniform(0,1)", "lr=uniform(2,1)", "lr=choice(1)",
                                  "lr=uniform(a,b)", "1lr=uniform(0,1)", "lr=uniform(0,inf)", "lr=uniform(0,1,2)"])
def test_bad_specs_say_what_is_valid(text):
    with pytest.raises(ConfigError) as e:
        Explore.parse(text)
    assert "\n" not in str(e.value) and text.split("=")[0] in str(e.value)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_text_parses_or_is_one_config_error(text):
    try:
        spec = Explore.parse(text)
    except ConfigError as e:
        assert "\n" not in str(e)
        return
    rng = np.random.default_rng(0)
    assert math.isfinite(spec.sample(rng))


@settings(max_examples=100, deadline=None)
@given(st.floats(1e-8, 1e3), st.floats(1.01, 1e4), st.integers(0, 2**31))
def test_draws_and_perturbations_stay_inside_the_bounds(low, ratio, seed):
    rng = np.random.default_rng(seed)
    for kind in ("uniform", "loguniform"):
        spec = Explore("x", kind, (low, low * ratio))
        for _ in range(5):
            v = spec.sample(rng)
            assert low <= v <= low * ratio * (1 + 1e-12)
            p = spec.perturb(v, rng)
            assert low <= p <= low * ratio * (1 + 1e-12)
            assert p in (pytest.approx(v * 0.8), pytest.approx(v * 1.2), low, low * ratio)


def test_a_choice_moves_to_a_neighbour():
    spec = Explore.parse("c=choice(0,0.01,0.03)")
    rng = np.random.default_rng(0)
    moves = {spec.perturb(0.01, rng) for _ in range(50)}
    assert moves == {0.0, 0.03}
    assert {spec.perturb(0.0, rng) for _ in range(50)} <= {0.0, 0.01}
