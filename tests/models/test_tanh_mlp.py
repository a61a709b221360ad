"""The fused tanh MLP (models/tanh_mlp.py) against torch's own layers: the same function, the same gradients, the
same parameters; ReLU torsos and traced graphs keep torch's layers."""

import copy

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from distrl.models import ActorCritic, MLPTorso
from distrl.models.device import mixed_precision
from distrl.models.tanh_mlp import _TanhMLP, tanh_, tanh_mlp
from distrl.models.torsos import FUSED_FROM


def test_tanh_written_in_place_is_tanh_within_2e_7_over_the_whole_line():
    x = torch.cat([torch.linspace(-20, 20, 400_001), torch.tensor([0.0, 1e-30, -1e-8, 1e4, -1e4])])
    exact = torch.tanh(x.double())
    assert (tanh_(x.clone()).double() - exact).abs().max() < 2e-7
    assert tanh_(torch.tensor([float("inf"), -float("inf")])).tolist() == [1.0, -1.0]
    assert tanh_(torch.tensor([float("nan")])).isnan().all()  # a NaN stays one: the learner's guard sees it


@pytest.mark.parametrize("hidden, input_grad", [((5,), True), ((6, 4), True), ((6, 4), False), ((3, 5, 2), True)])
def test_the_fused_backward_is_the_chain_rule(hidden, input_grad):
    """torch's gradcheck (finite differences, float64) on the one autograd node, every weight and the input."""
    torch.manual_seed(0)
    torso = MLPTorso(3, hidden).double()
    x = torch.randn(7, 3, dtype=torch.float64, requires_grad=input_grad)
    weights = tuple(t for layer in torso.net[::2] for t in (layer.weight, layer.bias))
    assert torch.autograd.gradcheck(lambda x, *w: _TanhMLP.apply(x, *w), (x, *weights))


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 600), in_dim=st.integers(1, 9), hidden=st.lists(st.integers(1, 80), min_size=1, max_size=3),
       seed=st.integers(0, 2**16))
def test_a_fused_torso_computes_what_its_layers_do(rows, in_dim, hidden, seed):
    """Outputs within float32 rounding of ``nn.Sequential``'s and the parameters' gradients too, at any size."""
    torch.manual_seed(seed)
    torso = MLPTorso(in_dim, tuple(hidden))
    x = torch.randn(rows, in_dim) * 3
    fused, plain = tanh_mlp(x, list(torso.net)[::2]), torso.net(x)
    torch.testing.assert_close(fused, plain, atol=1e-6, rtol=0)
    upstream = torch.randn_like(plain)
    got = torch.autograd.grad(fused, list(torso.parameters()), upstream)
    want = torch.autograd.grad(plain, list(torso.parameters()), upstream)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, atol=1e-4 * max(1.0, w.abs().max().item()), rtol=1e-4)
    with torch.no_grad():  # no gradient wanted (a learner's targets): no autograd node, the same numbers
        torch.testing.assert_close(tanh_mlp(x, list(torso.net)[::2]), fused.detach(), atol=0, rtol=0)


def test_a_frozen_layer_gets_no_gradient_and_the_others_theirs():
    torch.manual_seed(1)
    torso = MLPTorso(3, (6, 4)).double()
    torso.net[0].weight.requires_grad_(False)
    x = torch.randn(9, 3, dtype=torch.float64)
    weights = tuple(t for layer in torso.net[::2] for t in (layer.weight, layer.bias))
    assert torch.autograd.gradcheck(lambda *w: _TanhMLP.apply(x, *w), weights)
    _TanhMLP.apply(x, *weights).sum().backward()
    assert torso.net[0].weight.grad is None and torso.net[0].bias.grad is not None


def test_a_second_derivative_through_the_fused_node_raises():
    torso = MLPTorso(3, (4,))
    x = torch.randn(2, 3, requires_grad=True)
    (g,) = torch.autograd.grad(tanh_mlp(x, list(torso.net)[::2]).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError):
        g.sum().backward()


