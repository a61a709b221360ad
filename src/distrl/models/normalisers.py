"""Running normalisers the actor-critic networks carry: observations (running moments) and values (PopArt).

Both keep what the actors need as parameters no gradient touches (``requires_grad=False``): they are part of
the flat weights, so every actor, SEED's inference server and ``distrl eval`` normalise with the statistics
the learner last published. The statistics they come from are buffers: checkpointed, never sent. Only the
learner updates them, from its batches, and a hook (``reduce``) lets data-parallel learners sum their
shards' moments first, so every rank applies the same update and their weights stay equal.

- :class:`ObsNormaliser`: mean and standard deviation of every observation seen by the learner (all-time
  totals, as Gymnasium's ``NormalizeObservation`` and SB3's ``VecNormalize``), the result clipped to
  [-5, 5] as in Salimans et al. 2017 and the PPO implementations.
- :class:`PopArt`: van Hasselt et al. 2016 (arXiv:1602.07714), Adaptive Target normalisation that Preserves
  Outputs Precisely, as Hessel et al. 2019 (arXiv:1809.04474) use it with IMPALA: the value head predicts
  normalised values; the targets' first and second moments are exponential moving averages, and each time
  they move the head's last layer is rescaled (Algorithm 1: w' = w σ/σ', b' = (σ b + μ - μ')/σ') so the
  unnormalised values do not change. The value loss is then on a unit scale whatever the rewards' scale,
  and the policy-gradient advantages are divided by σ (Hessel et al., section 3), so one learning rate and
  one entropy cost suit rewards of any size.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

Reduce = Callable[[torch.Tensor], torch.Tensor]

OBS_CLIP = 5.0
STD_FLOOR = 1e-4  # a constant feature (a flag that never changes) divides by this, not by zero


def _identity(t: torch.Tensor) -> torch.Tensor:
    return t


class ObsNormaliser(nn.Module):
    def __init__(self, shape: tuple[int, ...]):
        super().__init__()
        self.mean = nn.Parameter(torch.zeros(shape), requires_grad=False)
        self.std = nn.Parameter(torch.ones(shape), requires_grad=False)
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))
        self.register_buffer("total", torch.zeros(shape, dtype=torch.float64))
        self.register_buffer("total_sq", torch.zeros(shape, dtype=torch.float64))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return ((obs.float() - self.mean) / self.std).clamp(-OBS_CLIP, OBS_CLIP)

    @torch.no_grad()
    def update(self, obs: torch.Tensor, valid: torch.Tensor | None = None, reduce: Reduce = _identity) -> None:
        """Add a batch of observations (``[..., *shape]``; ``valid`` masks the leading dims' entries to count)."""
        x = obs.reshape(-1, *self.mean.shape).double()
        w = (
            torch.ones(x.shape[0], dtype=torch.float64, device=x.device)
            if valid is None
            else valid.reshape(-1).double()
        )
        wx = w.view(-1, *([1] * (x.dim() - 1))) * x
        n = self.mean.numel()
        sums = reduce(torch.cat([w.sum().view(1), wx.sum(0).reshape(-1), (wx * x).sum(0).reshape(-1)]))
        # a batch holding a NaN or inf adds nothing (the learner skips its update too); masked on the device,
        # not tested on the host, so this costs no synchronisation
        sums = torch.where(torch.isfinite(sums).all(), sums, torch.zeros_like(sums))
        self.count += sums[0]
        self.total += sums[1:1 + n].view_as(self.total)
        self.total_sq += sums[1 + n:].view_as(self.total_sq)
        count = self.count.clamp(min=1.0)
        mean = self.total / count
        var = (self.total_sq / count - mean.square()).clamp(min=0.0)
        self.mean.copy_(mean.float())
        self.std.copy_(var.sqrt().clamp(min=STD_FLOOR).float())


class PopArt(nn.Module):
    """The value head's output scale; :meth:`update` rescales the head it is given (the value head's last linear
    layer, one output), which stays the network's own module (not registered twice)."""

    def __init__(self, decay: float = 0.01):
        super().__init__()
        self.decay = decay
        self.mu = nn.Parameter(torch.zeros(()), requires_grad=False)
        self.sigma = nn.Parameter(torch.ones(()), requires_grad=False)
        # the moving averages, debiased as Adam's moments are (Kingma & Ba 2015, section 3), so the first
        # updates take the targets' scale at once instead of starting from mu = 0, sigma = 1
        self.register_buffer("first", torch.zeros((), dtype=torch.float64))
        self.register_buffer("second", torch.zeros((), dtype=torch.float64))
        self.register_buffer("weight_sum", torch.zeros((), dtype=torch.float64))

    def unnormalise(self, normalised: torch.Tensor) -> torch.Tensor:
        return normalised * self.sigma + self.mu

    def normalise(self, values: torch.Tensor) -> torch.Tensor:
        return (values - self.mu) / self.sigma

    @torch.no_grad()
    def update(self, head: nn.Linear, targets: torch.Tensor, valid: torch.Tensor | None = None,
               reduce: Reduce = _identity) -> None:
        """Move the moments toward the batch's targets and rescale the head so its unnormalised outputs stay."""
        w = torch.ones_like(targets, dtype=torch.float64) if valid is None else valid.double()
        t = targets.double()
        sums = reduce(torch.stack([w.sum(), (w * t).sum(), (w * t * t).sum()]))
        # no valid target (or a non-finite one): the moments stay; decided on the device, no synchronisation
        beta = torch.where((sums[0] > 0) & torch.isfinite(sums).all(), self.decay, 0.0)
        n = sums[0].clamp(min=1.0)
        self.first.mul_(1 - beta).add_(beta * sums[1].nan_to_num(0.0, 0.0, 0.0) / n)
        self.second.mul_(1 - beta).add_(beta * sums[2].nan_to_num(0.0, 0.0, 0.0) / n)
        self.weight_sum.mul_(1 - beta).add_(beta)
        old_mu, old_sigma = self.mu.double(), self.sigma.double()
        seen = self.weight_sum > 0
        ws = self.weight_sum.clamp(min=1e-300)
        mu = torch.where(seen, self.first / ws, old_mu)
        sigma = torch.where(seen, (self.second / ws - mu.square()).clamp(min=STD_FLOOR ** 2).sqrt(), old_sigma)
        head.weight.mul_((old_sigma / sigma).float())
        head.bias.copy_(((old_sigma * head.bias.double() + old_mu - mu) / sigma).float())
        self.mu.copy_(mu.float())
        self.sigma.copy_(sigma.float())
