"""Flat weights: the order and values of ``to_flat``, loading in place, and parameters as views of one buffer."""

import copy

import numpy as np
import pytest
import torch

from distrl.models import FlatParameters, load_flat, to_flat


def net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))


def test_flat_parameters_keep_values_order_and_parameter_objects():
    model = net()
    before = to_flat(model.parameters())
    params = list(model.parameters())
    x = torch.randn(4, 3)
    out = model(x)
    flat = FlatParameters(model)
    assert [id(p) for p in model.parameters()] == [id(p) for p in params]
    np.testing.assert_array_equal(flat.to_numpy(), before)
    torch.testing.assert_close(model(x), out)
    assert all(p.data_ptr() == flat.buffer.data_ptr() + 4 * o for p, o in
               zip(params, np.cumsum([0] + [p.numel() for p in params[:-1]])))


def test_loading_into_views_equals_loading_tensor_by_tensor():
    """A model with FlatParameters and one without, loaded with the same vector, compute the same thing."""
    a, b = net(), net()
    flat = FlatParameters(a)
    values = np.random.default_rng(1).normal(size=flat.buffer.numel()).astype(np.float32)
    values.flags.writeable = False  # as Ray's object store hands them out
    flat.load(values)
    load_flat(b.parameters(), values)
    x = torch.randn(7, 3)
    torch.testing.assert_close(a(x), b(x))
    np.testing.assert_array_equal(to_flat(a.parameters()), values)


def test_an_optimizer_trains_the_views_and_to_numpy_is_a_copy():
    model = net()
    flat = FlatParameters(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    published = flat.to_numpy()
    model(torch.ones(2, 3)).sum().backward()
    grads = np.concatenate([p.grad.reshape(-1).numpy() for p in model.parameters()])
    opt.step()
    np.testing.assert_allclose(flat.to_numpy(), published - 0.1 * grads, rtol=1e-6, atol=1e-7)
    assert not np.array_equal(published, flat.to_numpy())  # the published copy did not move with the model
    target = copy.deepcopy(model)  # target networks are deep copies: their own storage
    flat.load(np.zeros_like(published))
    assert all(p.abs().sum() > 0 for p in target.parameters())


def test_a_wrong_size_is_an_error():
    flat = FlatParameters(net())
    with pytest.raises(ValueError, match="hold 3 values"):
        flat.load(np.zeros(3, np.float32))
