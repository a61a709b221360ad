"""QT-Opt as a program: actors, Bellman updaters and a trainer that scale apart (arXiv:1806.10293, section 5).

    actor i: CEM over Q_online + exploration --n-step transitions--> "replay" (its own partition)
    offline (a constant array): a Minari dataset's transitions, one copy per machine
    updater j: samples "replay" + "offline" (offline_ratio), a* = CEM on Q_polyak,
               y = r + gamma^n min(Q_polyak, Q_lagged)(s', a*) --(s, a, y, version)--> "targets"
    "targets" (the training buffer): uniform replay; its rate limiter paces the updaters to the trainer
    trainer (the learner): regresses Q_online on y; Polyak and lagged target networks --"weights"--> actors
                           (online) and updaters (both targets)

The actors are paced to the trainer (``Role.env_steps_per_update``): the online replay has no rate limiter
of its own, and without one the updates per env step would depend on how fast this machine's envs run.
With ``online=false`` there are no actors (and no periodic evaluator) and the run lasts ``offline_updates``
trainer updates.
"""

from __future__ import annotations

import dataclasses
from functools import partial

import numpy as np

from distrl.agents.common.evaluator import evaluator_roles
from distrl.agents.common.transition_actor import chunk_spec, item_spec
from distrl.agents.qt_opt.actor import QTOptActor
from distrl.agents.qt_opt.config import QTOptConfig
from distrl.agents.qt_opt.learner import QTOptLearner
from distrl.agents.qt_opt.networks import make_model
from distrl.agents.qt_opt.offline import load_offline, offline_matrix
from distrl.agents.qt_opt.updater import (
    BellmanUpdater,
    target_item_spec,
    target_items,
    targets_spec,
)
from distrl.core.program import (
    ConstantArray,
    Hyperparameter,
    PartitionedReplayService,
    Program,
    ReplayService,
    Role,
    Weights,
)
from distrl.core.system import BuildContext
from distrl.errors import ConfigError
from distrl.replay import Replay
from distrl.replay.memory import check_fits


def _actor(env_id, env, cfg, index, seed, handles):
    return QTOptActor(env_id, env, cfg, index, seed, make_model(env, cfg), handles["weights"], handles["replay"])


def _updater(env, cfg, index, seed, handles):
    return BellmanUpdater(cfg, env, seed, make_model(env, cfg), handles["weights"], handles.get("replay"),
                          handles.get("offline"))


def _learner(env, cfg, handles):
    return QTOptLearner(cfg, make_model(env, cfg), handles["targets"])


OFFLINE_CONSERVATIVE_WEIGHT = 0.1


def checked(cfg: QTOptConfig, ctx: BuildContext) -> QTOptConfig:
    env = ctx.env
    if not env.continuous or len(env.action_shape) != 1 or len(env.obs_shape) != 1:
        raise ConfigError(f"qt-opt needs vector observations and a 1-d Box action space; '{ctx.env_id}' has "
                          f"{env.observation_space} / {env.action_space} (use apex-dqn for discrete actions)")
    if cfg.cem_elites > cfg.cem_samples:
        raise ConfigError(f"cem_elites ({cfg.cem_elites}) must be at most cem_samples ({cfg.cem_samples})")
    if not cfg.online and not cfg.offline:
        raise ConfigError("online=false trains from offline data alone: give it a dataset with --set offline=DIR")
    if cfg.conservative_weight is None:  # conservative from fixed data only (config.py says why 0.1)
        cfg = dataclasses.replace(cfg, conservative_weight=0.0 if cfg.online else OFFLINE_CONSERVATIVE_WEIGHT)
    low, high = env.action_space.low, env.action_space.high
    if not (np.isfinite(low).all() and np.isfinite(high).all()):
        raise ConfigError(f"qt-opt samples actions inside the action box, so it needs finite bounds; '{ctx.env_id}' "
                          "has "
                          f"[{low.min()}, {high.max()}]")
    window = next(iter(chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step).values())).shape[0]
    if cfg.online and partition_capacity(cfg, window) * cfg.num_actors < cfg.min_replay:
        raise ConfigError(f"replay_size ({cfg.replay_size}) holds fewer transitions than min_replay "
                          f"({cfg.min_replay}): "
                          f"the updaters would never start on online data")
    # CEM scores updater_batch x cem_samples actions through the first hidden layer at once
    check_fits(4 * cfg.updater_batch * cfg.cem_samples * max(cfg.hidden or (1,)),
               f"CEM over {cfg.updater_batch} states x {cfg.cem_samples} samples")
    return cfg


def partition_capacity(cfg: QTOptConfig, window: int) -> int:
    """Each actor's share of the online replay (at least one chunk more than it writes at once)."""
    return max(cfg.replay_size // cfg.num_actors, window + 1)


def build(cfg: QTOptConfig, ctx: BuildContext) -> Program:
    cfg, env = checked(cfg, ctx), ctx.env
    spec = targets_spec(env, cfg.updater_batch)
    services = {"weights": Weights(),
                "targets": ReplayService(make=partial(Replay.uniform, target_item_spec(spec), cfg.target_buffer_size),
                                         items=target_items, samples_per_insert=cfg.samples_per_insert,
                                         min_size=cfg.min_targets, error_buffer=cfg.batch_size)}
    roles, updater_uses = [], ("weights",)
    if cfg.offline:
        load_offline(cfg.offline, ctx.env_id, env)  # a dataset that does not fit is one line now, not in a worker
        services["offline"] = ConstantArray(partial(offline_matrix, cfg.offline, ctx.env_id, env, cfg.n_step, cfg.gamma,
                                                    cfg.reward_clip))
        updater_uses += ("offline",)
    if cfg.online:
        chunk = chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step)
        window = next(iter(chunk.values())).shape[0]  # the most transitions one chunk holds
        services["replay"] = PartitionedReplayService(item_spec(chunk), cfg.num_actors, partition_capacity(cfg, window),
                                                      window)
        start = cfg.min_replay + 2 * cfg.num_actors * window  # enough for the updaters to begin on online data
        roles.append(Role("actor", partial(_actor, ctx.env_id, env, cfg), count=cfg.num_actors,
                          uses=("weights", "replay"), env_steps_per_update=cfg.env_steps_per_update,
                          free_env_steps=start))
        updater_uses += ("replay",)
    roles.append(Role("updater", partial(_updater, env, cfg), count=cfg.num_updaters, uses=updater_uses,
                      emits="targets", output=spec))
    if cfg.online:  # (the evaluator's interval counts env steps: an offline-only run makes none)
        roles.extend(evaluator_roles(ctx, partial(make_model, env, cfg)))
    return Program(roles=tuple(roles), services=services,
                   make_learner=partial(_learner, env, cfg), learner_uses=("targets",),
                   hyperparameters={"lr": Hyperparameter(cfg.lr, cfg.lr_schedule)},
                   max_updates=None if cfg.online else cfg.offline_updates, summary_metrics=("target_staleness",))
