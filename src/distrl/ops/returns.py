"""Returns and bootstrap targets: GAE, lambda-returns, n-step returns, double-Q and DDPG targets.

Names follow rlax: row i of a time-major ``[T, B]`` tensor is the transition x_tm1 -> x_t with x_tm1 = x_i, so
``v_tm1[i]`` = V(x_i), ``r_t[i]`` and ``discount_t[i]`` = gamma (1 - done) are received on arriving at x_{i+1},
``v_t[i]`` = V(x_{i+1}), and ``bootstrap_value`` ``[B]`` = V(x_T), the value after the last row. Targets are computed
without gradient.
"""

from __future__ import annotations

import torch

from distrl.ops._checks import check_float, check_lam, check_tensor, check_time_major


def backward_recursion(x_t: torch.Tensor, decay_t: torch.Tensor) -> torch.Tensor:
    """y_t = x_t + decay_t y_{t+1}, y_T = 0, over the time axis of ``[T, B]`` tensors: the backward pass GAE
    (eq. 16 of arXiv:1506.02438) and V-trace (eq. 1 of arXiv:1802.01561, as v_s - V(x_s)) share."""
    y = torch.empty_like(x_t)
    acc = torch.zeros_like(x_t[0])  # y_{t+1}, then y_t
    for t in range(x_t.shape[0] - 1, -1, -1):
        acc = x_t[t] + decay_t[t] * acc
        y[t] = acc
    return y


def successor_values(v_tm1: torch.Tensor, bootstrap_value: torch.Tensor) -> torch.Tensor:
    """v_t ``[T, B]`` from v_tm1 ``[T, B]``: each row's next row, ``bootstrap_value`` ``[B]`` after the last."""
    return torch.cat([v_tm1[1:], bootstrap_value.unsqueeze(0)], dim=0)


def gae(r_t: torch.Tensor, discount_t: torch.Tensor, v_tm1: torch.Tensor, bootstrap_value: torch.Tensor,
        lam: float | torch.Tensor = 0.95) -> torch.Tensor:
    """Generalised advantage estimates (Schulman et al. 2016, arXiv:1506.02438 eq. 16) of x_tm1, ``[T, B]``.

    A_tm1 = delta_tm1 + discount_t lam_t A_t,  delta_tm1 = r_t + discount_t v_t - v_tm1; the last row's A_t is 0.
    ``r_t``, ``discount_t``, ``v_tm1`` ``[T, B]``, ``bootstrap_value`` ``[B]`` (module docstring). ``lam`` is a float or
    ``[T, B]``; a zero cuts the trace (used at truncations, where the discount still bootstraps from the final
    observation).
    """
    T, B = check_time_major(dict(r_t=r_t, discount_t=discount_t, v_tm1=v_tm1), "v_tm1")
    check_tensor("bootstrap_value", bootstrap_value, shape=(B,))
    lam = check_lam(lam, (T, B), v_tm1.dtype)
    with torch.no_grad():
        delta_tm1 = r_t + discount_t * successor_values(v_tm1, bootstrap_value) - v_tm1
        return backward_recursion(delta_tm1, discount_t * lam)


def lambda_returns(r_t: torch.Tensor, discount_t: torch.Tensor, v_tm1: torch.Tensor,
                   bootstrap_value: torch.Tensor, lam: float | torch.Tensor = 0.95) -> torch.Tensor:
    """lambda-returns of x_tm1 (Sutton & Barto eq. 12.18, recursive form), ``[T, B]``, arguments as :func:`gae`:
    G_tm1 = r_t + discount_t [(1 - lam_t) v_t + lam_t G_t], the last row's G_t = ``bootstrap_value``.
    Equal to ``gae(...) + v_tm1``."""
    return gae(r_t, discount_t, v_tm1, bootstrap_value, lam) + v_tm1.detach()


def n_step_returns(r_t: torch.Tensor, discount_t: torch.Tensor, v_t: torch.Tensor, n: int) -> torch.Tensor:
    """n-step bootstrapped returns of x_tm1 (A3C eq. in section 3; Ape-X eq. 1 without the max), ``[T, B]``.

    G[i] = r_t[i] + discount_t[i] r_t[i+1] + ... + (prod_{j<k-1} discount_t[i+j]) r_t[i+k-1]
    + (prod_{j<k} discount_t[i+j]) v_t[i+k-1], k = min(n, T - i). All ``[T, B]``; ``v_t[i]`` is the bootstrap value
    of x_{i+1} (e.g. max_a Q(x_{i+1}, a)). A zero discount (episode end) inside the window stops both rewards and
    bootstrap there.
    """
    T, B = check_time_major(dict(r_t=r_t, discount_t=discount_t, v_t=v_t), "r_t")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    with torch.no_grad():
        row = torch.arange(T, device=r_t.device)
        last = torch.clamp(row + n - 1, max=T - 1)  # the last row of each row's window
        g_tm1 = v_t[last]
        for i in range(n - 1, -1, -1):
            src = row + i
            valid = (src <= last).unsqueeze(1)
            src = torch.clamp(src, max=T - 1)
            g_tm1 = torch.where(valid, r_t[src] + discount_t[src] * g_tm1, g_tm1)
    return g_tm1


