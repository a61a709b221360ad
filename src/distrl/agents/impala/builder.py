"""IMPALA as a program.

    actor 0..N-1: [vector env + local policy copy] --unroll(T, behaviour logp)--> channel "unrolls"
    learner: takes B unrolls, V-trace loss, publishes versioned weights --> actors pull between unrolls

The same declaration runs inline (actors take turns), on local processes and on Ray. APPO's program is this one
with its own learner (``make_learner``).
"""

from __future__ import annotations

from functools import partial

from distrl.agents.common.evaluator import evaluator_roles
from distrl.agents.common.settings import atari_reward_clip
from distrl.agents.common.unroll_actor import UnrollActor, unroll_spec
from distrl.agents.impala.config import ImpalaConfig
from distrl.agents.impala.learner import ImpalaLearner
from distrl.agents.impala.networks import make_model
from distrl.core.program import Channel, Hyperparameter, Program, Role, Weights
from distrl.core.system import BuildContext
from distrl.envs import EnvSpec


def _actor(env_id: str, env: EnvSpec, cfg: ImpalaConfig, index: int, seed: int, handles: dict) -> UnrollActor:
    return UnrollActor(env_id, cfg.num_envs, cfg.unroll_length, seed, make_model(env, cfg), handles["weights"])


def _learner(env: EnvSpec, cfg: ImpalaConfig, handles: dict) -> ImpalaLearner:
    return ImpalaLearner(cfg, make_model(env, cfg))


def build(cfg: ImpalaConfig, ctx: BuildContext, make_learner=_learner) -> Program:
    cfg, env = atari_reward_clip(cfg, ctx.env_id), ctx.env
    spec = unroll_spec(env, cfg.num_envs, cfg.unroll_length)
    actors = Role("actor", partial(_actor, ctx.env_id, env, cfg), count=cfg.num_actors, uses=("weights",),
                  emits="unrolls", output=spec, elastic=True)
    return Program(roles=(actors, *evaluator_roles(ctx, partial(make_model, env, cfg))),
                   services={"unrolls": Channel(spec, batch=cfg.batch_unrolls), "weights": Weights()},
                   make_learner=partial(make_learner, env, cfg), consumes="unrolls",
                   hyperparameters={"lr": Hyperparameter(cfg.lr, cfg.lr_schedule),
                                    "entropy_coef": Hyperparameter(cfg.entropy_coef)})
