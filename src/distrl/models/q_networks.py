"""Q-value heads for value-based systems (DQN family): plain or dueling. ``obs_norm``: vector observations pass
through a running normaliser first (``models/normalisers.py``; the learner updates it, and it travels with the
weights to the actors and to ``distrl eval``), as R2D2's network does."""

from __future__ import annotations

import torch
from torch import nn

from distrl.models.normalisers import ObsNormaliser
from distrl.models.torsos import make_torso


class QNetwork(nn.Module):
    """Q(x, .) for discrete actions. ``dueling`` uses Wang et al. 2016 (arXiv:1511.06581) eq. 9:
    Q = V + A - mean_a A."""

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, hidden: tuple[int, ...] = (64, 64),
                 dueling: bool = True, obs_norm: bool = False):
        super().__init__()
        self.obs_norm = ObsNormaliser(obs_shape) if obs_norm and len(obs_shape) == 1 else None
        self.torso = make_torso(obs_shape, hidden, nn.ReLU)
        self.dueling = dueling
        self.advantage = nn.Linear(self.torso.out_dim, num_actions)
        self.value = nn.Linear(self.torso.out_dim, 1) if dueling else None

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if self.obs_norm is not None:
            obs = self.obs_norm(obs)
        feat = self.torso(obs)
        adv = self.advantage(feat)
        if not self.dueling:
            return adv
        return self.value(feat) + adv - adv.mean(dim=-1, keepdim=True)

    def greedy(self, obs: torch.Tensor) -> torch.Tensor:
        return self.forward(obs).argmax(dim=-1)
