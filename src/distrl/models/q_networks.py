"""Q-value heads for value-based systems (DQN family): plain or dueling. ``obs_norm``: vector observations pass
through a running normaliser first (``models/normalisers.py``; the learner updates it, and it travels with the
weights to the actors and to ``distrl eval``), as R2D2's network does."""

from __future__ import annotations

import torch
from torch import nn

from distrl.models.normalisers import ObsNormaliser
from distrl.models.torsos import make_torso
from distrl.ops.lexicographic import lexicographic_values

ILLEGAL_Q = -1e30  # an illegal action's Q-value: below any real one, finite (no inf - inf in a TD error)


def legal_actions(obs: torch.Tensor, mask_size: int) -> torch.Tensor | None:
    """The legal-action mask an observation carries in its last ``mask_size`` entries (1 legal), or None."""
    return obs[..., -mask_size:] > 0.5 if mask_size else None


def masked_q(q: torch.Tensor, legal: torch.Tensor | None) -> torch.Tensor:
    """``q`` with every illegal action's value at ``ILLEGAL_Q``: the greedy action, the double-Q target's argmax and
    epsilon-greedy's random draws (``agents/common/exploration.py``) then keep to the legal ones. A finished game's
    last observation (no action legal) masks nothing."""
    if legal is None:
        return q
    legal = legal | ~legal.any(-1, keepdim=True)
    return torch.where(legal, q, ILLEGAL_Q)


class QNetwork(nn.Module):
    """Q(x, .) for discrete actions. ``dueling`` uses Wang et al. 2016 (arXiv:1511.06581) eq. 9:
    Q = V + A - mean_a A.

    ``fixed_head_slack``: two Q heads, the first the value over all games, the second against a league's fixed
    players alone (Ape-X DQN's setting of that name); ``forward`` then gives the lexicographic acting values
    (``ops/lexicographic.py``), ``heads`` the two tables."""

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, hidden: tuple[int, ...] = (64, 64),
                 dueling: bool = True, obs_norm: bool = False, action_mask_size: int = 0,
                 fixed_head_slack: float | None = None):
        """``action_mask_size``: the observation's last entries are the legal-action mask (1 legal); an illegal
        action's Q is ``ILLEGAL_Q``, so the greedy action, the double-Q target's argmax and epsilon-greedy's random
        draws (``agents/common/exploration.py``) all keep to the legal ones."""
        super().__init__()
        if action_mask_size not in (0, num_actions):
            raise ValueError("a legal-action mask has one entry per action")
        self.action_mask_size = action_mask_size
        self.num_actions = num_actions
        self.slack = fixed_head_slack
        self.num_heads = 1 if fixed_head_slack is None else 2
        self.obs_norm = ObsNormaliser(obs_shape) if obs_norm and len(obs_shape) == 1 else None
        self.torso = make_torso(obs_shape, hidden, nn.ReLU)
        self.dueling = dueling
        self.advantage = nn.Linear(self.torso.out_dim, num_actions * self.num_heads)
        self.value = nn.Linear(self.torso.out_dim, self.num_heads) if dueling else None

    def _features(self, obs: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor]:
        legal = legal_actions(obs, self.action_mask_size)
        if self.obs_norm is not None:
            obs = self.obs_norm(obs)
        return legal, self.torso(obs)

    def _tables(self, legal: torch.Tensor | None, feat: torch.Tensor) -> torch.Tensor:
        """``[..., heads, A]``: each head's Q table (dueling: V + A - mean_a A per head), illegal actions masked."""
        adv = self.advantage(feat).unflatten(-1, (self.num_heads, self.num_actions))
        q = adv if not self.dueling else self.value(feat).unsqueeze(-1) + adv - adv.mean(dim=-1, keepdim=True)
        return masked_q(q, None if legal is None else legal.unsqueeze(-2))

    def heads(self, obs: torch.Tensor) -> torch.Tensor:
        """``[..., heads, A]``: each head's Q table, illegal actions at ``ILLEGAL_Q``."""
        return self._tables(*self._features(obs))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        legal, feat = self._features(obs)
        if self.num_heads == 1:  # the actors' hot path: no reshaping
            adv = self.advantage(feat)
            return masked_q(adv if not self.dueling else self.value(feat) + adv - adv.mean(dim=-1, keepdim=True), legal)
        q = self._tables(legal, feat)
        return lexicographic_values(q[..., 0, :], q[..., 1, :], self.slack, ILLEGAL_Q)

    def greedy(self, obs: torch.Tensor) -> torch.Tensor:
        return self.forward(obs).argmax(dim=-1)
