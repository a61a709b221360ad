"""IMPALA settings (Espeholt et al. 2018, arXiv:1802.01561).

The paper's learner: one V-trace step per batch (section 4: the V-trace value targets, eq. 1, and the truncated
importance-weighted policy gradient, section 4.2), the actors' lag corrected by the importance weights. The defaults
were tuned on CartPole: many short unrolls (64 envs x 8 steps per actor), RMSProp with a linearly decaying 2e-3 and
TorchBeast's epsilon 0.01 (with 1e-5 the curve fell mid-run on half the seeds tried), no entropy bonus, gamma 0.99.
The paper's Atari values (RMSProp 6e-4, entropy 0.01, unrolls of 20) are the ``atari`` preset. PPO's clipped
surrogate over several passes of each batch is the ``appo`` system. The figures are on the system's docs page
(docs/systems/impala.md)."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.config import setting


@dataclass(frozen=True)
class ImpalaConfig:
    num_actors: int = common.num_actors()
    num_envs: int = common.num_envs(64)
    unroll_length: int = common.unroll_length(8, "Unroll length T sent by actors")
    batch_unrolls: int = setting(1, "Unrolls per learner batch B (each holds num_envs env streams).", low=1)
    gamma: float = common.gamma(0.99)
    lr: float = common.lr(2e-3)
    lr_schedule: str = common.lr_schedule("linear")
    optimizer: str = setting("rmsprop", "Optimizer: rmsprop (the paper's) or adam.", choices=("adam", "rmsprop"))
    optimizer_eps: float = common.optimizer_eps(0.01)
    entropy_coef: float = setting(0.0, "Entropy bonus weight (the paper: 0.01 on Atari).", low=0.0)
    baseline_coef: float = setting(0.5, "Baseline (value) loss weight.", low=0.0)
    clip_rho: float = setting(1.0, "V-trace rho-bar: truncation of importance weights in the value target.", low=0.0,
                              low_open=True)
    clip_c: float = setting(1.0, "V-trace c-bar: truncation of the trace coefficients.", low=0.0, low_open=True)
    clip_pg_rho: float = setting(1.0, "Truncation of importance weights in V-trace's policy gradient (APPO's clipped "
                                 "surrogate takes its place there).", low=0.0, low_open=True)
    vtrace_lambda: float = setting(1.0, "lambda mixed into the trace coefficients c (1: the paper's V-trace; on the "
                                   "learner's own policy's data, V-trace with lambda is GAE(lambda)).",
                                   low=0.0, high=1.0)
    max_grad_norm: float = common.max_grad_norm(0.5)
    reward_clip: float | None = common.reward_clip("learner")
    hidden: tuple = common.hidden((64, 64))
    normalize_advantages: bool = setting(False, "Standardise the policy-gradient advantages over each batch (each "
                                         "minibatch, with APPO's minibatches).")
    obs_norm: bool = common.obs_norm(False)
    value_norm: bool = common.value_norm(False)
    value_norm_decay: float = common.value_norm_decay(0.01)
