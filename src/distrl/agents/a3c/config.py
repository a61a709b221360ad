"""A3C settings (Mnih et al. 2016, arXiv:1602.01783, Algorithm S3)."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.config import setting


@dataclass(frozen=True)
class A3CConfig:
    num_actors: int = common.num_actors("Worker processes, each a full actor-learner")
    num_envs: int = common.num_envs(8, " (the paper: 1; a few amortise Python overhead)")
    t_max: int = setting(5, "Steps per env between a worker's gradient updates (n of the n-step returns).", low=1)
    segments_per_report: int = setting(20, "Updates a worker makes between progress reports to the coordinator.", low=1)
    gamma: float = common.gamma()
    advantage: str = setting("nstep", "Advantage estimator: nstep (the paper's) or gae.", choices=("gae", "nstep"))
    gae_lambda: float = setting(0.95, "GAE lambda (used when advantage=gae).", low=0.0, high=1.0)
    lr: float = common.lr(1e-3, "Learning rate of the shared RMSProp")
    lr_schedule: str = common.lr_schedule("constant")
    rmsprop_alpha: float = setting(0.99, "Shared RMSProp decay.", low=0.0, high=1.0)
    rmsprop_eps: float = setting(1e-5, "Shared RMSProp epsilon.", low=0.0, low_open=True)
    entropy_coef: float = setting(0.01, "Entropy bonus weight.", low=0.0)
    value_coef: float = setting(0.5, "Value (baseline) loss weight.", low=0.0)
    max_grad_norm: float = common.max_grad_norm(0.5)
    normalize_advantages: bool = setting(False, "Standardise advantages over each segment.")
    hidden: tuple = common.hidden((64, 64))
