import numpy as np
import pytest


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
