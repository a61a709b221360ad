"""The DQN loss, one for every system that learns a Q-function (Ape-X DQN's learner, GORILA's bundles).

Mnih et al. 2015's target ``r + gamma^n max_a Q_target(x', a)``, or van Hasselt et al. 2016's double-Q
target ``r + gamma^n Q_target(x', argmax_a Q(x', a))`` (``ops.double_q_target``), with a Huber loss
weighted by importance weights (prioritized replay, Schaul et al. 2016; ones for uniform replay).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from distrl.ops import double_q_target, td_error


def dqn_loss(model, target, batch: dict[str, torch.Tensor], weights: torch.Tensor,
             double_q: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, delta): ``batch`` holds ``obs, action, reward, discount, next_obs`` (discount = gamma^n, 0 at a
    terminal); delta is the TD error, whose magnitude is the new priority."""
    with torch.no_grad():
        q_next_target = target(batch["next_obs"])
        if double_q:
            y = double_q_target(batch["reward"], batch["discount"], model(batch["next_obs"]), q_next_target)
        else:
            y = batch["reward"] + batch["discount"] * q_next_target.max(1).values
    delta = td_error(model(batch["obs"]), batch["action"], y)
    loss = (weights * F.huber_loss(delta, torch.zeros_like(delta), reduction="none")).mean()
    return loss, delta
