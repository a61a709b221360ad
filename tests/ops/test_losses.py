import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.ops import (
    baseline_loss,
    clipped_surrogate_loss,
    entropy_loss,
    policy_gradient_loss,
    standardised,
)


def test_policy_gradient_flows_through_logp_only():
    logp = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    adv = torch.tensor([[2.0, -1.0]], requires_grad=True)
    loss = policy_gradient_loss(logp, adv)
    torch.testing.assert_close(loss, torch.tensor(-(-2.0 + 2.0) / 2))
    loss.backward()
    torch.testing.assert_close(logp.grad, torch.tensor([[-1.0, 0.5]]))
    assert adv.grad is None


def test_clipped_surrogate_hand_worked():
    """r = e^0.5 ~ 1.65 with A = 1 is clipped to 1.2 (no gradient); r = 1 with A = -2 is inside the band
    (gradient -r A / 2 = 1); the masked third entry, whose behaviour logp is garbage, counts for nothing."""
    logp = torch.tensor([[0.0, -1.0, 0.0]], requires_grad=True)
    mu = torch.tensor([[-0.5, -1.0, -1e9]])
    adv = torch.tensor([[1.0, -2.0, 5.0]])
    loss = clipped_surrogate_loss(logp, mu, adv, 0.2, mask=torch.tensor([[1.0, 1.0, 0.0]]))
    torch.testing.assert_close(loss, torch.tensor(-(1.2 - 2.0) / 2))
    loss.backward()
    torch.testing.assert_close(logp.grad, torch.tensor([[0.0, 1.0, 0.0]]))


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10_000), clip=st.floats(0.01, 1.0))
def test_clipped_surrogate_matches_ppo_eq7_and_is_the_policy_gradient_on_policy(seed, clip):
    """Against eq. 7 written in numpy; and where pi = mu (the first pass over a fresh batch) its gradient is
    the plain policy gradient's."""
    rng = np.random.default_rng(seed)
    logp, mu, adv = (rng.normal(0, 1, size=(4, 5)) for _ in range(3))
    r = np.exp(logp - mu)
    expected = -np.minimum(r * adv, np.clip(r, 1 - clip, 1 + clip) * adv).mean()
    got = clipped_surrogate_loss(*(torch.as_tensor(x) for x in (logp, mu, adv)), clip)
    np.testing.assert_allclose(got.item(), expected, rtol=1e-9, atol=1e-12)
    on_policy = torch.as_tensor(logp, dtype=torch.float64).requires_grad_()
    clipped_surrogate_loss(on_policy, on_policy.detach(), torch.as_tensor(adv), clip).backward()
    plain = torch.as_tensor(logp, dtype=torch.float64).requires_grad_()
    policy_gradient_loss(plain, torch.as_tensor(adv)).backward()
    torch.testing.assert_close(on_policy.grad, plain.grad)


def test_baseline_loss_masked():
    v = torch.tensor([[1.0, 5.0]], requires_grad=True)
    t = torch.tensor([[3.0, 0.0]], requires_grad=True)
    loss = baseline_loss(v, t, mask=torch.tensor([[1.0, 0.0]]))
    torch.testing.assert_close(loss, torch.tensor(2.0))
    loss.backward()
    torch.testing.assert_close(v.grad, torch.tensor([[-2.0, 0.0]]))
    assert t.grad is None


def test_entropy_loss_sign():
    assert entropy_loss(torch.tensor([[0.5, 1.5]])) == -1.0


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(1e-2, 1e3), shift=st.floats(-1e3, 1e3))
def test_standardised_matches_numpy_over_the_valid_entries(seed, scale, shift):
    rng = np.random.default_rng(seed)
    x = rng.normal(shift, scale, size=(5, 6))
    valid = rng.random((5, 6)) < 0.7
    valid[0, 0] = valid[1, 1] = True  # at least two entries
    kept = x[valid]
    expected = (x - kept.mean()) / (kept.std() + 1e-8)
    got = standardised(torch.as_tensor(x), torch.as_tensor(valid, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(got[valid], expected[valid], rtol=1e-6, atol=1e-6 * (1 + abs(shift) / scale))


def test_standardised_takes_the_moments_of_the_whole_batch_through_reduce():
    """Two shards whose moments are summed standardise as the whole batch does."""
    x = torch.tensor([[1.0, 2.0, 3.0, 10.0]])
    ones = torch.ones_like(x)
    whole = standardised(x, ones)
    other = torch.stack([ones[:, 2:].sum(), x[:, 2:].sum(), (x[:, 2:] ** 2).sum()])
    half = standardised(x[:, :2], ones[:, :2], reduce=lambda sums: sums + other)
    torch.testing.assert_close(half, whole[:, :2])


def test_standardised_keeps_its_precision_on_float32_inputs():
    """A large mean and a small spread (float32, as the learners hand it): the one-pass variance is taken in
    float64, so the result is still unit-scale."""
    x = torch.tensor(np.random.default_rng(0).normal(30.0, 0.01, size=(8, 16)), dtype=torch.float32)
    out = standardised(x, torch.ones_like(x))
    assert out.dtype == torch.float32
    assert abs(float(out.mean())) < 1e-3 and abs(float(out.std(unbiased=False)) - 1.0) < 1e-3


def test_large_margin_loss_by_hand_and_its_properties():
    """DQfD eq. 2 worked by hand: Q = (1, 0.5, 0.9), a_E = 0, margin 0.8: max(1 + 0, 0.5 + 0.8, 0.9 + 0.8) - 1 = 0.7;
    a lead of at least the margin gives 0; the loss is never negative; the mask averages only its steps."""
    import torch

    from distrl.ops import large_margin_loss

    q = torch.tensor([[1.0, 0.5, 0.9], [3.0, 1.0, 2.2], [0.0, 0.0, 0.0]])
    a = torch.tensor([0, 0, 1])
    per_step = [0.7, 0.0, 0.8]
    for i in range(3):
        assert float(large_margin_loss(q[i:i + 1], a[i:i + 1], 0.8)) == pytest.approx(per_step[i])
    assert float(large_margin_loss(q, a, 0.8)) == pytest.approx(sum(per_step) / 3)
    assert float(large_margin_loss(q, a, 0.8, torch.tensor([1.0, 1.0, 0.0]))) == pytest.approx(0.35)
    torch.manual_seed(0)
    q, a = torch.randn(5, 7, 4), torch.randint(0, 4, (5, 7))
    assert float(large_margin_loss(q, a, 0.8)) >= 0 and float(large_margin_loss(q, a, 0.0)) >= 0
    with pytest.raises(ValueError, match="a_tm1 must have shape"):
        large_margin_loss(q, a[:, :3], 0.8)
