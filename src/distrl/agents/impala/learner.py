"""IMPALA learner: one update per batch with V-trace's targets and the actor-critic loss of section 4.2 (APPO's
learner, ``agents/appo/learner.py``, adds PPO's clipped surrogate and passes)."""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.common.actor_critic import actor_critic_loss
from distrl.agents.common.gradient_learner import GradientLearner
from distrl.agents.common.learner_inputs import discounts_and_masks
from distrl.agents.common.normalising import track_statistics
from distrl.ops import vtrace


class ImpalaLearner(GradientLearner):
    ppo_clip = 0.0  # the paper's importance-weighted policy gradient; APPO's learner sets its clip

    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        b = self.batch_tensors(batch)
        applied, vs = self._update(b)
        return track_statistics(self.model, b["obs"], vs, b["valid"].float(), applied, self.reduce_sums)

    def _vtrace(self, b: dict[str, torch.Tensor], target_logp, values, bootstrap):
        """V-trace over ``b`` (time-major) with the given forward's outputs: the targets, the policy-gradient
        advantages and the valid mask."""
        cfg = self.cfg
        discounts, trace, valid = discounts_and_masks(b, cfg.gamma)
        rewards = b["rewards"]
        if cfg.reward_clip is not None:
            rewards = rewards.clamp(-cfg.reward_clip, cfg.reward_clip)
        # On the env's reset step (valid = 0) the importance weight is set to 0, which makes that
        # step's V-trace delta and trace vanish: v_s = V(x_s) there, so a truncated episode's last
        # real step bootstraps from V(final observation) and nothing leaks across the boundary.
        behaviour_logp = torch.where(valid.bool(), b["behaviour_logp"], torch.full_like(values, float("inf")))
        vt = vtrace(behaviour_logp, target_logp.detach(), rewards, discounts, values.detach(), bootstrap.detach(),
                    clip_rho=cfg.clip_rho, clip_c=cfg.clip_c, clip_pg_rho=cfg.clip_pg_rho,
                    lam=cfg.vtrace_lambda * trace)
        # APPO's surrogate weights the advantage by pi/mu itself (clipped to a band), so it takes V-trace's without rho
        return vt, (vt.q_advantages * valid if self.ppo_clip else vt.pg_advantages), valid

    def _loss_and_apply(self, b, target_logp, entropy, values, targets, pg_advantages, valid) -> dict[str, float]:
        """The actor-critic loss on one batch or minibatch (any shape, ``valid`` masking it) and its update."""
        cfg = self.cfg
        loss, terms = actor_critic_loss(self.model, target_logp, entropy, values, targets, pg_advantages, valid,
                                        standardise=cfg.normalize_advantages, value_coef=cfg.baseline_coef,
                                        entropy_coef=self.hyper.get("entropy_coef", cfg.entropy_coef),
                                        reduce=self.reduce_sums, ppo_clip=self.ppo_clip, old_logp=b["behaviour_logp"])
        with torch.no_grad():
            rho = torch.exp(target_logp - b["behaviour_logp"]).clamp(max=10.0)
            # masked, not indexed (boolean indexing waits for the device)
            rho_mean = torch.where(valid.bool(), rho, 0.0).sum() / valid.sum().clamp(min=1.0)
        return self.apply(loss, {**terms, "rho_mean": rho_mean})

    def _update(self, b: dict[str, torch.Tensor]) -> tuple[dict[str, float], torch.Tensor]:
        """One loss and optimizer step on ``b``: (what ``apply`` reports, the V-trace value targets)."""
        target_logp, entropy, values, bootstrap = self.model.evaluate_unroll(b["obs"], b["actions"])
        vt, pg_advantages, valid = self._vtrace(b, target_logp, values, bootstrap)
        return self._loss_and_apply(b, target_logp, entropy, values, vt.vs, pg_advantages, valid), vt.vs
