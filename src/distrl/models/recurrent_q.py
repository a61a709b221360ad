"""R2D2's network (Kapturowski et al. 2019, section 2.3 / appendix): torso -> LSTM -> (dueling) Q head.

Sequences are time-major ``[T, B, ...]``; the LSTM state is a pair ``(h, c)`` of ``[B, lstm]``. The
learner replays a sequence from the state the actor stored at its first step (``unroll``); acting and
greedy evaluation go step by step (``step``). ``greedy`` keeps a policy state inside the module for
callers that pass observations only (``distrl eval``, ``load_policy``, the evaluator role): it follows
the batch, and ``reset_state()`` starts new episodes (call it at every episode start). ``obs_norm``: vector
observations pass through a running normaliser first (``models/normalisers.py``; the learner updates it, and it
travels with the weights to the actors and to ``distrl eval``).
"""

from __future__ import annotations

import torch
from torch import nn

from distrl.models.normalisers import ObsNormaliser
from distrl.models.q_networks import legal_actions, masked_q
from distrl.models.torsos import make_torso


class RecurrentQNetwork(nn.Module):
    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, hidden: tuple[int, ...] = (64,),
                 lstm: int = 64, dueling: bool = True, obs_norm: bool = False, action_mask_size: int = 0):
        """``action_mask_size``: the observation's last entries are the legal-action mask, as
        :class:`~distrl.models.q_networks.QNetwork`'s: an illegal action's Q is ``ILLEGAL_Q`` at every step."""
        super().__init__()
        if action_mask_size not in (0, num_actions):
            raise ValueError("a legal-action mask has one entry per action")
        self.action_mask_size = action_mask_size
        self.obs_norm = ObsNormaliser(obs_shape) if obs_norm and len(obs_shape) == 1 else None
        self.torso = make_torso(obs_shape, hidden, nn.ReLU)
        self.lstm = nn.LSTM(self.torso.out_dim, lstm)
        self.state_size = lstm
        self.dueling = dueling
        self.advantage = nn.Linear(lstm, num_actions)
        self.value = nn.Linear(lstm, 1) if dueling else None
        self._policy_state: tuple[torch.Tensor, torch.Tensor] | None = None

    def initial_state(self, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        z = torch.zeros(batch, self.state_size)
        return z, z.clone()

    def _head(self, feat: torch.Tensor) -> torch.Tensor:
        adv = self.advantage(feat)
        if not self.dueling:
            return adv
        return self.value(feat) + adv - adv.mean(dim=-1, keepdim=True)

    def unroll(self, obs: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]):
        """Q of every step of ``obs`` ``[T, B, ...]`` from ``state`` (no resets inside: a replayed
        sequence holds one episode); returns (Q ``[T, B, A]``, the state after the last step)."""
        T, B = obs.shape[:2]
        legal = legal_actions(obs, self.action_mask_size)
        if self.obs_norm is not None:
            obs = self.obs_norm(obs)
        feat = self.torso(obs.reshape((T * B,) + obs.shape[2:])).view(T, B, -1)
        out, (h, c) = self.lstm(feat, (state[0].unsqueeze(0).contiguous(), state[1].unsqueeze(0).contiguous()))
        return masked_q(self._head(out), legal), (h[0], c[0])

    def step(self, obs: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]):
        """One step for a batch of envs: (Q ``[B, A]``, next state)."""
        q, state = self.unroll(obs.unsqueeze(0), state)
        return q[0], state

    def greedy(self, obs: torch.Tensor) -> torch.Tensor:
        if self._policy_state is None or self._policy_state[0].shape[0] != obs.shape[0]:
            self._policy_state = self.initial_state(obs.shape[0])
        q, self._policy_state = self.step(obs.float() if obs.dtype == torch.float64 else obs, self._policy_state)
        return q.argmax(dim=-1)

    def reset_state(self) -> None:
        self._policy_state = None
