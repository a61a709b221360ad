"""GORILA as a program: bundles of actor + replay + learner, and a sharded parameter server.

    bundle i: eps-greedy actor -> its own replay (or the global one) -> learner: DQN gradient from pulled
              parameters --gradient + the shard versions it was computed from--> params
    params (a service): shards 1..S, each applying its part of a gradient or dropping it when more than
              K versions stale; shared memory on ``local``, a Ray actor per shard on ``ray``
    replay (a service, ``replay=global``): every bundle writes its own partition and samples all

There is no learner in the trainer's process: it counts what bundles report, schedules the learning rate
and checkpoints the shards (and the global replay).
"""

from __future__ import annotations

from functools import partial

from distrl.agents.common.evaluator import evaluator_roles
from distrl.agents.common.settings import MULTI_HINT, atari_reward_clip
from distrl.agents.common.shared_optim import shared_optimizer
from distrl.agents.common.transition_actor import chunk_spec, item_spec
from distrl.agents.gorila.actor import GorilaBundle
from distrl.agents.gorila.config import GorilaConfig
from distrl.agents.gorila.networks import make_model
from distrl.core.program import (
    Hyperparameter,
    ParamServer,
    PartitionedReplayService,
    Program,
    Role,
)
from distrl.core.system import BuildContext
from distrl.errors import ConfigError


def _bundle(env_id, env, cfg, index, seed, handles):
    return GorilaBundle(env_id, env, cfg, index, seed, handles["params"], make_model(env, cfg), handles.get("replay"))


def build(cfg: GorilaConfig, ctx: BuildContext) -> Program:
    cfg, env = atari_reward_clip(cfg, ctx.env_id), ctx.env
    if not env.discrete:
        raise ConfigError(f"gorila needs one Discrete action (Q-values over its options); '{ctx.env_id}' has "
                          f"{env.action_space}{'' if env.continuous else MULTI_HINT}")
    if cfg.replay == "global" and cfg.prioritized:
        raise ConfigError("replay=global samples uniformly; add --set prioritized=false (priorities are for "
                          "replay=local)")
    services = {
        "params": ParamServer(
            make_model=partial(make_model, env, cfg),
            make_optimizer=shared_optimizer(cfg.optimizer, cfg.lr, cfg.optimizer_eps, cfg.rmsprop_alpha),
            num_shards=cfg.num_shards,
            max_staleness=cfg.max_staleness,
        )
    }
    uses = ("params",)
    if cfg.replay == "global":
        spec = chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step)
        window = next(iter(spec.values())).shape[0]  # the most transitions one chunk can hold
        services["replay"] = PartitionedReplayService(item_spec(spec), cfg.num_actors, cfg.replay_capacity, window)
        uses = ("params", "replay")
    bundles = Role("bundle", partial(_bundle, ctx.env_id, env, cfg), count=cfg.num_actors, uses=uses)
    return Program(roles=(bundles, *evaluator_roles(ctx, partial(make_model, env, cfg), source="params")),
                   services=services, hyperparameters={"lr": Hyperparameter(cfg.lr, cfg.lr_schedule)})
