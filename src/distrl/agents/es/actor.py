"""An ES worker: evaluates antithetic perturbations of the newest parameters and sends back only scalars.

One step (Salimans et al. 2017, Algorithm 2, a worker's loop body): pull the newest parameters theta
(nothing is copied if they did not change), draw P noise indices into the shared table, build the 2P
policies theta + sigma*eps_i and theta - sigma*eps_i, run one episode of each on a vector env of 2P copies
(numpy-vectorised where the env allows, so start states come from one seed per step), and emit
(index_i, R+_i, R-_i, steps) plus the sums of the observations seen (for the master's normaliser). The
noise itself never travels: the master rebuilds eps_i from the index in its own view of the table.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from distrl.agents.common.evaluator import from_weights
from distrl.core.protocols import ConstantHandle, Stateless, WeightsReader
from distrl.core.types import ArraySpec
from distrl.envs import make_vec_env


def result_spec(pairs: int, obs_dim: int) -> dict[str, ArraySpec]:
    """What one worker step sends: O(pairs + obs_dim) numbers, whatever the network's size."""
    return {"indices": ArraySpec((pairs,), "int64", batch_axis=0),
            "returns_pos": ArraySpec((pairs,), "float64", batch_axis=0),
            "returns_neg": ArraySpec((pairs,), "float64", batch_axis=0),
            "lengths": ArraySpec((pairs,), "int64", batch_axis=0),
            "obs_sum": ArraySpec((1, obs_dim), "float64", batch_axis=0),
            "obs_sumsq": ArraySpec((1, obs_dim), "float64", batch_axis=0),
            "obs_count": ArraySpec((1,), "float64", batch_axis=0),
            "version": ArraySpec((1,), "int64", batch_axis=0)}


class EsWorker(Stateless):
    def __init__(self, env_id: str, cfg, index: int, seed: int, weights: WeightsReader, noise: ConstantHandle, model):
        self.pairs, self.sigma = cfg.pairs_per_worker, cfg.sigma
        self.env = make_vec_env(env_id, 2 * self.pairs, seed, training=False)
        self.cap = cfg.max_episode_steps or 10**9
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.model, self.weights, self.noise = model.eval(), weights, noise
        self.trainable = model.trainable()
        self.dim = sum(p.numel() for p in self.trainable)
        self.index = index
        self.version = -1

    def step(self, out: dict[str, np.ndarray] | None) -> dict[str, Any]:
        t_start = time.perf_counter()
        version = from_weights(self.weights, self.model, self.version)
        if version != self.version:  # draws follow (seed, version): a resumed run does not replay its noise
            self.rng = np.random.default_rng([self.seed, max(version, 0)])
        self.version = version
        noise = self.noise.get()
        if noise.size < self.dim:
            raise ValueError(
                f"the noise table ({noise.size} floats) is smaller than the policy ({self.dim} parameters)"
            )
        P = self.pairs
        indices = self.rng.integers(0, noise.size - self.dim + 1, size=P)
        eps = torch.from_numpy(noise[indices[:, None] + np.arange(self.dim)])  # one gather: [P, dim]
        theta = torch.cat([p.detach().reshape(-1) for p in self.trainable])
        thetas = torch.cat([theta + self.sigma * eps, theta - self.sigma * eps])
        obs, _ = self.env.reset(seed=int(self.rng.integers(0, 2**31 - 1)))
        returns = np.zeros(2 * P)
        lengths = np.zeros(2 * P, dtype=np.int64)
        done = np.zeros(2 * P, dtype=bool)
        obs_sum = np.zeros(obs.shape[1])
        obs_sumsq = np.zeros(obs.shape[1])
        infer_s = env_s = 0.0
        for _ in range(self.cap):
            alive = ~done
            o = np.asarray(obs, dtype=np.float32)
            live = o[alive].astype(np.float64)
            obs_sum += live.sum(0)
            obs_sumsq += (live * live).sum(0)
            t0 = time.perf_counter()
            with torch.inference_mode():
                actions = self.model.perturbed(thetas, torch.from_numpy(o)).numpy()
            t1 = time.perf_counter()
            obs, reward, terminated, truncated, _ = self.env.step(actions)
            env_s += time.perf_counter() - t1
            infer_s += t1 - t0
            returns += np.where(alive, reward, 0.0)
            lengths += alive
            done |= terminated | truncated
            if done.all():
                break
        if out is not None:
            out["indices"][:] = indices
            out["returns_pos"][:], out["returns_neg"][:] = returns[:P], returns[P:]
            out["lengths"][:] = lengths[:P] + lengths[P:]
            out["obs_sum"][0], out["obs_sumsq"][0] = obs_sum, obs_sumsq
            out["obs_count"][0] = float(lengths.sum())
            out["version"][0] = self.version
        steps = int(lengths.sum())
        # ``slot_steps``: env copies stepped, alive or not (a copy whose episode ended is stepped with the rest until
        # the last one ends, so the vector stepped as often as the longest episode). The bench's actors-alone rate
        # counts these, the rate at full occupancy: the initial policy's episodes end at different times, a trained
        # one's all run to the cap.
        return {"env_steps": steps, "slot_steps": int(lengths.max()) * 2 * P, "version": self.version,
                "actor_index": self.index,
                "episode_returns": returns, "episode_lengths": lengths, "env_s": env_s, "infer_s": infer_s,
                "step_s": time.perf_counter() - t_start}

    def close(self) -> None:
        self.env.close()
