"""How actors explore, shared by the systems that act with a Q-function or a deterministic policy.

Ape-X (arXiv:1803.00933, section 4.1) gives every env copy of every actor its own exploration rate, a
geometric ladder over all N copies: eps_i = eps^(1 + alpha i / (N - 1)) (``ops.epsilon_ladder``). GORILA's
bundles use the same ladder, dealt out interleaved (each bundle learns from its own replay, so each needs
the whole range of rates); Ape-X DDPG uses a ladder of Gaussian noise scales.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import torch

from distrl.models.q_networks import ILLEGAL_Q
from distrl.ops import epsilon_ladder


class Exploration(Protocol):
    def act(self, model, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...


def rungs(ladder: np.ndarray, index: int, num_envs: int, interleaved: bool = False) -> np.ndarray:
    """Actor ``index``'s share of a ladder over all ``num_actors * num_envs`` copies: ``num_envs`` neighbouring
    rungs, or (``interleaved``) every ``num_actors``-th rung from its ``index``-th, so that every actor spans the
    ladder from its most to its least exploring end."""
    if interleaved:
        return ladder[index::len(ladder) // num_envs]
    return ladder[index * num_envs:(index + 1) * num_envs]


class EpsilonGreedy:
    def __init__(self, epsilons: np.ndarray, num_actions: int):
        self.epsilons, self.num_actions = epsilons, num_actions

    @classmethod
    def ladder(cls, index: int, num_actors: int, num_envs: int, epsilon: float, alpha: float, num_actions: int,
               interleaved: bool = False):
        ladder = epsilon_ladder(num_actors * num_envs, epsilon, alpha)
        return cls(rungs(ladder, index, num_envs, interleaved), num_actions)

    def act(self, model, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.choose(model(torch.from_numpy(obs)).numpy(), rng)

    def choose(self, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """From Q values ``[B, A]`` already computed (a recurrent actor computes them with its state)."""
        return epsilon_greedy(q, self.epsilons, rng)


def epsilon_greedy(q: np.ndarray, epsilons: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each row's greedy action, or with probability ``epsilons[row]`` a uniformly random legal one (a masked
    Q-value is ``ILLEGAL_Q``: ``models/q_networks.py``). ``q``: ``[..., A]``, ``epsilons`` of its leading shape."""
    greedy = q.argmax(-1)
    explore = rng.random(greedy.shape) < epsilons
    legal = q > ILLEGAL_Q / 2
    if legal.all():  # nothing masked: the draws as they always were (a seed's run is unchanged)
        random = rng.integers(0, q.shape[-1], greedy.shape)
    else:  # uniform among each row's legal actions
        random = np.where(legal, rng.random(q.shape), -1.0).argmax(-1)
    return np.where(explore, random, greedy)


class GaussianNoise:
    """mu(s) + N(0, scale_i) per env copy, clipped to the action bounds."""

    def __init__(self, scales: np.ndarray, low: np.ndarray, high: np.ndarray):
        self.scales, self.low, self.high = scales, low, high

    @classmethod
    def ladder(cls, index: int, num_actors: int, num_envs: int, noise_max: float, noise_min: float, low, high):
        """Scales spaced geometrically from ``noise_max`` (first copy) to ``noise_min`` (last), like the epsilon
        ladder, as fractions of the action range."""
        total = num_actors * num_envs
        scales = np.geomspace(max(noise_max, 1e-8), max(noise_min, 1e-8), total) if total > 1 else np.array([noise_max])
        return cls(rungs(scales, index, num_envs)[:, None] * (high - low) / 2.0, low, high)

    def act(self, model, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.perturb(model.mu(torch.from_numpy(obs)).numpy(), rng)

    def perturb(self, actions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``actions`` (one row per env copy) plus each copy's noise, clipped to the bounds."""
        noisy = actions + self.scales * rng.standard_normal(actions.shape)
        return np.clip(noisy, self.low, self.high).astype(np.float32)
