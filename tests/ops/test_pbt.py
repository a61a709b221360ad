import numpy as np
import pytest

from distrl.ops import pbt_exploit_explore


def test_bottom_fifth_copies_top_fifth_and_perturbs():
    scores = [5, 1, 9, 3, 7, 2, 8, 4, 6, 0]  # bottom 2: members 9 (0) and 1 (1); top 2: members 2 (9) and 6 (8)
    hp = [{"lr": float(i + 1)} for i in range(10)]
    decisions = pbt_exploit_explore(scores, hp, np.random.default_rng(0))
    assert sorted(d.member for d in decisions) == [1, 9]
    for d in decisions:
        assert d.source in (2, 6)
        ratio = d.hyperparams["lr"] / hp[d.source]["lr"]
        assert ratio == pytest.approx(0.8) or ratio == pytest.approx(1.2)


def test_resample():
    hp = [{"lr": 1.0}] * 5
    decisions = pbt_exploit_explore([1, 2, 3, 4, 5], hp, np.random.default_rng(0), resample_prob=1.0,
                                    resample={"lr": lambda rng: 42.0})
    assert decisions[0].member == 0 and decisions[0].hyperparams == {"lr": 42.0}


def test_small_population_does_nothing():
    assert pbt_exploit_explore([1.0, 2.0], [{}, {}], np.random.default_rng(0)) == []
