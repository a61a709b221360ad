"""PPO settings (Schulman et al. 2017, arXiv:1707.06347): A2C's actor and batches with the clipped surrogate
(eq. 7) over several passes of minibatches of single steps drawn at random, the advantages and value targets fixed
once per batch.

The defaults are one configuration for the classic suite (CartPole-v1, LunarLander-v3, Pendulum-v1,
LunarLanderContinuous-v3): RL Zoo's PPO values for LunarLander (16 envs x 1024 steps per batch, gamma 0.999,
GAE lambda 0.98, entropy 0.01, 4 passes) with minibatches of 512 steps where RL Zoo's are 64 and Adam's 3e-4 raised
to 1e-3 with them (APPO's rule, agents/appo/config.py: 8x fewer updates of the same ~2 ms each), decaying linearly
over the run as RL Zoo's CartPole schedule (constant, LunarLander's greedy score swung 160-250 after solving it),
standardised advantages and PopArt's value normalisation, which gamma 0.999 needs on Pendulum. The figures are on
the system's docs page (docs/systems/ppo.md)."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.a2c.config import A2CConfig
from distrl.agents.common import settings as common
from distrl.config import setting


@dataclass(frozen=True)
class PPOConfig(A2CConfig):
    num_envs: int = common.num_envs(16)
    unroll_length: int = common.unroll_length(1024, "Env steps per env in each batch")
    gamma: float = common.gamma(0.999)
    gae_lambda: float = setting(0.98, "GAE lambda (used when advantage=gae).", low=0.0, high=1.0)
    lr: float = common.lr(1e-3)
    lr_schedule: str = common.lr_schedule("linear")
    optimizer: str = setting("adam", "Optimizer: adam or rmsprop.", choices=("adam", "rmsprop"))
    entropy_coef: float = setting(0.01, "Entropy bonus weight.", low=0.0)
    normalize_advantages: bool = setting(True, "Standardise advantages over each minibatch.")
    value_norm: bool = common.value_norm(True)
    ppo_clip: float = common.ppo_clip(0.2, "the policy at the batch's start", "the plain policy gradient")
    epochs: int = common.epochs(4, "more plain policy-gradient steps on the same data")
    minibatches: int = setting(0, "Minibatches of single steps, drawn at random, each pass cuts a batch into (each an "
                               "update and a weights version), at most num_envs * unroll_length; 0: minibatches of "
                               "about minibatch_size steps.", low=0, high=1_000_000)
    minibatch_size: int = common.minibatch_size(512)
