"""A trained policy as a pure function of tensors, the form ONNX and TorchScript take.

``load_policy`` hides two things an exported graph cannot: the recurrent state (R2D2's LSTM keeps it inside the
module) and the clipping of continuous actions to the env's bounds. Here both are explicit: a recurrent graph takes
``obs, h, c`` and returns ``action, q, h_out, c_out`` (zeros start an episode), and a continuous action leaves the
graph already clipped. Observation normalisers (running means, ES's normaliser) are part of the models, so their
statistics become constants of the graph. Observations are what distrl's env layer hands the policy: Dict, Tuple
and Discrete observations flattened to one float32 vector (``gymnasium.spaces.flatten``), Atari frames as uint8.

Heads: ``greedy`` (what ``distrl eval`` plays) for every system; ``sample`` (the behaviour policy: a categorical
draw by the Gumbel-max trick, or a Gaussian draw around the mean) for the actor-critic systems, whose policies are
distributions. The Q-learning systems (DQN, R2D2, QT-Opt) and the deterministic ones (DDPG, ES) act greedily when
deployed; their exploration noise is part of training, not of the policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from distrl.agents.es.networks import EsPolicy
from distrl.agents.qt_opt.networks import QTOptNets
from distrl.errors import ConfigError
from distrl.models.actor_critic import ActorCritic
from distrl.models.continuous_q import ContinuousQ
from distrl.models.ddpg import DDPGNets
from distrl.models.q_networks import QNetwork
from distrl.models.recurrent_q import RecurrentQNetwork

HEADS = ("greedy", "sample")


@dataclass
class Graph:
    """An exportable module with example inputs (batch 2) and the names of its inputs and outputs, in order;
    ``checked``: the outputs an exported copy must reproduce (not a sampled action; not CEM's action, which a near
    tie between two samples' Q-values may flip: its Q-value is checked instead)."""

    module: nn.Module
    inputs: dict[str, torch.Tensor]
    outputs: list[str]
    recurrent: bool = False
    metadata: dict[str, str] = field(default_factory=dict)
    checked: tuple[str, ...] = ()


class _Clipped(nn.Module):
    """Continuous actions clipped into the env's box, as ``Policy.act`` clips them."""

    def __init__(self, low: np.ndarray, high: np.ndarray):
        super().__init__()
        self.register_buffer("low", torch.as_tensor(np.asarray(low, dtype=np.float32)))
        self.register_buffer("high", torch.as_tensor(np.asarray(high, dtype=np.float32)))

    def forward(self, action: torch.Tensor) -> torch.Tensor:
        return torch.maximum(torch.minimum(action, self.high), self.low)


class ActorCriticGraph(nn.Module):
    """``obs -> action, logits`` (categorical: ``[B, n]``; several categoricals: ``[B, k, max options]``, padding
    at a very low logit) or ``obs -> action, mean`` (Gaussian, the mean unclipped, ``log_std`` a constant)."""

    def __init__(self, model: ActorCritic, head: str, clip: _Clipped | None):
        super().__init__()
        self.model, self.head, self.clip = model, head, clip

    def forward(self, obs: torch.Tensor):
        out, _ = self.model._heads(obs, with_value=False)
        params = self.model._multi_logits(out) if self.model.nvec is not None else out
        if self.head == "sample":
            action = self.model.act(obs)[0]
        else:
            action = params.argmax(dim=-1) if self.model.discrete else out
        if self.clip is not None:
            action = self.clip(action)
        return action, params


class QGraph(nn.Module):
    """``obs -> action, q`` for a Q-network (the greedy action is the argmax)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, obs: torch.Tensor):
        q = self.model(obs)
        return q.argmax(dim=-1), q


class RecurrentQGraph(nn.Module):
    """``obs, h, c -> action, q, h_out, c_out``: one step of R2D2's network with its LSTM state passed in and out."""

    def __init__(self, model: RecurrentQNetwork):
        super().__init__()
        self.model = model

    def forward(self, obs: torch.Tensor, h: torch.Tensor, c: torch.Tensor):
        q, (h_out, c_out) = self.model.step(obs, (h, c))
        return q.argmax(dim=-1), q, h_out, c_out


class CemGraph(nn.Module):
    """``obs -> action, q``: QT-Opt's CEM argmax over its fixed greedy draws, held as constants."""

    def __init__(self, model: ContinuousQ, clip: _Clipped):
        super().__init__()
        self.model, self.clip = model, clip
        self.noise = nn.ParameterList([nn.Parameter(n, requires_grad=False) for n in model.greedy_noise()])

    def forward(self, obs: torch.Tensor):
        action, q = self.model.argmax(obs, noise=list(self.noise))
        return self.clip(action), q


class GreedyGraph(nn.Module):
    """``obs -> action`` for a deterministic policy (DDPG's actor, ES's MLP)."""

    def __init__(self, model: nn.Module, clip: _Clipped | None):
        super().__init__()
        self.model, self.clip = model, clip

    def forward(self, obs: torch.Tensor):
        action = self.model.greedy(obs)
        return self.clip(action) if self.clip is not None else action


def acting_graph(policy, head: str = "greedy") -> Graph:
    """The graph of a loaded :class:`distrl.api.Policy` (its model, env spec and clipping), for ``head``."""
    if head not in HEADS:
        raise ConfigError(f"--head must be one of {', '.join(HEADS)}; got {head!r}")
    model, spec = policy.model, policy.spec
    space = spec.action_space
    clip = _Clipped(space.low, space.high) if spec.continuous else None
    obs = torch.as_tensor(np.stack([spec.observation_space.sample() for _ in range(2)]))
    inputs, recurrent = {"obs": obs}, False
    if isinstance(model, ActorCritic):
        module = ActorCriticGraph(model, head, clip)
        outputs = ["action", "logits" if model.discrete else "mean"]
    elif head == "sample":
        raise ConfigError(f"{policy.system} acts greedily once trained (its exploration belongs to training); "
                          "--head sample is for the actor-critic systems (a2c, a3c, ppo, impala, appo, seed)")
    elif isinstance(model, RecurrentQNetwork):
        module, recurrent = RecurrentQGraph(model), True
        h, c = model.initial_state(2)
        inputs.update(h=h, c=c)
        outputs = ["action", "q", "h_out", "c_out"]
    elif isinstance(model, QTOptNets):  # acts with the online network
        module, outputs = CemGraph(model.online, clip), ["action", "q"]
    elif isinstance(model, QNetwork):
        module, outputs = QGraph(model), ["action", "q"]
    elif isinstance(model, (DDPGNets, EsPolicy)):
        module, outputs = GreedyGraph(model, clip), ["action"]
    else:
        raise ConfigError(f"no export is defined for {policy.system}'s model ({type(model).__name__})")
    meta = {"distrl.system": policy.system, "distrl.env": policy.env_id, "distrl.head": head,
            "distrl.snapshot": policy.snapshot, "distrl.observation_space": repr(spec.observation_space),
            "distrl.action_space": repr(space), "distrl.recurrent": str(recurrent).lower()}
    if isinstance(model, QNetwork) and model.num_heads == 2:  # the argmax is the run's; the values are not one Q's
        meta["distrl.q"] = (f"lexicographic acting values (fixed_head_slack={model.slack}): the second head's Q for "
                            "the moves within the slack of the first head's best, lower made-up values for the rest")
    checked = tuple(o for o in outputs if not (o == "action" and (head == "sample" or isinstance(module, CemGraph))))
    return Graph(module.eval(), inputs, outputs, recurrent, meta, checked)
