"""A GORILA bundle: an actor, its local replay and a learner, in one process (paper, section 4).

The actor acts epsilon-greedily with the learner's latest copy of the parameters and writes
transitions into the bundle's replay; the learner samples from it, computes a DQN gradient against
its target network, and sends it to the sharded parameter server, which applies it or drops it as
too stale. The target network is refreshed from the server every C global updates.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from distrl.core.types import ArraySpec
from distrl.envs import EnvSpec, EpisodeTracker, make_vec_env
from distrl.ops import epsilon_ladder, td_error
from distrl.replay import NStepAdder, Replay


class GorilaBundle:
    def __init__(self, env_id: str, env: EnvSpec, cfg, index: int, seed: int, params, model):
        self.cfg = cfg
        self.params = params  # SharedShards (local) or RemoteShards (ray)
        self.model = model
        self.target = copy.deepcopy(model)
        self.env = make_vec_env(env_id, cfg.num_envs, seed)
        self.rng = np.random.default_rng(seed)
        torch.manual_seed(seed)
        ladder = epsilon_ladder(cfg.num_actors * cfg.num_envs, cfg.epsilon, cfg.epsilon_alpha)
        self.epsilons = ladder[index * cfg.num_envs:(index + 1) * cfg.num_envs]
        self.num_actions = env.action_space.n
        self.adder = NStepAdder(cfg.num_envs, 1, cfg.gamma, env.obs_shape, env.obs_dtype)
        spec = {"obs": ArraySpec(env.obs_shape, env.obs_dtype.name), "action": ArraySpec((), "int64"),
                "reward": ArraySpec((), "float32"), "discount": ArraySpec((), "float32"),
                "next_obs": ArraySpec(env.obs_shape, env.obs_dtype.name)}
        self.replay = Replay.uniform(spec, cfg.replay_capacity, seed=seed)
        self.obs, _ = self.env.reset(seed=seed)
        self.prev_done = np.zeros(cfg.num_envs, dtype=bool)
        self.tracker = EpisodeTracker(cfg.num_envs)
        self.versions = self.params.pull(self.model)
        self.target.load_state_dict(self.model.state_dict())
        self.last_target_sync = int(np.sum(self.versions))
        self.index = index

    def set_weights(self, flat, version) -> None:
        pass  # a bundle pulls from the parameter server itself

    def unroll(self, out: dict[str, np.ndarray]) -> dict[str, Any]:
        cfg = self.cfg
        returns, lengths = [], []
        env_s = infer_s = learn_s = 0.0
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
                tr = self.adder.step(self.obs, action, reward, next_obs, terminated, truncated, valid)
                if len(tr["reward"]):
                    self.replay.add(tr)
                self.prev_done, self.obs = done, next_obs
                infer_s, env_s = infer_s + t1 - t0, env_s + t2 - t1
        applied = dropped = 0
        staleness = []
        t0 = time.perf_counter()
        if self.replay.size >= cfg.min_replay:
            for _ in range(cfg.updates_per_unroll):
                a, d, s = self._gradient()
                applied, dropped = applied + a, dropped + d
                staleness.append(s)
        learn_s = time.perf_counter() - t0
        out["steps"][0] = cfg.unroll_length * cfg.num_envs
        return {"env_steps": cfg.unroll_length * cfg.num_envs, "version": int(np.sum(self.versions)),
                "actor_index": self.index, "staleness": float(np.mean(staleness)) if staleness else 0.0,
                "shards_applied": applied, "shards_dropped": dropped, "learn_s": learn_s,
                "episode_returns": np.concatenate(returns) if returns else np.zeros(0),
                "episode_lengths": np.concatenate(lengths) if lengths else np.zeros(0, dtype=np.int64),
                "env_s": env_s, "infer_s": infer_s}

    def _gradient(self) -> tuple[int, int, float]:
        """One DQN gradient (Mnih et al. 2015 target, as GORILA) sent to the parameter server."""
        cfg = self.cfg
        self.versions = self.params.pull(self.model)
        if int(np.sum(self.versions)) - self.last_target_sync >= cfg.target_update_period:
            self.target.load_state_dict(self.model.state_dict())
            self.last_target_sync = int(np.sum(self.versions))
        b = {k: torch.from_numpy(v) for k, v in self.replay.sample(cfg.batch_size).items.items()}
        with torch.no_grad():
            y = b["reward"] + b["discount"] * self.target(b["next_obs"]).max(1).values
        delta = td_error(self.model(b["obs"]), b["action"], y)
        loss = F.huber_loss(delta, torch.zeros_like(delta))
        self.model.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.max_grad_norm, foreach=True)
        return self.params.push(self.model, self.versions)

    def close(self) -> None:
        self.env.close()
