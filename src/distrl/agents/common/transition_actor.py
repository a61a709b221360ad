"""Ape-X actor: explores a vector env and sends n-step transitions with initial priorities.

Each chunk of ``unroll_length`` vector steps is the actor's local buffer: its n-step transitions are
scored with the actor's own network copy (|delta| of the n-step target, as the paper's actors do)
and sent together, so the learner never has to compute priorities for fresh data. What differs
between Ape-X DQN, Ape-X DDPG and GORILA's bundles, how to explore (``exploration.py``) and how to
score (a ``priorities(model, chunk, count)`` function, or none), comes in from the system.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from distrl.core.protocols import Stateless, WeightsReader
from distrl.core.types import ArraySpec
from distrl.envs import EnvSpec, EpisodeTracker, make_vec_env
from distrl.models import load_flat
from distrl.replay import NStepAdder


@dataclass(frozen=True)
class TransitionSettings:
    """What a transition actor needs of its system's config."""

    num_envs: int
    unroll_length: int  # vector steps per chunk
    n_step: int
    gamma: float
    reward_clip: float | None = None
    sync_steps: int = 1  # vector steps between weight pulls
    tags: tuple[str, ...] = ()  # per-step flags the env's info gives, kept with each transition (``chunk_spec``)

    @classmethod
    def of(cls, cfg, sync_steps: int = 1, tags: tuple[str, ...] = ()) -> TransitionSettings:
        return cls(cfg.num_envs, cfg.unroll_length, cfg.n_step, cfg.gamma, cfg.reward_clip, sync_steps, tags)


def chunk_spec(env: EnvSpec, num_envs: int, length: int, n: int, tags: tuple[str, ...] = ()) -> dict[str, ArraySpec]:
    """A chunk of transitions; ``tags``: a bool per transition for each, from the env's info at its first step (a
    league game's ``versus_fixed``: its opponent was one of the league's fixed players)."""
    K = (length + n) * num_envs  # at most one transition per env step, plus pending windows flushed
    return {
        "obs": ArraySpec((K,) + env.obs_shape, env.obs_dtype.name, batch_axis=0),
        "action": ArraySpec((K,) + env.action_shape, env.action_dtype.name, batch_axis=0),
        "reward": ArraySpec((K,), "float32", batch_axis=0),
        "discount": ArraySpec((K,), "float32", batch_axis=0),
        "next_obs": ArraySpec((K,) + env.obs_shape, env.obs_dtype.name, batch_axis=0),
        "priority": ArraySpec((K,), "float32", batch_axis=0),
        "valid": ArraySpec((K,), "bool", batch_axis=0),
        **{name: ArraySpec((K,), "bool", batch_axis=0) for name in tags},
    }


ITEM_FIELDS = ("obs", "action", "reward", "discount", "next_obs")
CHUNK_ONLY = ("priority", "valid")  # a chunk's fields that are not the replay item's


def item_spec(spec: dict[str, ArraySpec]) -> dict[str, ArraySpec]:
    """The spec of one replay item (one transition, with its tags) from the spec of a chunk of them."""
    return {k: ArraySpec(v.shape[1:], v.dtype) for k, v in spec.items() if k not in CHUNK_ONLY}


