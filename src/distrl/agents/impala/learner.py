"""IMPALA learner: V-trace targets and the actor-critic loss of section 4.2; with ``ppo_clip``, APPO's clipped
surrogate over ``epochs`` passes of ``minibatches`` each."""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.common.gradient_learner import GradientLearner
from distrl.agents.common.learner_inputs import discounts_and_masks, env_stream_slices
from distrl.agents.common.normalising import track_statistics, value_terms
from distrl.ops import (
    clipped_surrogate_loss,
    entropy_loss,
    policy_gradient_loss,
    vtrace,
)


class ImpalaLearner(GradientLearner):
    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        b = self.batch_tensors(batch)
        if self.cfg.epochs == 1 and self.cfg.minibatches == 1:
            return self._update(b)
        parts = env_stream_slices(b, self.cfg.minibatches)
        for _ in range(self.cfg.epochs - 1):
            for part in parts:
                self._update(part, track=False)
        for part in parts:  # the last pass: the running statistics take each of the batch's steps once
            stats = self._update(part)
        return stats

    def _update(self, b: dict[str, torch.Tensor], track: bool = True) -> dict[str, float]:
        cfg = self.cfg
        target_logp, entropy, values, bootstrap = self.model.evaluate_unroll(b["obs"], b["actions"])
        discounts, trace, valid = discounts_and_masks(b, cfg.gamma)
        rewards = b["rewards"]
        if cfg.reward_clip is not None:
            rewards = rewards.clamp(-cfg.reward_clip, cfg.reward_clip)
        # On the env's reset step (valid = 0) the importance weight is set to 0, which makes that
        # step's V-trace delta and trace vanish: v_s = V(x_s) there, so a truncated episode's last
        # real step bootstraps from V(final observation) and nothing leaks across the boundary.
        behaviour_logp = torch.where(valid.bool(), b["behaviour_logp"], torch.full_like(values, float("inf")))
        vt = vtrace(behaviour_logp, target_logp.detach(), rewards, discounts, values.detach(), bootstrap.detach(),
                    clip_rho=cfg.clip_rho, clip_c=cfg.clip_c, clip_pg_rho=cfg.clip_pg_rho, lam=cfg.vtrace_lambda * trace)
        pg_advantages = vt.pg_advantages
        if cfg.ppo_clip:
            # APPO's surrogate carries the importance weight itself (pi/mu, clipped to a band), so its advantage
            # is V-trace's q_s - V(x_s) without the truncated rho in front
            vs_tp1 = torch.cat([vt.vs[1:], bootstrap.detach().unsqueeze(0)], dim=0)
            pg_advantages = (rewards + discounts * vs_tp1 - values.detach()) * valid
        advantages, vf, norm_terms = value_terms(self.model, values, vt.vs, pg_advantages, valid,
                                                 cfg.normalize_advantages, self.reduce_sums)
        if cfg.ppo_clip:
            pg = clipped_surrogate_loss(target_logp, b["behaviour_logp"], advantages, cfg.ppo_clip, valid)
        else:
            pg = policy_gradient_loss(target_logp, advantages, valid)
        ent = entropy_loss(entropy, valid)
        loss = pg + cfg.baseline_coef * vf + self.hyper.get("entropy_coef", cfg.entropy_coef) * ent
        with torch.no_grad():
            rho = torch.exp(target_logp - b["behaviour_logp"]).clamp(max=10.0)
            # masked, not indexed (boolean indexing waits for the device)
            rho_mean = torch.where(valid.bool(), rho, 0.0).sum() / valid.sum().clamp(min=1.0)
        applied = self.apply(loss, {"loss_policy": pg, "loss_value": vf, "entropy": -ent, "rho_mean": rho_mean,
                                    **norm_terms})
        if not track:
            return applied
        return track_statistics(self.model, b["obs"], vt.vs, valid, applied, self.reduce_sums)
