"""The DQN loss, one for every system that learns a Q-function (Ape-X DQN's learner, GORILA's bundles).

Mnih et al. 2015's target ``r + gamma^n max_a Q_target(x', a)``, or van Hasselt et al. 2016's double-Q
target ``r + gamma^n Q_target(x', argmax_a Q(x', a))`` (``ops.double_q_target``), with a Huber loss
weighted by importance weights (prioritized replay, Schaul et al. 2016; ones for uniform replay). With
``rescale_eps`` the Q tables are kept in h-space and the target is the transformed operator's
(``ops.transformed_double_q_target``, Pohlen et al. 2018, as R2D2's).

A network with two heads (Ape-X DQN's ``fixed_head_slack``) learns both at once, the first head from every transition
and the second from those of a league's games against its fixed players (``versus_fixed``; a first head that learned
from the other games alone lost more to a perfect player: docs/guide/league.md). Each head's target is its value, in the
target network, of the online network's lexicographic choice at x' (its acting values, ``ops/lexicographic.py``): the
second's as in Skalse et al. 2022's lexicographic Q-learning (a max over the moves the first head accepts); the
first's departs from theirs, which takes the first head's own max: here it values the policy that acts, so each
state's accepted moves are judged by what the slack given up at later moves leaves of them, not by a best play the
greedy policy will not make. With ``expectile`` the first head learns a low expectile of its targets, not their mean
(``head_weights``): a worst case over the replies a state's targets hold, in which a move that can lose sits far
below the moves that cannot.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from distrl.ops import double_q_target, td_error, transformed_double_q_target


def dqn_target(reward: torch.Tensor, discount: torch.Tensor, q_choose: torch.Tensor, q_value: torch.Tensor,
               rescale_eps: float | None = None) -> torch.Tensor:
    """``reward + discount * q_value[argmax q_choose]``, or the transformed operator's target on tables in h-space
    (``rescale_eps``); choosing by ``q_value`` itself gives the max target."""
    if rescale_eps is None:
        return double_q_target(reward, discount, q_choose, q_value)
    return transformed_double_q_target(reward, discount, q_choose, q_value, rescale_eps)


def dqn_loss(model, target, batch: dict[str, torch.Tensor], weights: torch.Tensor,
             double_q: bool = True, rescale_eps: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, delta): ``batch`` holds ``obs, action, reward, discount, next_obs`` (discount = gamma^n, 0 at a
    terminal); delta is the TD error (in h-space with ``rescale_eps``), whose magnitude is the new priority."""
    with torch.no_grad():
        q_next_target = target(batch["next_obs"])
        # the target network choosing the action is Mnih et al.'s max target
        chooser = model(batch["next_obs"]) if double_q else q_next_target
        y = dqn_target(batch["reward"], batch["discount"], chooser, q_next_target, rescale_eps)
    delta = td_error(model(batch["obs"]), batch["action"], y)
    loss = (weights * F.huber_loss(delta, torch.zeros_like(delta), reduction="none")).mean()
    return loss, delta


def head_deltas(model, target, batch: dict[str, torch.Tensor],
                rescale_eps: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(delta ``[B, 2]``, which of them learn ``[B, 2]``) for a two-head network: the first head on every transition,
    the second on those whose ``versus_fixed`` is set; the double-Q target of each head at the online network's
    lexicographic choice."""
    with torch.no_grad():
        chooser = model(batch["next_obs"])
        q_next = target.heads(batch["next_obs"])
        y = torch.stack([dqn_target(batch["reward"], batch["discount"], chooser, q_next[:, h], rescale_eps)
                         for h in range(q_next.shape[1])], dim=1)
    q = model.heads(batch["obs"])
    delta = torch.stack([td_error(q[:, h], batch["action"], y[:, h]) for h in range(q.shape[1])], dim=1)
    fixed = batch["versus_fixed"].to(delta.dtype)
    return delta, torch.stack([torch.ones_like(fixed), fixed], dim=1)


def head_weights(delta: torch.Tensor, learns: torch.Tensor, expectile: float | None = None) -> torch.Tensor:
    """Each head's weight on each transition ``[B, 2]``: 0 where it does not learn; with ``expectile`` tau the first
    head's errors (delta = target - Q) weigh ``2 |tau - 1(delta < 0)|`` (1 at tau 0.5), so that where its errors are
    under 1 (Huber's quadratic part) it learns the tau-expectile of its targets (Newey & Powell 1987; expectiles of a
    return's distribution: Rowland et al. 2019). The targets of a state and move differ by the opponent's reply, so a
    low tau is a worst case over the replies they hold: one reply in six that loses, the rest draws, gives -0.64 at tau
    0.1 where the mean is -0.17. Only roughly a worst case: a losing reply seen in a few percent of the targets moves
    it little. Prioritized replay ranks transitions by these weighted errors too, which, its importance weights
    correcting only in part (beta < 1), pushes the value lower still. One-step targets keep the player's own
    exploratory moves out of the worst case."""
    if expectile is None:
        return learns
    first = 2.0 * torch.where(delta[:, 0] < 0, 1.0 - expectile, expectile)
    return learns * torch.stack([first, torch.ones_like(first)], dim=1)


def head_priorities(delta: torch.Tensor, learns: torch.Tensor, expectile: float | None = None) -> torch.Tensor:
    """A transition's priority ``[B]``: the larger weighted error (``head_weights``) of the heads that learn from it;
    the learner's and the actors' alike."""
    return (delta.abs() * head_weights(delta, learns, expectile)).max(dim=1).values


def two_head_dqn_loss(model, target, batch: dict[str, torch.Tensor], weights: torch.Tensor,
                      rescale_eps: float | None = None,
                      expectile: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, priority delta) of ``head_deltas``: each learning head's weighted Huber loss (``head_weights``), summed
    over the heads; a transition's priority the larger weighted error of the heads that learn from it."""
    delta, learns = head_deltas(model, target, batch, rescale_eps)
    huber = F.huber_loss(delta, torch.zeros_like(delta), reduction="none") * head_weights(delta, learns, expectile)
    return (weights * huber.sum(dim=1)).mean(), head_priorities(delta, learns, expectile)
