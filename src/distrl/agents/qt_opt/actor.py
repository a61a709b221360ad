"""QT-Opt's actor: CEM over the online Q-function, with exploration, writing transitions into its partition.

Each env copy of each actor takes a uniformly random action with its own probability (a geometric ladder
over all copies, as Ape-X's epsilons) and otherwise CEM's argmax of Q plus a little Gaussian noise; the
paper's robots likewise mixed random actions into the CEM policy. The actor is the Ape-X transition actor
(``common/transition_actor.py``) with that exploration; its n-step transitions go into the actor's own
partition of the shared replay (no lock between writers), where every Bellman updater samples them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from distrl.agents.common.exploration import GaussianNoise, rungs
from distrl.agents.common.transition_actor import (
    TransitionActor,
    TransitionSettings,
    chunk_items,
    chunk_spec,
)
from distrl.core.protocols import Stateless
from distrl.core.types import allocate
from distrl.ops import epsilon_ladder
from distrl.replay import PartitionWriter


class CEMExploration:
    def __init__(self, epsilons: np.ndarray, noise: float, low: np.ndarray, high: np.ndarray, seed: int):
        self.epsilons, self.low, self.high = epsilons, low, high
        self.noise = GaussianNoise(np.full((len(epsilons), 1), noise) * (high - low) / 2.0, low, high)
        self.generator = torch.Generator().manual_seed(seed)

    @classmethod
    def ladder(cls, index: int, num_actors: int, num_envs: int, epsilon: float, noise: float, low, high, seed: int):
        return cls(rungs(epsilon_ladder(num_actors * num_envs, epsilon, 7.0), index, num_envs), noise, low, high, seed)

    def act(self, model, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        best = model.online.argmax(torch.from_numpy(obs), self.generator)[0].numpy()
        noisy = self.noise.perturb(best, rng)
        uniform = rng.uniform(self.low, self.high, best.shape)
        explore = rng.random(len(best)) < self.epsilons
        return np.where(explore[:, None], uniform, noisy).astype(np.float32)


class QTOptActor(Stateless):
    def __init__(self, env_id: str, env, cfg, index: int, seed: int, model, weights, replay):
        low, high = env.action_space.low.astype(np.float32), env.action_space.high.astype(np.float32)
        explore = CEMExploration.ladder(index, cfg.num_actors, cfg.num_envs, cfg.epsilon, cfg.noise, low, high, seed)
        self.actor = TransitionActor(
            env_id, env, TransitionSettings.of(cfg, cfg.actor_sync_steps), seed, model, explore, None, weights
        )
        self.chunk = allocate(chunk_spec(env, cfg.num_envs, cfg.unroll_length, cfg.n_step))
        self.replay = PartitionWriter(replay, index, seed)

    def step(self, out=None) -> dict[str, Any]:
        info = self.actor.step(self.chunk)
        if self.chunk["valid"].any():
            self.replay.add(chunk_items(self.chunk))
        return info

    def close(self) -> None:
        self.actor.close()
