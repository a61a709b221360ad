"""A3C settings (Mnih et al. 2016, arXiv:1602.01783, Algorithm S3).

The paper's update: each worker acts ``t_max`` steps with its copy of the shared model, computes one n-step
actor-critic gradient (eq. 9) on that segment and applies it lock-free (Hogwild) to the shared parameters with the
shared RMSProp, then pulls them again. The defaults were tuned on CartPole: t_max 5 over 8 envs per worker (a few envs
amortise Python's cost per step; the paper used one), gamma 0.99, RMSProp 1e-3, entropy 0.01. PPO's passes over a
worker's segment (``epochs``, ``minibatches``, ``ppo_clip``) are a departure from the paper, asynchronous PPO, off by
default. What the defaults reach on the classic suite is on the system's docs page (docs/systems/a3c.md)."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.config import setting


@dataclass(frozen=True)
class A3CConfig:
    num_actors: int = common.num_actors("Worker processes, each a full actor-learner")
    num_envs: int = common.num_envs(8, " (the paper: 1; a few amortise Python overhead)")
    t_max: int = setting(5, "Steps per env in a worker's segment, which it learns from before acting again (the n of "
                         "the n-step returns with advantage=nstep).", low=1)
    segments_per_report: int = setting(20, "Segments a worker acts and learns from between progress reports to the "
                                       "coordinator.", low=1)
    gamma: float = common.gamma(0.99)
    advantage: str = setting("nstep", "Advantage estimator: nstep (the paper's) or gae.", choices=("gae", "nstep"))
    gae_lambda: float = setting(0.98, "GAE lambda (used when advantage=gae).", low=0.0, high=1.0)
    lr: float = common.lr(1e-3, "Learning rate of the shared RMSProp")
    lr_schedule: str = common.lr_schedule("constant")
    rmsprop_alpha: float = setting(0.99, "Shared RMSProp decay.", low=0.0, high=1.0)
    rmsprop_eps: float = setting(1e-5, "Shared RMSProp epsilon.", low=0.0, low_open=True)
    entropy_coef: float = setting(0.01, "Entropy bonus weight.", low=0.0)
    value_coef: float = setting(0.5, "Value (baseline) loss weight.", low=0.0)
    ppo_clip: float = common.ppo_clip(0.0, "the policy the segment was acted with (with epochs > 1 or minibatches != "
                                      "1; a departure from the paper: asynchronous PPO)", "the plain policy gradient")
    epochs: int = setting(
        1,
        "Passes of a worker over its segment (1 with minibatches 1: the paper's one gradient per "
        "segment; more: asynchronous PPO with ppo_clip, a departure from the paper).",
        low=1,
        high=100,
    )
    minibatches: int = setting(1, "Minibatches of single steps, drawn at random, each pass cuts a worker's segment "
                               "into (each a gradient pushed to the shared parameters), at most num_envs * t_max; 0: "
                               f"about {common.MINIBATCH_STEPS} steps each. 1 with epochs 1 is the paper's update.",
                               low=0, high=1_000_000)
    max_grad_norm: float = common.max_grad_norm(0.5)
    normalize_advantages: bool = setting(False, "Standardise advantages over each segment (each minibatch, with "
                                         "minibatches).")
    hidden: tuple = common.hidden((64, 64))
