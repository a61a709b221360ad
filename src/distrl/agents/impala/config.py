"""IMPALA settings (Espeholt et al. 2018, arXiv:1802.01561)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from distrl.config import setting


@dataclass(frozen=True)
class ImpalaConfig:
    num_actors: int = setting(os.cpu_count() or 2, "Actor processes (default: one per core).", low=1)
    num_envs: int = setting(64, "Envs each actor steps together (numpy-vectorised where the env allows).", low=1)
    unroll_length: int = setting(8, "Unroll length T sent by actors.", low=1)
    batch_unrolls: int = setting(1, "Unrolls per learner batch B (each holds num_envs env streams).", low=1)
    gamma: float = setting(0.99, "Discount factor.", low=0.0, high=1.0)
    lr: float = setting(2e-3, "Learning rate.", low=0.0, low_open=True)
    lr_schedule: str = setting("linear", "Learning-rate schedule: constant or linear decay to 0.", choices=("constant", "linear"))
    optimizer: str = setting("rmsprop", "Optimizer: rmsprop (as the paper) or adam.", choices=("adam", "rmsprop"))
    entropy_coef: float = setting(0.0, "Entropy bonus weight (the paper uses 0.01 on Atari).", low=0.0)
    baseline_coef: float = setting(0.5, "Baseline (value) loss weight.", low=0.0)
    clip_rho: float = setting(1.0, "V-trace rho-bar: truncation of importance weights in the value target.", low=0.0, low_open=True)
    clip_c: float = setting(1.0, "V-trace c-bar: truncation of the trace coefficients.", low=0.0, low_open=True)
    clip_pg_rho: float = setting(1.0, "Truncation of importance weights in the policy gradient.", low=0.0, low_open=True)
    vtrace_lambda: float = setting(1.0, "lambda mixed into the trace coefficients c (1 = the paper's V-trace).", low=0.0, high=1.0)
    max_grad_norm: float = setting(0.5, "Global gradient-norm clip.", low=0.0, low_open=True)
    reward_clip: float | None = setting(None, "Clip rewards to [-x, x] in the learner; none keeps them (Atari ids default to 1).", low=0.0, low_open=True)
    hidden: tuple = setting((64, 64), "Hidden layer sizes of the MLP torsos (pixels use the Nature CNN).")
