"""An A3C worker: an actor and a learner in one process, updating the shared model Hogwild-style.

Algorithm S3: sync the local copy from the shared parameters, run t_max steps, compute the n-step
actor-critic gradient on the local copy, apply it to the shared parameters with the shared RMSProp,
repeat. With ``epochs``/``minibatches``/``ppo_clip`` set (off by default: a departure from the paper,
asynchronous PPO) PPO's passes over the segment take its place: one such gradient per minibatch, each on the
latest shared parameters. The runtime sees a component whose step is
``segments_per_report`` such segments and whose output is only a report (counts, returns, staleness): the
parameters travel through the parameter-server service (shared memory on ``local``, shard actors on ``ray``),
never with the report.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import torch

from distrl.agents.a2c.learner import a2c_loss, advantages_and_returns, update_loss
from distrl.agents.common.learner_inputs import to_tensors
from distrl.agents.common.passes import flat_steps, step_minibatches
from distrl.agents.common.unroll_actor import UnrollActor
from distrl.core.protocols import ParamServerHandle, Stateless
from distrl.core.types import allocate
from distrl.ops import all_finite


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
            b = to_tensors(self.buffer)
            if cfg.epochs == 1 and cfg.minibatches == 1:
                versions, applied, finite = self._push(a2c_loss(self.local, b, cfg)[0], versions, lags)
                self.nonfinite += int(not finite)
            else:
                versions, applied = self._passes(b, versions, lags)
            learn_s += time.perf_counter() - t0
        self.version = int(np.sum(versions)) + applied
        return {"env_steps": cfg.segments_per_report * cfg.t_max * cfg.num_envs, "version": self.version,
                "actor_index": self.index,
                "episode_returns": np.concatenate(returns), "episode_lengths": np.concatenate(lengths),
                "env_s": env_s, "infer_s": infer_s, "learn_s": learn_s,
                "staleness": float(np.mean(lags)) if lags else 0.0,  # policy lag: data's age when its gradient lands
                "nonfinite_skipped": self.nonfinite}

    def _push(self, loss: torch.Tensor, versions, lags: list, pull: bool = False,
              data_age: int = 0) -> tuple[Any, int, bool]:
        """The gradient of ``loss`` on the local copy, clipped, pushed to the shared parameters (whose ``versions``
        the copy was pulled at) unless it is not finite; with ``pull`` the latest parameters come back into the copy
        (one round trip where the parameters live in another process). Returns the copy's versions, the updates
        applied (0 or 1) and whether the gradient was finite. The lag recorded is the updates between the parameters
        that acted the data and those the gradient lands on: ``data_age`` (the copy's versions since the segment's
        start) plus the push's staleness."""
        self.local.zero_grad(set_to_none=True)
        loss.backward()
        norm = float(torch.nn.utils.clip_grad_norm_(self.local_params, self.cfg.max_grad_norm, foreach=True))
        if not (math.isfinite(norm) and math.isfinite(float(loss.detach()))):  # never reaches the shared model
            return (self.params.pull(self.local) if pull else versions), 0, False
        if pull:
            applied, _, staleness, versions = self.params.exchange(self.local, versions)
        else:
            applied, _, staleness = self.params.push(self.local, versions)
        lags.append(data_age + staleness)  # staleness: other workers' updates between this pull and push
        return versions, applied, True

    def _passes(self, b: dict[str, torch.Tensor], versions, lags: list) -> tuple[Any, int]:
        """PPO's passes on this worker's segment (asynchronous PPO, off by default): advantages, value targets and the
        old policy fixed from the copy the segment was acted with, then ``epochs`` passes of minibatches of single
        steps, each a gradient of the clipped surrogate on the latest shared parameters, pushed as the paper's one
        gradient per segment is. A segment holding a NaN or inf is not learned from; a segment counts once in
        ``nonfinite`` however many of its gradients were not finite (as a learner's batch does: the trainer stops a
        run on a streak of them)."""
        if not all_finite(b.values()):
            self.nonfinite += 1
            return versions, 0
        start = int(np.sum(versions))
        with torch.no_grad():
            old_logp, _, values, bootstrap = self.local.evaluate_unroll(b["obs"], b["actions"])
            adv, returns, valid = advantages_and_returns(b, values, bootstrap, self.cfg)
            steps = flat_steps(b, valid, old_logp=old_logp, advantages=adv, returns=returns)
        minibatches = list(step_minibatches(steps, self.cfg))
        applied, diverged = 0, False
        for i, mb in enumerate(minibatches):
            logp, entropy, value = self.local.evaluate(mb["obs"], mb["actions"])
            loss, _ = update_loss(logp, entropy, value, mb["returns"], mb["advantages"], mb["valid"], self.cfg,
                                  self.cfg.entropy_coef, None, model=self.local, ppo_clip=self.cfg.ppo_clip,
                                  old_logp=mb["old_logp"])
            versions, applied, finite = self._push(loss, versions, lags, pull=i < len(minibatches) - 1,
                                                   data_age=int(np.sum(versions)) - start)
            diverged |= not finite
        self.nonfinite += int(diverged)  # a segment counts once, however many of its gradients diverged
        return versions, applied

    def close(self) -> None:
        self.actor.close()
