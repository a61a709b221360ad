"""QT-Opt's trainer: regresses Q(s, a) on the targets the Bellman updaters wrote, and keeps the target networks.

It never runs CEM: the max over actions is the updaters' work (``updater.py``). Per update it samples the
training buffer uniformly, takes one Huber-loss step on Q(s, a) - y, Polyak-averages the first target network
and, every ``target_lag_updates`` updates, copies the online network into the lagged one. The three networks
are one module (``networks.py``), published as one weight vector: updaters read the targets from it.
Target staleness (this version minus the version whose target networks made y) is a learner metric: per
metrics row, and its session mean in ``summary.json`` (the program's ``summary_metrics``).

With ``conservative_weight`` (alpha) above 0 the loss adds CQL(H)'s term (Kumar et al. 2020, arXiv:2006.04779,
eq. 4), alpha * (log (1/N) sum_j exp Q(s, a_j) - Q(s, a)), the N a_j drawn uniformly in the action box (CQL's
uniform-proposal estimate of the log-partition; its constants, the log-volume and log N, leave the gradient as
it is). Trained from a fixed dataset, plain regression leaves Q wrong and often high on actions no transition
took, and CEM finds exactly those; the term pushes the soft maximum over all actions towards the data's actions.
It needs no CEM in the trainer, which stays a regression. ``conservative_gap`` (per metrics row) is the term's mean
before alpha: how far Q's soft maximum stands above the data's actions (0 for a Q flat in the action); ``loss``
is then the Huber loss plus alpha times it, what the step minimises.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from distrl.agents.common.optim import polyak_
from distrl.agents.common.replay_learner import ReplayLearner
from distrl.models import flat_tensor
from distrl.replay import SampledBatch


class QTOptLearner(ReplayLearner):
    def __init__(self, cfg, nets, targets):
        self.nets = nets
        self.q = nets.online
        self.online_params = list(self.q.parameters())
        self.optimizer = torch.optim.Adam(self.online_params, lr=cfg.lr, foreach=True)
        super().__init__(cfg, targets, {"lr": self.optimizer})
        self.staleness: list[float] = []  # per update, since the last learner step
        self.gaps: list[torch.Tensor] = []  # the conservative term per update, read once per learner step
        self.conservative_weight = cfg.conservative_weight or 0.0  # (the builder resolves None; unresolved: off)

    def update(self, batch: SampledBatch) -> tuple[float | None, None]:
        t = self.tensors(batch)
        q = self.q.q(t["obs"], t["action"])
        loss = F.huber_loss(q, t["target"])
        gap = self.conservative_gap(t["obs"], q) if self.conservative_weight > 0 else None
        if gap is not None:
            loss = loss + self.conservative_weight * gap
        if not self.finite_step(loss, self.online_params, self.optimizer):
            return None, None
        if gap is not None:
            self.gaps.append(gap.detach())
        polyak_(self.nets.polyak, self.online_params, self.cfg.target_tau)
        if (self.updates + 1) % self.cfg.target_lag_updates == 0:
            with torch.no_grad():
                torch._foreach_copy_(list(self.nets.lagged.parameters()), self.online_params)
        self.staleness.append(float(self.version - batch.items["version"].mean()))
        return float(loss.detach()), None

    def conservative_gap(self, obs: torch.Tensor, q_data: torch.Tensor) -> torch.Tensor:
        """Mean over the batch of log (1/N) sum_j exp Q(s, a_j) - Q(s, a), a_j uniform in the action box: a
        log-mean-exp, so a Q flat in the action gives 0 (the 1/N, like the box's volume, leaves the gradient
        as it is)."""
        low, high = self.q.low, self.q.high
        n = self.cfg.conservative_samples
        u = torch.rand((obs.shape[0], n, low.shape[0]), device=obs.device)
        q_sampled = self.q.q(obs, low + (high - low) * u)
        return (torch.logsumexp(q_sampled, dim=1) - math.log(n) - q_data).mean()

    def step(self, batch=None):
        out = super().step(batch)
        if out is not None and self.staleness:
            out["target_staleness"] = float(np.mean(self.staleness))
            self.staleness.clear()
        if out is not None and self.gaps:
            out["conservative_gap"] = float(torch.stack(self.gaps).mean())
            self.gaps.clear()
        return out

    def device_weights(self) -> torch.Tensor:
        return flat_tensor(self.nets.parameters())

    def checkpoint_parts(self):
        return {"model": self.nets}, {"optimizer": self.optimizer}
