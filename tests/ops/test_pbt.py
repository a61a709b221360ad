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


def test_truncation_source_for_one_ready_member():
    from distrl.ops import truncation_source

    rng = np.random.default_rng(0)
    scores = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0, 8.0, 4.0]  # ceil(8 * 0.2) = 2: bottom {1, 5}, top {2, 6}
    assert {truncation_source(1, scores, rng) for _ in range(40)} == {2, 6}
    assert truncation_source(5, scores, rng) in (2, 6)
    assert all(truncation_source(m, scores, rng) is None for m in (0, 2, 3, 4, 6, 7))
    # members without a score yet are not ranked; two members: the worse copies the better
    assert truncation_source(0, [1.0, float("-inf"), float("nan")], rng) is None
    assert truncation_source(0, [1.0, 2.0], rng) == 1 and truncation_source(1, [1.0, 2.0], rng) is None
    with pytest.raises(ValueError):
        truncation_source(0, [1.0, 2.0], rng, fraction=0.6)


def test_truncation_source_never_copies_an_equal_score():
    from distrl.ops import truncation_source

    assert truncation_source(0, [500.0, 500.0, 500.0, 500.0], np.random.default_rng(0)) is None
