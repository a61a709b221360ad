"""The ES master: gathers one generation of worker results, rebuilds the gradient from noise indices and
returns, and takes one Adam step (Salimans et al. 2017, Algorithm 2).

Results computed from an older theta than the current one are dropped (and counted), as in the paper's
code: a perturbation's return says nothing about the gradient at a theta it was not added to. The
gradient is ``es_gradient`` (centered ranks over all 2n returns, mirrored sampling, eq. 2 and section 2.3);
Adam minimises ``-sigma * g + weight_decay * theta``: the paper's code adds its L2 coefficient to the rank-
weighted noise sum without the 1/sigma, so this is its ``l2coeff`` at the same strength (Adam itself is
blind to the gradient's overall scale). After the step, the observation sums the workers sent are
merged into the normaliser, which travels with the next weights.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from distrl.models import to_flat
from distrl.ops.es import NoiseTable, es_gradient


class EsLearner:
    def __init__(self, cfg, model, noise, result_bytes: int):
        self.cfg = cfg
        self.model = model
        self.trainable = model.trainable()
        self.dim = sum(p.numel() for p in self.trainable)
        self.noise = noise  # a ConstantHandle: this machine's copy of the table
        self.optimizer = torch.optim.Adam(self.trainable, lr=cfg.lr)
        self.version = 0  # one per generation
        self.result_bytes = result_bytes
        self.weights_bytes = 4 * sum(p.numel() for p in model.parameters())
        self.nonfinite = 0  # results dropped for a non-finite return or observation sum
        self.stale = 0  # results dropped because they were computed from an older theta
        self._reset()

    def _reset(self) -> None:
        self.indices, self.pos, self.neg, self.lengths = [], [], [], []
        self.obs = [np.zeros(self.model.obs_mean.numel()), np.zeros(self.model.obs_mean.numel()), 0.0]
        self.results = 0

    def set_hyperparameters(self, values: Mapping[str, float]) -> None:
        if "lr" in values:
            for group in self.optimizer.param_groups:
                group["lr"] = values["lr"]

    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float] | None:
        if int(batch["version"][0]) != self.version:
            self.stale += 1
            return None
        finite = all(np.isfinite(batch[k]).all() for k in ("returns_pos", "returns_neg", "obs_sum", "obs_sumsq"))
        if not finite:  # reported, so that a run of them stops the run like any learner's skipped updates
            self.nonfinite += 1
            return {"nonfinite_skipped": float(self.nonfinite), "lr": self.optimizer.param_groups[0]["lr"]}
        self.indices.append(batch["indices"].copy())
        self.pos.append(batch["returns_pos"].copy())
        self.neg.append(batch["returns_neg"].copy())
        self.lengths.append(batch["lengths"].copy())
        self.obs[0] += batch["obs_sum"].sum(0)
        self.obs[1] += batch["obs_sumsq"].sum(0)
        self.obs[2] += float(batch["obs_count"].sum())
        self.results += 1
        if sum(len(i) for i in self.indices) < self.cfg.population:
            return None
        return self._update()

    def _update(self) -> dict[str, float]:
        cfg = self.cfg
        indices, pos, neg = np.concatenate(self.indices), np.concatenate(self.pos), np.concatenate(self.neg)
        table = NoiseTable.of(self.noise.get())
        g = torch.from_numpy(es_gradient(indices, pos, neg, table, self.dim, cfg.sigma))
        theta = torch.cat([p.detach().reshape(-1) for p in self.trainable])
        loss_grad = -cfg.sigma * g + cfg.weight_decay * theta  # Adam descends: the negated ascent plus L2
        offset = 0
        for p in self.trainable:
            p.grad = loss_grad[offset:offset + p.numel()].view_as(p).clone()
            offset += p.numel()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        new_theta = torch.cat([p.detach().reshape(-1) for p in self.trainable])
        if self.cfg.obs_norm:
            self.model.merge_obs_stats(*self.obs)
        self.version += 1
        steps = int(np.concatenate(self.lengths).sum())
        moved_up = self.results * self.result_bytes
        moved_down = self.results * self.weights_bytes  # each result's worker pulled this generation's weights
        metrics = {
            "return_mean": float(np.concatenate([pos, neg]).mean()),
            "return_max": float(max(pos.max(), neg.max())),
            "grad_norm": float(g.norm()),
            "update_ratio": float((new_theta - theta).norm() / max(float(theta.norm()), 1e-8)),
            "pairs": float(len(indices)),
            "stale_dropped": float(self.stale),
            "nonfinite_skipped": float(self.nonfinite),
            "bytes_up_per_generation": float(moved_up),
            "bytes_down_per_generation": float(moved_down),
            "bytes_per_env_step": (moved_up + moved_down) / max(steps, 1),
            "lr": self.optimizer.param_groups[0]["lr"],
        }
        self._reset()
        return metrics

    def get_weights(self) -> np.ndarray:
        return to_flat(self.model.parameters())

    def checkpoint_parts(self):
        return {"model": self.model}, {"optimizer": self.optimizer}

    def counters(self) -> dict:
        return {"version": self.version, "nonfinite_skipped": self.nonfinite, "stale_dropped": self.stale}

    def load_counters(self, c: dict) -> None:
        self.version = c.get("version", 0)
        self.nonfinite = c.get("nonfinite_skipped", 0)
        self.stale = c.get("stale_dropped", 0)
