"""R2D2 settings (Kapturowski et al., ICLR 2019). The paper's Atari values: sequence length m = 80 with overlap 40,
burn-in 40, n = 5, gamma = 0.997, LSTM 512, target period 2500, priority exponent 0.9 and eta = 0.9, no importance
weights. The defaults here are for small envs on a CPU (the masked CartPole needs a few steps of memory, not 80): m
30, overlap 15, burn-in 8, LSTM 64, the paper's gamma 0.997, a target period of 500 updates (200 until 2026-11-29),
lr 5e-4, 6 samples per inserted sequence, the running observation normaliser (``obs_norm``) and advantage learning
with alpha 0.5 (``advantage_learning``, since 2026-11-30; not in the paper), over 1M env steps.

Besides these settings, an R2D2 run evaluates every 25k env steps and ``distrl eval`` plays the best evaluation's
weights (``RUN_DEFAULTS`` in ``__init__.py``, since 2026-11-30): the masked CartPole at 1M, seeds 0-7, 8 of 8 at 475+
where the same runs' last checkpoints gave 4 of 8 (``benchmarks/reports/r2d2-best-weights-2026-11-30/``).

Advantage learning (Bellemare et al. 2016, ``distrl.ops.advantage_learning_target``) widens the action gaps the greedy
policy reads: the greedy score of a run's last weights moved by hundreds within a few thousand updates without it
(``benchmarks/reports/r2d2-weight-averaging-2026-11-30/``). With alpha 0.5, LunarLander at 2M: 241, 255, 263, in the
bench 235, 257, 255, where the default without it gave 261, 228, 259 and in the bench 243, 197, 254; the masked
CartPole at 1M: 6 of 8 seeds at 475+, as without it on the same day, and in the bench ``local`` 500, 496, 244; alpha
0.9 there 2 of 4 (``benchmarks/reports/r2d2-advantage-learning-2026-11-30/``, ``{beyond,full}-r2d2-al-2026-11-30/``).

Why (``benchmarks/ac_variants.py --system r2d2 --over defaults``, greedy eval of 20 episodes per seed, ``local``; every
run in ``benchmarks/reports/r2d2-variants-2026-11-27/variants.md``): where a greedy policy on the memory task falls
short, the cart leaves the track after 220-500 steps of balancing, never the pole: it must infer the cart's slow drift
from position differences of ~1e-3 per step, and see failure hundreds of steps ahead. The running normaliser puts the
positions on a unit scale (the training mean rises sooner), gamma 0.997 lengthens the horizon to ~330 steps, and a
target period of 200 steadies the targets that horizon makes larger. Together, at 1M: seeds 0-3 490, 500, 500, 500; in a
second run seeds 0-7 500, 500, 183, 500, 500, 500, 500, 500; in a third (the README's) seeds 0-3 500, 272, 500, 500; in
a fourth (2026-11-29) 500 each: 18 of 20 runs at 475 or more. A target period of 500 (the default since 2026-11-29):
485, 500, 491, 500 and 500, 500, 362, 490, then in the bench of 2026-11-30 500, 441, 240, and seeds 0-7 on that day 6 of
8 where 200 gave 4 of 8 in the same session (14 of 19; ``benchmarks/reports/r2d2-period-2026-11-30/``), and LunarLander
at 2M 261, 228, 259, in the bench 243, 197, 254, where 200 gave 229, 187, 263 and batch 64 (below) 249, 259, 255 but
lost this task (``benchmarks/reports/r2d2-target-500-2026-11-29/``,
``benchmarks/reports/{full,beyond}-r2d2-target-500-2026-11-30/``). The former defaults (gamma 0.99, target period 100,
no normaliser) at 1M: 500, 305, 500, 497 and 358, 500, 468, 474; parts of it, at 1M: ``obs_norm`` 234, 324, 321, 500;
``obs_norm`` + gamma 0.997 476, 465, 500, 500; ``obs_norm`` + gamma 0.999 500, 500, 500, 471; target period 200 476,
161, 227, 327. Not better, at 500k unless said: m 20 / burn-in 5; lr 1e-3 with 2 samples per insert; the actor's initial
priorities (``initial_priority=actor``, at 1M: 434, 500, 241, 500); the linear lr decay (also at 1M: 262, 492, 394, 500;
over these defaults 7 of 8 seeds at 500, and LunarLander 8, 153, 184 against 130, 233, 262); the paper's Adam epsilon
1e-3; importance weights; priority exponent 0.6; n = 3, and n = 10 with ``obs_norm`` (with and without gamma 0.997);
LSTM 128; 3 or 12 samples per insert; gradient norm 10; m 40 / burn-in 10; batch 64 (at 1M too: 500, 219, 380, 500,
though it reached LunarLander's 200 at 2M on seeds 0-2, 249, 259, 255, where batches of 32 then gave 229, 187, 263:
``benchmarks/reports/r2d2-batch64-2026-11-29/``); the previous action given to the LSTM (the paper's input, tried as an
observation of the env); a moving average of the weights as the greedy policy (decays 0.99-0.9997: 6, 5, 4 of 8
seeds against the online weights' 6 of 8 in the same runs, ``benchmarks/reports/r2d2-weight-averaging-2026-11-30/``).
Set the paper's values for long-horizon tasks."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.agents.common import settings as common
from distrl.agents.common.demos import DemoSettings
from distrl.config import setting


def target_period(default: int) -> object:
    return setting(default, "Learner updates between target-network syncs (the paper: 2500).", low=1)


def advantage_learning(default: float) -> object:
    return setting(default, "alpha of the advantage-learning operator: the target less alpha times the target "
                   "network's action gap at x_t (Bellemare et al. 2016; widens the gaps the greedy policy reads; the "
                   "paper: none); 0: off.", low=0.0, high=0.99)


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
    gamma: float = common.gamma(0.997)
    value_rescale_eps: float = setting(1e-3, "epsilon of the value rescaling h(x) (R2D2 section 2).", low=0.0,
                                       fixed=common.Q_SCALE)
    advantage_learning: float = advantage_learning(0.5)
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
    initial_priority: str = setting("max", "A new sequence's priority: the highest seen so far (PER's rule), or its "
                                    "sequence priority as the learner computes it, from the Q values the actor acted "
                                    "with (Ape-X's actor-side priorities).", choices=("max", "actor"))
    importance_weights: bool = setting(False, "Correct for prioritized sampling with importance weights (the paper: no).")
    priority_beta: float = common.priority_beta(" (importance_weights=true)")
    target_update_period: int = target_period(500)
    max_grad_norm: float = common.max_grad_norm(40.0)
    dueling: bool = setting(True, "Dueling Q head (Wang et al. 2016).")
    obs_norm: bool = common.obs_norm(True)
    hidden: tuple = common.hidden((64,))
    lstm: int = setting(64, "LSTM units (the paper: 512).", low=1)
    reward_clip: float | None = common.reward_clip("actor")


@dataclass(frozen=True)
class ShortHorizonR2D2Config(R2D2Config):
    """R2D2's defaults before the memory task's drift moved them (gamma 0.99, a target period of 100 updates, no
    observation normaliser, no advantage learning): kept by R2D3, whose demo-ratio tables were measured with them
    (SEED + R2D2 kept them too until 2026-11-29, when swapping its server's weights as R2D2's actors pull theirs let
    R2D2's present ones work there: ``agents/seed_r2d2/config.py``)."""

    gamma: float = common.gamma(0.99)
    target_update_period: int = target_period(100)
    obs_norm: bool = common.obs_norm(False)
    advantage_learning: float = advantage_learning(0.0)
