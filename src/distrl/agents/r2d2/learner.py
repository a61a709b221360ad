"""R2D2 learner (Kapturowski et al. 2019, section 2.3): replays sequences from their stored state with a
burn-in, trains on n-step double-Q targets under the value rescaling h, and gives each sequence the
priority eta * max |delta| + (1 - eta) * mean |delta|.

A step t of a replayed sequence is trained only where its whole n-step window lies inside the sequence
(or the episode ends inside it): the bootstrap x_{t+n} must be one of the sequence's own steps.

Burn-in exists to refresh a stored state the network has moved on from; a sequence that starts its episode
starts from the exact initial state (zero), so its burn-in steps get the loss too (unrolled again with the
gradient; the state passed on to the later steps stays the no-gradient one, as for every sequence). Without
that, no sequence ever trained an episode's first ``burn_in`` steps (the paper's scheme: the first sequence of
an episode spends them on burn-in, the next starts later): harmless in 10^4-step Atari episodes, but on
bsuite's Deep Sea (20 steps, burn-in 8) R2D3 learned the demonstrated path everywhere but its first 8 cells
and never found the treasure, where Ape-X DQN with the same demos did (README, Demonstrations).
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from distrl.agents.common.optim import make_optimizer
from distrl.agents.common.replay_learner import ReplayLearner
from distrl.models import FlatParameters
from distrl.models.q_networks import ILLEGAL_Q
from distrl.ops import (
    advantage_learning_target,
    large_margin_loss,
    sequence_priority,
    trainable_steps,
    transformed_n_step_q_target,
)
from distrl.replay import SampledBatch


def staleness(model, obs: torch.Tensor, state: tuple, stored: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """R2D2's Q-value discrepancy (section 3, Figure 2): at the first trained step of each sequence, Q from
    the state the replay starts with (stored or zero, then burned in by the current network) against Q
    from the state the actor had there (stored with the sequence), ||q - q_actor||_2 / max_a |q_actor|,
    averaged over the sequences that reach that step. In a game, over the legal actions only (an illegal action's Q
    is ILLEGAL_Q in both: no gap, and no part of the scale)."""
    h, c = stored.split(model.state_size, dim=1)
    q, _ = model.step(obs, state)
    q_actor, _ = model.step(obs, (h, c))
    scale = torch.where(q_actor > ILLEGAL_Q / 2, q_actor.abs(), 0.0).max(dim=-1).values
    gap = (q - q_actor).norm(dim=-1) / scale.clamp(min=1e-6)
    return (gap * real).sum() / real.sum().clamp(min=1.0)


class R2D2Learner(ReplayLearner):
    def __init__(self, cfg, model, replay, demos=None):
        self.model = model
        self.flat = FlatParameters(model)
        self.target = copy.deepcopy(model)
        self.params = list(model.parameters())
        self.optimizer = make_optimizer("adam", self.params, cfg.lr, eps=cfg.optimizer_eps)
        self.delta_q: list[float] = []
        super().__init__(cfg, replay, {"lr": self.optimizer}, demos)

    def step(self, batch=None) -> dict[str, float] | None:
        out = super().step(batch)
        if out is not None and self.delta_q:
            out["delta_q"] = float(np.mean(self.delta_q))
            self.delta_q.clear()
        return out

    def update(self, batch: SampledBatch) -> tuple[float | None, np.ndarray | None]:
        cfg = self.cfg
        b = self.tensors(batch)
        obs = b["obs"].transpose(0, 1)  # [L, B, ...]
        B, burn, n = obs.shape[1], cfg.burn_in, cfg.n_step
        h0, c0 = b["initial_state"].split(self.model.state_size, dim=1)
        state = (torch.zeros_like(h0), torch.zeros_like(c0)) if cfg.initial_state == "zero" else (h0, c0)
        with torch.no_grad():  # burn-in: refresh the state, no gradient (R2D2 section 3)
            q_head, online_state = self.model.unroll(obs[:burn], state) if burn else (None, state)
            own = b["mask"][:, burn] & ~b["demo"] if "demo" in b else b["mask"][:, burn]  # demos store no state
            self.delta_q.append(float(staleness(self.model, obs[burn], online_state, b["burn_in_state"], own)))
        q, _ = self.model.unroll(obs[burn:], online_state)
        first = np.flatnonzero(batch.items["episode_start"]) if burn else ()  # read on the host: no device sync
        if len(first):  # these start their episode: their burn-in steps are trained too (module docstring), so
            # they alone are unrolled over them again, with the gradient (few in long episodes)
            idx = torch.as_tensor(first, device=q.device)
            q_head = q_head.index_copy(1, idx, self.model.unroll(obs[:burn, idx], tuple(s[idx] for s in state))[0])
        q = q if q_head is None else torch.cat([q_head, q])  # [L, B, A]
        starts = b["episode_start"]
        action = b["action"].transpose(0, 1).long()
        reward, discount = b["reward"].transpose(0, 1), b["discount"].transpose(0, 1)
        mask = b["mask"].transpose(0, 1)
        with torch.no_grad():
            q_target, _ = self.target.unroll(obs, state)
            best = q.detach().argmax(-1, keepdim=True)  # double Q: the online argmax, the target's value
            q_next = q_target.gather(-1, best).squeeze(-1)
            values_tp1 = torch.cat([q_next[1:], q_next.new_zeros(1, B)])  # v(x_{t+1}); the last one is never used
            target = transformed_n_step_q_target(reward, discount, values_tp1, n, cfg.value_rescale_eps)
            target = advantage_learning_target(target, q_target, action, cfg.advantage_learning, cfg.value_rescale_eps)
            train = trainable_steps(mask, discount, n, burn, starts).float()
        q_sa = q.gather(-1, action.unsqueeze(-1)).squeeze(-1)
        delta = (target - q_sa) * train
        per_sequence = 0.5 * (delta ** 2).sum(0) / train.sum(0).clamp(min=1.0)
        weights = b["weights"] if cfg.importance_weights else torch.ones(B, device=q.device)
        loss = (weights * per_sequence).mean()
        if cfg.demo_margin > 0 and "demo" in b:  # DQfD's supervised term on the demonstrated steps (R2D3 with it)
            on_demos = train * b["demo"].float()[None, :]
            loss = loss + cfg.demo_margin_weight * large_margin_loss(q, action, cfg.demo_margin, on_demos)
        if not self.finite_step(loss, self.params, self.optimizer):
            return None, None
        if self.model.obs_norm is not None:  # after the update, so its every forward pass used one set of statistics
            # (of replayed steps: each counted as often as it is sampled, so the moments follow the replay's
            # distribution, priorities and demos included, not the env's)
            self.model.obs_norm.update(obs, b["mask"].transpose(0, 1), self.reduce_sums)
        if (self.updates + 1) % cfg.target_update_period == 0:
            self.target.load_state_dict(self.model.state_dict())
        priorities = sequence_priority(delta.detach(), cfg.priority_eta, mask=train.bool())
        return float(loss.detach()), priorities.cpu().numpy()

    def device_weights(self) -> torch.Tensor:
        return self.flat.buffer

    def get_weights(self) -> np.ndarray:
        return self.flat.to_numpy()  # a copy: the buffer changes as the model trains

    def checkpoint_parts(self):
        return {"model": self.model, "target": self.target}, {"optimizer": self.optimizer}
