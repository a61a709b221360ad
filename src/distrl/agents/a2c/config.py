"""A2C settings (Mnih et al. 2016, arXiv:1602.01783, synchronous variant)."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.config import setting


@dataclass(frozen=True)
class A2CConfig:
    num_envs: int = setting(64, "Envs stepped together in one numpy-vectorised batch.", low=1)
    unroll_length: int = setting(8, "Env steps per env between updates (the n of n-step returns).", low=1)
    gamma: float = setting(0.99, "Discount factor.", low=0.0, high=1.0)
    advantage: str = setting("gae", "Advantage estimator: gae, or nstep (A3C's n-step returns, lambda = 1).", choices=("gae", "nstep"))
    gae_lambda: float = setting(0.95, "GAE lambda (used when advantage=gae).", low=0.0, high=1.0)
    lr: float = setting(2e-3, "Learning rate.", low=0.0, low_open=True)
    lr_schedule: str = setting("linear", "Learning-rate schedule: constant or linear decay to 0.", choices=("constant", "linear"))
    optimizer: str = setting("rmsprop", "Optimizer: adam or rmsprop.", choices=("adam", "rmsprop"))
    entropy_coef: float = setting(0.0, "Entropy bonus weight.", low=0.0)
    value_coef: float = setting(0.5, "Value (baseline) loss weight.", low=0.0)
    max_grad_norm: float = setting(0.5, "Global gradient-norm clip.", low=0.0, low_open=True)
    normalize_advantages: bool = setting(False, "Standardise advantages over each batch.")
    hidden: tuple = setting((64, 64), "Hidden layer sizes of the MLP torsos.")
