"""IMPALA learner: V-trace targets and the actor-critic loss of section 4.2; with ``ppo_clip`` (the default), APPO's
clipped surrogate over ``epochs`` passes of ``minibatches`` each (by default PPO's: minibatches of single steps)."""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.common.actor_critic import actor_critic_loss
from distrl.agents.common.learner_inputs import discounts_and_masks, env_stream_slices
from distrl.agents.common.normalising import track_statistics
from distrl.agents.common.passes import PassesLearner, flat_steps
from distrl.agents.common.settings import minibatch_count
from distrl.ops import vtrace


class ImpalaLearner(PassesLearner):
    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        b = self.batch_tensors(batch)
        if self.cfg.epochs == 1 and self.cfg.minibatches <= 1 and self.cfg.minibatch_by == "stream":
            applied, vs = self._update(b)
            return track_statistics(self.model, b["obs"], vs, b["valid"].float(), applied, self.reduce_sums)
        return self._passes(b)

    def _passes(self, b: dict[str, torch.Tensor]) -> dict[str, float]:
        """APPO's ``epochs`` passes over ``minibatches`` of single steps (PPO's, ``passes.py``: the V-trace targets and
        advantages taken once, from the weights at the batch's start) or of whole env streams (V-trace recomputed for
        each), each an update and a weights version; a batch counts as one update for the non-finite bookkeeping
        (``PassesLearner``)."""
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
        return vt, (vt.q_advantages * valid if cfg.ppo_clip else vt.pg_advantages), valid

    def _loss_and_apply(self, b, target_logp, entropy, values, targets, pg_advantages, valid) -> dict[str, float]:
        """The actor-critic loss on one batch or minibatch (any shape, ``valid`` masking it) and its update."""
        cfg = self.cfg
        loss, terms = actor_critic_loss(self.model, target_logp, entropy, values, targets, pg_advantages, valid,
                                        standardise=cfg.normalize_advantages, value_coef=cfg.baseline_coef,
                                        entropy_coef=self.hyper.get("entropy_coef", cfg.entropy_coef),
                                        reduce=self.reduce_sums, ppo_clip=cfg.ppo_clip, old_logp=b["behaviour_logp"])
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
