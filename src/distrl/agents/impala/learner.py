"""IMPALA learner: V-trace targets and the actor-critic loss of section 4.2; with ``ppo_clip`` (the default), APPO's
clipped surrogate over ``epochs`` passes of ``minibatches`` each (by default PPO's: minibatches of single steps)."""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.common.gradient_learner import GradientLearner
from distrl.agents.common.learner_inputs import discounts_and_masks, env_stream_slices
from distrl.agents.common.normalising import track_statistics, value_terms
from distrl.agents.impala.config import minibatch_count
from distrl.ops import (
    clipped_surrogate_loss,
    entropy_loss,
    policy_gradient_loss,
    vtrace,
)


class ImpalaLearner(GradientLearner):
    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        b = self.batch_tensors(batch)
        if self.cfg.epochs == 1 and self.cfg.minibatches <= 1 and self.cfg.minibatch_by == "stream":
            applied, vs = self._update(b)
            return track_statistics(self.model, b["obs"], vs, b["valid"].float(), applied, self.reduce_sums)
        return self._passes(b)

    def _passes(self, b: dict[str, torch.Tensor]) -> dict[str, float]:
        """APPO's ``epochs`` passes over ``minibatches`` of whole env streams (or of single steps, PPO's:
        ``_step_minibatches``), each an update and a weights version.
        A batch counts as one update for the non-finite bookkeeping, as a single-update batch does: one with a NaN
        or inf anywhere is skipped whole (checked over every rank's shard, so data-parallel ranks agree), and a
        batch with any update skipped for divergence adds one to ``nonfinite`` (the trainer stops a run on a streak
        of them). The normalisers' statistics move once, after the passes (``_after_passes``), so every update of the
        batch uses the statistics the actors acted with."""
        floats = [t for t in b.values() if t.is_floating_point()]
        bad = self.reduce_sums(torch.stack([(~torch.isfinite(t)).sum() for t in floats]).sum().float().reshape(1))
        if bad.item() > 0:
            self.nonfinite += 1
            return {"nonfinite_skipped": float(self.nonfinite), "lr": self.hyper["lr"]}
        before = self.nonfinite
        if self.cfg.minibatch_by == "step":
            return self._step_minibatches(b, before)
        parts = env_stream_slices(b, minibatch_count(self.cfg, b["rewards"].numel()))
        for _ in range(self.cfg.epochs - 1):
            for part in parts:
                self._update(part)
        applied, targets = zip(*(self._update(part) for part in parts))
        return self._after_passes(b, before, list(applied), torch.cat(targets, dim=1))

    def _after_passes(self, b: dict[str, torch.Tensor], before: int, applied: list[dict[str, float]],
                      targets: torch.Tensor) -> dict[str, float]:
        """What a batch of several updates reports (the last applied update's terms; one more non-finite skip if any
        update of the batch was skipped), and the statistics' one move: the whole batch, with ``targets`` (its last
        value targets, ``[T, B]``), if any update applied. The batch's data is finite (checked before the passes), so
        a skipped update was the model's divergence, not a reason to leave its steps out."""
        self.nonfinite = before + int(self.nonfinite > before)
        kept = [a for a in applied if "grad_norm" in a]
        out = {**(kept[-1] if kept else applied[-1]), "nonfinite_skipped": float(self.nonfinite)}
        return track_statistics(self.model, b["obs"], targets, b["valid"].float(), out, self.reduce_sums)

    def _step_minibatches(self, b: dict[str, torch.Tensor], before: int) -> dict[str, float]:
        """PPO's passes (Schulman et al. 2017, section 5): the V-trace targets and advantages are taken once, from the
        weights at the batch's start, and every pass draws its minibatches of single steps at random from the whole
        batch, so no minibatch is one env's run of correlated steps."""
        cfg = self.cfg
        with torch.no_grad():
            target_logp, _, values, bootstrap = self.model.evaluate_unroll(b["obs"], b["actions"])
            vt, advantages, valid = self._vtrace(b, target_logp, values, bootstrap)
        T, B = valid.shape
        steps = {"obs": b["obs"][:-1].reshape((T * B,) + b["obs"].shape[2:]),
                 "actions": b["actions"].reshape((T * B,) + b["actions"].shape[2:]),
                 "behaviour_logp": b["behaviour_logp"].reshape(-1), "advantages": advantages.reshape(-1),
                 "vs": vt.vs.reshape(-1), "valid": valid.reshape(-1)}
        cuts = np.linspace(0, T * B, minibatch_count(cfg, T * B) + 1).round().astype(int)
        applied = []
        for _ in range(cfg.epochs):
            order = torch.randperm(T * B, device=valid.device)
            shuffled = {k: v[order] for k, v in steps.items()}  # one gather per pass; the minibatches are views
            for lo, hi in zip(cuts[:-1], cuts[1:]):
                mb = {k: v[lo:hi] for k, v in shuffled.items()}
                logp, entropy, value = self.model.evaluate(mb["obs"], mb["actions"])
                applied.append(self._loss_and_apply(mb, logp, entropy, value, mb["vs"], mb["advantages"], mb["valid"]))
        return self._after_passes(b, before, applied, vt.vs)

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
        advantages, vf, norm_terms = value_terms(self.model, values, targets, pg_advantages, valid,
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
        return self.apply(loss, {"loss_policy": pg, "loss_value": vf, "entropy": -ent, "rho_mean": rho_mean,
                                 **norm_terms})

    def _update(self, b: dict[str, torch.Tensor]) -> tuple[dict[str, float], torch.Tensor]:
        """One loss and optimizer step on ``b``: (what ``apply`` reports, the V-trace value targets)."""
        target_logp, entropy, values, bootstrap = self.model.evaluate_unroll(b["obs"], b["actions"])
        vt, pg_advantages, valid = self._vtrace(b, target_logp, values, bootstrap)
        return self._loss_and_apply(b, target_logp, entropy, values, vt.vs, pg_advantages, valid), vt.vs
