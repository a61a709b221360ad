"""An A3C worker: an actor and a learner in one process, updating the shared model Hogwild-style.

Algorithm S3: sync the local copy from the shared parameters, run t_max steps, compute the n-step
actor-critic gradient on the local copy, apply it to the shared parameters with the shared RMSProp,
repeat. The runtime sees an ordinary actor whose "unroll" is ``segments_per_report`` such updates and
carries no arrays worth shipping, only counts.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from distrl.agents.a2c.learner import a2c_loss
from distrl.agents.common.unroll_actor import UnrollActor
from distrl.runtime.batching import allocate


class A3CWorker:
    def __init__(self, env_id: str, cfg, spec, index: int, seed: int, params, model):
        self.cfg = cfg
        self.params = params  # SharedShards (local, Hogwild) or RemoteShards (ray, parameter servers)
        self.local = model
        self.local_params = list(self.local.parameters())
        self.actor = UnrollActor(env_id, cfg.num_envs, cfg.t_max, seed, self.local)
        self.buffer = allocate(spec)
        self.version = 0
        self.index = index

    def set_weights(self, flat: np.ndarray, version: int) -> None:
        pass  # workers read the shared model directly

    def unroll(self, out: dict[str, np.ndarray]) -> dict[str, Any]:
        cfg = self.cfg
        returns, lengths = [], []
        env_s = infer_s = learn_s = 0.0
        lags = []
        for _ in range(cfg.segments_per_report):
            versions = self.params.pull(self.local)  # re-sync before each segment
            info = self.actor.unroll(self.buffer)
            env_s, infer_s = env_s + info["env_s"], infer_s + info["infer_s"]
            returns.append(info["episode_returns"])
            lengths.append(info["episode_lengths"])
            t0 = time.perf_counter()
            loss, _ = a2c_loss(self.local, self.buffer, cfg)
            self.local.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.local_params, cfg.max_grad_norm, foreach=True)
            applied, dropped, staleness = self.params.push(self.local, versions)
            lags.append(staleness)  # other workers' updates between this pull and push
            learn_s += time.perf_counter() - t0
        out["steps"][0] = cfg.segments_per_report * cfg.t_max * cfg.num_envs
        self.version = int(np.sum(versions)) + applied
        return {"env_steps": cfg.segments_per_report * cfg.t_max * cfg.num_envs, "version": self.version,
                "actor_index": self.index,
                "episode_returns": np.concatenate(returns), "episode_lengths": np.concatenate(lengths),
                "env_s": env_s, "infer_s": infer_s, "learn_s": learn_s, "staleness": float(np.mean(lags))}

    def close(self) -> None:
        self.actor.close()
