"""Ape-X DQN settings (Horgan et al. 2018, arXiv:1803.00933).

The paper's learner (n-step double Q, dueling head, prioritized replay, an epsilon ladder over the actors) with gamma
0.99 and Q regressed on raw returns, over a budget of 1M env steps: on CartPole most curves stall for 100-300k env
steps at a training mean of ~120-150 and leave it at a seed's own time, and the longer budget (with the linear lr decay
stretched over it) lets every seed leave it. R2D2's longer horizon (gamma 0.997 with the transformed Bellman operator,
``value_rescale_eps``) and the observation normaliser were measured here and are off: each fixed one task and broke
another. The figures: docs/systems/apex-dqn.md."""

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
    epsilon: float = common.epsilon()
    epsilon_alpha: float = common.epsilon_alpha()
    actor_sync_steps: int = common.actor_sync_steps(100, " (the paper: ~400)")
    lr: float = common.lr(1e-3, "Adam learning rate (with 2.5e-4 seed 3 of CartPole had not learned by 600k env steps)")
    lr_schedule: str = common.lr_schedule("linear")
    batch_size: int = common.batch_size(128, "transitions")
    samples_per_insert: float = common.samples_per_insert(4.0, "transition")
    min_replay: int = common.min_replay(5_000, "transitions")
    replay_size: int = common.replay_size(100_000, "transitions")
    priority_alpha: float = common.priority_alpha()
    priority_beta: float = common.priority_beta()
    target_update_period: int = setting(200, "Learner updates between target-network syncs.", low=1)
    target_tau: float | None = setting(None, "If set, Polyak-average the target every update (tau) instead of hard "
                                             "syncs.", low=0.0, low_open=True, high=1.0)
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
    fixed_head_slack: float | None = setting(
        None, "A league's players only: two Q heads, the first learning from all its games, the second from "
              "those against the league's fixed players alone (--fixed, e.g. random play); the greedy move is the "
              "second head's best among the moves within this slack of the first head's best (lexicographic "
              "Q-learning, Skalse et al. 2022): safe against the league first, then the most against the fixed "
              "players. In the Q-values' own units (h-space with value_rescale_eps). None: one head.",
        low=0.0, fixed="the network's heads and the replay's items depend on it")
    first_head_expectile: float | None = setting(
        None, "With fixed_head_slack: the first head learns this expectile of its targets (2|tau - 1(delta < 0)| "
              "weights its Huber loss) instead of their mean; a low one makes it a worst case over the opponents' "
              "replies, a minimax-style value in which a move that can lose sits far below one that cannot "
              "(tic-tac-toe: 0.1 with n_step 1 and slack 0.25, docs/guide/league.md; at 0.01 its values ran off "
              "to -1000 in one run). None: the mean (tau 0.5).", low=0.0, low_open=True, high=0.5)
