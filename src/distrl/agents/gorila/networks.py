"""GORILA's network: a Q network (dueling by default; the paper's plain DQN head with ``dueling=false``)."""

from distrl.envs import EnvSpec
from distrl.models import QNetwork


def make_model(env: EnvSpec, cfg) -> QNetwork:
    return QNetwork(env.obs_shape, env.action_space.n, tuple(cfg.hidden), dueling=cfg.dueling)
