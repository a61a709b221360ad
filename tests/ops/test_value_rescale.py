import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.ops import (
    advantage_learning_target,
    transformed_double_q_target,
    transformed_n_step_q_target,
    value_rescale,
    value_rescale_inv,
)


def test_formula_by_hand():
    x = torch.tensor([0.0, 3.0, -8.0], dtype=torch.float64)
    expected = torch.tensor([0.0, (2 - 1) + 3e-3, -(3 - 1) - 8e-3], dtype=torch.float64)
    torch.testing.assert_close(value_rescale(x), expected)


@pytest.mark.parametrize("dtype,rtol", [(torch.float64, 1e-9), (torch.float32, 1e-4)])
def test_inverse_round_trip_wide_range(dtype, rtol):
    x = torch.cat([-torch.logspace(-6, 6, 500, dtype=dtype), torch.zeros(1, dtype=dtype),
                   torch.logspace(-6, 6, 500, dtype=dtype)])
    back = value_rescale_inv(value_rescale(x))
    assert back.dtype == dtype
    np.testing.assert_allclose(back.numpy(), x.numpy(), rtol=rtol, atol=1e-5)


def test_without_the_linear_term_the_inverse_is_the_square():
    """eps = 0: h(x) = sign(x) (sqrt(|x| + 1) - 1), so h^-1(y) = sign(y) ((|y| + 1)^2 - 1); Pohlen et al.'s closed form
    divides by 2 eps there (it gave NaN for R2D2's ``value_rescale_eps=0``)."""
    y = torch.tensor([0.0, 1.0, -2.0, 9.0], dtype=torch.float64)
    torch.testing.assert_close(value_rescale_inv(y, 0.0), torch.tensor([0.0, 3.0, -8.0, 99.0], dtype=torch.float64))


@pytest.mark.parametrize("eps", [0.0, 1e-16, 1e-12, 1e-6, 1e-3, 0.1])
def test_inverse_round_trip_for_every_eps(eps):
    """Every eps the settings accept (>= 0), the tiny ones included, where the closed form cancels."""
    x = torch.cat([-torch.logspace(-3, 4, 300, dtype=torch.float64), torch.zeros(1, dtype=torch.float64),
                   torch.logspace(-3, 4, 300, dtype=torch.float64)])
    np.testing.assert_allclose(value_rescale_inv(value_rescale(x, eps), eps).numpy(), x.numpy(), rtol=1e-12, atol=1e-12)


def test_inverse_is_left_inverse_too():
    y = torch.linspace(-300, 300, 1001, dtype=torch.float64)
    torch.testing.assert_close(value_rescale(value_rescale_inv(y)), y)


def _h(x: float, eps: float) -> float:
    return float(np.sign(x) * (np.sqrt(abs(x) + 1.0) - 1.0) + eps * x)


def _h_inv_by_bisection(y: float, eps: float) -> float:
    """h is increasing, so its inverse is a root search (no closed form used)."""
    lo, hi = -1e6, 1e6
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _h(mid, eps) < y else (lo, mid)
    return 0.5 * (lo + hi)


@given(seed=st.integers(0, 10_000), n=st.integers(1, 4), ends=st.floats(0.0, 0.4))
@settings(max_examples=30, deadline=None)
def test_transformed_target_against_a_loop_over_each_window(seed, n, ends):
    """R2D2's target (section 2.3), written out per step: y_i = h(sum_{k<m} (prod_{j<k} d_{i+j}) r_{i+k}
    + (prod_{j<m} d_{i+j}) h^-1(v_{i+m-1})), m = min(n, T - i), an episode end (d = 0) cutting the rest off."""
    rng, eps = np.random.default_rng(seed), 1e-3
    T, B = 7, 3
    r = rng.normal(size=(T, B))
    d = np.where(rng.random((T, B)) < ends, 0.0, 0.97)
    v = rng.normal(scale=3.0, size=(T, B))
    out = transformed_n_step_q_target(torch.tensor(r), torch.tensor(d), torch.tensor(v), n=n, eps=eps).numpy()
    for i in range(T):
        for b in range(B):
            m, g, scale = min(n, T - i), 0.0, 1.0
            for k in range(m):
                g += scale * r[i + k, b]
                scale *= d[i + k, b]
            g += scale * _h_inv_by_bisection(v[i + m - 1, b], eps)
            assert out[i, b] == pytest.approx(_h(g, eps), rel=1e-7, abs=1e-7), (i, b)