def test_a_torso_on_a_learners_batch_gives_torchs_gradients_also_for_a_strided_input():
    torch.manual_seed(2)
    torso = MLPTorso(4, (64, 64))
    x = torch.randn(4, 512).t()  # not contiguous
    got = torch.autograd.grad(torso(x).square().sum(), list(torso.parameters()))
    want = torch.autograd.grad(torso.net(x).square().sum(), list(torso.parameters()))
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, atol=1e-4 * w.abs().max().item(), rtol=1e-4)


def test_the_fused_path_gives_the_input_its_gradient_when_asked():
    torso = MLPTorso(4, (8, 8))
    x = torch.randn(5, 4, requires_grad=True)
    (g_fused,) = torch.autograd.grad(tanh_mlp(x, list(torso.net)[::2]).sum(), x)
    (g_plain,) = torch.autograd.grad(torso.net(x).sum(), x)
    torch.testing.assert_close(g_fused, g_plain, atol=1e-6, rtol=1e-5)


def test_a_fused_torso_keeps_its_parameters_names_and_a_copy_its_own_layers():
    """Checkpoints from before the fused path load unchanged; a deep copy (a target network) runs on its own
    weights, not the original's."""
    torso = MLPTorso(4, (8, 8))
    assert list(torso.state_dict()) == ["net.0.weight", "net.0.bias", "net.2.weight", "net.2.bias"]
    twin = copy.deepcopy(torso)
    with torch.no_grad():
        twin.net[2].bias.add_(1.0)
    x = torch.randn(FUSED_FROM // 8, 4)
    assert not torch.equal(twin(x), torso(x))
    torch.testing.assert_close(twin(x), twin.net(x), atol=1e-6, rtol=0)


def test_learners_batches_run_fused_and_actors_relu_torsos_and_traced_graphs_torchs_layers(monkeypatch):
    """Fused from ``FUSED_FROM`` values a layer (64 rows of 64 units; an actor's 16 envs stay on torch's layers,
    faster there); never for a ReLU torso or a graph traced for a file."""
    calls = []
    monkeypatch.setattr("distrl.models.torsos.tanh_mlp", lambda x, layers: calls.append(x) or tanh_mlp(x, layers))
    torso = MLPTorso(4, (64, 64))
    torso(torch.randn(FUSED_FROM // 64 - 1, 4))
    assert calls == []
    torso(torch.randn(FUSED_FROM // 64, 4))
    assert len(calls) == 1
    calls.clear()
    MLPTorso(4, (64,), nn.ReLU)(torch.randn(512, 4))
    assert calls == []
    handle = torso.net[1].register_forward_hook(lambda module, args, out: None)  # a hook runs where it was put
    torso(torch.randn(512, 4))
    handle.remove()
    replaced = MLPTorso(4, (64, 64))
    replaced.net[3] = nn.ReLU()  # no longer a tanh MLP
    replaced(torch.randn(512, 4))
    assert calls == []
    mixed_precision([torso], torch.device("cpu"))  # precision=bf16 on a CPU: its layers' own autocast forwards run
    out = torso(torch.randn(512, 4))
    assert calls == [] and out.dtype == torch.float32
    class Greedy(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = ActorCritic((4,), 2, discrete=True)

        def forward(self, obs):
            return self.model.greedy(obs)

    model, obs = Greedy(), torch.randn(512, 4)
    traced = torch.jit.trace(model, obs, check_trace=False)
    assert calls == [] and "tanh" in str(traced.graph)
    model(obs)
    assert len(calls) == 1  # eager, on the CPU: the policy's torso fused


def test_an_exported_policy_keeps_a_dynamic_batch_and_torchs_tanh():
    """torch.export (what the ONNX export runs) with a learner-sized example: the batch stays dynamic (reading its
    size would have fixed it below FUSED_FROM / 64) and the graph holds torch's tanh."""
    model = ActorCritic((4,), 2, discrete=True)

    class Greedy(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, obs):
            return self.model.greedy(obs)

    batch = torch.export.Dim("batch", min=1)
    program = torch.export.export(Greedy(), (torch.randn(512, 4),), dynamic_shapes={"obs": {0: batch}}, strict=False)
    assert "tanh" in str(program.graph)
    for rows in (1, 4096):
        obs = torch.randn(rows, 4)
        torch.testing.assert_close(program.module()(obs), Greedy()(obs))
