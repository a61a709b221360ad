"""Ape-X DDPG settings (Horgan et al. 2018, arXiv:1803.00933, section 4.2)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from distrl.config import setting


@dataclass(frozen=True)
class ApexDDPGConfig:
    num_actors: int = setting(os.cpu_count() or 2, "Actor processes (default: one per core).", low=1)
    num_envs: int = setting(8, "Envs per actor.", low=1)
    unroll_length: int = setting(16, "Vector steps per chunk an actor sends (its local buffer).", low=1)
    n_step: int = setting(3, "n of the n-step critic target.", low=1)
    gamma: float = setting(0.99, "Discount factor.", low=0.0, high=1.0)
    noise_min: float = setting(0.05, "Smallest Gaussian exploration scale (fraction of the action range), last env copy.", low=0.0)
    noise_max: float = setting(0.4, "Largest exploration scale, first env copy; copies in between are spaced geometrically.", low=0.0)
    actor_sync_steps: int = setting(50, "Vector steps between an actor's weight pulls.", low=1)
    actor_lr: float = setting(1e-3, "Adam learning rate of the policy mu.", low=0.0, low_open=True)
    critic_lr: float = setting(1e-3, "Adam learning rate of the critic Q.", low=0.0, low_open=True)
    lr_schedule: str = setting("constant", "Learning-rate schedule: constant or linear decay to 0.", choices=("constant", "linear"))
    batch_size: int = setting(256, "Transitions per learner update.", low=1)
    samples_per_insert: float = setting(16.0, "Replay samples per inserted transition (the rate limiter's ratio).", low=0.0, low_open=True)
    min_replay: int = setting(2_000, "Transitions in replay before learning starts.", low=1)
    replay_size: int = setting(200_000, "Soft capacity: the learner evicts the oldest transitions beyond it.", low=1)
    priority_alpha: float = setting(0.6, "Prioritisation exponent alpha.", low=0.0)
    priority_beta: float = setting(0.4, "Importance-sampling exponent beta.", low=0.0, high=1.0)
    target_tau: float = setting(0.005, "Polyak averaging of the target networks per update.", low=0.0, low_open=True, high=1.0)
    max_grad_norm: float = setting(10.0, "Global gradient-norm clip (each network).", low=0.0, low_open=True)
    hidden: tuple = setting((256, 256), "Hidden layer sizes of actor and critic.")
    reward_clip: float | None = setting(None, "Clip rewards to [-x, x] in the actor; none keeps them.", low=0.0, low_open=True)
