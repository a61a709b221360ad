"""Ape-X DQN as a topology.

    actor i: eps_i-greedy over a vector env --chunk of n-step transitions + initial priorities-->
    learner: inserts into its prioritized replay (soft capacity), samples at a fixed sample/insert
             ratio, double-Q n-step loss, priority updates, target sync --weights--> actors (every ~N steps)

On ``local`` the chunks travel through the shared-memory slots and the replay lives in the
learner's process; on ``ray`` they travel through the object store.
"""

from __future__ import annotations

import dataclasses
from functools import partial

from distrl.agents.apex_dqn.actor import EpsilonGreedy
from distrl.agents.common.transition_actor import TransitionActor, chunk_spec
from distrl.agents.apex_dqn.config import ApexDQNConfig
from distrl.agents.apex_dqn.learner import ApexDQNLearner
from distrl.agents.common.replay_learner import chunk_to_insert
from distrl.core.types import Topology
from distrl.envs import EnvSpec
from distrl.envs.make import is_atari
from distrl.errors import ConfigError
from distrl.models import QNetwork


def make_model(env: EnvSpec, cfg: ApexDQNConfig) -> QNetwork:
    return QNetwork(env.obs_shape, env.action_space.n, tuple(cfg.hidden), dueling=cfg.dueling)


def _actor(env_id, env, cfg, index, seed, shared_model=None):
    return TransitionActor(env_id, env, cfg, index, seed, make_model(env, cfg), EpsilonGreedy(cfg, index, env.action_space.n))


def _learner(env, cfg, total_steps):
    return ApexDQNLearner(cfg, make_model(env, cfg), chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step), total_steps)


def build(cfg: ApexDQNConfig, env_id: str, env: EnvSpec, total_steps: int) -> Topology:
    if is_atari(env_id) and cfg.reward_clip is None:
        cfg = dataclasses.replace(cfg, reward_clip=1.0)  # standard Atari reward clipping
    if not env.discrete:
        raise ConfigError(f"apex-dqn needs a discrete action space; '{env_id}' has {env.action_space} (use apex-ddpg)")
    return Topology(make_actor=partial(_actor, env_id, env, cfg), make_learner=partial(_learner, env, cfg, total_steps),
                    unroll_spec=chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step),
                    num_actors=cfg.num_actors, batch_unrolls=1, to_replay_items=chunk_to_insert)
