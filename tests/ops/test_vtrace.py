import numpy as np
import pytest
import torch

from distrl.ops import lambda_returns, n_step_returns, vtrace
from tests.ops.reference import lambda_return_ref, vtrace_ref


def random_inputs(T, B, seed, dtype=torch.float64, done_p=0.2):
    rng = np.random.default_rng(seed)
    mu = np.log(rng.uniform(0.05, 1.0, (T, B)))
    pi = np.log(rng.uniform(0.05, 1.0, (T, B)))
    r = rng.normal(size=(T, B))
    disc = 0.9 * (rng.uniform(size=(T, B)) > done_p)
    v = rng.normal(size=(T, B))
    boot = rng.normal(size=B)
    as_t = lambda x: torch.tensor(x, dtype=dtype)  # noqa: E731
    return (mu, pi, r, disc, v, boot), tuple(as_t(x) for x in (mu, pi, r, disc, v, boot))


@pytest.mark.parametrize("T,B", [(1, 1), (1, 5), (7, 3), (20, 4)])
@pytest.mark.parametrize("clips", [(1.0, 1.0, 1.0), (2.0, 0.5, 1.5), (None, None, None)])
@pytest.mark.parametrize("lam", [1.0, 0.8])
def test_vtrace_matches_slow_reference(T, B, clips, lam):
    (mu, pi, r, disc, v, boot), tensors = random_inputs(T, B, seed=T * 100 + B)
    cr, cc, cp = clips
    out = vtrace(*tensors, clip_rho=cr, clip_c=cc, clip_pg_rho=cp, lam=lam)
    inf = float("inf")
    vs, pg = vtrace_ref(mu, pi, r, disc, v, boot, cr or inf, cc or inf, cp or inf, lam)
    np.testing.assert_allclose(out.vs.numpy(), vs, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out.pg_advantages.numpy(), pg, rtol=1e-10, atol=1e-10)


def test_vtrace_per_step_lambda_tensor():
    (mu, pi, r, disc, v, boot), t = random_inputs(9, 3, seed=5)
    lam = np.random.default_rng(1).uniform(0, 1, (9, 3))
    out = vtrace(*t, lam=torch.tensor(lam))
    vs, pg = vtrace_ref(mu, pi, r, disc, v, boot, lam=lam)
    np.testing.assert_allclose(out.vs.numpy(), vs, atol=1e-10)


def test_on_policy_lambda_one_is_n_step_bootstrapped_return():
    _, (mu, _, r, disc, v, boot) = random_inputs(12, 4, seed=3)
    out = vtrace(mu, mu.clone(), r, disc, v, boot)
    values_tp1 = torch.cat([v[1:], boot[None]])
    expected = n_step_returns(r, disc, values_tp1, n=12)
    torch.testing.assert_close(out.vs, expected)


def test_on_policy_lambda_below_one_is_lambda_return():
    (_, _, rn, dn, vn, bn), (mu, _, r, disc, v, boot) = random_inputs(10, 3, seed=4)
    out = vtrace(mu, mu.clone(), r, disc, v, boot, lam=0.7)
    torch.testing.assert_close(out.vs, lambda_returns(r, disc, v, boot, lam=0.7))
    np.testing.assert_allclose(out.vs.numpy(), lambda_return_ref(rn, dn, vn, bn, 0.7), atol=1e-10)


def test_hand_worked_two_steps():
    # T=2, B=1, on-policy, gamma=0.5, no ends: v_1 = r_1 + 0.5*boot = 1 + 0.5*4 = 3;
    # v_0 = r_0 + 0.5*v_1 = 2 + 1.5 = 3.5; pg_0 = r_0 + 0.5*v_1 - V_0 = 3.5 - 1 = 2.5; pg_1 = 3 - 2 = 1.
    z = torch.zeros(2, 1)
    out = vtrace(z, z, torch.tensor([[2.0], [1.0]]), torch.full((2, 1), 0.5), torch.tensor([[1.0], [2.0]]),
                 torch.tensor([4.0]))
    torch.testing.assert_close(out.vs, torch.tensor([[3.5], [3.0]]))
    torch.testing.assert_close(out.pg_advantages, torch.tensor([[2.5], [1.0]]))


def test_split_at_episode_end_changes_nothing():
    _, (mu, pi, r, disc, v, boot) = random_inputs(10, 2, seed=8, done_p=0.0)
    disc[4] = 0.0  # episode ends after step 4
    full = vtrace(mu, pi, r, disc, v, boot)
    first = vtrace(mu[:5], pi[:5], r[:5], disc[:5], v[:5], torch.full((2,), 123.0))
    second = vtrace(mu[5:], pi[5:], r[5:], disc[5:], v[5:], boot)
    torch.testing.assert_close(full.vs, torch.cat([first.vs, second.vs]))
    torch.testing.assert_close(full.pg_advantages, torch.cat([first.pg_advantages, second.pg_advantages]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dtypes(dtype):
    (mu, pi, r, disc, v, boot), t = random_inputs(6, 3, seed=2, dtype=dtype)
    out = vtrace(*t)
    assert out.vs.dtype == dtype
    vs, _ = vtrace_ref(mu, pi, r, disc, v, boot)
    np.testing.assert_allclose(out.vs.numpy(), vs, rtol=1e-4, atol=1e-4)


def test_no_gradient_through_targets():
    _, t = random_inputs(5, 2, seed=0)
    t = [x.clone().requires_grad_(True) for x in t]
    out = vtrace(*t)
    assert not out.vs.requires_grad and not out.pg_advantages.requires_grad


def test_bad_shapes_name_the_argument():
    _, (mu, pi, r, disc, v, boot) = random_inputs(5, 2, seed=0)
    with pytest.raises(ValueError, match="r_t"):
        vtrace(mu, pi, r[:4], disc, v, boot)
    with pytest.raises(ValueError, match="bootstrap_value"):
        vtrace(mu, pi, r, disc, v, boot[:1])
    with pytest.raises(ValueError, match="rank 2"):
        vtrace(mu[0], pi[0], r[0], disc[0], v[0], boot)
    with pytest.raises(ValueError, match="dtype"):
        vtrace(mu.float(), pi, r, disc, v, boot)
