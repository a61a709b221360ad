import numpy as np
import pytest
import torch

from distrl.ops import (
    ddpg_critic_target,
    double_q_n_step_targets,
    double_q_target,
    gae,
    lambda_returns,
    n_step_returns,
    td_error,
    trainable_steps,
)
from tests.ops.reference import gae_ref, lambda_return_ref, n_step_ref


def inputs(T, B, seed, done_p=0.2):
    rng = np.random.default_rng(seed)
    r = rng.normal(size=(T, B))
    disc = 0.95 * (rng.uniform(size=(T, B)) > done_p)
    v = rng.normal(size=(T, B))
    boot = rng.normal(size=B)
    return r, disc, v, boot


@pytest.mark.parametrize("T,B", [(1, 1), (1, 4), (8, 3), (25, 2)])
@pytest.mark.parametrize("lam", [0.0, 0.5, 0.95, 1.0])
def test_gae_and_lambda_returns_match_references(T, B, lam):
    r, disc, v, boot = inputs(T, B, seed=T + B)
    t = [torch.tensor(x) for x in (r, disc, v, boot)]
    np.testing.assert_allclose(gae(*t, lam=lam).numpy(), gae_ref(r, disc, v, boot, lam), atol=1e-10)
    np.testing.assert_allclose(
        lambda_returns(*t, lam=lam).numpy(), lambda_return_ref(r, disc, v, boot, lam), atol=1e-10
    )


def test_gae_per_step_lambda():
    r, disc, v, boot = inputs(10, 3, seed=1)
    lam = np.random.default_rng(0).uniform(size=(10, 3))
    out = gae(*[torch.tensor(x) for x in (r, disc, v, boot)], lam=torch.tensor(lam))
    np.testing.assert_allclose(out.numpy(), gae_ref(r, disc, v, boot, lam), atol=1e-10)


def test_gae_hand_worked():
    # gamma = 1, lam = 1: advantages are reward-to-go plus bootstrap minus value.
    r = torch.tensor([[1.0], [2.0], [3.0]])
    out = gae(r, torch.ones(3, 1), torch.zeros(3, 1), torch.tensor([10.0]), lam=1.0)
    torch.testing.assert_close(out, torch.tensor([[16.0], [15.0], [13.0]]))


def test_gae_split_at_episode_end():
    r, disc, v, boot = [torch.tensor(x) for x in inputs(12, 3, seed=2, done_p=0.0)]
    disc[6] = 0.0
    full = gae(r, disc, v, boot, lam=0.9)
    a = gae(r[:7], disc[:7], v[:7], torch.full((3,), -50.0), lam=0.9)
    b = gae(r[7:], disc[7:], v[7:], boot, lam=0.9)
    torch.testing.assert_close(full, torch.cat([a, b]))


@pytest.mark.parametrize("T,B,n", [(1, 1, 1), (1, 3, 5), (10, 2, 1), (10, 2, 3), (10, 4, 15)])
def test_n_step_returns_match_reference(T, B, n):
    r, disc, v, _ = inputs(T, B, seed=T * n)
    out = n_step_returns(torch.tensor(r), torch.tensor(disc), torch.tensor(v), n)
    np.testing.assert_allclose(out.numpy(), n_step_ref(r, disc, v, n), atol=1e-10)


