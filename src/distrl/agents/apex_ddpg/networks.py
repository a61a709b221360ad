"""Ape-X DDPG's networks: a deterministic policy mu and a critic Q in one module (``models/ddpg.py``)."""

import numpy as np

from distrl.envs import EnvSpec
from distrl.models import DDPGNets


def make_model(env: EnvSpec, cfg) -> DDPGNets:
    space = env.action_space
    return DDPGNets(int(np.prod(env.obs_shape)), env.action_shape[0], space.low, space.high, tuple(cfg.hidden))
