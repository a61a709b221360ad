import numpy as np
import pytest

from distrl.ops import NoiseTable, centered_ranks, es_gradient


def test_centered_ranks_simple():
    np.testing.assert_allclose(centered_ranks(np.array([10.0, -5.0, 3.0])), [0.5, -0.5, 0.0])


def test_centered_ranks_keeps_shape_and_ranks_all_elements():
    x = np.array([[1.0, 4.0], [3.0, 2.0]])
    out = centered_ranks(x)
    assert out.shape == (2, 2)
    np.testing.assert_allclose(out, np.array([[0.0, 3.0], [2.0, 1.0]]) / 3 - 0.5, rtol=1e-6)


def test_ties_get_equal_ranks():
    out = centered_ranks(np.array([1.0, 2.0, 2.0, 3.0]))
    assert out[1] == out[2]
    np.testing.assert_allclose(out, [-0.5, 0.0, 0.0, 0.5])


def test_single_element():
    assert centered_ranks(np.array([5.0])).tolist() == [0.0]


def test_noise_table_is_rebuilt_from_seed():
    a, b = NoiseTable(1000, seed=7), NoiseTable(1000, seed=7)
    np.testing.assert_array_equal(a.get(10, 20), b.get(10, 20))


def test_es_gradient_against_loop_and_points_uphill():
    table = NoiseTable(10_000, seed=0)
    rng = np.random.default_rng(1)
    dim, n, sigma = 5, 200, 0.1
    theta = np.zeros(dim, dtype=np.float32)
    target = np.arange(dim, dtype=np.float32)
    f = lambda th: -np.sum((th - target) ** 2)  # noqa: E731
    idx = np.array([table.sample_index(rng, dim) for _ in range(n)])
    rp = np.array([f(theta + sigma * table.get(i, dim)) for i in idx])
    rn = np.array([f(theta - sigma * table.get(i, dim)) for i in idx])
    g = es_gradient(idx, rp, rn, table, dim, sigma)
    ranks = centered_ranks(np.stack([rp, rn], 1))
    loop = sum((ranks[i, 0] - ranks[i, 1]) * table.get(idx[i], dim) for i in range(n)) / (2 * n * sigma)
    np.testing.assert_allclose(g, loop, rtol=1e-5, atol=1e-6)
    assert np.dot(g, target - theta) > 0  # an ascent direction


def test_es_gradient_in_chunks_equals_one_gather(monkeypatch):
    from distrl.ops import es

    table = NoiseTable(5000, seed=3)
    rng = np.random.default_rng(0)
    idx, rp, rn = rng.integers(0, 4990, 37), rng.normal(size=37), rng.normal(size=37)
    whole = es_gradient(idx, rp, rn, table, 10, 0.05)
    monkeypatch.setattr(es, "CHUNK", 5)
    np.testing.assert_allclose(es_gradient(idx, rp, rn, table, 10, 0.05), whole, rtol=1e-5, atol=1e-6)


def test_es_gradient_bad_shapes():
    with pytest.raises(ValueError):
        es_gradient(np.zeros(3, dtype=int), np.zeros(2), np.zeros(3), NoiseTable(100), 4, 0.1)


def test_a_table_over_an_existing_array_reads_the_same_noise_without_rebuilding_it():
    built = NoiseTable(1000, seed=7)
    view = NoiseTable.of(built.noise)
    assert view.noise is built.noise
    np.testing.assert_array_equal(view.get(5, 12), built.get(5, 12))
