"""An A3C worker: an actor and a learner in one process, updating the shared model Hogwild-style.

Algorithm S3: sync the local copy from the shared parameters, run t_max steps, compute the n-step
actor-critic gradient on the local copy, apply it to the shared parameters with the shared RMSProp,
repeat. The runtime sees a component whose step is ``segments_per_report`` such updates and whose
output is only a report (counts, returns, staleness): the parameters travel through the
parameter-server service (shared memory on ``local``, shard actors on ``ray``), never with the report.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import torch

from distrl.agents.a2c.learner import a2c_loss
from distrl.agents.common.learner_inputs import to_tensors
from distrl.agents.common.unroll_actor import UnrollActor
from distrl.core.protocols import ParamServerHandle, Stateless
from distrl.core.types import allocate


class A3CWorker(Stateless):
    def __init__(self, env_id: str, cfg, spec, index: int, seed: int, params: ParamServerHandle, model):
        self.cfg = cfg
        self.params = params  # shards in shared memory (local, Hogwild) or shard actors (ray)
        self.local = model
        self.local_params = list(self.local.parameters())
        self.actor = UnrollActor(env_id, cfg.num_envs, cfg.t_max, seed, self.local)
        self.buffer = allocate(spec)
        self.version = 0
        self.index = index
        self.nonfinite = 0  # gradients not pushed because they were not finite

    def step(self, out=None) -> dict[str, Any]:
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
            loss, _, _ = a2c_loss(self.local, to_tensors(self.buffer), cfg)
            self.local.zero_grad(set_to_none=True)
            loss.backward()
            norm = float(torch.nn.utils.clip_grad_norm_(self.local_params, cfg.max_grad_norm, foreach=True))
            applied = 0
            if math.isfinite(norm) and math.isfinite(float(loss.detach())):
                applied, dropped, staleness = self.params.push(self.local, versions)
                lags.append(staleness)  # other workers' updates between this pull and push
            else:  # a NaN or inf never reaches the shared model
                self.nonfinite += 1
            learn_s += time.perf_counter() - t0
        self.version = int(np.sum(versions)) + applied
        return {"env_steps": cfg.segments_per_report * cfg.t_max * cfg.num_envs, "version": self.version,
                "actor_index": self.index,
                "episode_returns": np.concatenate(returns), "episode_lengths": np.concatenate(lengths),
                "env_s": env_s, "infer_s": infer_s, "learn_s": learn_s,
                "staleness": float(np.mean(lags)) if lags else 0.0, "nonfinite_skipped": self.nonfinite}

    def close(self) -> None:
        self.actor.close()
