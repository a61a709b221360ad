"""Feature extractors: an MLP for vector observations, the Nature-DQN CNN for stacked frames."""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn.modules import module as _module

from distrl.models.tanh_mlp import tanh_mlp

# rows x widest layer from which a tanh MLP on a CPU runs fused: below it (an actor's 16 envs) torch's own layers are
# faster, each fused tanh being four small operations where torch's is one
FUSED_FROM = 4096


class MLPTorso(nn.Module):
    """Linear layers, each followed by ``activation``. A tanh MLP on a CPU, given a batch of ``FUSED_FROM`` values a
    layer or more (a learner's), runs as one fused node (``models/tanh_mlp.py``: at 512 x 64 forward and backward
    1.4x as fast, forward alone 2x); the parameters and their names are the same either way."""

    def __init__(self, in_dim: int, hidden: tuple[int, ...] = (64, 64), activation: type[nn.Module] = nn.Tanh):
        super().__init__()
        layers, last = [], in_dim
        for h in hidden:
            layers += [nn.Linear(last, h), activation()]
            last = h
        self.net = nn.Sequential(*layers)
        self.out_dim = last
        self._tanh = activation is nn.Tanh
        self._widest = max(hidden, default=0)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = obs.flatten(1).float()
        # traced for a file (TorchScript; torch.export and ONNX's exporter compile) the graph keeps torch's layers;
        # asked before the batch's size is read, which would fix a dynamic batch dimension
        if self._tanh and x.is_cpu and not torch.jit.is_tracing() and not torch.compiler.is_compiling():
            if x.shape[0] * self._widest >= FUSED_FROM:
                layers = self._plain_tanh_layers()
                if layers is not None:
                    return tanh_mlp(x, layers)
        return self.net(x)

    def _plain_tanh_layers(self) -> list[nn.Linear] | None:
        """The linear layers while the net is still torch's Linear, Tanh, ... with no hook and no forward of its own
        anywhere (bfloat16 autocast's wrappers, ``models/device.mixed_precision``): what the fused node computes."""
        if _module._global_forward_hooks or _module._global_forward_pre_hooks:
            return None
        modules = list(self.net)
        if any(type(m) is not (nn.Linear if i % 2 == 0 else nn.Tanh) or m._forward_hooks or m._forward_pre_hooks
               or "forward" in m.__dict__ for i, m in enumerate(modules)):
            return None
        return modules[::2]


class NatureCNN(nn.Module):
    """Mnih et al. 2015 (Nature) torso: 32x8x8/4, 64x4x4/2, 64x3x3/1, then 512 units.
    Takes ``[N, C, 84, 84]`` uint8 frames and scales them to [0, 1] inside, so uint8 is what
    travels between processes (4x smaller than float).

    Weights start orthogonal with gain sqrt(2) (the ReLU gain; Saxe et al. 2014), biases at zero, as the
    actor-critic Atari agents of OpenAI Baselines and CleanRL start theirs. PyTorch's default init
    (U(+-1/sqrt(fan_in)): a sixth of the variance, 2 / fan_in, a ReLU layer needs to keep its input's scale) shrinks the
    signal at every layer: on Pong frames the default torso's 512 outputs varied across states by 0.00045 on
    average against 0.017 with this init, and an IMPALA run with it on a GPU ended 6.2M env steps with a
    value that explained 0.1% of the returns' variance and a uniform policy (README, learners on a GPU)."""

    def __init__(self, in_channels: int = 4, out_dim: int = 512):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(in_channels, 32, 8, stride=4), nn.ReLU(),
            nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(), nn.Flatten())
        self.fc = nn.Sequential(nn.Linear(64 * 7 * 7, out_dim), nn.ReLU())
        self.out_dim = out_dim
        for layer in [*self.conv, *self.fc]:
            if isinstance(layer, (nn.Conv2d, nn.Linear)):
                nn.init.orthogonal_(layer.weight, math.sqrt(2.0))
                nn.init.zeros_(layer.bias)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.fc(self.conv(obs.float() / 255.0))


def make_torso(obs_shape: tuple[int, ...], hidden: tuple[int, ...], activation: type[nn.Module] = nn.Tanh) -> nn.Module:
    """Pixels (``[C, H, W]`` with H, W >= 36) get the Nature CNN; anything else is flattened into an MLP."""
    if len(obs_shape) == 3 and min(obs_shape[1:]) >= 36:
        return NatureCNN(obs_shape[0])
    in_dim = 1
    for d in obs_shape:
        in_dim *= d
    return MLPTorso(in_dim, hidden, activation)
