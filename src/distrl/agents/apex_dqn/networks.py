"""Ape-X DQN's network: a (dueling) Q network on an MLP or Nature-CNN torso (``models/q_networks.py``)."""

from distrl.envs import EnvSpec
from distrl.models import QNetwork


def make_model(env: EnvSpec, cfg) -> QNetwork:
    return QNetwork(env.obs_shape, env.action_space.n, tuple(cfg.hidden), dueling=cfg.dueling, obs_norm=cfg.obs_norm,
                    action_mask_size=env.action_mask_size, fixed_head_slack=cfg.fixed_head_slack)
