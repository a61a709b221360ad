"""Ape-X DQN exploration: epsilon-greedy with the per-env epsilon ladder, and DQN initial priorities."""

from __future__ import annotations

import numpy as np
import torch

from distrl.ops import epsilon_ladder


class EpsilonGreedy:
    def __init__(self, cfg, index: int, num_actions: int):
        ladder = epsilon_ladder(cfg.num_actors * cfg.num_envs, cfg.epsilon, cfg.epsilon_alpha)
        self.epsilons = ladder[index * cfg.num_envs:(index + 1) * cfg.num_envs]  # this actor's rungs
        self.num_actions = num_actions

    def act(self, model, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        greedy = model(torch.from_numpy(obs)).argmax(-1).numpy()
        explore = rng.random(len(obs)) < self.epsilons
        return np.where(explore, rng.integers(0, self.num_actions, len(obs)), greedy)

    def td_errors(self, model, out, count: int) -> np.ndarray:
        """|R + gamma^n max_a Q(x', a) - Q(x, a)| with the actor's copy (Ape-X initial priorities)."""
        q = model(torch.from_numpy(out["obs"][:count]))
        q_sa = q.gather(1, torch.from_numpy(out["action"][:count]).unsqueeze(1)).squeeze(1)
        q_next = model(torch.from_numpy(out["next_obs"][:count])).max(1).values
        target = torch.from_numpy(out["reward"][:count]) + torch.from_numpy(out["discount"][:count]) * q_next
        return (target - q_sa).abs().numpy()
