"""A3C settings (Mnih et al. 2016, arXiv:1602.01783, Algorithm S3)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from distrl.config import setting


@dataclass(frozen=True)
class A3CConfig:
    num_actors: int = setting(os.cpu_count() or 2, "Worker processes, each a full actor-learner (default: one per core).", low=1)
    num_envs: int = setting(8, "Envs each worker steps together (the paper: 1; a few amortise Python overhead).", low=1)
    t_max: int = setting(5, "Steps per env between a worker's gradient updates (n of the n-step returns).", low=1)
    segments_per_report: int = setting(20, "Updates a worker makes between progress reports to the coordinator.", low=1)
    gamma: float = setting(0.99, "Discount factor.", low=0.0, high=1.0)
    advantage: str = setting("nstep", "Advantage estimator: nstep (the paper's) or gae.", choices=("gae", "nstep"))
    gae_lambda: float = setting(0.95, "GAE lambda (used when advantage=gae).", low=0.0, high=1.0)
    lr: float = setting(1e-3, "Shared RMSProp learning rate.", low=0.0, low_open=True)
    lr_schedule: str = setting("constant", "Learning-rate schedule of the shared optimizer: constant, or linear decay to 0 over the run.", choices=("constant", "linear"))
    rmsprop_alpha: float = setting(0.99, "Shared RMSProp decay.", low=0.0, high=1.0)
    rmsprop_eps: float = setting(1e-5, "Shared RMSProp epsilon.", low=0.0, low_open=True)
    entropy_coef: float = setting(0.01, "Entropy bonus weight.", low=0.0)
    value_coef: float = setting(0.5, "Value (baseline) loss weight.", low=0.0)
    max_grad_norm: float = setting(0.5, "Gradient-norm clip of each worker's update.", low=0.0, low_open=True)
    normalize_advantages: bool = setting(False, "Standardise advantages over each segment.")
    hidden: tuple = setting((64, 64), "Hidden layer sizes of the MLP torsos.")
