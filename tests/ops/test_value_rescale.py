import numpy as np
import pytest
import torch

from distrl.ops import (
    n_step_returns,
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


def test_inverse_is_left_inverse_too():
    y = torch.linspace(-300, 300, 1001, dtype=torch.float64)
    torch.testing.assert_close(value_rescale(value_rescale_inv(y)), y)


def test_transformed_target():
    rng = np.random.default_rng(0)
    r = torch.tensor(rng.normal(size=(6, 2)))
    d = torch.full((6, 2), 0.99, dtype=torch.float64)
    q = torch.tensor(rng.normal(size=(6, 2)))
    out = transformed_n_step_q_target(r, d, q, n=3)
    expected = value_rescale(n_step_returns(r, d, value_rescale_inv(q), 3))
    torch.testing.assert_close(out, expected)
