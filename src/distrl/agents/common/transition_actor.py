"""Ape-X actor: explores a vector env and sends n-step transitions with initial priorities.

Each chunk of ``unroll_length`` vector steps is the actor's local buffer: its n-step transitions are
scored with the actor's own network copy (|delta| of the n-step target, as the paper's actors do)
and sent together, so the learner never has to compute priorities for fresh data. What differs
between Ape-X DQN and Ape-X DDPG, how to explore and how to score, comes in as an
:class:`Exploration` object from the agent.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

import numpy as np
import torch

from distrl.core.types import ArraySpec
from distrl.envs import EnvSpec, EpisodeTracker, make_vec_env
from distrl.replay import NStepAdder


class Exploration(Protocol):
    def act(self, model, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...

    def td_errors(self, model, out: dict[str, np.ndarray], count: int) -> np.ndarray: ...


def chunk_spec(env: EnvSpec, num_envs: int, length: int, n: int) -> dict[str, ArraySpec]:
    K = (length + n) * num_envs  # at most one transition per env step, plus pending windows flushed
    return {
        "obs": ArraySpec((K,) + env.obs_shape, env.obs_dtype.name, batch_axis=0),
        "action": ArraySpec((K,) + env.action_shape, env.action_dtype.name, batch_axis=0),
        "reward": ArraySpec((K,), "float32", batch_axis=0),
        "discount": ArraySpec((K,), "float32", batch_axis=0),
        "next_obs": ArraySpec((K,) + env.obs_shape, env.obs_dtype.name, batch_axis=0),
        "priority": ArraySpec((K,), "float32", batch_axis=0),
        "valid": ArraySpec((K,), "bool", batch_axis=0),
    }


ITEM_FIELDS = ("obs", "action", "reward", "discount", "next_obs")


def item_spec(spec: dict[str, ArraySpec]) -> dict[str, ArraySpec]:
    """The spec of one replay item (one transition) from the spec of a chunk of them."""
    return {k: ArraySpec(spec[k].shape[1:], spec[k].dtype) for k in ITEM_FIELDS}


def chunk_items(chunk: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The real transitions of a chunk (its ``valid`` rows), ready for ``Replay.add``."""
    valid = chunk["valid"]
    return {k: chunk[k][valid] for k in ITEM_FIELDS}


class TransitionActor:
    def __init__(self, env_id: str, env: EnvSpec, cfg, index: int, seed: int, model, exploration: Exploration):
        self.cfg = cfg
        self.env = make_vec_env(env_id, cfg.num_envs, seed)
        self.model = model
        self.version = -1
        self.sync_steps = getattr(cfg, "actor_sync_steps", 1)
        self.steps_since_sync = self.sync_steps
        self.rng = np.random.default_rng(seed)
        torch.manual_seed(seed)
        self.exploration = exploration
        self.adder = NStepAdder(cfg.num_envs, cfg.n_step, cfg.gamma, env.obs_shape, env.obs_dtype, env.action_shape,
                                env.action_dtype)
        self.obs, _ = self.env.reset(seed=seed)
        self.prev_done = np.zeros(cfg.num_envs, dtype=bool)
        self.tracker = EpisodeTracker(cfg.num_envs)

    def set_weights(self, flat: np.ndarray, version: int) -> None:
        if self.steps_since_sync < self.sync_steps and self.version >= 0:
            return  # pull every ~actor_sync_steps steps, not on every chunk
        with torch.no_grad():
            torch.nn.utils.vector_to_parameters(torch.tensor(flat), self.model.parameters())
        self.version = version
        self.steps_since_sync = 0

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
                next_obs, reward, terminated, truncated, _ = self.env.step(action)
                t2 = time.perf_counter()
                valid = ~self.prev_done
                done = (terminated | truncated) & valid
                r, n = self.tracker.step(reward, done, valid)
                if r.size:
                    returns.append(r)
                    lengths.append(n)
                if cfg.reward_clip is not None:
                    reward = np.clip(reward, -cfg.reward_clip, cfg.reward_clip)
                tr = self.adder.step(self.obs, action, reward, next_obs, terminated, truncated, valid)
                k = len(tr["reward"])
                for key, value in tr.items():
                    out[key][count:count + k] = value
                count += k
                self.prev_done = done
                self.obs = next_obs
                infer_s += t1 - t0
                env_s += t2 - t1
            t0 = time.perf_counter()
            out["priority"][:count] = self.exploration.td_errors(self.model, out, count) if count else 0.0
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
