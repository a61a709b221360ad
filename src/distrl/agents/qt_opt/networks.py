"""QT-Opt's networks: the Q-function the actors act on and its two target networks, in one module.

The learner trains ``online``; ``polyak`` follows it by Polyak averaging every update and ``lagged`` is a copy
made every ``target_lag_updates`` updates (arXiv:1806.10293, section 4.2: clipped double Q over two target
networks). Kept in one module, the three travel as one weight vector through the weights service: actors act
with ``online``, Bellman updaters compute targets with ``polyak`` and ``lagged``, and a checkpoint's ``model``
brings all three back on resume. ``greedy`` (evaluation, ``load_policy``) is CEM over ``online``.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn

from distrl.envs import EnvSpec
from distrl.models.continuous_q import ContinuousQ


class QTOptNets(nn.Module):
    def __init__(self, q: ContinuousQ):
        super().__init__()
        self.online = q
        self.polyak = copy.deepcopy(q).requires_grad_(False)
        self.lagged = copy.deepcopy(q).requires_grad_(False)

    def greedy(self, obs: torch.Tensor) -> torch.Tensor:
        return self.online.greedy(obs)


def make_model(env: EnvSpec, cfg) -> QTOptNets:
    space = env.action_space
    q = ContinuousQ(int(np.prod(env.obs_shape)), env.action_shape[0], space.low, space.high, tuple(cfg.hidden),
                    cfg.cem_iterations, cfg.cem_samples, cfg.cem_elites)
    return QTOptNets(q)
