"""Ape-X actor: epsilon-greedy over a vector env, n-step transitions with initial priorities.

Each chunk of ``unroll_length`` vector steps is the actor's local buffer: its n-step transitions are
scored with the actor's own network copy (|delta| of the n-step target, as the paper's actors do)
and sent together, so the learner never has to compute priorities for fresh data.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from distrl.core.types import ArraySpec
from distrl.envs import EnvSpec, EpisodeTracker, make_vec_env
from distrl.ops import epsilon_ladder
from distrl.replay import NStepAdder


def chunk_spec(env: EnvSpec, num_envs: int, length: int, n: int) -> dict[str, ArraySpec]:
    K = (length + n) * num_envs  # at most one transition per env step, plus pending windows flushed
    return {
        "obs": ArraySpec((K,) + env.obs_shape, env.obs_dtype.name, batch_axis=0),
        "action": ArraySpec((K,), "int64", batch_axis=0),
        "reward": ArraySpec((K,), "float32", batch_axis=0),
        "discount": ArraySpec((K,), "float32", batch_axis=0),
        "next_obs": ArraySpec((K,) + env.obs_shape, env.obs_dtype.name, batch_axis=0),
        "priority": ArraySpec((K,), "float32", batch_axis=0),
        "valid": ArraySpec((K,), "bool", batch_axis=0),
    }


class ApexDQNActor:
    def __init__(self, env_id: str, env: EnvSpec, cfg, index: int, seed: int, model):
        self.cfg = cfg
        self.env = make_vec_env(env_id, cfg.num_envs, seed)
        self.model = model
        self.version = -1
        self.steps_since_sync = cfg.actor_sync_steps
        self.rng = np.random.default_rng(seed)
        torch.manual_seed(seed)
        ladder = epsilon_ladder(cfg.num_actors * cfg.num_envs, cfg.epsilon, cfg.epsilon_alpha)
        self.epsilons = ladder[index * cfg.num_envs:(index + 1) * cfg.num_envs]
        self.num_actions = env.action_space.n
        self.adder = NStepAdder(cfg.num_envs, cfg.n_step, cfg.gamma, env.obs_shape, env.obs_dtype)
        self.obs, _ = self.env.reset(seed=seed)
        self.prev_done = np.zeros(cfg.num_envs, dtype=bool)
        self.tracker = EpisodeTracker(cfg.num_envs)

    def set_weights(self, flat: np.ndarray, version: int) -> None:
        if self.steps_since_sync < self.cfg.actor_sync_steps and self.version >= 0:
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
                greedy = self.model(torch.from_numpy(self.obs)).argmax(-1).numpy()
                explore = self.rng.random(cfg.num_envs) < self.epsilons
                action = np.where(explore, self.rng.integers(0, self.num_actions, cfg.num_envs), greedy)
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
            out["priority"][:count] = self._priorities(out, count)
            infer_s += time.perf_counter() - t0
        out["valid"][:count] = True
        out["valid"][count:] = False
        self.steps_since_sync += cfg.unroll_length
        return {"env_steps": cfg.unroll_length * cfg.num_envs, "version": self.version, "transitions": count,
                "episode_returns": np.concatenate(returns) if returns else np.zeros(0),
                "episode_lengths": np.concatenate(lengths) if lengths else np.zeros(0, dtype=np.int64),
                "env_s": env_s, "infer_s": infer_s}

    def _priorities(self, out, count: int) -> np.ndarray:
        """|R + gamma^n max_a Q(x', a) - Q(x, a)| with the actor's copy (initial priorities)."""
        if count == 0:
            return np.zeros(0, np.float32)
        q = self.model(torch.from_numpy(out["obs"][:count]))
        q_sa = q.gather(1, torch.from_numpy(out["action"][:count]).unsqueeze(1)).squeeze(1)
        q_next = self.model(torch.from_numpy(out["next_obs"][:count])).max(1).values
        target = torch.from_numpy(out["reward"][:count]) + torch.from_numpy(out["discount"][:count]) * q_next
        return (target - q_sa).abs().numpy()

    def close(self) -> None:
        self.env.close()
