"""The shared-statistics optimizers against the papers' update rules, written out in numpy."""

import numpy as np
import torch

from distrl.agents.common.shared_optim import SharedAdam, SharedRMSprop


def grads(steps, size, seed=0):
    return np.random.default_rng(seed).normal(size=(steps, size)).astype(np.float64)


def run(optimizer_cls, gs, **kw):
    p = torch.nn.Parameter(torch.zeros(gs.shape[1], dtype=torch.float64))
    opt = optimizer_cls([p], **kw).share_memory()
    for g in gs:
        p.grad = torch.from_numpy(g.copy())
        opt.step()
    return p.detach().numpy()


def test_shared_adam_follows_kingma_and_ba_algorithm_1():
    gs, lr, b1, b2, eps = grads(20, 5), 0.01, 0.9, 0.999, 1e-8
    theta, m, v = np.zeros(5), np.zeros(5), np.zeros(5)
    for t, g in enumerate(gs, start=1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = m / (1 - b1**t), v / (1 - b2**t)
        theta = theta - lr * m_hat / (np.sqrt(v_hat) + eps)
    np.testing.assert_allclose(run(SharedAdam, gs, lr=lr, eps=eps), theta, rtol=1e-6, atol=1e-9)


def test_shared_rmsprop_follows_the_a3c_update():
    gs, lr, alpha, eps = grads(20, 5, seed=1), 0.01, 0.99, 1e-5
    theta, g2 = np.zeros(5), np.zeros(5)
    # A3C eq. (S2)-(S3) without momentum: g <- alpha g + (1 - alpha) dtheta^2; theta -= lr dtheta / sqrt(g + eps)
    for g in gs:
        g2 = alpha * g2 + (1 - alpha) * g * g
        theta = theta - lr * g / (np.sqrt(g2) + eps)
    np.testing.assert_allclose(run(SharedRMSprop, gs, lr=lr, alpha=alpha, eps=eps), theta, rtol=1e-6, atol=1e-9)


def test_statistics_are_in_shared_memory():
    p = torch.nn.Parameter(torch.zeros(3))
    for opt in (SharedAdam([p]).share_memory(), SharedRMSprop([p]).share_memory()):
        assert all(v.is_shared() for state in opt.state.values() for v in state.values())
