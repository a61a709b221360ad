import numpy as np
import pytest
import torch

from distrl.ops import (
    epsilon_ladder,
    importance_weights,
    per_priority,
    sequence_priority,
)


def test_per_priority():
    td = torch.tensor([-2.0, 0.0, 3.0])
    torch.testing.assert_close(per_priority(td, alpha=0.5, eps=0.0), torch.tensor([2 ** 0.5, 0.0, 3 ** 0.5]))


def test_importance_weights_against_formula():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    N, beta = 1000, 0.4
    w = (N * p) ** (-beta)
    w = w / w.max()
    np.testing.assert_allclose(importance_weights(torch.tensor(p), N, beta).numpy(), w)
    assert importance_weights(torch.tensor(p), N, beta).max() == 1.0


def test_sequence_priority():
    td = torch.tensor([[1.0, -4.0], [-3.0, 0.0], [2.0, 2.0]])
    out = sequence_priority(td, eta=0.9)
    torch.testing.assert_close(out, torch.tensor([0.9 * 3 + 0.1 * 2, 0.9 * 4 + 0.1 * 2]))
    masked = sequence_priority(td, eta=0.9, mask=torch.tensor([[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]))
    torch.testing.assert_close(masked, torch.tensor([0.9 * 3 + 0.1 * 2, 0.9 * 4 + 0.1 * 2]))


def test_epsilon_ladder():
    eps = epsilon_ladder(8)
    assert eps[0] == pytest.approx(0.4) and eps[-1] == pytest.approx(0.4 ** 8)
    assert eps[3] == pytest.approx(0.4 ** (1 + 7 * 3 / 7))
    assert np.all(np.diff(eps) < 0)
    assert epsilon_ladder(1) == pytest.approx([0.4])
    with pytest.raises(ValueError):
        epsilon_ladder(0)


def test_importance_weights_take_numpy_as_well():
    p = np.array([0.1, 0.2, 0.05])
    np.testing.assert_allclose(importance_weights(p, 50, 0.4), importance_weights(torch.tensor(p), 50, 0.4).numpy())
