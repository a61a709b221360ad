"""RMSProp and Adam whose statistics live in shared memory, so every A3C worker (or GORILA learner)
updates the same ones.

A3C section 4 ("Optimization") found shared statistics more robust than per-thread ones. Written by
hand because torch's optimizers create their state lazily inside each process; here the state is made
once, moved to shared memory, and handed to the workers with the parameters. Updates are lock-free
(Hogwild, Recht et al. 2011): concurrent in-place adds may interleave, which the method tolerates.
"""

from __future__ import annotations

import torch


class _SharedStateOptimizer(torch.optim.Optimizer):
    """Creates every state tensor up front (a step count and zeros shaped like each parameter), so that
    :meth:`share_memory` can move them to shared memory before the workers start."""

    def __init__(self, params, defaults: dict, buffers: tuple[str, ...]):
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = torch.zeros(1)
                for name in buffers:
                    state[name] = torch.zeros_like(p.data)

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                for value in self.state[p].values():
                    value.share_memory_()
        return self


class SharedRMSprop(_SharedStateOptimizer):
    def __init__(self, params, lr: float = 1e-3, alpha: float = 0.99, eps: float = 1e-5):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps), ("square_avg",))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                state["step"] += 1
                square_avg = state["square_avg"]
                square_avg.mul_(group["alpha"]).addcmul_(p.grad, p.grad, value=1 - group["alpha"])
                p.addcdiv_(p.grad, square_avg.sqrt().add_(group["eps"]), value=-group["lr"])


class SharedAdam(_SharedStateOptimizer):
    """Adam (Kingma & Ba 2015, Algorithm 1) with its moments and step count in shared memory, for the same
    reason as :class:`SharedRMSprop`: every worker (or parameter-server shard user) updates one set."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps), ("exp_avg", "exp_avg_sq"))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                state["step"] += 1
                t = float(state["step"])
                state["exp_avg"].lerp_(p.grad, 1 - b1)
                state["exp_avg_sq"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                denom = (state["exp_avg_sq"] / (1 - b2 ** t)).sqrt_().add_(group["eps"])
                p.addcdiv_(state["exp_avg"], denom, value=-group["lr"] / (1 - b1 ** t))


def shared_optimizer(name: str, lr: float, eps: float, alpha: float = 0.99):
    """A picklable factory ``make(params)`` for a parameter server's shards: ``rmsprop`` or ``adam``."""
    from functools import partial

    if name == "adam":
        return partial(SharedAdam, lr=lr, eps=eps)
    return partial(SharedRMSprop, lr=lr, alpha=alpha, eps=eps)
