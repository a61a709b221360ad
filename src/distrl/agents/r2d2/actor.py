"""R2D2 actor: an epsilon-greedy recurrent policy over a vector env, emitting overlapping sequences.

Each env copy carries its own LSTM state, zeroed at episode starts. Every vector step goes into a
``SequenceAdder`` together with the state the core had *before* the step, so every emitted sequence
knows the state it started from (the paper's "stored state"). A chunk holds the sequences completed
during ``unroll_length`` vector steps (at most one per env and step) and a ``valid`` mask; new
sequences enter the replay at the highest priority seen (the learner's |delta| replaces it at the
first sample).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from distrl.agents.common.exploration import EpsilonGreedy
from distrl.core.protocols import Stateless, WeightsReader
from distrl.core.types import ArraySpec
from distrl.envs import EnvSpec, EpisodeTracker, make_vec_env
from distrl.models import FlatParameters, RecurrentQNetwork
from distrl.replay import SequenceAdder

SEQUENCE_FIELDS = ("obs", "action", "reward", "discount", "mask", "initial_state", "burn_in_state")


def chunk_spec(env: EnvSpec, cfg, state_size: int) -> dict[str, ArraySpec]:
    K, L = cfg.num_envs * cfg.unroll_length, cfg.sequence_length
    return {"obs": ArraySpec((K, L) + env.obs_shape, env.obs_dtype.name, batch_axis=0),
            "action": ArraySpec((K, L) + env.action_shape, env.action_dtype.name, batch_axis=0),
            "reward": ArraySpec((K, L), "float32", batch_axis=0),
            "discount": ArraySpec((K, L), "float32", batch_axis=0),
            "mask": ArraySpec((K, L), "bool", batch_axis=0),
            "initial_state": ArraySpec((K, 2 * state_size), "float32", batch_axis=0),
            "burn_in_state": ArraySpec((K, 2 * state_size), "float32", batch_axis=0),
            "valid": ArraySpec((K,), "bool", batch_axis=0)}


def item_spec(spec: dict[str, ArraySpec]) -> dict[str, ArraySpec]:
    """One replay item: one sequence."""
    return {k: ArraySpec(spec[k].shape[1:], spec[k].dtype) for k in SEQUENCE_FIELDS}


def sequences_to_insert(chunk: dict[str, np.ndarray]):
    """A chunk's real sequences for ``Replay.add``; no priorities: they enter at the highest seen."""
    valid = chunk["valid"]
    return {k: chunk[k][valid] for k in SEQUENCE_FIELDS}, None


class SequenceActor(Stateless):
    def __init__(self, env_id: str, env: EnvSpec, cfg, seed: int, model: RecurrentQNetwork, explore: EpsilonGreedy,
                 weights: WeightsReader):
        self.cfg, self.model, self.explore, self.weights = cfg, model, explore, weights
        self.flat = FlatParameters(model)
        self.env = make_vec_env(env_id, cfg.num_envs, seed)
        self.rng = np.random.default_rng(seed)
        torch.manual_seed(seed)
        self.adder = SequenceAdder(cfg.num_envs, cfg.sequence_length, cfg.overlap, env.obs_shape, env.obs_dtype,
                                   2 * model.state_size, cfg.gamma, env.action_shape, env.action_dtype, cfg.burn_in)
        self.state = model.initial_state(cfg.num_envs)
        self.obs, _ = self.env.reset(seed=seed)
        self.prev_done = np.zeros(cfg.num_envs, dtype=bool)
        self.tracker = EpisodeTracker(cfg.num_envs)
        self.version, self.since_sync = -1, 0

    def step(self, out: dict[str, np.ndarray]) -> dict[str, Any]:
        if self.version < 0 or self.since_sync >= self.cfg.actor_sync_steps:
            newer = self.weights.pull(self.version)
            if newer is not None:
                self.flat.load(newer[0])
                self.version, self.since_sync = newer[1], 0
        cfg = self.cfg
        out["valid"][:] = False
        filled, env_s, infer_s = 0, 0.0, 0.0
        returns, lengths = [], []
        for _ in range(cfg.unroll_length):
            t0 = time.perf_counter()
            state_in = torch.cat(self.state, dim=1).numpy()
            with torch.inference_mode():
                q, state = self.model.step(torch.from_numpy(self.obs), self.state)
            action = self.explore.choose(q.numpy(), self.rng)
            t1 = time.perf_counter()
            next_obs, reward, terminated, truncated, _ = self.env.step(action)
            env_s += time.perf_counter() - t1
            infer_s += t1 - t0
            if cfg.reward_clip is not None:
                reward = np.clip(reward, -cfg.reward_clip, cfg.reward_clip)
            valid = ~self.prev_done
            done = (terminated | truncated) & valid
            finished_returns, finished_lengths = self.tracker.step(reward, done, valid)
            returns.extend(finished_returns.tolist())
            lengths.extend(finished_lengths.tolist())
            seqs = self.adder.step(self.obs, action, reward, terminated, truncated, valid, state_in)
            k = len(seqs["mask"])
            for name in SEQUENCE_FIELDS:
                out[name][filled:filled + k] = seqs[name]
            out["valid"][filled:filled + k] = True
            filled += k
            keep = torch.from_numpy(~(done | ~valid)).float().unsqueeze(1)  # a new episode starts from zeros
            self.state = (state[0] * keep, state[1] * keep)
            self.prev_done = done
            self.obs = next_obs
        self.since_sync += cfg.unroll_length
        return {"env_steps": int(cfg.unroll_length * cfg.num_envs), "version": self.version, "episode_returns": returns,
                "episode_lengths": lengths, "env_s": env_s, "infer_s": infer_s, "sequences": filled}

    def close(self) -> None:
        self.env.close()
