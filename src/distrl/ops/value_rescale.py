"""Invertible value rescaling h(x) (Pohlen et al. 2018, arXiv:1805.11593; used by R2D2 section 2)."""

from __future__ import annotations

import torch

from distrl.ops.returns import double_q_target, n_step_returns


def value_rescale(x: torch.Tensor, eps: float = 1e-3) -> torch.Tensor:
    """h(x) = sign(x) (sqrt(|x| + 1) - 1) + eps x."""
    return torch.sign(x) * (torch.sqrt(torch.abs(x) + 1.0) - 1.0) + eps * x


def value_rescale_inv(x: torch.Tensor, eps: float = 1e-3) -> torch.Tensor:
    """h^-1(x) = sign(x) (((sqrt(1 + 4 eps (|x| + 1 + eps)) - 1) / (2 eps))^2 - 1)  (Pohlen et al. prop. A.2).

    The inner quotient is computed as 2a / (1 + sqrt(1 + 4 eps a)), a = |x| + 1 + eps (the same value, the numerator
    rationalised): the form above cancels catastrophically for small eps (0 divides by zero; 1e-12 is off by 3e-4),
    this one holds for every eps >= 0 (eps = 0 gives sign(x) ((|x| + 1)^2 - 1)). In float64 internally.
    """
    x64 = x.to(torch.float64)
    a = torch.abs(x64) + 1.0 + eps
    inner = 2.0 * a / (1.0 + torch.sqrt(1.0 + 4.0 * eps * a))
    return (torch.sign(x64) * (inner * inner - 1.0)).to(x.dtype)


def transformed_n_step_q_target(r_t: torch.Tensor, discount_t: torch.Tensor, v_t: torch.Tensor,
                                n: int, eps: float = 1e-3) -> torch.Tensor:
    """R2D2's target of x_tm1: h( n-step return bootstrapped from h^-1(Q_target(x_t, a*)) ), ``[T, B]``.

    All ``[T, B]``, rows as :func:`distrl.ops.n_step_returns`: ``v_t[i]`` is the target network's rescaled value of
    x_t = x_{i+1} at the online argmax a*.
    """
    return value_rescale(n_step_returns(r_t, discount_t, value_rescale_inv(v_t, eps), n), eps)


def transformed_double_q_target(r_t: torch.Tensor, discount_t: torch.Tensor, q_t_online: torch.Tensor,
                                q_t_target: torch.Tensor, eps: float = 1e-3) -> torch.Tensor:
    """The transformed Bellman operator's double-Q target for (n-step) transitions x_tm1 -> x_t, on Q tables kept in
    h-space: ``h(r_t + discount_t * h^-1(Q_target(x_t, argmax_a Q_online(x_t, a))))`` (Pohlen et al. 2018). h is
    monotonic, so the argmax within the target is the one the untransformed values would give; what h changes is the
    scale the network regresses on (a discount near 1 makes returns of hundreds, h brings them to tens). The operator's
    fixed point is h of the optimal values only where transitions are deterministic. Shapes as
    :func:`distrl.ops.double_q_target`."""
    return value_rescale(double_q_target(r_t, discount_t, q_t_online, value_rescale_inv(q_t_target, eps)), eps)


def advantage_learning_target(target_tm1: torch.Tensor, q_tm1_target: torch.Tensor, a_tm1: torch.Tensor,
                              alpha: float, eps: float = 1e-3) -> torch.Tensor:
    """The advantage-learning operator on a rescaled target (Baird 1999; Bellemare et al., "Increasing the Action Gap",
    AAAI 2016, who prove it optimality-preserving and gap-increasing for 0 <= alpha < 1 and use the target network's Q):
    T_AL Q(x, a) = T Q(x, a) - alpha (max_b Q(x, b) - Q(x, a)), here h(h^-1(target) - alpha (h^-1(max_b q(x, b)) -
    h^-1(q(x, a)))), the gap taken in the untransformed values.

    Taking the same fraction of the action gap off every action the policy does not prefer widens the gaps the greedy
    policy reads while keeping the optimal policy: where the gap is a small fraction of the values (a cart's slow drift
    against hundreds of steps of balancing) the greedy policy flips less with the approximation error of one update.
    ``target_tm1`` ``[T, B]`` the rescaled targets of x_tm1, ``q_tm1_target`` ``[T, B, A]`` the target network's
    rescaled values of x_tm1, ``a_tm1`` ``[T, B]`` the actions taken there; alpha 0 returns ``target_tm1``.
    """
    if alpha == 0.0:
        return target_tm1
    raw_q_tm1 = value_rescale_inv(q_tm1_target, eps)
    gap_tm1 = raw_q_tm1.max(-1).values - raw_q_tm1.gather(-1, a_tm1.unsqueeze(-1)).squeeze(-1)
    return value_rescale(value_rescale_inv(target_tm1, eps) - alpha * gap_tm1, eps)
