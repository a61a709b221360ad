"""Ape-X DQN as a program.

    actor i: eps_i-greedy over a vector env --chunk of n-step transitions + initial priorities--> replay
    replay (a service): prioritized, soft capacity, rate limiter (samples per insert)
    learner: samples the replay, double-Q n-step loss, priority updates, target sync --weights--> actors

On ``inline`` and ``local`` the replay lives in the trainer's process (chunks reach it through the
shared-memory slots on ``local``); on ``ray`` it is a Ray actor that actors insert into directly.
"""

from __future__ import annotations

from functools import partial

from distrl.agents.apex_dqn.actor import dqn_priorities
from distrl.agents.apex_dqn.config import ApexDQNConfig
from distrl.agents.apex_dqn.learner import ApexDQNLearner
from distrl.agents.apex_dqn.networks import make_model
from distrl.agents.common.demos import demo_service, replays
from distrl.agents.common.evaluator import evaluator_roles
from distrl.agents.common.exploration import EpsilonGreedy
from distrl.agents.common.replay_learner import chunk_to_insert
from distrl.agents.common.settings import MULTI_HINT, atari_reward_clip
from distrl.agents.common.transition_actor import (
    TransitionActor,
    TransitionSettings,
    chunk_spec,
    episodes_to_transitions,
    item_spec,
)
from distrl.core.program import Hyperparameter, Program, ReplayService, Role, Weights
from distrl.core.system import BuildContext
from distrl.envs import EnvSpec
from distrl.errors import ConfigError
from distrl.replay import Replay


def _actor(env_id, env, cfg, index, seed, handles, interleaved=False):
    # autoscaled, any first few actors run: each then spans the whole ladder (every num_actors-th rung), not a slice
    explore = EpsilonGreedy.ladder(
        index, cfg.num_actors, cfg.num_envs, cfg.epsilon, cfg.epsilon_alpha, env.action_space.n, interleaved
    )
    priorities = partial(dqn_priorities, rescale_eps=cfg.value_rescale_eps,
                         expectile=cfg.first_head_expectile)
    return TransitionActor(env_id, env, TransitionSettings.of(cfg, cfg.actor_sync_steps, tags(cfg)), seed,
                           make_model(env, cfg), explore, priorities, handles["weights"])


def tags(cfg) -> tuple[str, ...]:
    """What a transition keeps beside itself: with two heads, whether its game was against fixed players."""
    return ("versus_fixed",) if getattr(cfg, "fixed_head_slack", None) is not None else ()


def _learner(env, cfg, handles):
    return ApexDQNLearner(cfg, make_model(env, cfg), handles["replay"], handles.get("demos"))


def replay_service(env: EnvSpec, cfg) -> ReplayService:
    """Prioritized, with a hard capacity above the soft one (actors may overfill it between trims, Ape-X
    section 3); pixel frame stacks keep each frame once."""
    items = item_spec(chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step, tags(cfg)))
    make = partial(Replay.prioritized, items, int(cfg.replay_size * 1.25) + 1, alpha=cfg.priority_alpha,
                   soft_capacity=cfg.replay_size, frame_stacks=("obs", "next_obs") if env.pixel_stacks else None,
                   bounds=_action_bounds(env))
    return ReplayService(make=make, items=chunk_to_insert, samples_per_insert=cfg.samples_per_insert,
                         min_size=cfg.min_replay, error_buffer=cfg.batch_size)


def demo_replay_for(env: EnvSpec, cfg, episodes):
    """A prioritized replay that holds every n-step transition of the recorded episodes."""
    items = item_spec(chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step))
    return partial(Replay.prioritized, items, episodes.steps + 1, alpha=cfg.priority_alpha,
                   frame_stacks=("obs", "next_obs") if env.pixel_stacks else None, bounds=_action_bounds(env))


def _check_heads(cfg, env_id: str) -> None:
    """Two heads learn from a league's games, the second from those against its fixed players: a league player's
    game, no demos (their transitions say nothing of an opponent)."""
    if cfg.fixed_head_slack is None:
        if cfg.first_head_expectile is not None:
            raise ConfigError("first_head_expectile is the first of two Q heads' loss: it needs fixed_head_slack "
                              "(distrl league apex-dqn --fixed random --fixed-share 0.5 --set fixed_head_slack=0.25 "
                              "--set first_head_expectile=0.1)")
        return
    from distrl.envs import multi_agent

    if not multi_agent.is_game(env_id) or "league" not in multi_agent.split_id(env_id)[1]:
        raise ConfigError(f"fixed_head_slack's heads learn from a league's games, one from all of them and one from "
                          f"those against the league's fixed players: it is a setting of a "
                          f"league's players (distrl league apex-dqn --fixed random --fixed-share 0.4 --set "
                          f"fixed_head_slack=0.05), and '{env_id}' is no league's game")
    if cfg.demos:
        raise ConfigError("fixed_head_slack and demos: a demonstration says nothing of its opponent; use one of them")


def _action_bounds(env: EnvSpec) -> dict[str, int] | None:
    """A Discrete action's bound, checked when a checkpoint's replay is loaded (Ape-X DDPG shares this builder's
    replay with Box actions: nothing to check there)."""
    return {"action": int(env.action_space.n)} if env.discrete else None


def services(env: EnvSpec, cfg, ctx) -> dict:
    """The agent's replay, a demo replay where ``demos`` is set (R2D3's mix for transitions), the weights."""
    out = {"replay": replay_service(env, cfg), "weights": Weights()}
    if cfg.demos:
        out["demos"] = demo_service(cfg, ctx, partial(demo_replay_for, env, cfg),
                                    partial(episodes_to_transitions, n=cfg.n_step, gamma=cfg.gamma,
                                            reward_clip=cfg.reward_clip))
    return out


def build(cfg: ApexDQNConfig, ctx: BuildContext) -> Program:
    env = ctx.env
    cfg = atari_reward_clip(cfg, ctx.env_id)
    if not env.discrete:
        raise ConfigError(f"apex-dqn needs one Discrete action (Q-values over its options); '{ctx.env_id}' has "
                          f"{env.action_space}" + (" (use apex-ddpg)" if env.continuous else MULTI_HINT))
    _check_heads(cfg, ctx.env_id)
    chunk = chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step, tags(cfg))
    actors = Role("actor", partial(_actor, ctx.env_id, env, cfg, interleaved=ctx.autoscale), count=cfg.num_actors,
                  uses=("weights",), emits="replay", output=chunk, elastic=True)
    used = services(env, cfg, ctx)
    return Program(roles=(actors, *evaluator_roles(ctx, partial(make_model, env, cfg))), services=used,
                   make_learner=partial(_learner, env, cfg), learner_uses=replays(used),
                   hyperparameters={"lr": Hyperparameter(cfg.lr, cfg.lr_schedule)})
