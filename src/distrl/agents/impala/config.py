"""IMPALA settings (Espeholt et al. 2018, arXiv:1802.01561).

The defaults are one configuration for the whole classic suite (the defaults issue: CartPole-v1, LunarLander-v3,
Pendulum-v1, LunarLanderContinuous-v3; seeds 0-2, greedy evaluation, README "Beyond CartPole"; every threshold met,
with unrolls of 512 steps: with 256, LunarLanderContinuous seed 0 fell to 173; with RL Zoo's 1024, CartPole's greedy
policy on local ended at 455 and 438 within its 250k budget, the actors a batch of 16k steps behind): V-trace targets
with PPO's passes over each batch (APPO, Schulman et al. 2017 eq. 7 against the behaviour policy; minibatches of 64
single steps drawn at random, the targets fixed once per batch), with RL Zoo's PPO values for LunarLander
(16 envs, gamma 0.999, lambda 0.98, entropy 0.01, Adam 3e-4, 4 passes) and PopArt's value normalisation, which
gamma 0.999 needs on Pendulum (without it: greedy -566 at 1M; with it -137). Why not the paper's single V-trace step:
tuned on CartPole it never reached 200 on LunarLander and learned neither continuous task; with one step per batch
every variant tried rose and collapsed on LunarLander, and what held was PPO's minibatches of single steps
(benchmarks/reports/appo-2026-11-27/). The cost: the learner makes 1 update per 16 env steps and is the bottleneck
(the paper's throughput preset, one V-trace step per batch, is what benchmarks/throughput.py runs).
The paper's values, for Atari: RMSProp lr 6e-4, eps 0.01, entropy 0.01, unrolls of 20, one pass (``ppo_clip=0
epochs=1 minibatch_by=stream``)."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.config import setting

# IMPALA's defaults before one configuration for the suite replaced them (2026-11-28): one V-trace step per batch,
# tuned on CartPole (1.5M env steps in ~7 s on local). Older runs' missing settings take these (OLDER_RUN_DEFAULTS),
# and benchmarks/throughput.py measures with them: the learner is not the bottleneck there, so its table shows the
# transport and the actors against the machine's ceiling.
ONE_STEP_VTRACE = {"num_envs": 64, "unroll_length": 8, "gamma": 0.99, "lr": 2e-3, "lr_schedule": "linear",
                   "optimizer": "rmsprop", "optimizer_eps": 0.01, "entropy_coef": 0.0, "vtrace_lambda": 1.0,
                   "ppo_clip": 0.0, "epochs": 1, "minibatches": 1, "minibatch_by": "stream",
                   "normalize_advantages": False, "value_norm": False}


@dataclass(frozen=True)
class ImpalaConfig:
    num_actors: int = common.num_actors()
    num_envs: int = common.num_envs(16)
    unroll_length: int = common.unroll_length(512, "Unroll length T sent by actors")
    batch_unrolls: int = setting(1, "Unrolls per learner batch B (each holds num_envs env streams).", low=1)
    gamma: float = common.gamma(0.999)
    lr: float = common.lr(3e-4)
    lr_schedule: str = common.lr_schedule("constant")
    optimizer: str = setting("adam", "Optimizer: adam, or rmsprop (the paper's).", choices=("adam", "rmsprop"))
    # Adam's usual 1e-5. With RMSProp (the former default) TorchBeast's 0.01: with 1e-5 the one-step V-trace curve on
    # CartPole fell from ~490 to 120-279 mid-run on 4 of 8 seeds (benchmarks/curve_stability.py, README)
    optimizer_eps: float = common.optimizer_eps(1e-5)
    entropy_coef: float = setting(0.01, "Entropy bonus weight (the paper: 0.01 on Atari).", low=0.0)
    baseline_coef: float = setting(0.5, "Baseline (value) loss weight.", low=0.0)
    clip_rho: float = setting(1.0, "V-trace rho-bar: truncation of importance weights in the value target.", low=0.0, low_open=True)
    clip_c: float = setting(1.0, "V-trace c-bar: truncation of the trace coefficients.", low=0.0, low_open=True)
    clip_pg_rho: float = setting(1.0, "Truncation of importance weights in the paper's V-trace policy gradient "
                                 "(ppo_clip=0; PPO's clipped surrogate takes its place otherwise).", low=0.0, low_open=True)
    vtrace_lambda: float = setting(0.98, "lambda mixed into the trace coefficients c (1: the paper's V-trace; on the "
                                   "learner's own policy's data, V-trace with lambda is GAE(lambda)).",
                                   low=0.0, high=1.0)
    ppo_clip: float = common.ppo_clip(0.2, "the behaviour policy (APPO)", "the paper's V-trace policy gradient")
    epochs: int = common.epochs(4, "more plain V-trace steps on the same data, with minibatch_by=step their rho "
                                "fixed at the batch's start")
    minibatches: int = setting(0, "Minibatches each pass cuts a batch into (by env stream: at most num_envs * "
                               "batch_unrolls; by step: at most that times unroll_length); each is an update and a "
                               "weights version, so policy lag counts them. 0: minibatches of about "
                               f"{common.MINIBATCH_STEPS} steps by step (PPO's; per learner, with num_learners), the whole "
                               "batch by stream.",
                               low=0, high=1_000_000)
    minibatch_by: str = setting("step", "stream: minibatches of whole env streams, V-trace recomputed for each "
                                "(Sample Factory's APPO); step: PPO's, single steps drawn at random in every pass, "
                                "the targets and advantages fixed once per batch from the weights at its start.",
                                choices=("stream", "step"))
    max_grad_norm: float = common.max_grad_norm(0.5)
    reward_clip: float | None = common.reward_clip("learner")
    hidden: tuple = common.hidden((64, 64))
    normalize_advantages: bool = setting(True, "Standardise the policy-gradient advantages over each batch (each "
                                         "minibatch, with minibatches).")
    obs_norm: bool = common.obs_norm(False)
    value_norm: bool = common.value_norm(True)
    value_norm_decay: float = common.value_norm_decay(0.01)
