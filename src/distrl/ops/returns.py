"""Returns and bootstrap targets: GAE, lambda-returns, n-step returns, double-Q and DDPG targets.

Conventions (as in rlax): time-major ``[T, B]``; ``discounts[t]`` = gamma * (1 - done_t) for the
step x_t -> x_{t+1}; ``values[t]`` = V(x_t) and ``bootstrap_value`` = V(x_T). Targets are computed
without gradient.
"""

from __future__ import annotations

import torch

from distrl.ops._checks import check_float, check_lam, check_tensor, check_time_major


def backward_recursion(x_t: torch.Tensor, decay_t: torch.Tensor) -> torch.Tensor:
    """y_t = x_t + decay_t y_{t+1}, y_T = 0, over the time axis of ``[T, B]`` tensors: the backward pass GAE
    (eq. 16 of arXiv:1506.02438) and V-trace (eq. 1 of arXiv:1802.01561, as v_s - V(x_s)) share."""
    y = torch.empty_like(x_t)
    acc = torch.zeros_like(x_t[0])
    for t in range(x_t.shape[0] - 1, -1, -1):
        acc = x_t[t] + decay_t[t] * acc
        y[t] = acc
    return y


def gae(rewards: torch.Tensor, discounts: torch.Tensor, values: torch.Tensor, bootstrap_value: torch.Tensor,
        lam: float | torch.Tensor = 0.95) -> torch.Tensor:
    """Generalised advantage estimates (Schulman et al. 2016, arXiv:1506.02438 eq. 16).

    A_t = delta_t + gamma_t lam_t A_{t+1},  delta_t = r_t + gamma_t V(x_{t+1}) - V(x_t).
    ``lam`` is a float or ``[T, B]``; a zero cuts the trace (used at truncations, where the
    discount still bootstraps from the final observation). Returns ``[T, B]``.
    """
    T, B = check_time_major(dict(rewards=rewards, discounts=discounts, values=values), "values")
    check_tensor("bootstrap_value", bootstrap_value, shape=(B,))
    lam = check_lam(lam, (T, B), values.dtype)
    with torch.no_grad():
        values_tp1 = torch.cat([values[1:], bootstrap_value.unsqueeze(0)], dim=0)
        deltas = rewards + discounts * values_tp1 - values
        return backward_recursion(deltas, discounts * lam)


def lambda_returns(rewards: torch.Tensor, discounts: torch.Tensor, values: torch.Tensor,
                   bootstrap_value: torch.Tensor, lam: float | torch.Tensor = 0.95) -> torch.Tensor:
    """lambda-returns (Sutton & Barto eq. 12.18, recursive form):
    G_t = r_t + gamma_t [(1 - lam_t) V(x_{t+1}) + lam_t G_{t+1}],  G_T = V(x_T). Returns ``[T, B]``.
    Equal to ``gae(...) + values``."""
    return gae(rewards, discounts, values, bootstrap_value, lam) + values.detach()


def n_step_returns(rewards: torch.Tensor, discounts: torch.Tensor, values_tp1: torch.Tensor, n: int) -> torch.Tensor:
    """n-step bootstrapped returns (A3C eq. in section 3; Ape-X eq. 1 without the max).

    G_t = r_t + gamma_t r_{t+1} + ... + (prod gamma) r_{t+k-1} + (prod_{j<k} gamma_{t+j}) v_{t+k-1},
    k = min(n, T - t). ``values_tp1[t]`` is the bootstrap value of x_{t+1} (e.g. max_a Q(x_{t+1}, a)).
    A zero discount (episode end) inside the window stops both rewards and bootstrap there.
    Returns ``[T, B]``.
    """
    T, B = check_time_major(dict(rewards=rewards, discounts=discounts, values_tp1=values_tp1), "rewards")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    with torch.no_grad():
        t_idx = torch.arange(T, device=rewards.device)
        last = torch.clamp(t_idx + n - 1, max=T - 1)
        returns = values_tp1[last]
        for i in range(n - 1, -1, -1):
            src = t_idx + i
            valid = (src <= last).unsqueeze(1)
            src = torch.clamp(src, max=T - 1)
            returns = torch.where(valid, rewards[src] + discounts[src] * returns, returns)
    return returns


