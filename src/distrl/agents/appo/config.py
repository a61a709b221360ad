"""APPO settings: IMPALA's actors and V-trace targets with PPO's clipped surrogate (Schulman et al. 2017, eq. 7)
against the behaviour policy, over several passes of each batch, as RLlib's and Sample Factory's APPO.

The defaults are one configuration for the classic suite (CartPole-v1, LunarLander-v3, Pendulum-v1,
LunarLanderContinuous-v3; on seeds 0-2 every run's greedy evaluation reaches the threshold; the training mean did on
all 9 runs in one measurement and on 8 in the next, LunarLanderContinuous's near the end of its 2M env steps): RL Zoo's
PPO values for LunarLander (16 envs, gamma 0.999, lambda 0.98, entropy 0.01, 4 passes) with minibatches of 512 single
steps drawn at random where RL Zoo draws 64, and Adam's 3e-4 raised to 1e-3 with them (about the square-root rule for
adaptive optimisers, 3e-4 * sqrt(512 / 64)): an update costs the learner ~2 ms of a CPU core at 512 steps as at 64, so
8x fewer of them let it keep pace with the actors, and LunarLander still takes about as many env steps (1024 steps fell
short there); the targets are fixed once per batch, unrolls are 512 steps (256 fell short on LunarLanderContinuous),
PopArt normalises the values, which gamma 0.999 needs on Pendulum, and the observations are normalised by running
statistics (as CleanRL's continuous-action PPO does; without it LunarLanderContinuous's training mean reached 200 on one
seed of three in 2M env steps, and LunarLander took 1.4-1.7M env steps where it takes 0.6-0.7M on seeds 0-2). The
figures are on the system's docs page (docs/systems/appo.md)."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.agents.impala.config import ImpalaConfig
from distrl.config import setting


@dataclass(frozen=True)
class APPOConfig(ImpalaConfig):
    num_envs: int = common.num_envs(16)
    unroll_length: int = common.unroll_length(512, "Unroll length T sent by actors")
    gamma: float = common.gamma(0.999)
    lr: float = common.lr(1e-3)
    lr_schedule: str = common.lr_schedule("constant")
    optimizer: str = setting("adam", "Optimizer: adam or rmsprop.", choices=("adam", "rmsprop"))
    optimizer_eps: float = common.optimizer_eps(1e-5)
    entropy_coef: float = setting(0.01, "Entropy bonus weight.", low=0.0)
    vtrace_lambda: float = setting(0.98, "lambda mixed into V-trace's trace coefficients c (1: the paper's V-trace; "
                                   "on the learner's own policy's data, V-trace with lambda is GAE(lambda)).",
                                   low=0.0, high=1.0)
    obs_norm: bool = common.obs_norm(True)
    normalize_advantages: bool = setting(True, "Standardise the policy-gradient advantages over each minibatch.")
    value_norm: bool = common.value_norm(True)
    ppo_clip: float = common.ppo_clip(0.2, "the behaviour policy", "V-trace's policy gradient")
    epochs: int = common.epochs(4, "more plain V-trace steps on the same data, with minibatch_by=step their rho "
                                "fixed at the batch's start")
    minibatches: int = setting(0, "Minibatches each pass cuts a batch into (by env stream: at most num_envs * "
                               "batch_unrolls; by step: at most that times unroll_length); each is an update and a "
                               "weights version. 0: minibatches of about minibatch_size steps by step (per learner, "
                               "with num_learners), the whole batch by stream.", low=0, high=1_000_000)
    minibatch_size: int = common.minibatch_size(512)
    minibatch_by: str = setting("step", "stream: minibatches of whole env streams, V-trace recomputed for each "
                                "(Sample Factory's APPO); step: PPO's, single steps drawn at random in every pass, "
                                "the targets and advantages fixed once per batch from the weights at its start.",
                                choices=("stream", "step"))
