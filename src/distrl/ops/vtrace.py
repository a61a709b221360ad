"""V-trace off-policy targets (IMPALA, Espeholt et al. 2018, arXiv:1802.01561, section 4.1)."""

from __future__ import annotations

from typing import NamedTuple

import torch

from distrl.ops._checks import check_lam, check_tensor, check_time_major
from distrl.ops.returns import backward_recursion, successor_values


class VTraceReturns(NamedTuple):
    """Each ``[T, B]``, row i about x_tm1 = x_i (the paper's s)."""

    vs: torch.Tensor  # value targets v_s of x_tm1
    pg_advantages: torch.Tensor  # rho_s (r_s + gamma v_{s+1} - V(x_s))
    q_advantages: torch.Tensor  # r_s + gamma v_{s+1} - V(x_s), without rho_s (APPO's surrogate weights it)


def vtrace(behaviour_logp_tm1: torch.Tensor, target_logp_tm1: torch.Tensor, r_t: torch.Tensor,
           discount_t: torch.Tensor, v_tm1: torch.Tensor, bootstrap_value: torch.Tensor, *,
           clip_rho: float | None = 1.0, clip_c: float | None = 1.0, clip_pg_rho: float | None = 1.0,
           lam: float | torch.Tensor = 1.0) -> VTraceReturns:
    """V-trace targets and policy-gradient advantages.

    Eq. 1 of the paper, written as the backward recursion of Remark 1:
        v_s - V(x_s) = delta_s V + gamma_s c_s (v_{s+1} - V(x_{s+1})),
        delta_s V    = rho_s (r_s + gamma_s V(x_{s+1}) - V(x_s)),
    with rho_s = min(clip_rho, pi/mu) and c_s = lam * min(clip_c, pi/mu). The policy-gradient
    advantage (section 4.2) is min(clip_pg_rho, pi/mu) (r_s + gamma_s v_{s+1} - V(x_s)); ``q_advantages`` is the
    bracket alone, for a loss that weights it by pi/mu itself (APPO's clipped surrogate).

    Shapes and times (as rlax): every argument ``[T, B]`` (time-major), row i the transition x_tm1 -> x_t with
    x_tm1 = x_i = the paper's x_s: ``*_logp_tm1`` = log mu(a_tm1|x_tm1) and log pi(a_tm1|x_tm1), ``v_tm1`` = V(x_tm1),
    ``r_t`` and ``discount_t`` = gamma (1 - done) received on arriving at x_t; ``bootstrap_value`` ``[B]`` = V(x_T).
    ``lam`` is a float or a ``[T, B]`` tensor (0 where a truncated episode should not pass traces on). No gradient
    flows through the outputs.
    """
    T, B = check_time_major(dict(behaviour_logp_tm1=behaviour_logp_tm1, target_logp_tm1=target_logp_tm1, r_t=r_t,
                                 discount_t=discount_t, v_tm1=v_tm1), "v_tm1")
    check_tensor("bootstrap_value", bootstrap_value, shape=(B,))
    lam = check_lam(lam, (T, B), v_tm1.dtype)
    with torch.no_grad():
        rho_tm1 = torch.exp(target_logp_tm1 - behaviour_logp_tm1)
        clipped_rho_tm1 = rho_tm1 if clip_rho is None else rho_tm1.clamp(max=clip_rho)
        c_tm1 = (rho_tm1 if clip_c is None else rho_tm1.clamp(max=clip_c)) * lam
        v_t = successor_values(v_tm1, bootstrap_value)
        delta_tm1 = clipped_rho_tm1 * (r_t + discount_t * v_t - v_tm1)
        vs_tm1 = backward_recursion(delta_tm1, discount_t * c_tm1) + v_tm1
        vs_t = successor_values(vs_tm1, bootstrap_value)
        pg_rho_tm1 = rho_tm1 if clip_pg_rho is None else rho_tm1.clamp(max=clip_pg_rho)
        q_advantage_tm1 = r_t + discount_t * vs_t - v_tm1
        pg_advantage_tm1 = pg_rho_tm1 * q_advantage_tm1
    return VTraceReturns(vs=vs_tm1, pg_advantages=pg_advantage_tm1, q_advantages=q_advantage_tm1)
