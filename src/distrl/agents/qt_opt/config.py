"""QT-Opt settings (Kalashnikov et al. 2018, arXiv:1806.10293).

Paper values where they carry over: CEM with 2 iterations, 64 samples and 6 elites (section 4.2); clipped
double Q over a Polyak-averaged and a lagged target network; 1-step targets; offline data mixed with online
data (the paper fed 50% offline data at first). The paper's ~10 Bellman updaters and 10 GPU trainers do not fit
a 2-core machine: one updater and one trainer are the defaults here, and ``num_updaters`` scales the former
(the trainer count is the run's ``num_learners``, data-parallel). The network is smaller than the paper's image
network (vector observations: MLP 128-128, its first layer split so CEM computes the state's part once per state;
256-256 learned Pendulum as well at about twice the wall time).
From a fixed dataset alone (``online=false``) the trainer adds CQL's conservative term with weight 0.1
(``benchmarks/qt_opt_offline.py``, seeds 0-4 on Pendulum: the offline policy beat the one that recorded the data
on every seed, by 342-543; without the term on 3 of 5, falling 210-261 below it on the other two; at 0.5 on every
seed, by 128-301); with online data it is off, as in the paper (0.1 online: -147, -179, -135 on seeds 0-2
against -143, -133, -144).
The paper regressed a sigmoid Q on a cross-entropy loss for its 0/1 grasp reward; for general rewards the
trainer regresses Q with the Huber loss.
"""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.config import setting


@dataclass(frozen=True)
class QTOptConfig:
    num_actors: int = common.num_actors()
    num_updaters: int = setting(1, "Bellman updater processes: each samples transitions, computes clipped double-Q "
                                "targets with CEM on the target networks and writes them to the training buffer.",
                                low=1, high=1024)
    num_envs: int = common.num_envs(8)
    unroll_length: int = common.unroll_length(16, "Vector steps per chunk an actor writes into its replay partition")
    n_step: int = setting(1, "n of the n-step target (QT-Opt: 1).", low=1)
    gamma: float = common.gamma()
    epsilon: float = setting(0.3, "Largest chance of a uniformly random action (first env copy); a geometric ladder "
                             "down to epsilon^8 over all copies, as Ape-X's.", low=0.0, high=1.0)
    noise: float = setting(0.1, "Gaussian noise added to the CEM action, as a fraction of the action range's half.",
                           low=0.0)
    actor_sync_steps: int = common.actor_sync_steps(25)
    updater_sync_steps: int = setting(4, "Updater steps between its pulls of the target networks.", low=1)
    cem_iterations: int = setting(2, "CEM iterations (QT-Opt: 2).", low=1, high=100)
    cem_samples: int = setting(64, "CEM samples per state and iteration (QT-Opt: 64).", low=1, high=100_000)
    cem_elites: int = setting(6, "CEM elites refitted per iteration (QT-Opt: 6); at most cem_samples.", low=1)
    lr: float = common.lr(1e-3, "Adam learning rate of the trainer")
    lr_schedule: str = common.lr_schedule("constant")
    batch_size: int = setting(256, "Targets per trainer update.", low=1)
    updater_batch: int = setting(256, "Transitions an updater labels per step.", low=1, high=65_536)
    samples_per_insert: float = setting(4.0, "Trainer samples per target the updaters write (the training buffer's "
                                        "rate limiter): higher reuses targets more, lower needs more updaters.",
                                        low=0.0, low_open=True)
    min_replay: int = setting(2_000, "Online transitions before updaters use them (with offline data, updaters start "
                              "on that alone).", low=1)
    min_targets: int = setting(2_048, "Targets in the training buffer before the trainer starts.", low=1)
    replay_size: int = setting(200_000, "Online transitions kept (split evenly over the actors' partitions).", low=1)
    target_buffer_size: int = setting(8_192, "Targets the training buffer keeps (a ring: the oldest go first).",
                                      low=1)
    target_tau: float = setting(0.005, "Polyak averaging of the first target network per update.", low=0.0,
                                low_open=True, high=1.0)
    target_lag_updates: int = setting(300, "Updates between copies into the lagged (second) target network (1000 "
                                      "measured worse: the min over both targets then follows the lagged one, so "
                                      "value reaches back only one step per lag period).", low=1)
    env_steps_per_update: float = setting(2.0, "Env steps the actors may take per trainer update (past an allowance of "
                                          "min_replay plus two chunks per actor): the replay ratio, kept on any "
                                          "machine.", low=0.0, low_open=True)
    max_grad_norm: float = common.max_grad_norm(10.0)
    hidden: tuple = common.hidden((128, 128))
    reward_clip: float | None = common.reward_clip("actor")
    offline: str = setting("", "A Minari dataset (`distrl record --out DIR`) loaded as offline transitions that every "
                           "updater batch mixes with online ones. Empty: online only.")
    offline_ratio: float = setting(0.5, "Share of each updater batch drawn from the offline data (when there is "
                                   "some and the online replay holds min_replay).", low=0.0, high=1.0)
    online: bool = setting(True, "Collect online data with actors; false trains from the offline dataset alone "
                           "(then the run lasts offline_updates trainer updates).")
    offline_updates: int = setting(20_000, "Trainer updates of an offline-only run (online=false).", low=1)
    conservative_weight: float | None = setting(None, "CQL's alpha (Kumar et al. 2020, eq. 4): the trainer also pushes "
                                                "down a soft maximum of Q over sampled actions and pushes up Q at the "
                                                "data's actions, so CEM does not chase actions no transition took. "
                                                "None: 0.1 in an offline-only run (online=false), 0 with online data.",
                                                low=0.0)
    conservative_samples: int = setting(10, "Uniformly drawn actions per state in the conservative term's soft "
                                        "maximum.", low=1, high=1024)
