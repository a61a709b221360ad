"""APPO learner: IMPALA's V-trace targets (``agents/impala/learner.py``) with PPO's clipped surrogate against the
behaviour policy over ``epochs`` passes of ``minibatches`` each: by default PPO's minibatches of single steps, the
targets and advantages taken once from the weights at the batch's start; or whole env streams, V-trace recomputed
for each (Sample Factory's)."""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.common.learner_inputs import env_stream_slices
from distrl.agents.common.passes import PassesLearner, flat_steps
from distrl.agents.common.settings import minibatch_count
from distrl.agents.impala.learner import ImpalaLearner


class APPOLearner(ImpalaLearner, PassesLearner):
    @property
    def ppo_clip(self) -> float:
        return self.cfg.ppo_clip

    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        if self.cfg.epochs == 1 and self.cfg.minibatches <= 1 and self.cfg.minibatch_by == "stream":
            return super().step(batch)  # IMPALA's one update per batch (with the clip, if any)
        return self._passes(self.batch_tensors(batch))

    def _passes(self, b: dict[str, torch.Tensor]) -> dict[str, float]:
        """``epochs`` passes over ``minibatches`` of single steps (PPO's, ``passes.py``) or of whole env streams
        (V-trace recomputed for each), each an update and a weights version; a batch counts as one update for the
        non-finite bookkeeping (``PassesLearner``)."""
        if self.cfg.minibatch_by == "step":
            return self.ppo_passes(b, self._fixed_targets, self._minibatch_update)
        return self.guarded_passes(b, lambda: self._stream_passes(b))

    def _stream_passes(self, b: dict[str, torch.Tensor]) -> tuple[list[dict[str, float]], torch.Tensor]:
        """``epochs`` passes over minibatches of whole env streams; the last pass's V-trace targets, in order."""
        parts = env_stream_slices(b, minibatch_count(self.cfg, b["rewards"].numel()))
        for _ in range(self.cfg.epochs - 1):
            for part in parts:
                self._update(part)
        applied, targets = zip(*(self._update(part) for part in parts))
        return list(applied), torch.cat(targets, dim=1)

    def _fixed_targets(self, b: dict[str, torch.Tensor]):
        """The batch's single steps with their V-trace targets and advantages, and the targets."""
        target_logp, _, values, bootstrap = self.model.evaluate_unroll(b["obs"], b["actions"])
        vt, advantages, valid = self._vtrace(b, target_logp, values, bootstrap)
        return flat_steps(b, valid, behaviour_logp=b["behaviour_logp"], advantages=advantages, vs=vt.vs), vt.vs

    def _minibatch_update(self, mb: dict[str, torch.Tensor]) -> dict[str, float]:
        logp, entropy, value = self.model.evaluate(mb["obs"], mb["actions"])
        return self._loss_and_apply(mb, logp, entropy, value, mb["vs"], mb["advantages"], mb["valid"])
