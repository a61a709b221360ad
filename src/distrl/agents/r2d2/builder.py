"""R2D2 as a program: Ape-X's shape with sequences as the replay's items.

    actor i: eps_i-greedy recurrent policy over a vector env --sequences (m steps, overlap, stored start
             state)--> replay
    replay (a service): prioritized over sequences, soft capacity, rate limiter (samples per insert)
    learner: burn-in from the stored state, n-step double-Q under h(x), sequence priorities, target sync
             --weights--> actors
"""

from __future__ import annotations

import dataclasses
from functools import partial

from distrl.agents.common.evaluator import evaluator_roles
from distrl.agents.common.exploration import EpsilonGreedy
from distrl.agents.r2d2.actor import (
    SequenceActor,
    chunk_spec,
    sequences_to_insert,
    state_spec,
    step_spec,
)
from distrl.agents.r2d2.config import R2D2Config
from distrl.agents.r2d2.learner import R2D2Learner
from distrl.agents.r2d2.networks import make_model
from distrl.core.program import Hyperparameter, Program, ReplayService, Role, Weights
from distrl.core.system import BuildContext
from distrl.envs.make import is_atari
from distrl.errors import ConfigError
from distrl.replay import PrioritizedSampler, Replay, SequenceStorage


def _actor(env_id, env, cfg, index, seed, handles):
    explore = EpsilonGreedy.ladder(index, cfg.num_actors, cfg.num_envs, cfg.epsilon, cfg.epsilon_alpha, env.action_space.n)
    return SequenceActor(env_id, env, cfg, seed, make_model(env, cfg), explore, handles["weights"], index)


def make_replay(spec, cfg, pixels: bool) -> Replay:
    """Sequences over a ring of steps, each step once: room for ``replay_size`` sequences of ``sequence_length
    - overlap`` new steps each (shorter episodes bring more steps per sequence: then the step ring, not the
    soft capacity, evicts the oldest sequences)."""
    capacity = int(cfg.replay_size * 1.25) + 1
    storage = SequenceStorage(step_spec(spec), state_spec(spec), cfg.sequence_length, capacity,
                              step_capacity=cfg.replay_size * (cfg.sequence_length - cfg.overlap),
                              frame_stacks=("obs",) if pixels else ())
    return Replay(None, capacity, PrioritizedSampler(capacity, cfg.priority_alpha), soft_capacity=cfg.replay_size,
                  storage=storage)


def _learner(env, cfg, handles):
    return R2D2Learner(cfg, make_model(env, cfg), handles["replay"])


def checked(cfg, ctx: BuildContext):
    """R2D2's settings against the env (one line each); Atari's reward clip where none is set."""
    env = ctx.env
    if is_atari(ctx.env_id) and cfg.reward_clip is None:
        cfg = dataclasses.replace(cfg, reward_clip=1.0)
    if not env.discrete:
        raise ConfigError(f"r2d2 needs a discrete action space; '{ctx.env_id}' has {env.action_space}")
    if cfg.overlap >= cfg.sequence_length:
        raise ConfigError(f"overlap must be smaller than sequence_length ({cfg.overlap} >= {cfg.sequence_length})")
    if cfg.burn_in + cfg.n_step >= cfg.sequence_length:
        raise ConfigError(f"burn_in + n_step must be smaller than sequence_length ({cfg.burn_in} + {cfg.n_step} >= "
                          f"{cfg.sequence_length}): no step of a sequence would be trained")
    return cfg


def replay_service(cfg, env) -> ReplayService:
    """The prioritized sequence replay, fed by chunks in :func:`chunk_spec`'s layout."""
    pixels = len(env.obs_shape) == 3 and env.obs_dtype.name == "uint8"
    return ReplayService(make=partial(make_replay, chunk_spec(env, cfg, cfg.lstm), cfg, pixels), items=sequences_to_insert,
                         samples_per_insert=cfg.samples_per_insert, min_size=cfg.min_replay, error_buffer=cfg.batch_size)


def build(cfg: R2D2Config, ctx: BuildContext) -> Program:
    cfg, env = checked(cfg, ctx), ctx.env
    spec = chunk_spec(env, cfg, cfg.lstm)
    replay = replay_service(cfg, env)
    actors = Role("actor", partial(_actor, ctx.env_id, env, cfg), count=cfg.num_actors, uses=("weights",),
                  emits="replay", output=spec)
    return Program(roles=(actors, *evaluator_roles(ctx, partial(make_model, env, cfg))),
                   services={"replay": replay, "weights": Weights()},
                   make_learner=partial(_learner, env, cfg), learner_uses=("replay",),
                   hyperparameters={"lr": Hyperparameter(cfg.lr, cfg.lr_schedule)})
