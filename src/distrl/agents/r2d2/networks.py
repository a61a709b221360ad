"""R2D2's network: an MLP (or Nature-CNN) torso, an LSTM and a dueling head (``models/recurrent_q.py``)."""

from distrl.envs import EnvSpec
from distrl.models import RecurrentQNetwork


def make_model(env: EnvSpec, cfg) -> RecurrentQNetwork:
    return RecurrentQNetwork(env.obs_shape, env.action_space.n, tuple(cfg.hidden), cfg.lstm, dueling=cfg.dueling,
                             obs_norm=cfg.obs_norm, action_mask_size=env.action_mask_size)
