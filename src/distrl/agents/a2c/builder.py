"""A2C as a topology: one actor whose vector env runs in the learner's loop, sharing its model.

    [vector env x num_envs] --unroll (T steps)--> [learner: GAE + A2C loss] --same model--> actor

Synchronous by construction, so it runs on the ``inline`` runtime only.
"""

from __future__ import annotations

from functools import partial

from distrl.agents.a2c.config import A2CConfig
from distrl.agents.a2c.learner import A2CLearner
from distrl.agents.common.unroll_actor import UnrollActor, unroll_spec
from distrl.core.types import Topology
from distrl.envs import EnvSpec
from distrl.models import ActorCritic


def make_model(env: EnvSpec, cfg: A2CConfig) -> ActorCritic:
    n = env.action_space.n if env.discrete else env.action_shape[0]
    return ActorCritic(env.obs_shape, n, env.discrete, tuple(cfg.hidden))


def _actor(env_id: str, env: EnvSpec, cfg: A2CConfig, index: int, seed: int, shared_model=None) -> UnrollActor:
    return UnrollActor(env_id, cfg.num_envs, cfg.unroll_length, seed, shared_model or make_model(env, cfg))


def _learner(env: EnvSpec, cfg: A2CConfig, total_steps: int) -> A2CLearner:
    return A2CLearner(cfg, make_model(env, cfg), total_steps)


def build(cfg: A2CConfig, env_id: str, env: EnvSpec, total_steps: int) -> Topology:
    return Topology(make_actor=partial(_actor, env_id, env, cfg), make_learner=partial(_learner, env, cfg, total_steps),
                    unroll_spec=unroll_spec(env, cfg.num_envs, cfg.unroll_length), num_actors=1,
                    synchronous=True, runtimes=("inline",))
