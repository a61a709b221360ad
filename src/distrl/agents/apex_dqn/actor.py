"""Ape-X DQN's actor: epsilon-greedy over the ladder (``common/exploration.py``) and DQN initial priorities.

The actor loop is ``common/transition_actor.py``; what is Ape-X DQN's own is how a fresh transition is
scored before it is sent: |R + gamma^n max_a Q(x', a) - Q(x, a)| with the actor's copy of the network, through h
where the Q values are kept in h-space (``value_rescale_eps``; Ape-X, arXiv:1803.00933, section 3: actors compute
initial priorities, the learner never has to).
"""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.common.dqn_loss import dqn_target, head_deltas, head_priorities
from distrl.ops import td_error


def dqn_priorities(model, out: dict[str, np.ndarray], count: int, rescale_eps: float | None = None,
                   expectile: float | None = None) -> np.ndarray:
    """|delta| of ``count`` fresh transitions with the actor's copy, which stands in for the target network too
    (the max target); in h-space with ``rescale_eps``, as the learner's priorities are. A two-head network's: the
    larger weighted error of the heads that learn from each transition (``expectile``: the first head's), as the
    learner's."""
    if getattr(model, "num_heads", 1) == 2:
        batch = {k: torch.from_numpy(out[k][:count]) for k in ("obs", "action", "reward", "discount", "next_obs",
                                                                 "versus_fixed")}
        delta, learns = head_deltas(model, model, batch, rescale_eps)
        return head_priorities(delta, learns, expectile).numpy()
    q = model(torch.from_numpy(out["obs"][:count]))
    q_next = model(torch.from_numpy(out["next_obs"][:count]))
    reward, discount = torch.from_numpy(out["reward"][:count]), torch.from_numpy(out["discount"][:count])
    target = dqn_target(reward, discount, q_next, q_next, rescale_eps)
    return td_error(q, torch.from_numpy(out["action"][:count]), target).abs().numpy()