def trainable_steps(mask: torch.Tensor, discount_t: torch.Tensor, n: int, burn_in: int = 0,
                    starts: torch.Tensor | None = None) -> torch.Tensor:
    """``[T, B]``: the steps of padded sequences (real steps first, ``mask`` ``[T, B]``) whose n-step target the
    sequence holds: the bootstrap x_{t+n} is one of its real steps, or an episode end (a zero ``discount_t``) at or
    after t cuts the window first (R2D2's replayed sequences; the learner trains these alone and its priorities cover
    them), after the first ``burn_in`` steps unless the sequence starts its episode (``starts`` ``[B]``)."""
    T = mask.shape[0]
    real = mask.sum(0)  # real steps per sequence
    t = torch.arange(T, device=mask.device).unsqueeze(1)
    full_window = t + n <= real - 1
    ends = (discount_t == 0) & mask  # a terminal step: no bootstrap needed from there on
    # an episode end at or after t within the window: cumulative "seen an end" from t onwards, looked up at t+n-1
    end_by = torch.flip(torch.cummax(torch.flip(ends.int(), [0]), 0).values, [0]).bool()  # any end at >= t
    trained = mask & (full_window | end_by)
    if burn_in:
        trained &= (t >= burn_in) | (starts if starts is not None else torch.zeros_like(mask[0])).unsqueeze(0)
    return trained


def double_q_target(r_t: torch.Tensor, discount_t: torch.Tensor, q_t_online: torch.Tensor,
                    q_t_target: torch.Tensor) -> torch.Tensor:
    """Double-Q target for (n-step) transitions x_tm1 -> x_t (van Hasselt 2016; Ape-X eq. 1), ``[B]``.

    y = r_t + discount_t * Q_target(x_t, argmax_a Q_online(x_t, a)), with ``r_t`` the n-step discounted reward sum
    ``[B]``, ``discount_t`` = gamma^n (1 - done) ``[B]``, ``q_t_online`` and ``q_t_target`` the Q tables of x_t
    ``[B, A]``.
    """
    check_tensor("r_t", r_t, rank=1)
    B = r_t.shape[0]
    check_tensor("discount_t", discount_t, shape=(B,))
    check_tensor("q_t_online", q_t_online, rank=2)
    check_tensor("q_t_target", q_t_target, shape=tuple(q_t_online.shape))
    if q_t_online.shape[0] != B:
        raise ValueError(f"q_t_online must have shape ({B}, A), got {tuple(q_t_online.shape)}")
    with torch.no_grad():
        a_t = q_t_online.argmax(dim=1, keepdim=True)
        return r_t + discount_t * q_t_target.gather(1, a_t).squeeze(1)


def double_q_n_step_targets(r_t: torch.Tensor, discount_t: torch.Tensor, q_t_online: torch.Tensor,
                            q_t_target: torch.Tensor, n: int) -> torch.Tensor:
    """Time-major n-step double-Q targets of x_tm1 ``[T, B]``: ``r_t``, ``discount_t`` ``[T, B]``; ``q_t_online[i]``
    and ``q_t_target[i]`` are Q(x_{i+1}, .) ``[T, B, A]``."""
    check_tensor("q_t_online", q_t_online, rank=3)
    check_tensor("q_t_target", q_t_target, shape=tuple(q_t_online.shape))
    with torch.no_grad():
        a_t = q_t_online.argmax(dim=2, keepdim=True)
        v_t = q_t_target.gather(2, a_t).squeeze(2)
    return n_step_returns(r_t, discount_t, v_t, n)


def td_error(q_tm1: torch.Tensor, a_tm1: torch.Tensor, target_tm1: torch.Tensor) -> torch.Tensor:
    """delta = target_tm1 - Q(x_tm1, a_tm1) for ``q_tm1`` ``[B, A]``, integer ``a_tm1`` ``[B]``, ``target_tm1``
    ``[B]``. The gradient flows through ``q_tm1`` only."""
    check_tensor("q_tm1", q_tm1, rank=2)
    B = q_tm1.shape[0]
    check_tensor("a_tm1", a_tm1, shape=(B,))
    check_tensor("target_tm1", target_tm1, shape=(B,))
    if a_tm1.is_floating_point():
        raise ValueError(f"a_tm1 must be an integer tensor, got {a_tm1.dtype}")
    return target_tm1.detach() - q_tm1.gather(1, a_tm1.long().unsqueeze(1)).squeeze(1)


def ddpg_critic_target(r_t: torch.Tensor, discount_t: torch.Tensor, q_t_target: torch.Tensor) -> torch.Tensor:
    """DDPG critic target with n-step returns (Ape-X DDPG): y = r_t + gamma^n (1 - done) Q'(x_t, mu'(x_t)).
    All ``[B]``; ``q_t_target`` is the target critic at the target actor's action in x_t."""
    check_tensor("r_t", r_t, rank=1)
    check_float("r_t", r_t)
    check_tensor("discount_t", discount_t, shape=tuple(r_t.shape))
    check_tensor("q_t_target", q_t_target, shape=tuple(r_t.shape))
    with torch.no_grad():
        return r_t + discount_t * q_t_target
