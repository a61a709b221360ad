import numpy as np
import pytest

from distrl.replay import SumTree


def test_find_matches_prefix_sums():
    rng = np.random.default_rng(0)
    p = rng.random(37)
    p[[3, 10]] = 0.0
    t = SumTree(37)
    t.update(np.arange(37), p)
    assert t.total == pytest.approx(p.sum())
    cum = np.cumsum(p)
    u = rng.random(1000) * p.sum()
    expected = np.searchsorted(cum, u, side="right")
    np.testing.assert_array_equal(t.find(u), expected)
    assert not np.isin(t.find(u), [3, 10]).any()


def test_batch_update_keeps_every_internal_node_consistent():
    rng = np.random.default_rng(1)
    t = SumTree(100)
    for _ in range(20):
        idx = rng.integers(0, 100, 30)  # duplicates included
        t.update(idx, rng.random(30))
    leaves = t.tree[t.size:]
    level = leaves
    while level.size > 1:
        level = level.reshape(-1, 2).sum(1)
    assert t.total == pytest.approx(level[0])
    for node in range(1, t.size):
        assert t.tree[node] == pytest.approx(t.tree[2 * node] + t.tree[2 * node + 1])


def test_sampling_frequencies_match_priorities_chi_square():
    rng = np.random.default_rng(2)
    p = np.array([1.0, 2.0, 3.0, 4.0, 0.0, 10.0])
    t = SumTree(6)
    t.update(np.arange(6), p)
    draws = np.concatenate([t.sample(64, rng) for _ in range(2000)])
    counts = np.bincount(draws, minlength=6)
    expected = p / p.sum() * draws.size
    nz = expected > 0
    chi2 = ((counts[nz] - expected[nz]) ** 2 / expected[nz]).sum()
    assert counts[4] == 0
    assert chi2 < 20.5  # chi-square, 4 degrees of freedom, p = 0.0004


def test_rejects_bad_priorities():
    t = SumTree(4)
    with pytest.raises(ValueError):
        t.update(np.array([0]), np.array([-1.0]))
    with pytest.raises(ValueError):
        t.sample(4, np.random.default_rng(0))


def test_update_range_equals_update():
    rng = np.random.default_rng(3)
    a, b = SumTree(50), SumTree(50)
    for start, n in ((0, 7), (13, 20), (43, 7), (5, 1)):
        p = rng.random(n)
        a.update(np.arange(start, start + n), p)
        b.update_range(start, p)
        np.testing.assert_allclose(a.tree, b.tree)
    with pytest.raises(ValueError):
        b.update_range(45, np.ones(10))


@pytest.mark.parametrize("capacity", [1, 2, 37, 1000])
def test_compiled_walks_equal_the_numpy_walks(capacity):
    """The numba kernels do the numpy version's arithmetic: trees, found leaves and samples are identical."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(capacity)
    fast, ref = SumTree(capacity, backend="numba"), SumTree(capacity, backend="numpy")
    for _ in range(30):
        idx = rng.integers(0, capacity, 17)  # duplicates included: the last one wins in both
        p = rng.random(17) * (rng.random(17) > 0.2)
        fast.update(idx, p)
        ref.update(idx, p)
        n = int(rng.integers(1, capacity + 1))
        start = int(rng.integers(0, capacity - n + 1))
        q = rng.random(n)
        fast.update_range(start, q)
        ref.update_range(start, q)
        np.testing.assert_array_equal(fast.tree, ref.tree)
    u = rng.random(5000) * ref.total
    np.testing.assert_array_equal(fast.find(u), ref.find(u))
    np.testing.assert_array_equal(fast.sample(64, np.random.default_rng(1)), ref.sample(64, np.random.default_rng(1)))
