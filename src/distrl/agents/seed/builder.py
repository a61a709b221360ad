"""SEED RL as a topology.

    actor 0..N-1: [vector env only] --observations--> inference server (learner's process, batched forward)
                                    <--actions-------
    inference server: assembles unrolls (obs, action, behaviour logp, reward) --> V-trace learner (IMPALA's)

The learner is IMPALA's, unchanged: the server's unrolls have the same layout as an IMPALA actor's.
"""

from __future__ import annotations

import dataclasses
from functools import partial

from distrl.agents.common.env_actor import EnvActor
from distrl.agents.impala.builder import _learner, make_model as _impala_model
from distrl.agents.seed.config import SeedConfig
from distrl.agents.seed.policy import ActorCriticPolicy
from distrl.core.types import ArraySpec, InferenceSpec, Topology
from distrl.envs import EnvSpec
from distrl.errors import ConfigError
from distrl.envs.make import is_atari
from distrl.runtime.inference_grpc import split_address
from distrl.runtime.inference_server import seed_unroll_spec


def make_model(env: EnvSpec, cfg: SeedConfig):
    return _impala_model(env, cfg)


def _env_actor(env_id: str, cfg: SeedConfig, index: int, seed: int, shared_model=None) -> EnvActor:
    return EnvActor(env_id, cfg.num_envs, seed)


def _policy(env: EnvSpec, cfg: SeedConfig) -> ActorCriticPolicy:
    return ActorCriticPolicy(make_model(env, cfg), env, cfg.inference_device)


def build(cfg: SeedConfig, env_id: str, env: EnvSpec, total_steps: int) -> Topology:
    if split_address(cfg.bind) is None:
        raise ConfigError(f"bind '{cfg.bind}' is not HOST:PORT (e.g. 127.0.0.1:0, 0.0.0.0:50051; port 0 picks a free one)")
    if is_atari(env_id) and cfg.reward_clip is None:
        cfg = dataclasses.replace(cfg, reward_clip=1.0)
    obs = ArraySpec(env.obs_shape, env.obs_dtype.name)
    outputs = {"actions": ArraySpec(env.action_shape, env.action_dtype.name), "behaviour_logp": ArraySpec((), "float32")}
    inference = InferenceSpec(make_policy=partial(_policy, env, cfg), obs=obs, num_envs=cfg.num_envs,
                              unroll_length=cfg.unroll_length, max_batch=cfg.inference_batch or cfg.num_actors + cfg.remote_actors,
                              max_wait_s=cfg.inference_wait_ms / 1e3, env_id=env_id, bind=cfg.bind, remote_slots=cfg.remote_actors)
    return Topology(make_actor=partial(_env_actor, env_id, cfg), make_learner=partial(_learner, env, cfg, total_steps),
                    unroll_spec=seed_unroll_spec(obs, outputs, None, cfg.num_envs, cfg.unroll_length),
                    num_actors=cfg.num_actors, batch_unrolls=cfg.batch_unrolls, inference=inference)
