"""A3C settings (Mnih et al. 2016, arXiv:1602.01783, Algorithm S3).

The defaults are one configuration for the classic suite (the defaults issue: CartPole-v1 and LunarLander-v3; README
"Beyond CartPole"): A2C's default update (``agents/a2c/config.py``) made by each worker on its own segment, the
asynchrony the paper's: PPO's clipped surrogate (Schulman et al. 2017) over 4 passes of minibatches of 64 single steps
drawn from a worker's segment of 8 envs x 256 steps, the advantages (GAE, lambda 0.98), value targets and old policy
fixed from the copy the segment was acted with, and each minibatch's gradient pushed to the shared model (Hogwild,
the shared RMSProp, lr 3e-4) after a fresh pull; gamma 0.999, entropy 0.01, standardised advantages. With the paper's
one gradient per segment no variant of the former defaults reached 200 on LunarLander (10 tried: t_max 5-40, GAE,
lr 1.5e-4 to 1e-3 with a linear decay, gamma 0.99-0.999; each peaked at 197 or less and fell:
benchmarks/reports/a2c-defaults-2026-11-28/a3c-lunarlander.md). ``PAPER_A3C`` restores the former defaults;
``epochs=1 minibatches=1`` is the paper's update with any other values."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.config import setting

# A3C's defaults before one configuration for the suite replaced them (2026-11-28): the paper's n-step update, one
# gradient per segment of 8 envs x 5 steps, tuned on CartPole. Older runs' missing settings take the paper's update.
PAPER_A3C = {"t_max": 5, "segments_per_report": 20, "gamma": 0.99, "advantage": "nstep", "lr": 1e-3, "epochs": 1,
             "minibatches": 1, "normalize_advantages": False}


@dataclass(frozen=True)
class A3CConfig:
    num_actors: int = common.num_actors("Worker processes, each a full actor-learner")
    num_envs: int = common.num_envs(8, " (the paper: 1; a few amortise Python overhead)")
    t_max: int = setting(256, "Steps per env in a worker's segment, which it learns from before acting again (the n of "
                         "the n-step returns with advantage=nstep).", low=1)
    segments_per_report: int = setting(2, "Segments a worker acts and learns from between progress reports to the "
                                       "coordinator.", low=1)
    gamma: float = common.gamma(0.999)
    advantage: str = setting("gae", "Advantage estimator: nstep (the paper's) or gae.", choices=("gae", "nstep"))
    gae_lambda: float = setting(0.98, "GAE lambda (used when advantage=gae).", low=0.0, high=1.0)
    lr: float = common.lr(3e-4, "Learning rate of the shared RMSProp")
    lr_schedule: str = common.lr_schedule("constant")
    rmsprop_alpha: float = setting(0.99, "Shared RMSProp decay.", low=0.0, high=1.0)
    rmsprop_eps: float = setting(1e-5, "Shared RMSProp epsilon.", low=0.0, low_open=True)
    entropy_coef: float = setting(0.01, "Entropy bonus weight.", low=0.0)
    value_coef: float = setting(0.5, "Value (baseline) loss weight.", low=0.0)
    ppo_clip: float = common.ppo_clip(0.2, "the policy the segment was acted with", "the plain policy gradient")
    epochs: int = setting(4, "Passes of a worker over its segment (PPO's, with ppo_clip; without it, more plain "
                          "policy-gradient steps on the same segment).", low=1, high=100)
    minibatches: int = setting(0, "Minibatches of single steps, drawn at random, each pass cuts a worker's segment "
                               "into (each a gradient pushed to the shared parameters), at most num_envs * t_max; 0: "
                               f"about {common.MINIBATCH_STEPS} steps each. epochs 1 with 1 minibatch is the paper's "
                               "update: one gradient per segment.", low=0, high=1_000_000)
    max_grad_norm: float = common.max_grad_norm(0.5)
    normalize_advantages: bool = setting(True, "Standardise advantages over each segment (each minibatch, with "
                                         "minibatches).")
    hidden: tuple = common.hidden((64, 64))