def chunk_items(chunk: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The real transitions of a chunk (its ``valid`` rows), ready for ``Replay.add``."""
    valid = chunk["valid"]
    return {k: v[valid] for k, v in chunk.items() if k not in CHUNK_ONLY}


class TransitionActor(Stateless):
    def __init__(self, env_id: str, env: EnvSpec, cfg: TransitionSettings, seed: int, model, exploration,
                 priorities: Callable | None = None, weights: WeightsReader | None = None):
        self.cfg = cfg
        self.priorities = priorities
        self.weights = weights
        self.env = make_vec_env(env_id, cfg.num_envs, seed)
        self.model = model
        self.version = -1
        self.sync_steps = cfg.sync_steps
        self.steps_since_sync = self.sync_steps
        self.rng = np.random.default_rng(seed)
        torch.manual_seed(seed)
        self.exploration = exploration
        self.adder = NStepAdder(cfg.num_envs, cfg.n_step, cfg.gamma, env.obs_shape, env.obs_dtype, env.action_shape,
                                env.action_dtype, cfg.tags)
        self.obs, _ = self.env.reset(seed=seed)
        self.prev_done = np.zeros(cfg.num_envs, dtype=bool)
        self.tracker = EpisodeTracker(cfg.num_envs)

    def step(self, out: dict[str, np.ndarray]) -> dict[str, Any]:
        """Pull newer weights every ~``actor_sync_steps`` vector steps (not on every chunk), then one chunk."""
        if self.steps_since_sync >= self.sync_steps or self.version < 0:
            newer = self.weights.pull(self.version)
            if newer is not None:
                with torch.no_grad():
                    load_flat(self.model.parameters(), newer[0])
                self.version = newer[1]
                self.steps_since_sync = 0
        return self.unroll(out)

    def unroll(self, out: dict[str, np.ndarray]) -> dict[str, Any]:
        cfg = self.cfg
        env_s = infer_s = 0.0
        count = 0
        returns, lengths = [], []
        with torch.inference_mode():
            for _ in range(cfg.unroll_length):
                t0 = time.perf_counter()
                action = self.exploration.act(self.model, self.obs, self.rng)
                t1 = time.perf_counter()
                next_obs, reward, terminated, truncated, info = self.env.step(action)
                t2 = time.perf_counter()
                valid = ~self.prev_done
                done = (terminated | truncated) & valid
                r, n = self.tracker.step(reward, done, valid)
                if r.size:
                    returns.append(r)
                    lengths.append(n)
                if cfg.reward_clip is not None:
                    reward = np.clip(reward, -cfg.reward_clip, cfg.reward_clip)
                tags = {name: np.asarray(info[name], dtype=bool) for name in cfg.tags} if cfg.tags else None
                tr = self.adder.step(self.obs, action, reward, next_obs, terminated, truncated, valid, tags)
                k = len(tr["reward"])
                for key, value in tr.items():
                    out[key][count:count + k] = value
                count += k
                self.prev_done = done
                self.obs = next_obs
                infer_s += t1 - t0
                env_s += t2 - t1
            t0 = time.perf_counter()
            out["priority"][:count] = self.priorities(self.model, out, count) if count and self.priorities else 0.0
            infer_s += time.perf_counter() - t0
        out["valid"][:count] = True
        out["valid"][count:] = False
        self.steps_since_sync += cfg.unroll_length
        return {"env_steps": cfg.unroll_length * cfg.num_envs, "version": self.version, "transitions": count,
                "episode_returns": np.concatenate(returns) if returns else np.zeros(0),
                "episode_lengths": np.concatenate(lengths) if lengths else np.zeros(0, dtype=np.int64),
                "env_s": env_s, "infer_s": infer_s}

    def close(self) -> None:
        self.env.close()


def episodes_to_transitions(episodes, n: int, gamma: float, reward_clip: float | None = None) -> list[dict]:
    """Whole recorded episodes (demonstrations) as the n-step transitions an actor would have made of them,
    one item dict per episode (an episode that stops with neither flag is closed as truncated)."""
    out = []
    for obs, actions, rewards, term, trunc in episodes.closed(reward_clip):
        T = len(actions)
        adder = NStepAdder(1, n, gamma, obs.shape[1:], obs.dtype, actions.shape[1:], actions.dtype)
        parts = [adder.step(obs[t:t + 1], actions[t:t + 1], rewards[t:t + 1], obs[t + 1:t + 2], term[t:t + 1],
                            trunc[t:t + 1], np.ones(1, bool)) for t in range(T)]
        out.append({k: np.concatenate([p[k] for p in parts]) for k in ITEM_FIELDS})
    return out
