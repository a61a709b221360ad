"""SEED's network, and the policy as the inference server runs it: numpy in, sampled actions and their
behaviour log-probabilities out (what V-trace needs), on the server's device. The model is the
actor-critic shared by the actor-critic family (``models/actor_critic.py``)."""

from __future__ import annotations

import numpy as np
import torch

from distrl.core.types import ArraySpec
from distrl.envs import EnvSpec
from distrl.models import ActorCritic


def make_model(env: EnvSpec, cfg) -> ActorCritic:
    return ActorCritic.for_env(env, cfg.hidden, cfg.obs_norm, cfg.value_norm, cfg.value_norm_decay)


class ActorCriticPolicy:
    state_spec = None  # feed-forward

    def __init__(self, model: ActorCritic, env: EnvSpec, device: str = "cpu"):
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.version = 0
        self.outputs = {"actions": ArraySpec(env.action_shape, env.action_dtype.name),
                        "behaviour_logp": ArraySpec((), "float32")}
        self._params = list(self.model.parameters())

    def __call__(self, obs: np.ndarray, state=None, slots=None):
        n, E = obs.shape[:2]
        with torch.inference_mode():
            x = torch.from_numpy(obs.reshape((n * E,) + obs.shape[2:])).to(self.device)
            action, logp = self.model.act(x)
            action, logp = action.cpu().numpy(), logp.cpu().numpy()
        return {"actions": action.reshape((n, E) + action.shape[1:]), "behaviour_logp": logp.reshape(n, E)}, None

    def initial_state(self, n: int):
        return None

    def set_weights(self, flat: np.ndarray, version: int) -> None:
        with torch.no_grad():
            # (a read-only array, as the trainer's host copy of a GPU learner's weights is, copied first: torch
            # wants writable memory)
            src = torch.from_numpy(flat if flat.flags.writeable else flat.copy())
            torch.nn.utils.vector_to_parameters(src.to(self.device), self._params)
        self.version = version
