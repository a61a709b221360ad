"""A3C as a topology: N worker processes share one model and one RMSProp in shared memory.

    worker i: sync local copy <- shared params; t_max steps; n-step A2C gradient on the copy;
              shared RMSProp step on the shared params (lock-free) ... repeat
    coordinator: counts steps and episodes from workers' small reports; checkpoints the shared model

Runs on ``inline`` (workers take turns), ``local`` (true Hogwild on shared memory) and ``ray``
(machines share no memory: workers push gradients to a parameter-server actor and pull weights).
"""

from __future__ import annotations

from functools import partial

from distrl.agents.a2c.builder import make_model as _make_ac
from distrl.agents.a3c.config import A3CConfig
from distrl.agents.common.param_server_learner import ParamServerLearner
from distrl.agents.a3c.worker import A3CWorker
from distrl.agents.common.unroll_actor import unroll_spec
from distrl.core.types import ArraySpec, Topology
from distrl.envs import EnvSpec

REPORT_SPEC = {"steps": ArraySpec((1,), "int64", batch_axis=0)}


def make_model(env: EnvSpec, cfg: A3CConfig):
    return _make_ac(env, cfg)


def _worker(env_id, env, cfg, index, seed, params):
    return A3CWorker(env_id, cfg, unroll_spec(env, cfg.num_envs, cfg.t_max), index, seed, params, make_model(env, cfg))


def _learner(env, cfg, total_steps):
    # one shard, no staleness limit: every gradient lands (Hogwild on local)
    return ParamServerLearner(make_model(env, cfg), cfg.lr, cfg.rmsprop_alpha, cfg.rmsprop_eps,
                              lr_schedule=cfg.lr_schedule, total_steps=total_steps)


def build(cfg: A3CConfig, env_id: str, env: EnvSpec, total_steps: int) -> Topology:
    return Topology(make_actor=partial(_worker, env_id, env, cfg), make_learner=partial(_learner, env, cfg, total_steps),
                    unroll_spec=REPORT_SPEC, num_actors=cfg.num_actors, shared_model=True, runtimes=("local", "inline", "ray"))
