"""R2D2 settings (Kapturowski et al., ICLR 2019). The paper's Atari values: sequence length m = 80 with overlap 40,
burn-in 40, n = 5, gamma = 0.997, LSTM 512, target period 2500, priority exponent 0.9 and eta = 0.9, no importance
weights. The defaults here are for small envs on a CPU (the masked CartPole needs a few steps of memory, not 80): m
30, overlap 15, burn-in 8, LSTM 64, gamma 0.99, a target period of 100 updates, lr 5e-4 and 6 samples per inserted
sequence. Measured on that task, 500k steps, greedy eval of seeds 0-3: m 30 / burn-in 8 with lr 1e-3 and 2 samples
per insert gave 150, 406, 50, 188; with the linear lr decay 116, 79, 42, 106; with lr 5e-4 and 6 samples per insert
169, 500, 500, 480 (m 20 / burn-in 5 had evaluated to 108-365 on seed 0); the paper's Adam epsilon 1e-3 gave 230,
152, 224, 342 on seeds 0-3 (kept: 1e-5). At 1M steps seeds 0-3 evaluate to 500, 305, 500, 497 (and 358, 500, 468,
474 in a later run); target period 400: 500, 480, 308, 500 at 500k but 182, 237, 500, 281 at 1M; lr 2.5e-4 at 1M:
311, 319 (seeds 0-1); the linear lr decay at 1M: 262, 492, 394, 500; batch 64 at 500k: 384, 261 (seeds 0-1): the
greedy policy of the last weights swings from run to run, and no variant tried holds 475 on all four. Since
sequences that start their episode train their burn-in steps too (``learner.py``), 500k, seeds 0-3: 500, 465, 259,
175 (the version before, in the same session: 233, 236, 322, 225); over these defaults (``benchmarks/ac_variants.py
--system r2d2 --over defaults``, 500k): importance weights 200, 265, 500, 458; priority exponent 0.6: 475, 176, 221,
205; n = 3: 500, 260, 484, 183; and (``benchmarks/reports/r2d2-variants-2026-11-27/``) LSTM 128: 500, 488, 226, 220;
target period 200: 366, 366, 498, 500; 3 samples per insert: 181, 378, 261, 308; gradient norm 10: 327, 499, 188,
430; m 40 / burn-in 10: 495, 461, 338, 478; target period 200 at 1M: 476, 161, 227, 327. With ``obs_norm``
(2026-11-27, 500k): 494, 271, 500, 478 (the training mean rises faster: peaks of 419-456 by 0.2-0.5M), at 1M 234,
324, 321, 500; with it and gamma 0.997 at 500k: 195, 473, 494, 500; the previous action given to the LSTM (the
paper's input; tried as an observation of the env, with and without ``obs_norm``): 185, 285, 193, 235 and 480, 368,
215, 500 (``benchmarks/reports/r2d2-variants-2026-11-27/``). Where a greedy policy of these falls short, the cart
leaves the track: four more runs with ``obs_norm`` (seeds 0-3, greedy 494, 500, 408, 500 over 20 episodes each)
failed 15 of 80 episodes, each with |x| > 2.4 after 223-498 steps of balancing, none with the pole down: what the
default has not learned is the slow drift, a velocity it must infer from position differences of ~1e-3 per step. Set
the paper's values for long-horizon tasks."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.agents.common.demos import DemoSettings
from distrl.config import setting


@dataclass(frozen=True)
class R2D2Config(DemoSettings):
    num_actors: int = common.num_actors()
    num_envs: int = common.num_envs(8, "; the epsilon ladder runs over all num_actors * num_envs copies")
    unroll_length: int = common.unroll_length(20, "Vector steps per chunk of sequences an actor sends")
    sequence_length: int = setting(30, "Steps per replayed sequence (m; the paper: 80).", low=2)
    overlap: int = setting(15, "Steps two consecutive sequences of an env share (the paper: m/2).", low=0)
    burn_in: int = setting(8, "Leading steps of a sequence that only refresh the recurrent state (the paper: 40); a "
                                 "sequence that starts its episode trains them too.", low=0)
    initial_state: str = setting("stored", "The state a replayed sequence starts from: the actor's stored one, or zero.",
                                 choices=("stored", "zero"))
    n_step: int = setting(5, "n of the n-step double-Q target.", low=1)
    gamma: float = common.gamma(0.99)
    value_rescale_eps: float = setting(1e-3, "epsilon of the value rescaling h(x) (R2D2 section 2).", low=0.0)
    epsilon: float = setting(0.4, "Base of the exploration ladder eps_i = epsilon^(1 + alpha i / (N - 1)).", low=0.0, high=1.0)
    epsilon_alpha: float = setting(7.0, "Exponent spread alpha of the exploration ladder.", low=0.0)
    actor_sync_steps: int = setting(40, "Vector steps between an actor's weight pulls (the paper: 400).", low=1)
    lr: float = common.lr(5e-4, "Adam learning rate (the paper: 1e-4)")
    lr_schedule: str = common.lr_schedule("constant")
    optimizer_eps: float = common.optimizer_eps(1e-5)
    batch_size: int = setting(32, "Sequences per learner update (the paper: 64).", low=1)
    samples_per_insert: float = setting(6.0, "Replay samples per inserted sequence (the rate limiter's ratio).",
                                        low=0.0, low_open=True)
    min_replay: int = setting(500, "Sequences in replay before learning starts.", low=1)
    replay_size: int = setting(20_000, "Soft capacity in sequences: the oldest are evicted beyond it.", low=1)
    priority_alpha: float = setting(0.9, "Priority exponent (the paper: 0.9; 0 uniform, 1 fully proportional).", low=0.0,
                                    high=1.0)
    priority_eta: float = setting(0.9, "Sequence priority eta * max |delta| + (1 - eta) * mean |delta|.", low=0.0, high=1.0)
    importance_weights: bool = setting(False, "Correct for prioritized sampling with importance weights (the paper: no).")
    priority_beta: float = common.priority_beta(" (importance_weights=true)")
    target_update_period: int = setting(100, "Learner updates between target-network syncs (the paper: 2500).", low=1)
    max_grad_norm: float = common.max_grad_norm(40.0)
    dueling: bool = setting(True, "Dueling Q head (Wang et al. 2016).")
    obs_norm: bool = common.obs_norm(False)
    hidden: tuple = common.hidden((64,))
    lstm: int = setting(64, "LSTM units (the paper: 512).", low=1)
    reward_clip: float | None = common.reward_clip("actor")
