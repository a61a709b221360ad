"""R2D2's network (``models/recurrent_q.py``), and the policy as SEED's inference server runs it.

The server keeps the LSTM state of every env of every actor slot and resets it at episode starts; the
policy steps the network once for a batch of requests, acts epsilon-greedily with the Ape-X ladder over
all ``slots x envs`` copies (each copy keeps its rate however requests are batched), and returns, with
each action, the state the step started from: the emitter stores it with the sequences that start there.

New weights are swapped in once the actor slot furthest ahead has taken ``actor_sync_steps`` steps since the last
swap (slots that never connect hold nothing up), as R2D2's actors pull theirs every ``actor_sync_steps`` vector steps
(at chunk boundaries: the two agree where the period is a multiple of ``unroll_length``, as the defaults' 40 and 20);
SEED's paper swaps them in after every learner update: ``actor_sync_steps=1``. Weights that arrive in between wait,
the newest replacing older ones.
"""

from __future__ import annotations

import numpy as np
import torch

from distrl.agents.common.exploration import epsilon_greedy
from distrl.agents.r2d2.networks import make_model
from distrl.core.types import ArraySpec
from distrl.envs import EnvSpec
from distrl.models import FlatParameters, RecurrentQNetwork
from distrl.models.device import resolve_device
from distrl.ops import epsilon_ladder

__all__ = ["RecurrentQPolicy", "make_model"]


class RecurrentQPolicy:
    def __init__(self, model: RecurrentQNetwork, env: EnvSpec, cfg, num_slots: int, seed: int = 0):
        self.device = resolve_device(cfg.inference_device, "inference_device")
        self.model = model.to(self.device)
        self.flat = FlatParameters(self.model)
        self.version = 0
        self.size = model.state_size
        self.num_actions = env.action_space.n
        self.epsilons = epsilon_ladder(num_slots * cfg.num_envs, cfg.epsilon, cfg.epsilon_alpha).reshape(num_slots, -1)
        self.state_spec = ArraySpec((2 * self.size,), "float32")
        self.outputs = {"actions": ArraySpec(env.action_shape, env.action_dtype.name), "core_state": self.state_spec}
        if cfg.initial_priority == "actor":  # the emitter scores the sequences from the values acted on
            self.outputs["q_values"] = ArraySpec((self.num_actions,), "float32")
        self.rng = np.random.default_rng(seed)
        self.sync_steps = cfg.actor_sync_steps
        self.since_swap = np.zeros(num_slots, dtype=np.int64)  # steps each slot took on the present weights
        self.waiting: tuple[np.ndarray, int] | None = None  # newer weights, not yet swapped in
        self.loaded = False

    def __call__(self, obs: np.ndarray, state: np.ndarray, slots: np.ndarray):
        n, E = obs.shape[:2]
        if self.waiting is not None and self.since_swap.max() >= self.sync_steps:
            self._load(*self.waiting)
        self.since_swap[slots] += 1
        with torch.inference_mode():
            x = torch.from_numpy(obs.reshape((n * E,) + obs.shape[2:])).to(self.device)
            h, c = torch.from_numpy(state.reshape(n * E, -1)).to(self.device).split(self.size, dim=1)
            q, (h, c) = self.model.step(x, (h, c))
            q_values = q.float().cpu().numpy().reshape(n, E, -1)
            new_state = torch.cat([h, c], dim=1).cpu().numpy().reshape(n, E, -1)
        out = {"actions": epsilon_greedy(q_values, self.epsilons[slots], self.rng), "core_state": state}
        if "q_values" in self.outputs:
            out["q_values"] = q_values
        return out, new_state

    def initial_state(self, n: int) -> np.ndarray:
        return np.zeros((n, 2 * self.size), dtype=np.float32)

    def set_weights(self, flat: np.ndarray, version: int) -> None:
        """The first weights at once; later ones when the swap is due (``flat`` is kept as it is: the services hand
        over a copy no one writes again, ``InferencePolicy``)."""
        if not self.loaded or self.sync_steps <= 1:
            self._load(flat, version)
        else:
            self.waiting = (flat, version)

    def _load(self, flat: np.ndarray, version: int) -> None:
        self.flat.load(flat)
        self.version, self.loaded = version, True
        self.waiting = None
        self.since_swap[:] = 0
