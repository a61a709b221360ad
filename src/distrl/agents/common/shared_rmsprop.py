"""RMSProp whose statistics live in shared memory, so every A3C worker updates the same ones.

A3C section 4 ("Optimization") found shared statistics more robust than per-thread ones. Written by
hand because torch's RMSprop creates its state lazily inside each process; here the state is made
once, moved to shared memory, and handed to the workers with the parameters. Updates are lock-free
(Hogwild, Recht et al. 2011): concurrent in-place adds may interleave, which the method tolerates.
"""

from __future__ import annotations

import torch


class SharedRMSprop(torch.optim.Optimizer):
    def __init__(self, params, lr: float = 1e-3, alpha: float = 0.99, eps: float = 1e-5):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps))
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = torch.zeros(1)
                state["square_avg"] = torch.zeros_like(p.data)

    def share_memory(self) -> "SharedRMSprop":
        for group in self.param_groups:
            for p in group["params"]:
                for value in self.state[p].values():
                    value.share_memory_()
        return self

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
