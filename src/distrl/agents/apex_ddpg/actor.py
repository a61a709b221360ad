"""Ape-X DDPG exploration: Gaussian noise on mu(s) with a per-env scale ladder, DDPG initial priorities."""

from __future__ import annotations

import numpy as np
import torch


class GaussianLadder:
    def __init__(self, cfg, index: int, low: np.ndarray, high: np.ndarray):
        total = cfg.num_actors * cfg.num_envs
        # geometric spacing from noise_max (first copy) to noise_min (last), like the epsilon ladder
        scales = np.geomspace(max(cfg.noise_max, 1e-8), max(cfg.noise_min, 1e-8), total) if total > 1 else np.array([cfg.noise_max])
        self.scales = scales[index * cfg.num_envs:(index + 1) * cfg.num_envs, None] * (high - low) / 2.0
        self.low, self.high = low, high

    def act(self, model, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        mu = model.mu(torch.from_numpy(obs)).numpy()
        noisy = mu + self.scales * rng.standard_normal(mu.shape)
        return np.clip(noisy, self.low, self.high).astype(np.float32)

    def td_errors(self, model, out, count: int) -> np.ndarray:
        """|R + gamma^n Q(x', mu(x')) - Q(x, a)| with the actor's copies (initial priorities)."""
        obs = torch.from_numpy(out["obs"][:count])
        nxt = torch.from_numpy(out["next_obs"][:count])
        q = model.q(obs, torch.from_numpy(out["action"][:count]))
        target = torch.from_numpy(out["reward"][:count]) + torch.from_numpy(out["discount"][:count]) * model.q(nxt, model.mu(nxt))
        return (target - q).abs().numpy()
