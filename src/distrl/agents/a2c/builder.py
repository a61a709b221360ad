"""A2C as a program: one actor and the learner taking turns (synchronous by construction).

    actor --unroll (T steps of num_envs)--> channel "unrolls" --> learner: GAE, one update --> weights
      ^--------------------------------------- pulls the newest weights before every unroll

On ``inline`` the actor steps only when the learner has taken its last unroll, and pulls the weights
that unroll produced, so every unroll is on-policy (policy lag 0): that is why A2C runs on ``inline``
only (a second process would act one version behind). PPO's program is this one with its own learner
(``make_learner``).
"""

from __future__ import annotations

from functools import partial

from distrl.agents.a2c.config import A2CConfig
from distrl.agents.a2c.learner import A2CLearner
from distrl.agents.a2c.networks import make_model
from distrl.agents.common.evaluator import evaluator_roles
from distrl.agents.common.unroll_actor import UnrollActor, unroll_spec
from distrl.core.program import Channel, Hyperparameter, Program, Role, Weights
from distrl.core.system import BuildContext
from distrl.envs import EnvSpec


def _actor(env_id: str, env: EnvSpec, cfg: A2CConfig, index: int, seed: int, handles: dict) -> UnrollActor:
    return UnrollActor(env_id, cfg.num_envs, cfg.unroll_length, seed, make_model(env, cfg), handles["weights"])


RUNTIMES = ("inline",)  # one actor and the learner taking turns (PPO's builder is this one)


def _learner(env: EnvSpec, cfg: A2CConfig, handles: dict) -> A2CLearner:
    return A2CLearner(cfg, make_model(env, cfg))


def build(cfg: A2CConfig, ctx: BuildContext, make_learner=_learner) -> Program:
    env = ctx.env
    spec = unroll_spec(env, cfg.num_envs, cfg.unroll_length)
    actor = Role("actor", partial(_actor, ctx.env_id, env, cfg), count=1, uses=("weights",), emits="unrolls",
                 output=spec, in_flight=1)
    return Program(roles=(actor, *evaluator_roles(ctx, partial(make_model, env, cfg))),
                   services={"unrolls": Channel(spec, batch=1), "weights": Weights()},
                   make_learner=partial(make_learner, env, cfg), consumes="unrolls",
                   hyperparameters={"lr": Hyperparameter(cfg.lr, cfg.lr_schedule),
                                    "entropy_coef": Hyperparameter(cfg.entropy_coef)}, runtimes=RUNTIMES)
