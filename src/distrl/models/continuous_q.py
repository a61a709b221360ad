"""Q(s, a) over a continuous action box, acted on by CEM (QT-Opt, Kalashnikov et al. 2018, arXiv:1806.10293).

There is no policy network: ``greedy(obs)`` is the cross-entropy method's argmax of Q (``ops/cem.py``).
CEM scores ``samples`` actions per state, so the first layer is split into a state part and an action
part (the same function as one layer on [s; a]): the state's share is computed once per state and
broadcast over its samples, instead of once per sample. (The paper's grasping network likewise merges an
image embedding with an action embedding.)
"""

from __future__ import annotations

import torch
from torch import nn

from distrl.ops import cem_maximize


class ContinuousQ(nn.Module):
    def __init__(self, obs_dim: int, act_dim: int, low, high, hidden: tuple[int, ...] = (256, 256),
                 cem_iterations: int = 2, cem_samples: int = 64, cem_elites: int = 6):
        super().__init__()
        if not hidden:
            raise ValueError("ContinuousQ needs at least one hidden layer")
        self.obs_in = nn.Linear(obs_dim, hidden[0])
        self.act_in = nn.Linear(act_dim, hidden[0], bias=False)
        layers, last = [nn.ReLU()], hidden[0]
        for h in hidden[1:]:
            layers += [nn.Linear(last, h), nn.ReLU()]
            last = h
        layers.append(nn.Linear(last, 1))
        self.body = nn.Sequential(*layers)
        self.register_buffer("low", torch.tensor(low, dtype=torch.float32).reshape(act_dim))
        self.register_buffer("high", torch.tensor(high, dtype=torch.float32).reshape(act_dim))
        self.cem = dict(iterations=cem_iterations, samples=cem_samples, elites=cem_elites)

    def q(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        """Q of ``action [B, A]`` -> ``[B]``, or of several actions per state, ``[B, N, A]`` -> ``[B, N]``."""
        s = self.obs_in(obs.flatten(1).float())
        a = self.act_in(action.float())
        if a.dim() == 3:
            s = s.unsqueeze(1)
        return self.body(s + a).squeeze(-1)

    def argmax(self, obs: torch.Tensor, generator: torch.Generator | None = None,
               noise: list[torch.Tensor] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """CEM's best action per state ``[B, A]`` and its Q ``[B]`` (``noise``: fixed draws, as ``cem_maximize``)."""
        s = self.obs_in(obs.flatten(1).float()).unsqueeze(1)
        score = lambda actions: self.body(s + self.act_in(actions)).squeeze(-1)  # noqa: E731
        return cem_maximize(score, self.low, self.high, obs.shape[0], generator=generator, noise=noise, **self.cem)

    def greedy_noise(self) -> list[torch.Tensor]:
        """The fixed draws greedy acting uses (seed 0), one ``[1, samples, A]`` per CEM iteration."""
        g = torch.Generator().manual_seed(0)
        shape = (1, self.cem["samples"], self.low.shape[0])
        return [torch.randn(shape, generator=g) for _ in range(self.cem["iterations"])]

    def greedy(self, obs: torch.Tensor) -> torch.Tensor:
        """The CEM argmax over fixed draws shared by every row: an observation always gets the same action, whatever
        else is in the batch (so an exported graph, which holds the draws as constants, acts the same)."""
        with torch.no_grad():
            return self.argmax(obs, noise=self.greedy_noise())[0]
