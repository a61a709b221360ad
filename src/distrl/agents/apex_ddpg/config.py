"""Ape-X DDPG settings (Horgan et al. 2018, arXiv:1803.00933, section 4.2)."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.agents.common.demos import DemoSettings
from distrl.config import setting


@dataclass(frozen=True)
class ApexDDPGConfig(DemoSettings):
    num_actors: int = common.num_actors()
    num_envs: int = common.num_envs(8)
    unroll_length: int = common.unroll_length(16, "Vector steps per chunk an actor sends (its local buffer)")
    n_step: int = setting(3, "n of the n-step critic target.", low=1)
    gamma: float = common.gamma()
    noise_min: float = setting(0.05, "Smallest Gaussian exploration scale (fraction of the action range), last env "
                                     "copy.", low=0.0)
    noise_max: float = setting(0.4, "Largest exploration scale, first env copy; copies in between are spaced "
                                    "geometrically.", low=0.0)
    actor_sync_steps: int = common.actor_sync_steps(50)
    actor_lr: float = common.lr(1e-3, "Adam learning rate of the policy mu")
    critic_lr: float = common.lr(1e-3, "Adam learning rate of the critic Q")
    lr_schedule: str = common.lr_schedule("constant")
    batch_size: int = common.batch_size(256, "transitions")
    samples_per_insert: float = common.samples_per_insert(16.0, "transition")
    min_replay: int = common.min_replay(2_000, "transitions")
    replay_size: int = common.replay_size(200_000, "transitions")
    priority_alpha: float = common.priority_alpha()
    priority_beta: float = common.priority_beta()
    target_tau: float = setting(
        0.005, "Polyak averaging of the target networks per update.", low=0.0, low_open=True, high=1.0
    )
    max_grad_norm: float = common.max_grad_norm(10.0)
    hidden: tuple = common.hidden((256, 256))
    reward_clip: float | None = common.reward_clip("actor")