def test_n_step_hand_worked_with_early_termination():
    # n = 3, gamma = 0.5; the episode ends after step 1 (discount 0), so G_0 = r0 + 0.5 r1 and no bootstrap.
    r = torch.tensor([[1.0], [2.0], [4.0], [8.0]])
    disc = torch.tensor([[0.5], [0.0], [0.5], [0.5]])
    v_tp1 = torch.tensor([[100.0], [100.0], [100.0], [100.0]])
    out = n_step_returns(r, disc, v_tp1, 3)
    torch.testing.assert_close(out[:2, 0], torch.tensor([2.0, 2.0]))
    torch.testing.assert_close(out[2:, 0], torch.tensor([4 + 0.5 * 8 + 0.25 * 100, 8 + 0.5 * 100]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dtypes(dtype):
    r, disc, v, boot = inputs(6, 2, seed=0)
    out = gae(*[torch.tensor(x, dtype=dtype) for x in (r, disc, v, boot)], lam=0.9)
    assert out.dtype == dtype
    np.testing.assert_allclose(out.numpy(), gae_ref(r, disc, v, boot, 0.9), atol=1e-5)


def test_double_q_target_uses_online_argmax_and_target_values():
    q_online = torch.tensor([[1.0, 5.0], [3.0, 2.0]])
    q_target = torch.tensor([[10.0, 20.0], [30.0, 40.0]])
    y = double_q_target(torch.tensor([1.0, 2.0]), torch.tensor([0.5, 0.0]), q_online, q_target)
    torch.testing.assert_close(y, torch.tensor([1.0 + 0.5 * 20.0, 2.0]))


def test_double_q_n_step_targets_reference():
    rng = np.random.default_rng(0)
    T, B, A, n = 8, 3, 4, 3
    r, disc, _, _ = inputs(T, B, seed=4)
    qo, qt = rng.normal(size=(T, B, A)), rng.normal(size=(T, B, A))
    v = np.take_along_axis(qt, qo.argmax(-1)[..., None], -1)[..., 0]
    out = double_q_n_step_targets(torch.tensor(r), torch.tensor(disc), torch.tensor(qo), torch.tensor(qt), n)
    np.testing.assert_allclose(out.numpy(), n_step_ref(r, disc, v, n), atol=1e-10)


def test_td_error_gradient_only_through_q():
    q = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    target = torch.tensor([5.0, 5.0], requires_grad=True)
    delta = td_error(q, torch.tensor([1, 0]), target)
    torch.testing.assert_close(delta, torch.tensor([3.0, 2.0]))
    delta.sum().backward()
    torch.testing.assert_close(q.grad, torch.tensor([[0.0, -1.0], [-1.0, 0.0]]))
    assert target.grad is None


def test_ddpg_critic_target():
    y = ddpg_critic_target(torch.tensor([1.0, 1.0]), torch.tensor([0.9, 0.0]), torch.tensor([10.0, 10.0]))
    torch.testing.assert_close(y, torch.tensor([10.0, 1.0]))


def test_bad_shapes():
    r = torch.zeros(4, 2)
    with pytest.raises(ValueError, match="discount_t"):
        gae(r, torch.zeros(4, 3), r, torch.zeros(2))
    with pytest.raises(ValueError, match="lam"):
        gae(r, r, r, torch.zeros(2), lam=1.5)
    with pytest.raises(ValueError, match="a_tm1"):
        td_error(torch.zeros(2, 3), torch.zeros(2), torch.zeros(2))


def test_trainable_steps_need_the_whole_window_or_an_episode_end():
    # 6 real steps of 8, n = 2: a step is trained if x_{t+2} is one of the sequence's steps (t <= 3) ...
    mask = torch.tensor([1, 1, 1, 1, 1, 1, 0, 0]).bool().unsqueeze(1)
    cut = torch.full((8, 1), 0.99)
    assert trainable_steps(mask, cut, 2)[:, 0].tolist() == [True] * 4 + [False] * 4
    # ... or if the episode ends inside its window (a zero discount at step 5): then every real step is
    ended = cut.clone()
    ended[5:] = 0.0
    assert trainable_steps(mask, ended, 2)[:, 0].tolist() == [True] * 6 + [False] * 2


def test_backward_recursion_by_hand():
    """y_2 = 3, y_1 = 2 + 0.5 * 3 = 3.5, y_0 = 1 + 0.1 * 3.5 = 1.35 (one column; a second with decay 0 is x)."""
    from distrl.ops.returns import backward_recursion

    x = torch.tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    decay = torch.tensor([[0.1, 0.0], [0.5, 0.0], [0.9, 0.0]])
    torch.testing.assert_close(backward_recursion(x, decay), torch.tensor([[1.35, 1.0], [3.5, 2.0], [3.0, 3.0]]))
