"""Ape-X DQN's actor: epsilon-greedy over the ladder (``common/exploration.py``) and DQN initial priorities.

The actor loop is ``common/transition_actor.py``; what is Ape-X DQN's own is how a fresh transition is
scored before it is sent: |R + gamma^n max_a Q(x', a) - Q(x, a)| with the actor's copy of the network
(Ape-X, arXiv:1803.00933, section 3: actors compute initial priorities, the learner never has to).
"""

from __future__ import annotations

import numpy as np
import torch


def dqn_priorities(model, out: dict[str, np.ndarray], count: int) -> np.ndarray:
    q = model(torch.from_numpy(out["obs"][:count]))
    q_sa = q.gather(1, torch.from_numpy(out["action"][:count]).unsqueeze(1)).squeeze(1)
    q_next = model(torch.from_numpy(out["next_obs"][:count])).max(1).values
    target = torch.from_numpy(out["reward"][:count]) + torch.from_numpy(out["discount"][:count]) * q_next
    return (target - q_sa).abs().numpy()
