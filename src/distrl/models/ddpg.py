"""Deterministic actor and Q critic for continuous control (DDPG, Lillicrap et al. 2016, arXiv:1509.02971)."""

from __future__ import annotations

import torch
from torch import nn

from distrl.models.torsos import MLPTorso


class DDPGNets(nn.Module):
    """mu(s) squashed into the action bounds, and Q(s, a). Kept in one module so the runtime ships
    both to actors as one weight vector (actors need the critic for initial priorities)."""

    def __init__(self, obs_dim: int, act_dim: int, low, high, hidden: tuple[int, ...] = (256, 256)):
        super().__init__()
        self.actor_torso = MLPTorso(obs_dim, hidden, nn.ReLU)
        self.actor_head = nn.Linear(self.actor_torso.out_dim, act_dim)
        self.critic_torso = MLPTorso(obs_dim + act_dim, hidden, nn.ReLU)
        self.critic_head = nn.Linear(self.critic_torso.out_dim, 1)
        self.register_buffer("scale", torch.as_tensor((high - low) / 2.0, dtype=torch.float32))
        self.register_buffer("centre", torch.as_tensor((high + low) / 2.0, dtype=torch.float32))

    def actor_parameters(self):
        return list(self.actor_torso.parameters()) + list(self.actor_head.parameters())

    def critic_parameters(self):
        return list(self.critic_torso.parameters()) + list(self.critic_head.parameters())

    def mu(self, obs: torch.Tensor) -> torch.Tensor:
        return self.centre + self.scale * torch.tanh(self.actor_head(self.actor_torso(obs)))

    def q(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.critic_head(self.critic_torso(torch.cat([obs.flatten(1).float(), action], dim=-1))).squeeze(-1)

    def greedy(self, obs: torch.Tensor) -> torch.Tensor:
        return self.mu(obs)
