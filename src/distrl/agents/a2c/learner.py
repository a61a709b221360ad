"""A2C learner: GAE or n-step advantages, policy gradient + baseline + entropy (A3C eq. 9)."""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.a2c.config import A2CConfig
from distrl.agents.common.learner_inputs import discounts_and_masks, to_tensors
from distrl.agents.common.optim import make_optimizer, scheduled_lr
from distrl.models import ActorCritic
from distrl.ops import baseline_loss, entropy_loss, gae, policy_gradient_loss


def a2c_loss(model: ActorCritic, batch: dict[str, np.ndarray], cfg) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """A3C eq. 9 on a time-major unroll: policy gradient with GAE or n-step advantages, a value
    baseline and an entropy bonus. Shared by A2C (one learner) and A3C (every worker)."""
    b = to_tensors(batch)
    logp, entropy, values, bootstrap = model.evaluate_unroll(b["obs"], b["actions"])
    discounts, trace, valid = discounts_and_masks(b, cfg.gamma)
    lam = cfg.gae_lambda if cfg.advantage == "gae" else 1.0
    adv = gae(b["rewards"], discounts, values.detach(), bootstrap.detach(), lam=lam * trace)
    returns = adv + values.detach()
    if cfg.normalize_advantages:
        n = valid.sum().clamp(min=1.0)
        mean = (adv * valid).sum() / n
        std = (((adv - mean) ** 2 * valid).sum() / n).sqrt()
        adv = (adv - mean) / (std + 1e-8)
    pg = policy_gradient_loss(logp, adv, valid)
    vf = baseline_loss(values, returns, valid)
    ent = entropy_loss(entropy, valid)
    loss = pg + cfg.value_coef * vf + cfg.entropy_coef * ent
    return loss, {"loss_policy": pg, "loss_value": vf, "entropy": -ent, "samples": valid.numel()}


class A2CLearner:
    def __init__(self, cfg: A2CConfig, model: ActorCritic, total_steps: int):
        self.cfg = cfg
        self.model = model
        self.params = list(model.parameters())
        self.optimizer = make_optimizer(cfg.optimizer, self.params, cfg.lr)
        self.total_steps = total_steps
        self.samples = 0
        self.version = 0

    def step(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        cfg = self.cfg
        loss, terms = a2c_loss(self.model, batch, cfg)
        self.samples += int(terms.pop("samples"))
        lr = scheduled_lr(cfg.lr, cfg.lr_schedule, self.samples / self.total_steps)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.params, cfg.max_grad_norm, foreach=True)
        self.optimizer.step()
        self.version += 1
        return {**{k: float(v) for k, v in terms.items()}, "grad_norm": float(grad_norm), "lr": lr}

    def get_weights(self) -> np.ndarray:
        return torch.nn.utils.parameters_to_vector(self.params).detach().numpy().copy()

    def checkpoint_parts(self):
        return {"model": self.model}, {"optimizer": self.optimizer}

    def counters(self) -> dict:
        return {"samples": self.samples, "version": self.version}

    def load_counters(self, c: dict) -> None:
        self.samples, self.version = c.get("samples", 0), c.get("version", 0)
