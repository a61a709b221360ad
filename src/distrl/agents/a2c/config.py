"""A2C settings (Mnih et al. 2016, arXiv:1602.01783, synchronous variant).

The defaults are one configuration for the classic suite (the defaults issue: CartPole-v1, LunarLander-v3, Pendulum-v1,
LunarLanderContinuous-v3; README "Beyond CartPole"), IMPALA's (``agents/impala/config.py``) with GAE in V-trace's
place: PPO's passes over each batch (Schulman et al. 2017: the clipped surrogate, 4 passes of minibatches of 64
single steps drawn at random, the advantages and targets fixed once per batch), RL Zoo's PPO values for LunarLander
(16 envs x 1024 steps per batch, gamma 0.999, lambda 0.98, entropy 0.01, Adam 3e-4), standardised advantages and
PopArt: every threshold of the suite met on seeds 0-2 (LunarLanderContinuous 267, 228, 253 at 1M; with 256-step
unrolls seed 2 fell to 167, benchmarks/reports/beyond-a2c-2026-11-28/). Why not the paper's
one update per batch: tuned on CartPole (``PAPER_A2C``) it reached -68 on LunarLander and learned neither continuous
task; with one update per batch and the values above LunarLander peaked at 65-136 and fell (seed 0, 1M env steps,
batches of 16 envs x 8-16 steps; RL Zoo's A2C values for LunarLander: 36), where the passes (with 256-step unrolls) reached greedy 270 on
the same seed (benchmarks/reports/a2c-defaults-2026-11-28/). ``PAPER_A2C`` restores the former defaults;
``epochs=1 minibatches=1`` is the paper's update with any other values."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.config import setting

# A2C's defaults before one configuration for the suite replaced them (2026-11-28): one update per batch, tuned on
# CartPole (1M env steps in ~5 s). Older runs' missing settings take the paper's one update (OLDER_RUN_DEFAULTS).
PAPER_A2C = {"num_envs": 64, "unroll_length": 8, "gamma": 0.99, "gae_lambda": 0.95, "lr": 2e-3, "lr_schedule": "linear",
             "optimizer": "rmsprop", "optimizer_eps": 1e-5, "entropy_coef": 0.0, "epochs": 1, "minibatches": 1,
             "normalize_advantages": False, "value_norm": False}


@dataclass(frozen=True)
class A2CConfig:
    num_envs: int = common.num_envs(16)
    unroll_length: int = common.unroll_length(1024, "Env steps per env in each batch (the n of n-step returns)")
    gamma: float = common.gamma(0.999)
    advantage: str = setting("gae", "Advantage estimator: gae, or nstep (A3C's n-step returns, lambda = 1).", choices=("gae", "nstep"))
    gae_lambda: float = setting(0.98, "GAE lambda (used when advantage=gae).", low=0.0, high=1.0)
    lr: float = common.lr(3e-4)
    lr_schedule: str = common.lr_schedule("constant")
    optimizer: str = setting("adam", "Optimizer: adam or rmsprop (the paper's).", choices=("adam", "rmsprop"))
    optimizer_eps: float = common.optimizer_eps()
    entropy_coef: float = setting(0.01, "Entropy bonus weight.", low=0.0)
    value_coef: float = setting(0.5, "Value (baseline) loss weight.", low=0.0)
    ppo_clip: float = common.ppo_clip(0.2, "the policy at the batch's start", "the plain policy gradient")
    epochs: int = common.epochs(4, "more plain policy-gradient steps on the same data")
    minibatches: int = setting(0, "Minibatches of single steps, drawn at random, each pass cuts a batch into (each an "
                               "update), at most num_envs * unroll_length; 0: minibatches of about "
                               f"{common.MINIBATCH_STEPS} steps (PPO's). epochs 1 with 1 minibatch is the paper's A2C: one "
                               "update per batch.", low=0, high=1_000_000)
    max_grad_norm: float = common.max_grad_norm(0.5)
    normalize_advantages: bool = setting(True, "Standardise advantages over each batch (each minibatch, with "
                                         "minibatches).")
    hidden: tuple = common.hidden((64, 64))
    obs_norm: bool = common.obs_norm(False)
    value_norm: bool = common.value_norm(True)
    value_norm_decay: float = common.value_norm_decay(0.01)
