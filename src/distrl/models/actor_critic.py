"""Actor-critic networks for discrete (categorical), multi-discrete (independent categoricals, their log-probabilities
summed: MultiDiscrete, MultiBinary) and continuous (diagonal Gaussian) actions, optionally with running observation
normalisation and PopArt value normalisation (``models/normalisers.py``)."""

from __future__ import annotations

import math

import torch
from torch import nn

from distrl.models.normalisers import ObsNormaliser, PopArt
from distrl.models.torsos import make_torso


def _init(layer: nn.Linear, gain: float) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


class ActorCritic(nn.Module):
    """Policy and value heads on separate torsos (for MLPs) or one shared CNN torso (pixels).

    The hot path is :meth:`act`: one forward for a batch of observations, sampling by the
    Gumbel-max trick (discrete) so the actor pays for a few tensor ops per env step, not per env.
    Continuous actions are sampled unclipped; the env layer clips them to the action bounds.

    ``obs_norm``: vector observations pass through a running normaliser first (pixels are already scaled by
    the torso). ``value_norm``: the value head predicts PopArt-normalised values; :meth:`value`,
    :meth:`evaluate` and :meth:`evaluate_unroll` still return values in the rewards' units, and the learner
    updates the statistics (``self.popart``) after each step.
    """

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, discrete: bool, hidden: tuple[int, ...] = (64, 64),
                 obs_norm: bool = False, value_norm: bool = False, value_norm_decay: float = 0.01,
                 nvec: tuple[int, ...] | None = None, action_mask_size: int = 0):
        """``nvec``: several categorical actions, with these many options each (``num_actions`` is their sum).
        ``action_mask_size``: the observation's last entries are the legal-action mask (1 legal): illegal actions
        get no probability, in acting, greedy play and the learner's log-probabilities and entropy alike."""
        super().__init__()
        if action_mask_size and (not discrete or nvec or action_mask_size != num_actions):
            raise ValueError("a legal-action mask goes with one categorical action, one entry per action")
        self.action_mask_size = action_mask_size
        self.discrete = discrete
        self.nvec = tuple(nvec) if nvec else None
        if self.nvec is not None:  # logits [N, sum(nvec)] -> [N, k, max(nvec)], padding ~-inf (probability 0)
            width = max(self.nvec)
            starts = torch.tensor([0, *self.nvec[:-1]]).cumsum(0)
            index = starts[:, None] + torch.arange(width)[None, :]
            pad = torch.arange(width)[None, :] >= torch.tensor(self.nvec)[:, None]
            self.register_buffer("_index", torch.where(pad, sum(self.nvec), index), persistent=False)
        self.obs_norm = ObsNormaliser(obs_shape) if obs_norm and len(obs_shape) == 1 else None
        self.pi_torso = make_torso(obs_shape, hidden)
        self.shared = len(obs_shape) == 3 and hasattr(self.pi_torso, "conv")
        self.v_torso = self.pi_torso if self.shared else make_torso(obs_shape, hidden)
        self.pi_head = _init(nn.Linear(self.pi_torso.out_dim, num_actions), 0.01)
        self.v_head = _init(nn.Linear(self.v_torso.out_dim, 1), 1.0)
        if not discrete:
            self.log_std = nn.Parameter(torch.zeros(num_actions))
        self.popart = PopArt(value_norm_decay) if value_norm else None

    @classmethod
    def for_env(cls, env, hidden: tuple[int, ...], obs_norm: bool = False, value_norm: bool = False,
                value_norm_decay: float = 0.01) -> ActorCritic:
        """For an env spec (``distrl.envs.EnvSpec``): a categorical head for Discrete actions, a Gaussian one
        for Box actions."""
        nvec = env.action_nvec
        n = env.action_space.n if env.discrete else sum(nvec) if nvec else env.action_shape[0]
        return cls(env.obs_shape, n, env.discrete or nvec is not None, tuple(hidden), obs_norm, value_norm,
                   value_norm_decay, nvec=nvec, action_mask_size=env.action_mask_size)

    def _multi_logits(self, out: torch.Tensor) -> torch.Tensor:
        """``[N, sum(nvec)]`` logits as ``[N, k, max(nvec)]``, each action's options in a row, the padding at a finite
        number so low that its probability is 0 (-inf would make 0 * log 0 a NaN in the entropy's gradient)."""
        low = torch.finfo(out.dtype).min / 4
        padded = torch.cat([out, out.new_full(out.shape[:-1] + (1,), low)], dim=-1)
        return padded[:, self._index]

    def _value_out(self, v_feat: torch.Tensor) -> torch.Tensor:
        v = self.v_head(v_feat).squeeze(-1)
        return v if self.popart is None else self.popart.unnormalise(v)

    def _heads(self, obs: torch.Tensor, with_value: bool = True):
        legal = obs[..., -self.action_mask_size:] > 0.5 if self.action_mask_size else None
        if self.obs_norm is not None:
            obs = self.obs_norm(obs)
        feat = self.pi_torso(obs)
        out = self.pi_head(feat)
        if legal is not None:  # (a mask with no legal action, a finished game's last observation, masks nothing)
            legal = legal | ~legal.any(-1, keepdim=True)
            out = torch.where(legal, out, torch.finfo(out.dtype).min / 4)
        if not with_value:
            return out, None
        v_feat = feat if self.shared else self.v_torso(obs)
        return out, self._value_out(v_feat)

    def act(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Sample actions and their log-probabilities (behaviour logp for off-policy correction)."""
        out, _ = self._heads(obs, with_value=False)
        if self.nvec is not None:
            logits = self._multi_logits(out)
            gumbel = -torch.log(-torch.log(torch.rand_like(logits)))
            action = (logits + gumbel).argmax(dim=-1)  # [N, k]; a padded option (-inf) is never drawn
            return action, torch.log_softmax(logits, -1).gather(2, action.unsqueeze(2)).squeeze(2).sum(-1)
        if self.discrete:
            logp_all = torch.log_softmax(out, dim=-1)
            gumbel = -torch.log(-torch.log(torch.rand_like(out)))
            action = (out + gumbel).argmax(dim=-1)
            return action, logp_all.gather(1, action.unsqueeze(1)).squeeze(1)
        std = self.log_std.exp()
        action = out + std * torch.randn_like(out)
        return action, self._gauss_logp(out, action)

    def greedy(self, obs: torch.Tensor) -> torch.Tensor:
        out, _ = self._heads(obs, with_value=False)
        if self.nvec is not None:
            return self._multi_logits(out).argmax(dim=-1)
        return out.argmax(dim=-1) if self.discrete else out

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        if self.obs_norm is not None:
            obs = self.obs_norm(obs)
        return self._value_out(self.v_torso(obs))

    def evaluate(self, obs: torch.Tensor, actions: torch.Tensor):
        """(logp of ``actions``, entropy, value) for a flat batch ``[N, ...]``, with gradients."""
        out, value = self._heads(obs)
        logp, entropy = self._logp_entropy(out, actions)
        return logp, entropy, value

    def evaluate_unroll(self, obs: torch.Tensor, actions: torch.Tensor):
        """One forward over a time-major unroll: ``obs`` ``[T+1, B, ...]``, ``actions`` ``[T, B, ...]``.

        Returns logp, entropy and values ``[T, B]`` for the first T observations and the bootstrap
        value ``[B]`` of the last one, all with gradients.
        """
        T1, B = obs.shape[:2]
        out, value = self._heads(obs.reshape((T1 * B,) + obs.shape[2:]))
        value = value.view(T1, B)
        out = out.view(T1, B, -1)[:-1].reshape((T1 - 1) * B, -1)
        logp, entropy = self._logp_entropy(out, actions.reshape(((T1 - 1) * B,) + actions.shape[2:]))
        return logp.view(T1 - 1, B), entropy.view(T1 - 1, B), value[:-1], value[-1]

    def _logp_entropy(self, out: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.nvec is not None:  # independent categoricals: log-probabilities and entropies add up
            logp_all = torch.log_softmax(self._multi_logits(out), dim=-1)
            logp = logp_all.gather(2, actions.long().unsqueeze(2)).squeeze(2).sum(-1)
            return logp, -(logp_all.exp() * logp_all).sum((-2, -1))  # a padded option adds 0 * (finite) = 0
        if self.discrete:
            logp_all = torch.log_softmax(out, dim=-1)
            logp = logp_all.gather(1, actions.long().unsqueeze(1)).squeeze(1)
            return logp, -(logp_all.exp() * logp_all).sum(-1)
        entropy = (0.5 + 0.5 * math.log(2 * math.pi) + self.log_std).sum().expand(out.shape[0])
        return self._gauss_logp(out, actions), entropy

    def _gauss_logp(self, mean: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        z = (action - mean) / self.log_std.exp()
        return (-0.5 * z.pow(2) - self.log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
