"""R2D2 as a program: Ape-X's shape with sequences as the replay's items.

    actor i: eps_i-greedy recurrent policy over a vector env --sequences (m steps, overlap, stored start
             state)--> replay
    replay (a service): prioritized over sequences, soft capacity, rate limiter (samples per insert)
    learner: burn-in from the stored state, n-step double-Q under h(x), sequence priorities, target sync
             --weights--> actors
"""

from __future__ import annotations

from functools import partial

from distrl.agents.common.demos import demo_service, replays
from distrl.agents.common.evaluator import evaluator_roles
from distrl.agents.common.exploration import EpsilonGreedy
from distrl.agents.common.settings import MULTI_HINT, atari_reward_clip
from distrl.agents.r2d2.actor import (
    SequenceActor,
    chunk_spec,
    episodes_to_chunks,
    sequences_to_insert,
    state_spec,
    step_spec,
)
from distrl.agents.r2d2.config import R2D2Config
from distrl.agents.r2d2.learner import R2D2Learner
from distrl.agents.r2d2.networks import make_model
from distrl.core.program import Hyperparameter, Program, ReplayService, Role, Weights
from distrl.core.system import BuildContext
from distrl.errors import ConfigError
from distrl.replay import PrioritizedSampler, Replay, SequenceStorage


def _actor(env_id, env, cfg, index, seed, handles):
    explore = EpsilonGreedy.ladder(
        index, cfg.num_actors, cfg.num_envs, cfg.epsilon, cfg.epsilon_alpha, env.action_space.n
    )
    return SequenceActor(env_id, env, cfg, seed, make_model(env, cfg), explore, handles["weights"], index)


def make_replay(spec, cfg, pixels: bool, size: int | None = None, actions: int | None = None) -> Replay:
    """Sequences over a ring of steps, each step once: room for ``size`` (default ``replay_size``) sequences
    of ``sequence_length - overlap`` new steps each (shorter episodes bring more steps per sequence: then the
    step ring, not the soft capacity, evicts the oldest sequences)."""
    size = size or cfg.replay_size
    capacity = int(size * 1.25) + 1
    storage = SequenceStorage(step_spec(spec), state_spec(spec), cfg.sequence_length, capacity,
                              step_capacity=size * (cfg.sequence_length - cfg.overlap),
                              frame_stacks=("obs",) if pixels else ())
    return Replay(None, capacity, PrioritizedSampler(capacity, cfg.priority_alpha), soft_capacity=size, storage=storage,
                  bounds={"action": actions} if actions else None)  # a loaded checkpoint's actions are checked


def _learner(env, cfg, handles):
    return R2D2Learner(cfg, make_model(env, cfg), handles["replay"], demos=handles.get("demos"))


def demo_replay_for(spec, cfg, pixels: bool, actions: int, episodes):
    """A sequence replay that holds every sequence of the recorded episodes."""
    size = episodes.steps // (cfg.sequence_length - cfg.overlap) + 2 * len(episodes) + 1
    return partial(make_replay, spec, cfg, pixels, size, actions)


def services(cfg, ctx) -> dict:
    """The agent's sequence replay, a demo replay where ``demos`` is set (R2D3), the weights."""
    out = {"replay": replay_service(cfg, ctx.env), "weights": Weights()}
    if cfg.demos:
        spec = chunk_spec(ctx.env, cfg, cfg.lstm)
        make = partial(demo_replay_for, spec, cfg, ctx.env.pixel_stacks, ctx.env.action_space.n)
        out["demos"] = demo_service(cfg, ctx, make, partial(episodes_to_chunks, cfg=cfg, state_size=cfg.lstm),
                                    items=sequences_to_insert)
    return out


def checked(cfg, ctx: BuildContext):
    """R2D2's settings against the env (one line each); Atari's reward clip where none is set."""
    env = ctx.env
    cfg = atari_reward_clip(cfg, ctx.env_id)
    if not env.discrete:
        raise ConfigError(f"r2d2 needs one Discrete action (Q-values over its options); '{ctx.env_id}' has "
                          f"{env.action_space}{'' if env.continuous else MULTI_HINT}")
    if cfg.overlap >= cfg.sequence_length:
        raise ConfigError(f"overlap must be smaller than sequence_length ({cfg.overlap} >= {cfg.sequence_length})")
    if cfg.burn_in + cfg.n_step >= cfg.sequence_length:
        raise ConfigError(f"burn_in + n_step must be smaller than sequence_length ({cfg.burn_in} + {cfg.n_step} >= "
                          f"{cfg.sequence_length}): no step of a sequence would be trained")
    steps = cfg.replay_size * (cfg.sequence_length - cfg.overlap)
    if steps < 2 * cfg.num_envs * cfg.unroll_length:
        raise ConfigError(f"replay_size {cfg.replay_size} holds {steps} env steps, fewer than two chunks of an actor "
                          f"({2 * cfg.num_envs * cfg.unroll_length}): raise replay_size")
    return cfg


def replay_service(cfg, env) -> ReplayService:
    """The prioritized sequence replay, fed by chunks in :func:`chunk_spec`'s layout."""
    return ReplayService(
        make=partial(make_replay, chunk_spec(env, cfg, cfg.lstm), cfg, env.pixel_stacks, actions=env.action_space.n),
        items=sequences_to_insert,
        samples_per_insert=cfg.samples_per_insert,
        min_size=cfg.min_replay,
        error_buffer=cfg.batch_size,
    )


def build(cfg: R2D2Config, ctx: BuildContext) -> Program:
    cfg, env = checked(cfg, ctx), ctx.env
    spec = chunk_spec(env, cfg, cfg.lstm)
    actors = Role("actor", partial(_actor, ctx.env_id, env, cfg), count=cfg.num_actors, uses=("weights",),
                  emits="replay", output=spec)
    used = services(cfg, ctx)
    return Program(roles=(actors, *evaluator_roles(ctx, partial(make_model, env, cfg))), services=used,
                   make_learner=partial(_learner, env, cfg), learner_uses=replays(used),
                   hyperparameters={"lr": Hyperparameter(cfg.lr, cfg.lr_schedule)})
