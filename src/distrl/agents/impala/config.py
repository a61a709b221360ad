"""IMPALA settings (Espeholt et al. 2018, arXiv:1802.01561)."""

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
    gamma: float = common.gamma()
    lr: float = common.lr(2e-3)
    lr_schedule: str = common.lr_schedule("linear")
    optimizer: str = setting("rmsprop", "Optimizer: rmsprop (as the paper) or adam.", choices=("adam", "rmsprop"))
    # TorchBeast's RMSProp epsilon. With 1e-5 the CartPole curve fell from ~490 to 120-279 mid-run on 4 of 8
    # seeds (once the gradients are small, RMSProp's normalised steps stay large); with 0.01 none of 8 fell
    # below 472 (benchmarks/curve_stability.py, README)
    optimizer_eps: float = common.optimizer_eps(0.01)
    entropy_coef: float = setting(0.0, "Entropy bonus weight (the paper uses 0.01 on Atari).", low=0.0)
    baseline_coef: float = setting(0.5, "Baseline (value) loss weight.", low=0.0)
    clip_rho: float = setting(1.0, "V-trace rho-bar: truncation of importance weights in the value target.", low=0.0, low_open=True)
    clip_c: float = setting(1.0, "V-trace c-bar: truncation of the trace coefficients.", low=0.0, low_open=True)
    clip_pg_rho: float = setting(1.0, "Truncation of importance weights in the policy gradient.", low=0.0, low_open=True)
    vtrace_lambda: float = setting(1.0, "lambda mixed into the trace coefficients c (1 = the paper's V-trace).", low=0.0, high=1.0)
    ppo_clip: float = setting(0.0, "APPO: PPO's clipped surrogate against the behaviour policy, |pi/mu - 1| <= "
                              "ppo_clip (0: the paper's V-trace policy gradient).", low=0.0)
    epochs: int = setting(1, "Passes of the learner over each batch (APPO's, with ppo_clip; without it, more plain "
                          "V-trace steps on the same data, with minibatch_by=step their rho fixed at the batch's "
                          "start).", low=1, high=100)
    minibatches: int = setting(1, "Minibatches each pass cuts a batch into (by env stream: at most num_envs * "
                               "batch_unrolls; by step: at most that times unroll_length); each is an update and a "
                               "weights version, so policy lag counts them.", low=1, high=1_000_000)
    minibatch_by: str = setting("stream", "stream: minibatches of whole env streams, V-trace recomputed for each "
                                "(Sample Factory's APPO); step: PPO's, single steps drawn at random in every pass, "
                                "the targets and advantages fixed once per batch from the weights at its start.",
                                choices=("stream", "step"))
    max_grad_norm: float = common.max_grad_norm(0.5)
    reward_clip: float | None = common.reward_clip("learner")
    hidden: tuple = common.hidden((64, 64))
    normalize_advantages: bool = setting(False, "Standardise the policy-gradient advantages over each batch (each "
                                         "minibatch, with minibatches).")
    obs_norm: bool = common.obs_norm(False)
    value_norm: bool = common.value_norm(False)
    value_norm_decay: float = common.value_norm_decay(0.01)
