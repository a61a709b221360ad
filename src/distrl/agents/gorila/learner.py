"""The learner inside a GORILA bundle (Nair et al. 2015, section 4): it samples the bundle's replay (or
the global one), computes a DQN gradient against its target network, and sends it to the parameter
server with the shard versions it was computed from; the reply brings the latest parameters back.
The target network is refreshed from those every ``target_update_period`` shard updates of all bundles (the sum of
the shards' versions, the learner's ``version``: a gradient every shard applies adds S)."""

from __future__ import annotations

import copy
import math

import numpy as np
import torch

from distrl.agents.common.dqn_loss import dqn_loss
from distrl.core.protocols import ParamServerHandle


class BundleLearner:
    def __init__(self, cfg, model, params: ParamServerHandle, replay):
        self.cfg, self.model, self.params, self.replay = cfg, model, params, replay
        self.target = copy.deepcopy(model)
        self.versions = params.pull(model)
        self.target.load_state_dict(model.state_dict())
        self.last_target_sync = int(np.sum(self.versions))
        self.nonfinite = 0  # gradients not sent because they were not finite
        self.losses: list[float] = []  # of the gradients sent since the bundle last reported (its loss column)
        self._in_flight = None  # the reply of the last send_many, where exchanges travel

    def take_losses(self) -> list[float]:
        """The losses of the gradients sent since the last call (the bundle's report takes them)."""
        losses, self.losses = self.losses, []
        return losses

    @property
    def version(self) -> int:
        return int(np.sum(self.versions))

    def gradients(self, n: int) -> tuple[int, int, list[float]]:
        """``n`` DQN gradients (Mnih et al. 2015 target, as GORILA; or double Q), each sent to the parameter
        server, whose reply carries its latest weights in the same round trip. Where an exchange travels
        (shard actors in other processes or on other machines), the ``n`` gradients are computed from the
        same weights and sent in one round trip that stays in flight until the next call (the bundle steps
        its envs meanwhile, acting with the weights it has): up to ``n - 1`` versions more staleness, and
        what others apply during one unroll, for ``n`` times fewer round trips and none waited for; the
        server's staleness limit still decides each gradient. Returns (shards applied, shards dropped, mean
        staleness of each exchange: what others applied in between) of the exchanges completed now."""
        if self.params.travels:
            applied, dropped, staleness = self.receive()
            grads = []
            for _ in range(n):
                if self._compute():
                    grads.append([p.grad.detach().clone() for p in self.model.parameters()])
            if grads:
                self._in_flight = self.params.send_many(self.model, grads, self.versions)
            return applied, dropped, staleness
        applied = dropped = 0
        staleness = []
        for _ in range(n):
            if not self._compute():
                continue
            a, d, s, self.versions = self.params.exchange(self.model, self.versions)
            applied, dropped, staleness = applied + a, dropped + d, staleness + [s]
        return applied, dropped, staleness

    def receive(self) -> tuple[int, int, list[float]]:
        """Wait for the exchange in flight, if any, and take the weights it brings back."""
        if self._in_flight is None:
            return 0, 0, []
        applied, dropped, staleness, self.versions = self._in_flight()
        self._in_flight = None
        return applied, dropped, [staleness]

    def _compute(self) -> bool:
        """One gradient into the model's ``.grad``; False (and nothing sent) if it is not finite."""
        cfg = self.cfg
        if self.version - self.last_target_sync >= cfg.target_update_period:
            self.target.load_state_dict(self.model.state_dict())
            self.last_target_sync = self.version
        batch = self.replay.sample(cfg.batch_size, beta=cfg.priority_beta) if cfg.prioritized else \
            self.replay.sample(cfg.batch_size)
        b = {k: torch.from_numpy(v) for k, v in batch.items.items()}
        loss, delta = dqn_loss(self.model, self.target, b, torch.from_numpy(batch.weights), double_q=cfg.double_q)
        self.model.zero_grad(set_to_none=True)
        loss.backward()
        norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.max_grad_norm, foreach=True))
        value = float(loss.detach())
        if not (math.isfinite(norm) and math.isfinite(value)):  # never reaches the parameter server
            self.nonfinite += 1
            return False
        self.losses.append(value)
        if cfg.prioritized:
            self.replay.update_priorities(batch.slots, delta.detach().abs().numpy())
        return True
