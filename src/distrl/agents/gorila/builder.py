"""GORILA as a topology: bundles of actor + local replay + learner, and a sharded parameter server.

    bundle i: eps-greedy actor -> local (or the global) replay -> learner: DQN gradient from pulled parameters
              --gradient + the shard versions it was computed from--> parameter-server shards 1..S
    shard s:  applies its part of the gradient, or drops it when more than K versions stale

On ``local`` the shards (and a global replay) live in shared memory (the learner process owns them);
on ``ray`` each shard is a Ray actor, and so is a global replay.
"""

from __future__ import annotations

from functools import partial

from distrl.agents.common.param_server_learner import ParamServerLearner
from distrl.agents.common.transition_actor import chunk_spec, item_spec
from distrl.agents.gorila.config import GorilaConfig
from distrl.agents.gorila.worker import GorilaBundle
from distrl.core.types import ArraySpec, Topology
from distrl.envs import EnvSpec
from distrl.errors import ConfigError
from distrl.models import QNetwork
from distrl.runtime.shared_replay import SharedReplay

REPORT_SPEC = {"steps": ArraySpec((1,), "int64", batch_axis=0)}


def make_model(env: EnvSpec, cfg: GorilaConfig) -> QNetwork:
    return QNetwork(env.obs_shape, env.action_space.n, tuple(cfg.hidden), dueling=cfg.dueling)


def _bundle(env_id, env, cfg, index, seed, params):
    return GorilaBundle(env_id, env, cfg, index, seed, params, make_model(env, cfg))


def _learner(env, cfg, total_steps):
    learner = ParamServerLearner(make_model(env, cfg), cfg.lr, cfg.rmsprop_alpha, cfg.optimizer_eps,
                                 num_shards=cfg.num_shards, max_staleness=cfg.max_staleness,
                                 lr_schedule=cfg.lr_schedule, total_steps=total_steps, optimizer=cfg.optimizer)
    if cfg.replay == "global":  # travels to the bundles with the shards (shared memory on local)
        spec = chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step)
        window = next(iter(spec.values())).shape[0]  # the most transitions one chunk can hold
        learner.shards.replay = SharedReplay(item_spec(spec), cfg.num_actors, cfg.replay_capacity, window)
    return learner


def build(cfg: GorilaConfig, env_id: str, env: EnvSpec, total_steps: int) -> Topology:
    if not env.discrete:
        raise ConfigError(f"gorila needs a discrete action space; '{env_id}' has {env.action_space}")
    if cfg.replay == "global" and cfg.prioritized:
        raise ConfigError("replay=global samples uniformly; add --set prioritized=false (priorities are for replay=local)")
    return Topology(make_actor=partial(_bundle, env_id, env, cfg), make_learner=partial(_learner, env, cfg, total_steps),
                    unroll_spec=REPORT_SPEC, num_actors=cfg.num_actors, shared_model=True)
