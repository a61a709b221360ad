"""Ape-X DDPG's actor: Gaussian noise over a ladder of scales (``common/exploration.py``) and DDPG initial
priorities: |R + gamma^n Q(x', mu(x')) - Q(x, a)| with the actor's copies of the networks."""

from __future__ import annotations

import numpy as np
import torch


def ddpg_priorities(model, out: dict[str, np.ndarray], count: int) -> np.ndarray:
    obs = torch.from_numpy(out["obs"][:count])
    nxt = torch.from_numpy(out["next_obs"][:count])
    q = model.q(obs, torch.from_numpy(out["action"][:count]))
    target = torch.from_numpy(out["reward"][:count]) + torch.from_numpy(out["discount"][:count]) * model.q(
        nxt, model.mu(nxt)
    )
    return (target - q).abs().numpy()
