"""Ape-X DQN settings (Horgan et al. 2018, arXiv:1803.00933).

The default budget is 1M env steps (``DEFAULT_TOTAL_STEPS``; 600k until 2026-11-29): on CartPole most curves stall
for 100-300k env steps at a training mean of ~120-150 and leave it at a seed's own time, and at 600k one ``local``
seed in eight had not (seeds 0-7: greedy 500 but for seed 6's 378, its training mean 331 at 600k; a Polyak target or
a 300k replay each also left one seed short). At 1M, where the linear lr decay also leaves more of the lr in force
while a seed leaves the stall, seeds 0-7 on ``local`` and 0-2 on ``inline`` evaluated to 500 each (the whole command
1.4-1.7x the 600k one's; ``benchmarks/reports/apex-dqn-1m-2026-11-29/``). In short ``inline`` runs (100-150k env
steps) every greedy episode that ended before the time limit ended with the pole balanced and the cart off the track,
after 100-200 steps (``benchmarks/failure_modes.py``).
gamma stays the paper's 0.99 and Q is regressed on raw returns; the longer horizon R2D2 uses (gamma 0.997 with its
transformed Bellman operator, ``value_rescale_eps``) was measured here at 600k and did not carry over
(``benchmarks/reports/apex-dqn-local-2026-11-28/``): gamma 0.997 alone took every ``local`` seed out of the stall
(500 on all eight) but collapsed late on ``inline``, which is reproducible (seeds 0-2: 214, 500, 188; the loss
rising from ~0.4-0.6 to 1.3-5.9, where values of up to ~333 are to be expected at that gamma: not logged); with h as
well, 500 on seeds 0-7 on ``local`` and 0-2 on ``inline``, but on LunarLander at 2M two seeds of three fell apart
(training means down to -6,318 and -6,537; greedy 33, 277, -50 against the defaults' 236-279); on seed 0 with R2D2's lr
5e-4 it fell apart again (greedy -640), with the running observation normaliser (``obs_norm``, which clips what an
unbounded angle feeds in) it never learned (-36), with both, as R2D2 has them, -5. The normaliser
alone, on CartPole at 600k: the same rise as the defaults' and seven seeds of eight at 500, as theirs there (seed 4
collapsed late: 234), so it stays off (``benchmarks/reports/apex-dqn-obs-norm-2026-11-29/variants.md``)."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.agents.common.demos import DemoSettings
from distrl.config import setting


@dataclass(frozen=True)
class ApexDQNConfig(DemoSettings):
    num_actors: int = common.num_actors()
    num_envs: int = common.num_envs(16, "; the epsilon ladder runs over all num_actors * num_envs copies")
    unroll_length: int = common.unroll_length(16, "Vector steps per chunk an actor sends (its local buffer)")
    n_step: int = setting(3, "n of the n-step double-Q target.", low=1)
    gamma: float = common.gamma()
    epsilon: float = setting(0.4, "Base of the exploration ladder eps_i = epsilon^(1 + alpha i / (N - 1)).", low=0.0, high=1.0)
    epsilon_alpha: float = setting(7.0, "Exponent spread alpha of the exploration ladder.", low=0.0)
    actor_sync_steps: int = setting(100, "Vector steps between an actor's weight pulls (the paper: ~400).", low=1)
    lr: float = common.lr(1e-3, "Adam learning rate (with 2.5e-4 seed 3 of CartPole had not learned by 600k env steps)")
    lr_schedule: str = common.lr_schedule("linear")
    batch_size: int = setting(128, "Transitions per learner update.", low=1)
    samples_per_insert: float = setting(4.0, "Replay samples per inserted transition (the rate limiter's ratio).", low=0.0, low_open=True)
    min_replay: int = setting(5_000, "Transitions in replay before learning starts.", low=1)
    replay_size: int = setting(100_000, "Soft capacity: the learner evicts the oldest transitions beyond it.", low=1)
    priority_alpha: float = common.priority_alpha()
    priority_beta: float = common.priority_beta()
    target_update_period: int = setting(200, "Learner updates between target-network syncs.", low=1)
    target_tau: float | None = setting(None, "If set, Polyak-average the target every update (tau) instead of hard syncs.", low=0.0, low_open=True, high=1.0)
    max_grad_norm: float = common.max_grad_norm(10.0)
    dueling: bool = setting(True, "Dueling Q head (Wang et al. 2016).")
    hidden: tuple = common.hidden((128, 128))
    obs_norm: bool = common.obs_norm(False)
    value_rescale_eps: float | None = setting(None, "If set, keep the Q values in h-space with this epsilon of the "
                                              "value rescaling h(x) (the transformed Bellman operator, Pohlen et al. "
                                              "2018, as R2D2's: 1e-3); none: Q regressed on raw returns, as in the "
                                              "Ape-X paper. Measured only with gamma 0.997: CartPole solved on every "
                                              "seed, LunarLander broken on two of three (agents/apex_dqn/config.py).",
                                              low=0.0, fixed=common.Q_SCALE)
    reward_clip: float | None = common.reward_clip("actor")
