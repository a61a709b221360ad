"""Ape-X DDPG as a topology: the Ape-X DQN assembly with Gaussian-ladder actors and a DDPG learner.

    actor i: mu(s) + N(0, sigma_i) over a vector env --chunk of n-step transitions + priorities-->
    learner: prioritized replay, critic on n-step targets, policy gradient, Polyak targets --weights--> actors
"""

from __future__ import annotations

from functools import partial

import numpy as np

from distrl.agents.apex_ddpg.actor import GaussianLadder
from distrl.agents.apex_ddpg.config import ApexDDPGConfig
from distrl.agents.apex_ddpg.learner import ApexDDPGLearner
from distrl.agents.common.transition_actor import TransitionActor, chunk_spec
from distrl.agents.common.replay_learner import chunk_to_insert
from distrl.core.types import Topology
from distrl.envs import EnvSpec
from distrl.errors import ConfigError
from distrl.models import DDPGNets


def make_model(env: EnvSpec, cfg: ApexDDPGConfig) -> DDPGNets:
    space = env.action_space
    return DDPGNets(int(np.prod(env.obs_shape)), env.action_shape[0], space.low, space.high, tuple(cfg.hidden))


def _actor(env_id, env, cfg, index, seed, shared_model=None):
    space = env.action_space
    return TransitionActor(env_id, env, cfg, index, seed, make_model(env, cfg),
                           GaussianLadder(cfg, index, space.low.astype(np.float32), space.high.astype(np.float32)))


def _learner(env, cfg, total_steps):
    return ApexDDPGLearner(cfg, make_model(env, cfg), chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step), total_steps)


def build(cfg: ApexDDPGConfig, env_id: str, env: EnvSpec, total_steps: int) -> Topology:
    if env.discrete or len(env.action_shape) != 1 or len(env.obs_shape) != 1:
        raise ConfigError(f"apex-ddpg needs vector observations and a 1-d Box action space; '{env_id}' has "
                          f"{env.observation_space} / {env.action_space} (use apex-dqn for discrete actions)")
    return Topology(make_actor=partial(_actor, env_id, env, cfg), make_learner=partial(_learner, env, cfg, total_steps),
                    unroll_spec=chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step),
                    num_actors=cfg.num_actors, batch_unrolls=1, to_replay_items=chunk_to_insert)
