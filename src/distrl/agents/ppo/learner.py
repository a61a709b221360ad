"""PPO learner (Schulman et al. 2017, section 5): A2C's advantages and value targets, taken once per batch from the
weights at its start, then ``epochs`` passes of minibatches of single steps (``agents/common/passes.py``), each an
update with the clipped surrogate (eq. 7) against the policy the batch was acted with."""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.a2c.learner import advantages_and_returns, update_loss
from distrl.agents.common.passes import PassesLearner, flat_steps


class PPOLearner(PassesLearner):
    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        return self.ppo_passes(self.batch_tensors(batch), self._fixed_targets, self._minibatch_update)

    def _fixed_targets(self, b: dict[str, torch.Tensor]):
        old_logp, _, values, bootstrap = self.model.evaluate_unroll(b["obs"], b["actions"])
        adv, returns, valid = advantages_and_returns(b, values, bootstrap, self.cfg)
        return flat_steps(b, valid, old_logp=old_logp, advantages=adv, returns=returns), returns

    def _minibatch_update(self, mb: dict[str, torch.Tensor]) -> dict[str, float]:
        logp, entropy, value = self.model.evaluate(mb["obs"], mb["actions"])
        loss, terms = update_loss(logp, entropy, value, mb["returns"], mb["advantages"], mb["valid"], self.cfg,
                                  self.hyper.get("entropy_coef", self.cfg.entropy_coef), self.reduce_sums,
                                  model=self.model, ppo_clip=self.cfg.ppo_clip, old_logp=mb["old_logp"])
        return self.apply(loss, terms)
