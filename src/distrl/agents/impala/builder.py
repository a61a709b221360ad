"""IMPALA as a topology.

    actor 0..N-1: [vector env + local policy copy] --unroll(T, behaviour logp)--> trajectory channel
    learner: takes B unrolls, V-trace loss, publishes versioned weights --> actors pull between unrolls

The same declaration runs inline (actors take turns), on local processes and on Ray.
"""

from __future__ import annotations

import dataclasses
from functools import partial

from distrl.agents.a2c.builder import make_model as _make_ac
from distrl.agents.common.unroll_actor import UnrollActor, unroll_spec
from distrl.agents.impala.config import ImpalaConfig
from distrl.agents.impala.learner import ImpalaLearner
from distrl.core.types import Topology
from distrl.envs import EnvSpec
from distrl.envs.make import is_atari


def make_model(env: EnvSpec, cfg: ImpalaConfig):
    return _make_ac(env, cfg)


def _actor(env_id: str, env: EnvSpec, cfg: ImpalaConfig, index: int, seed: int, shared_model=None) -> UnrollActor:
    return UnrollActor(env_id, cfg.num_envs, cfg.unroll_length, seed, make_model(env, cfg))


def _learner(env: EnvSpec, cfg: ImpalaConfig, total_steps: int) -> ImpalaLearner:
    return ImpalaLearner(cfg, make_model(env, cfg), total_steps)


def build(cfg: ImpalaConfig, env_id: str, env: EnvSpec, total_steps: int) -> Topology:
    if is_atari(env_id) and cfg.reward_clip is None:
        cfg = dataclasses.replace(cfg, reward_clip=1.0)  # the standard Atari reward clipping (IMPALA section 5.3)
    return Topology(make_actor=partial(_actor, env_id, env, cfg), make_learner=partial(_learner, env, cfg, total_steps),
                    unroll_spec=unroll_spec(env, cfg.num_envs, cfg.unroll_length), num_actors=cfg.num_actors,
                    batch_unrolls=cfg.batch_unrolls)
