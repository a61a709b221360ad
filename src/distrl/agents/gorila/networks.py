"""GORILA's network: a Q network (dueling by default; the paper's plain DQN head with ``dueling=false``) that gives a
game's illegal actions a Q-value below any real one (``models/q_networks.py``)."""

from distrl.envs import EnvSpec
from distrl.models import QNetwork


def make_model(env: EnvSpec, cfg) -> QNetwork:
    return QNetwork(env.obs_shape, env.action_space.n, tuple(cfg.hidden), dueling=cfg.dueling,
                    action_mask_size=env.action_mask_size)
