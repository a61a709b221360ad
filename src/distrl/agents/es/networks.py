"""ES's policy: a deterministic tanh MLP on normalised observations (Salimans et al. 2017, appendix A).

The observation mean and std are parameters that no gradient touches (``requires_grad=False``): they travel
with the weights, so workers and ``distrl eval`` act on the same normalisation the master last set. The
running sums they come from are buffers (checkpointed, never sent). :meth:`EsPolicy.perturbed` runs N
differently perturbed copies of the policy on N observations in one batched matrix product per layer, so a
worker's 2P episodes step as one vector env.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from distrl.envs import EnvSpec
from distrl.errors import ConfigError

OBS_CLIP = 5.0  # normalised observations are clipped, as in the paper's code
VAR_FLOOR = 1e-2  # the paper's code floors the running variance at this before taking its root


class EsPolicy(nn.Module):
    def __init__(self, obs_dim: int, hidden: tuple, out_dim: int, discrete: bool, low=None, high=None):
        super().__init__()
        self.obs_mean = nn.Parameter(torch.zeros(obs_dim), requires_grad=False)
        self.obs_std = nn.Parameter(torch.ones(obs_dim), requires_grad=False)
        self.register_buffer("obs_sum", torch.zeros(obs_dim, dtype=torch.float64))
        self.register_buffer("obs_sumsq", torch.zeros(obs_dim, dtype=torch.float64))
        self.register_buffer("obs_count", torch.zeros((), dtype=torch.float64))
        sizes = (obs_dim, *hidden, out_dim)
        self.linears = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.discrete = discrete
        if not discrete:
            # copies (torch.tensor): on ray the action bounds arrive as read-only arrays, which as_tensor warns about
            self.register_buffer("low", torch.tensor(low, dtype=torch.float32))
            self.register_buffer("high", torch.tensor(high, dtype=torch.float32))

    def trainable(self) -> list[nn.Parameter]:
        """The parameters ES perturbs (the noise's dimension), in flat-vector order."""
        return [p for p in self.parameters() if p.requires_grad]

    def _normalise(self, obs: torch.Tensor) -> torch.Tensor:
        return ((obs.float() - self.obs_mean) / self.obs_std).clamp(-OBS_CLIP, OBS_CLIP)

    def _act(self, out: torch.Tensor) -> torch.Tensor:
        if self.discrete:
            return out.argmax(-1)
        return self.low + (torch.tanh(out) + 1.0) * 0.5 * (self.high - self.low)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = self._normalise(obs)
        for i, layer in enumerate(self.linears):
            x = layer(x)
            if i < len(self.linears) - 1:
                x = torch.tanh(x)
        return x

    def greedy(self, obs: torch.Tensor) -> torch.Tensor:
        return self._act(self(obs))

    def perturbed(self, thetas: torch.Tensor, obs: torch.Tensor) -> torch.Tensor:
        """Actions of N policies (``thetas``: [N, dim] flat trainable parameters) on N observations."""
        n = thetas.shape[0]
        x = self._normalise(obs).unsqueeze(2)  # [N, in, 1]
        offset = 0
        for i, layer in enumerate(self.linears):
            out_f, in_f = layer.weight.shape
            w = thetas[:, offset:offset + out_f * in_f].view(n, out_f, in_f)
            offset += out_f * in_f
            b = thetas[:, offset:offset + out_f].view(n, out_f, 1)
            offset += out_f
            x = torch.baddbmm(b, w, x)
            if i < len(self.linears) - 1:
                x = torch.tanh(x)
        return self._act(x.squeeze(2))

    @torch.no_grad()
    def merge_obs_stats(self, obs_sum: np.ndarray, obs_sumsq: np.ndarray, count: float) -> None:
        """Add workers' observation sums, then set the normaliser from the running totals."""
        self.obs_sum += torch.as_tensor(obs_sum, dtype=torch.float64)
        self.obs_sumsq += torch.as_tensor(obs_sumsq, dtype=torch.float64)
        self.obs_count += float(count)
        if self.obs_count > 0:
            mean = self.obs_sum / self.obs_count
            var = (self.obs_sumsq / self.obs_count - mean**2).clamp(min=VAR_FLOOR)
            self.obs_mean.copy_(mean.float())
            self.obs_std.copy_(var.sqrt().float())


def make_model(env: EnvSpec, cfg) -> EsPolicy:
    if len(env.obs_shape) != 1:
        raise ConfigError(f"es needs vector observations; this env's are {env.obs_shape}")
    if env.discrete:
        return EsPolicy(env.obs_shape[0], tuple(cfg.hidden), int(env.action_space.n), True)
    space = env.action_space
    if (
        not env.continuous
        or len(space.shape) != 1
        or not (np.isfinite(space.low).all() and np.isfinite(space.high).all())
    ):
        raise ConfigError(f"es needs discrete actions or a bounded 1-d Box; this env's are {space}")
    return EsPolicy(env.obs_shape[0], tuple(cfg.hidden), space.shape[0], False, space.low, space.high)
