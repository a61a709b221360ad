"""Ape-X DDPG as a program: Ape-X DQN's assembly with Gaussian-ladder actors and a DDPG learner.

    actor i: mu(s) + N(0, sigma_i) over a vector env --chunk of n-step transitions + priorities--> replay
    learner: samples the prioritized replay, critic on n-step targets, policy gradient, Polyak targets
             --weights--> actors
"""

from __future__ import annotations

from functools import partial

import numpy as np

from distrl.agents.apex_ddpg.actor import ddpg_priorities
from distrl.agents.apex_ddpg.config import ApexDDPGConfig
from distrl.agents.apex_ddpg.learner import ApexDDPGLearner
from distrl.agents.apex_ddpg.networks import make_model
from distrl.agents.apex_dqn.builder import services
from distrl.agents.common.demos import replays
from distrl.agents.common.evaluator import evaluator_roles
from distrl.agents.common.exploration import GaussianNoise
from distrl.agents.common.transition_actor import (
    TransitionActor,
    TransitionSettings,
    chunk_spec,
)
from distrl.core.program import Hyperparameter, Program, Role
from distrl.core.system import BuildContext
from distrl.errors import ConfigError


def _actor(env_id, env, cfg, index, seed, handles):
    low, high = env.action_space.low.astype(np.float32), env.action_space.high.astype(np.float32)
    explore = GaussianNoise.ladder(index, cfg.num_actors, cfg.num_envs, cfg.noise_max, cfg.noise_min, low, high)
    return TransitionActor(
        env_id,
        env,
        TransitionSettings.of(cfg, cfg.actor_sync_steps),
        seed,
        make_model(env, cfg),
        explore,
        ddpg_priorities,
        handles["weights"],
    )


def _learner(env, cfg, handles):
    return ApexDDPGLearner(cfg, make_model(env, cfg), handles["replay"], handles.get("demos"))


def build(cfg: ApexDDPGConfig, ctx: BuildContext) -> Program:
    env = ctx.env
    if not env.continuous or len(env.action_shape) != 1 or len(env.obs_shape) != 1:
        raise ConfigError(f"apex-ddpg needs vector observations and a 1-d Box action space; '{ctx.env_id}' has "
                          f"{env.observation_space} / {env.action_space} (use apex-dqn for discrete actions)")
    actors = Role("actor", partial(_actor, ctx.env_id, env, cfg), count=cfg.num_actors, uses=("weights",),
                  emits="replay", output=chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step))
    used = services(env, cfg, ctx)
    return Program(roles=(actors, *evaluator_roles(ctx, partial(make_model, env, cfg))), services=used,
                   make_learner=partial(_learner, env, cfg), learner_uses=replays(used),
                   hyperparameters={"actor_lr": Hyperparameter(cfg.actor_lr, cfg.lr_schedule),
                                    "critic_lr": Hyperparameter(cfg.critic_lr, cfg.lr_schedule)})
