"""SEED RL with R2D2's learner as a program.

    env actor 0..N-1: [vector env only] --observations--> inference service (the trainer's process: one
                                        <--actions------   LSTM state per env, epsilon ladder, batched forward)
    inference service: served unrolls --SequenceEmitter--> R2D2 chunks (steps once, sequence ends, stored
                       states) --> replay (a service: prioritized over sequences, rate limiter)
    learner: R2D2's (burn-in, h(x) n-step double-Q, sequence priorities), unchanged
             --weights--> the inference service (swapped in every actor_sync_steps steps) and the evaluator
"""

from __future__ import annotations

from functools import partial

from distrl.agents.common.demos import replays
from distrl.agents.common.env_actor import EnvActor
from distrl.agents.common.evaluator import evaluator_roles
from distrl.agents.r2d2.actor import chunk_spec
from distrl.agents.r2d2.builder import _learner, checked, services
from distrl.agents.seed.builder import check_inference_settings
from distrl.agents.seed_r2d2.config import SeedR2D2Config
from distrl.agents.seed_r2d2.emitter import SequenceEmitter
from distrl.agents.seed_r2d2.networks import RecurrentQPolicy, make_model
from distrl.core.program import Hyperparameter, Inference, Program, Role
from distrl.core.system import BuildContext
from distrl.core.types import ArraySpec


def _env_actor(env_id: str, cfg, index: int, seed: int, handles: dict) -> EnvActor:
    # R2D2 trains on whole Atari games (Kapturowski et al. 2019, section 2.3: the loss-of-life heuristic disabled)
    return EnvActor(env_id, cfg.num_envs, seed, handles["inference"], cfg.unroll_length, whole_games=True)


def _policy(env, cfg, num_slots: int) -> RecurrentQPolicy:
    import torch

    # made in the trainer's process after the run's seed is set: the exploration draws follow the run's seed
    return RecurrentQPolicy(make_model(env, cfg), env, cfg, num_slots, seed=int(torch.randint(2**31, ())))


def build(cfg: SeedR2D2Config, ctx: BuildContext) -> Program:
    check_inference_settings(cfg)
    cfg, env = checked(cfg, ctx), ctx.env
    slots = cfg.num_actors + cfg.remote_actors
    inference = Inference(make_policy=partial(_policy, env, cfg, slots),
                          obs=ArraySpec(env.obs_shape, env.obs_dtype.name), num_envs=cfg.num_envs,
                          unroll_length=cfg.unroll_length, max_batch=cfg.inference_batch or slots,
                          max_wait_s=cfg.inference_wait_ms / 1e3, emits="replay", env_id=ctx.env_id, bind=cfg.bind,
                          remote_slots=cfg.remote_actors, tls_cert=cfg.tls_cert, tls_key=cfg.tls_key,
                          make_emitter=partial(SequenceEmitter, cfg, chunk_spec(env, cfg, cfg.lstm), cfg.lstm),
                          whole_games=True)
    actors = Role("actor", partial(_env_actor, ctx.env_id, cfg), count=cfg.num_actors, uses=("inference",))
    used = {**services(cfg, ctx), "inference": inference}
    return Program(roles=(actors, *evaluator_roles(ctx, partial(make_model, env, cfg))), services=used,
                   make_learner=partial(_learner, env, cfg), learner_uses=replays(used),
                   hyperparameters={"lr": Hyperparameter(cfg.lr, cfg.lr_schedule)})