def trainable_steps(mask: torch.Tensor, discount: torch.Tensor, n: int, burn_in: int = 0,
                    starts: torch.Tensor | None = None) -> torch.Tensor:
    """``[T, B]``: the steps of padded sequences (real steps first, ``mask``) whose n-step target the sequence
    holds: the bootstrap x_{t+n} is one of its real steps, or an episode end (a zero discount) at or after t cuts
    the window first (R2D2's replayed sequences; the learner trains these alone and its priorities cover them),
    after the first ``burn_in`` steps unless the sequence starts its episode (``starts`` ``[B]``)."""
    T = mask.shape[0]
    real = mask.sum(0)  # real steps per sequence
    t = torch.arange(T, device=mask.device).unsqueeze(1)
    full_window = t + n <= real - 1
    ends = (discount == 0) & mask  # a terminal step: no bootstrap needed from there on
    # an episode end at or after t within the window: cumulative "seen an end" from t onwards, looked up at t+n-1
    end_by = torch.flip(torch.cummax(torch.flip(ends.int(), [0]), 0).values, [0]).bool()  # any end at >= t
    trained = mask & (full_window | end_by)
    if burn_in:
        trained &= (t >= burn_in) | (starts if starts is not None else torch.zeros_like(mask[0])).unsqueeze(0)
    return trained


def double_q_target(rewards: torch.Tensor, discounts: torch.Tensor, q_next_online: torch.Tensor,
                    q_next_target: torch.Tensor) -> torch.Tensor:
    """Double-Q target for (n-step) transitions (van Hasselt 2016; Ape-X eq. 1).

    y = R + discount * Q_target(x', argmax_a Q_online(x', a)), with ``rewards`` the n-step
    discounted reward sum ``[B]``, ``discounts`` = gamma^n (1 - done) ``[B]``, Q tables ``[B, A]``.
    """
    check_tensor("rewards", rewards, rank=1)
    B = rewards.shape[0]
    check_tensor("discounts", discounts, shape=(B,))
    check_tensor("q_next_online", q_next_online, rank=2)
    check_tensor("q_next_target", q_next_target, shape=tuple(q_next_online.shape))
    if q_next_online.shape[0] != B:
        raise ValueError(f"q_next_online must have shape ({B}, A), got {tuple(q_next_online.shape)}")
    with torch.no_grad():
        best = q_next_online.argmax(dim=1, keepdim=True)
        return rewards + discounts * q_next_target.gather(1, best).squeeze(1)


def double_q_n_step_targets(rewards: torch.Tensor, discounts: torch.Tensor, q_t_online: torch.Tensor,
                            q_t_target: torch.Tensor, n: int) -> torch.Tensor:
    """Time-major n-step double-Q targets; ``q_t_*[t]`` are Q(x_{t+1}, .) ``[T, B, A]``."""
    check_tensor("q_t_online", q_t_online, rank=3)
    check_tensor("q_t_target", q_t_target, shape=tuple(q_t_online.shape))
    with torch.no_grad():
        best = q_t_online.argmax(dim=2, keepdim=True)
        v_tp1 = q_t_target.gather(2, best).squeeze(2)
    return n_step_returns(rewards, discounts, v_tp1, n)


def td_error(q_values: torch.Tensor, actions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """delta = y - Q(x, a) for ``q_values`` ``[B, A]``, integer ``actions`` ``[B]``, ``targets`` ``[B]``.
    The gradient flows through ``q_values`` only."""
    check_tensor("q_values", q_values, rank=2)
    B = q_values.shape[0]
    check_tensor("actions", actions, shape=(B,))
    check_tensor("targets", targets, shape=(B,))
    if actions.is_floating_point():
        raise ValueError(f"actions must be an integer tensor, got {actions.dtype}")
    return targets.detach() - q_values.gather(1, actions.long().unsqueeze(1)).squeeze(1)


def ddpg_critic_target(rewards: torch.Tensor, discounts: torch.Tensor, q_next_target: torch.Tensor) -> torch.Tensor:
    """DDPG critic target with n-step returns (Ape-X DDPG): y = R + gamma^n (1 - done) Q'(x', mu'(x')).
    All ``[B]``; ``q_next_target`` is the target critic at the target actor's action."""
    check_tensor("rewards", rewards, rank=1)
    check_float("rewards", rewards)
    check_tensor("discounts", discounts, shape=tuple(rewards.shape))
    check_tensor("q_next_target", q_next_target, shape=tuple(rewards.shape))
    with torch.no_grad():
        return rewards + discounts * q_next_target
