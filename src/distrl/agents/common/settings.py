"""Settings every distributed system has, declared once: each system's config takes its own default
through these, and the doc line and valid range come from here."""

from __future__ import annotations

import dataclasses
import os

from distrl.config import setting

# why a resumed run keeps a setting (``setting(..., fixed=...)``): what its checkpoint holds that depends on it
NETWORK_INPUT = "the network was trained on inputs made with it"
VALUE_SCALE = "the value head and its statistics are on the scale it makes"
Q_SCALE = "the network's Q values, and the replay's priorities, are in the space it defines"


def num_actors(what: str = "Actor processes") -> object:
    return setting(os.cpu_count() or 2, f"{what} (default: one per core).", low=1, high=4096)


def num_envs(default: int, note: str = "") -> object:
    return setting(
        default,
        "Envs each actor steps together (numpy-vectorised where the env allows)" + note + ".",
        low=1,
        high=65_536,
    )


def unroll_length(default: int, meaning: str = "Env steps per env in each unroll or chunk an actor sends") -> object:
    return setting(default, meaning + ".", low=1, high=100_000)


def gamma(default: float = 0.99) -> object:
    return setting(default, "Discount factor.", low=0.0, high=1.0)


def lr(default: float, what: str = "Learning rate") -> object:
    return setting(default, what + ".", low=0.0, low_open=True, high=10.0)


def lr_schedule(default: str) -> object:
    return setting(default, "Learning-rate schedule: constant, or linear decay to 0 over the run (the hyperparameter "
                   "lr, applied by the trainer).", choices=("constant", "linear"))


def optimizer_eps(default: float = 1e-5) -> object:
    return setting(default, "Epsilon of the optimizer's denominator (RMSProp, Adam): larger damps the steps once "
                   "gradients are small.", low=0.0, low_open=True)


def max_grad_norm(default: float) -> object:
    return setting(default, "Gradient-norm clip of each update.", low=0.0, low_open=True)


def hidden(default: tuple) -> object:
    return setting(default, "Hidden layer sizes of the MLP torsos (pixel observations use the Nature CNN).")


def reward_clip(where: str = "actor") -> object:
    return setting(None, f"Clip rewards to [-x, x] in the {where}; none keeps them (ALE/ ids default to 1).",
                   low=0.0, low_open=True)


def atari_reward_clip(cfg, env_id: str):
    """``cfg`` with the standard Atari reward clip to [-1, 1] (Mnih et al. 2015; IMPALA section 5.3) where the env is
    an ALE one and no ``reward_clip`` is set: what ``reward_clip``'s help promises, applied by every system that has
    the setting and takes ALE envs (those for Box actions refuse them)."""
    from distrl.envs.make import is_atari

    if is_atari(env_id) and cfg.reward_clip is None:
        return dataclasses.replace(cfg, reward_clip=1.0)
    return cfg


def priority_alpha(when: str = "") -> object:
    """Schaul et al. 2016, P(i) = p_i^alpha / sum p^alpha: 0 is uniform, 1 full prioritisation."""
    return setting(0.6, f"Prioritisation exponent alpha{when} (0 uniform, 1 fully proportional).", low=0.0, high=1.0)


def priority_beta(when: str = "") -> object:
    return setting(0.4, f"Importance-sampling exponent beta{when}.", low=0.0, high=1.0)


def epsilon(default: float = 0.4) -> object:
    return setting(default, "Base of the exploration ladder eps_i = epsilon^(1 + alpha i / (N - 1)).", low=0.0,
                   high=1.0)


def epsilon_alpha(default: float = 7.0) -> object:
    return setting(default, "Exponent spread alpha of the exploration ladder.", low=0.0)


def actor_sync_steps(default: int, note: str = "") -> object:
    return setting(default, f"Vector steps between an actor's weight pulls{note}.", low=1)


# the replay systems' learner settings (Ape-X DQN, Ape-X DDPG, R2D2): ``items`` is what their replay holds
def batch_size(default: int, items: str, note: str = "") -> object:
    return setting(default, f"{items.capitalize()} per learner update{note}.", low=1)


def samples_per_insert(default: float, item: str) -> object:
    return setting(default, f"Replay samples per inserted {item} (the rate limiter's ratio).", low=0.0, low_open=True)


def min_replay(default: int, items: str) -> object:
    return setting(default, f"{items.capitalize()} in replay before learning starts.", low=1)


def replay_size(default: int, items: str) -> object:
    return setting(default, f"Soft capacity in {items}: the learner evicts the oldest beyond it.", low=1)


def obs_norm(default: bool) -> object:
    return setting(default, "Normalise vector observations by running mean and std (the learner keeps them from its "
                   "batches; they travel with the weights to every actor and to distrl eval).", fixed=NETWORK_INPUT)


def value_norm(default: bool) -> object:
    return setting(default, "PopArt value normalisation (arXiv:1809.04474): the value loss and the policy-gradient "
                   "advantages on a unit scale whatever the rewards' scale.", fixed=VALUE_SCALE)


def value_norm_decay(default: float) -> object:
    return setting(default, "Step of PopArt's moving averages per update (the paper: 3e-4 over billions of frames; "
                   "runs of thousands of updates need it faster).", low=0.0, high=1.0, low_open=True)


# steps per minibatch when ``minibatches`` is 0 and minibatches are of steps, for a config without
# ``minibatch_size`` (A3C's opt-in passes): PPO's (Stable-Baselines3's batch_size, RL Zoo's LunarLander)
MINIBATCH_STEPS = 64


def minibatch_size(default: int) -> object:
    return setting(default, "Steps per minibatch when minibatches is 0 (minibatches of steps: the batch cut into "
                   "batch // minibatch_size of them; a count would not carry over between batch sizes).",
                   low=1, high=1_000_000)


def minibatch_count(cfg, steps: int) -> int:
    """How many minibatches a pass cuts a batch of ``steps`` steps into (``cfg.minibatches``, or with 0 about
    ``cfg.minibatch_size`` steps each, ``MINIBATCH_STEPS`` for a config without it; APPO's minibatches of whole env
    streams, ``minibatch_by=stream``, default to the whole batch)."""
    if cfg.minibatches:
        return cfg.minibatches
    size = getattr(cfg, "minibatch_size", MINIBATCH_STEPS)
    return max(1, steps // size) if getattr(cfg, "minibatch_by", "step") == "step" else 1


def epochs(default: int, without_clip: str) -> object:
    return setting(default, f"Passes of the learner over each batch (PPO's, with ppo_clip; without it, "
                   f"{without_clip}).",
                   low=1, high=100)


def ppo_clip(default: float, against: str, zero: str) -> object:
    return setting(default, f"PPO's clipped surrogate (Schulman et al. 2017, eq. 7) against {against}, |ratio - 1| <= "
                   f"ppo_clip (0: {zero}).", low=0.0)


# what a value-based system says of MultiDiscrete or MultiBinary actions (its Q-values are over one action's options)
MULTI_HINT = "; the actor-critic systems (ppo, appo, a2c, a3c, impala, seed) take several categorical actions"
