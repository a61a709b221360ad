"""QT-Opt's trainer: regresses Q(s, a) on the targets the Bellman updaters wrote, and keeps the target networks.

It never runs CEM: the max over actions is the updaters' work (``updater.py``). Per update it samples the
training buffer uniformly, takes one Huber-loss step on Q(s, a) - y, Polyak-averages the first target network
and, every ``target_lag_updates`` updates, copies the online network into the lagged one. The three networks
are one module (``networks.py``), published as one weight vector: updaters read the targets from it.
Target staleness (this version minus the version whose target networks made y) is a learner metric: per
metrics row, and its session mean in ``summary.json`` (the program's ``summary_metrics``).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from distrl.agents.common.optim import polyak_
from distrl.agents.common.replay_learner import ReplayLearner
from distrl.models import to_flat
from distrl.replay import SampledBatch


class QTOptLearner(ReplayLearner):
    def __init__(self, cfg, nets, targets):
        self.nets = nets
        self.q = nets.online
        self.online_params = list(self.q.parameters())
        self.optimizer = torch.optim.Adam(self.online_params, lr=cfg.lr, foreach=True)
        super().__init__(cfg, targets, {"lr": self.optimizer})
        self.staleness: list[float] = []  # per update, since the last learner step

    def update(self, batch: SampledBatch) -> tuple[float | None, None]:
        t = self.tensors(batch)
        loss = F.huber_loss(self.q.q(t["obs"], t["action"]), t["target"])
        if not self.finite_step(loss, self.online_params, self.optimizer):
            return None, None
        polyak_(self.nets.polyak, self.online_params, self.cfg.target_tau)
        if (self.updates + 1) % self.cfg.target_lag_updates == 0:
            with torch.no_grad():
                torch._foreach_copy_(list(self.nets.lagged.parameters()), self.online_params)
        self.staleness.append(float(self.version - batch.items["version"].mean()))
        return float(loss.detach()), None

    def step(self, batch=None):
        out = super().step(batch)
        if out is not None and self.staleness:
            out["target_staleness"] = float(np.mean(self.staleness))
            self.staleness.clear()
        return out

    def get_weights(self) -> np.ndarray:
        return to_flat(self.nets.parameters())

    def checkpoint_parts(self):
        return {"model": self.nets}, {"optimizer": self.optimizer}
