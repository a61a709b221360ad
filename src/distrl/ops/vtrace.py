"""V-trace off-policy targets (IMPALA, Espeholt et al. 2018, arXiv:1802.01561, section 4.1)."""

from __future__ import annotations

from typing import NamedTuple

import torch

from distrl.ops._checks import check_lam, check_tensor, check_time_major
from distrl.ops.returns import backward_recursion


class VTraceReturns(NamedTuple):
    vs: torch.Tensor  # [T, B] value targets v_s
    pg_advantages: torch.Tensor  # [T, B] rho_s (r_s + gamma v_{s+1} - V(x_s))
    q_advantages: torch.Tensor  # [T, B] r_s + gamma v_{s+1} - V(x_s), without rho_s (APPO's surrogate weights it)


def vtrace(behaviour_logp: torch.Tensor, target_logp: torch.Tensor, rewards: torch.Tensor,
           discounts: torch.Tensor, values: torch.Tensor, bootstrap_value: torch.Tensor, *,
           clip_rho: float | None = 1.0, clip_c: float | None = 1.0, clip_pg_rho: float | None = 1.0,
           lam: float | torch.Tensor = 1.0) -> VTraceReturns:
    """V-trace targets and policy-gradient advantages.

    Eq. 1 of the paper, written as the backward recursion of Remark 1:
        v_s - V(x_s) = delta_s V + gamma_s c_s (v_{s+1} - V(x_{s+1})),
        delta_s V    = rho_s (r_s + gamma_s V(x_{s+1}) - V(x_s)),
    with rho_s = min(clip_rho, pi/mu) and c_s = lam * min(clip_c, pi/mu). The policy-gradient
    advantage (section 4.2) is min(clip_pg_rho, pi/mu) (r_s + gamma_s v_{s+1} - V(x_s)); ``q_advantages`` is the
    bracket alone, for a loss that weights it by pi/mu itself (APPO's clipped surrogate).

    Shapes: every argument ``[T, B]`` (time-major) except ``bootstrap_value`` ``[B]`` = V(x_T).
    ``discounts`` is gamma * (1 - done). ``lam`` is a float or a ``[T, B]`` tensor (0 where a
    truncated episode should not pass traces on). No gradient flows through the outputs.
    """
    T, B = check_time_major(dict(behaviour_logp=behaviour_logp, target_logp=target_logp, rewards=rewards,
                                 discounts=discounts, values=values), "values")
    check_tensor("bootstrap_value", bootstrap_value, shape=(B,))
    lam = check_lam(lam, (T, B), values.dtype)
    with torch.no_grad():
        rhos = torch.exp(target_logp - behaviour_logp)
        clipped_rhos = rhos if clip_rho is None else rhos.clamp(max=clip_rho)
        cs = (rhos if clip_c is None else rhos.clamp(max=clip_c)) * lam
        values_tp1 = torch.cat([values[1:], bootstrap_value.unsqueeze(0)], dim=0)
        deltas = clipped_rhos * (rewards + discounts * values_tp1 - values)
        vs = backward_recursion(deltas, discounts * cs) + values
        vs_tp1 = torch.cat([vs[1:], bootstrap_value.unsqueeze(0)], dim=0)
        pg_rhos = rhos if clip_pg_rho is None else rhos.clamp(max=clip_pg_rho)
        q_advantages = rewards + discounts * vs_tp1 - values
        pg_advantages = pg_rhos * q_advantages
    return VTraceReturns(vs=vs, pg_advantages=pg_advantages, q_advantages=q_advantages)
