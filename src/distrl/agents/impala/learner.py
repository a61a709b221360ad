"""IMPALA learner: V-trace targets and the actor-critic loss of section 4.2."""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.common.learner_inputs import discounts_and_masks, to_tensors
from distrl.agents.common.optim import make_optimizer, scheduled_lr
from distrl.agents.impala.config import ImpalaConfig
from distrl.models import ActorCritic
from distrl.ops import baseline_loss, entropy_loss, policy_gradient_loss, vtrace


class ImpalaLearner:
    def __init__(self, cfg: ImpalaConfig, model: ActorCritic, total_steps: int):
        self.cfg = cfg
        self.model = model
        self.params = list(model.parameters())
        self.optimizer = make_optimizer(cfg.optimizer, self.params, cfg.lr)
        self.total_steps = total_steps
        self.samples = 0
        self.version = 0

    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        cfg = self.cfg
        b = to_tensors(batch)
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
        pg = policy_gradient_loss(target_logp, vt.pg_advantages, valid)
        vf = baseline_loss(values, vt.vs, valid)
        ent = entropy_loss(entropy, valid)
        loss = pg + cfg.baseline_coef * vf + cfg.entropy_coef * ent
        self.samples += int(valid.numel())
        lr = scheduled_lr(cfg.lr, cfg.lr_schedule, self.samples / self.total_steps)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.params, cfg.max_grad_norm, foreach=True)
        self.optimizer.step()
        self.version += 1
        with torch.no_grad():
            rho_mean = torch.exp(target_logp - b["behaviour_logp"]).clamp(max=10.0)[valid.bool()].mean().item()
        return {"loss_policy": pg.item(), "loss_value": vf.item(), "entropy": -ent.item(),
                "grad_norm": float(grad_norm), "lr": lr, "rho_mean": rho_mean}

    def get_weights(self) -> np.ndarray:
        return torch.nn.utils.parameters_to_vector(self.params).detach().numpy().copy()

    def checkpoint_parts(self):
        return {"model": self.model}, {"optimizer": self.optimizer}

    def counters(self) -> dict:
        return {"samples": self.samples, "version": self.version}

    def load_counters(self, c: dict) -> None:
        self.samples, self.version = c.get("samples", 0), c.get("version", 0)