def test_transformed_double_q_target_by_hand():
    """CartPole-like numbers, eps = 0 so that h is exact by hand: the online net picks action 1 at x', whose
    target value in h-space is 9, i.e. 99 untransformed; y = h(r + d * 99) = h(1 + 0.99 * 99) = h(99.01)."""
    r, d = torch.tensor([1.0, 1.0], dtype=torch.float64), torch.tensor([0.99, 0.0], dtype=torch.float64)
    online = torch.tensor([[0.0, 5.0], [0.0, 5.0]], dtype=torch.float64)
    target = torch.tensor([[15.0, 9.0], [15.0, 9.0]], dtype=torch.float64)  # the max (15) is not the one taken
    y = transformed_double_q_target(r, d, online, target, eps=0.0)
    expected = torch.tensor([np.sqrt(1 + 0.99 * 99 + 1) - 1, np.sqrt(2.0) - 1], dtype=torch.float64)  # a terminal: h(r)
    torch.testing.assert_close(y, expected)


def test_transformed_double_q_target_keeps_the_scale_of_long_horizons_small():
    """A discount near 1 makes values of hundreds; in h-space a fixed point of the operator stays near
    sqrt(V): V = 1 / (1 - 0.997) = 333.3 per step of reward 1, its h(V) = 17.6 (with eps 1e-3)."""
    gamma, v = 0.997, 1.0 / (1.0 - 0.997)
    q = value_rescale(torch.full((4, 2), v, dtype=torch.float64))
    y = transformed_double_q_target(torch.ones(4, dtype=torch.float64), torch.full((4,), gamma, dtype=torch.float64),
                                    q, q)
    torch.testing.assert_close(y, q[:, 0])
    assert 17.0 < float(y[0]) < 17.7


def test_advantage_learning_by_hand():
    """eps = 0, where h(x) = sqrt(x + 1) - 1 for x >= 0: the target network's raw values at x_t are 3 and 8 (rescaled 1
    and 2), the target's raw value 15 (rescaled 3). Taking the worse action 0, the gap 8 - 3 = 5 comes off the raw
    target times alpha (T_AL Q = T Q - alpha (V - Q), Bellemare et al. 2016): h(15 - 0.6 * 5) = sqrt(13) - 1; taking
    the better action 1 there is no gap and the target stays 3."""
    target = torch.tensor([[3.0, 3.0]], dtype=torch.float64)  # [T=1, B=2]
    q_target = torch.tensor([[[1.0, 2.0], [1.0, 2.0]]], dtype=torch.float64)  # [T, B, A]
    action = torch.tensor([[0, 1]])
    got = advantage_learning_target(target, q_target, action, 0.6, eps=0.0)
    torch.testing.assert_close(got, torch.tensor([[13 ** 0.5 - 1, 3.0]], dtype=torch.float64))
    assert advantage_learning_target(target, q_target, action, 0.0, eps=0.0) is target


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), alpha=st.floats(0.05, 0.99), eps=st.sampled_from([0.0, 1e-3, 0.1]))
def test_advantage_learning_widens_the_gap_and_keeps_the_greedy_targets(seed, alpha, eps):
    """Properties of the operator: the greedy action's target is unchanged, every other action's is lower (in
    rescaled values too: h is increasing), by more for a larger alpha."""
    g = torch.Generator().manual_seed(seed)
    q_target = torch.randn(5, 4, 3, generator=g, dtype=torch.float64) * 3
    target = torch.randn(5, 4, generator=g, dtype=torch.float64) * 3
    action = torch.randint(0, 3, (5, 4), generator=g)
    got = advantage_learning_target(target, q_target, action, alpha, eps)
    greedy = action == q_target.argmax(-1)
    torch.testing.assert_close(got[greedy], target[greedy])
    assert (got[~greedy] < target[~greedy]).all()
    assert (advantage_learning_target(target, q_target, action, alpha / 2, eps)[~greedy] > got[~greedy]).all()
