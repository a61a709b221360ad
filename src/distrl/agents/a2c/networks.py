"""A2C's network: the actor-critic model shared by the actor-critic family (``models/actor_critic.py``)."""

from distrl.envs import EnvSpec
from distrl.models import ActorCritic


def make_model(env: EnvSpec, cfg) -> ActorCritic:
    return ActorCritic.for_env(env, cfg.hidden, cfg.obs_norm, cfg.value_norm, cfg.value_norm_decay)
