"""A2C settings (Mnih et al. 2016, arXiv:1602.01783, the synchronous variant of A3C's Algorithm S3).

One update per batch: the policy gradient with n-step or GAE advantages, a value baseline and an entropy bonus
(eq. 9). The defaults were tuned on CartPole: many short unrolls (64 envs x 8 steps, so each update sees 512
decorrelated steps, the paper's reason for parallel actors), RMSProp with a linearly decaying 2e-3 (the paper's
optimizer), GAE lambda 0.95 and no entropy bonus. PPO's passes over each batch are the ``ppo`` system. What these
defaults reach on the classic suite is measured on the system's docs page (docs/systems/a2c.md)."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.config import setting


@dataclass(frozen=True)
class A2CConfig:
    num_envs: int = common.num_envs(64)
    unroll_length: int = common.unroll_length(8, "Env steps per env in each batch (the n of n-step returns)")
    gamma: float = common.gamma(0.99)
    advantage: str = setting("gae", "Advantage estimator: gae, or nstep (A3C's n-step returns, lambda = 1).",
                             choices=("gae", "nstep"))
    gae_lambda: float = setting(0.95, "GAE lambda (used when advantage=gae).", low=0.0, high=1.0)
    lr: float = common.lr(2e-3)
    lr_schedule: str = common.lr_schedule("linear")
    optimizer: str = setting("rmsprop", "Optimizer: rmsprop (the paper's) or adam.", choices=("adam", "rmsprop"))
    optimizer_eps: float = common.optimizer_eps()
    entropy_coef: float = setting(0.0, "Entropy bonus weight.", low=0.0)
    value_coef: float = setting(0.5, "Value (baseline) loss weight.", low=0.0)
    max_grad_norm: float = common.max_grad_norm(0.5)
    normalize_advantages: bool = setting(False, "Standardise advantages over each batch.")
    hidden: tuple = common.hidden((64, 64))
    obs_norm: bool = common.obs_norm(False)
    value_norm: bool = common.value_norm(False)
    value_norm_decay: float = common.value_norm_decay(0.01)
