"""An actor that only steps environments (SEED RL): no model, no weights, no output buffer.

The policy runs on the inference server; this actor turns each batch of actions it gets back over its
link into the next request (observations, rewards, episode-end flags of its vector env). Continuous
actions are clipped to the action bounds here, as the other actors do. ``make_vec_env`` autoresets on
the step after an episode ends; the server marks that step invalid, exactly as an unroll actor does.
One :meth:`step` is ``steps_per_call`` round trips, so the runtime's own bookkeeping (a grant, a Ray
call) is paid once per many env steps.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from distrl.core.protocols import Finishes, Stateless
from distrl.envs import make_vec_env


class EnvActor(Stateless, Finishes):
    def __init__(self, env_id: str, num_envs: int, seed: int, link=None, steps_per_call: int = 1,
                 whole_games: bool = False):
        """``whole_games``: a lost Atari life does not end an episode (R2D2's learner: SEED + R2D2)."""
        self.env = make_vec_env(env_id, num_envs, seed, life_loss_ends=not whole_games)
        self.seed = seed
        space = self.env.single_action_space
        self.clip = (space.low, space.high) if hasattr(space, "low") else None
        self.num_envs = num_envs
        self.link, self.steps_per_call = link, steps_per_call
        self.request = None
        self.timings = np.zeros(2)  # [previous round trip s, env s since the previous request]
        self.stopped = False

    def reset(self) -> dict[str, np.ndarray]:
        obs, _ = self.env.reset(seed=self.seed)
        E = self.num_envs
        return {"obs": obs, "rewards": np.zeros(E, np.float32), "terminated": np.zeros(E, bool),
                "truncated": np.zeros(E, bool), "final": np.zeros(1, bool)}

    def advance(self, actions: np.ndarray) -> dict[str, np.ndarray]:
        if self.clip is not None:
            actions = np.clip(actions, *self.clip)
        obs, rewards, terminated, truncated, _ = self.env.step(actions)
        return {"obs": obs, "rewards": rewards, "terminated": terminated, "truncated": truncated,
                "final": np.zeros(1, bool)}

    def step(self, out=None) -> dict[str, Any]:
        """``steps_per_call`` requests to the server and env steps with its answers."""
        if self.request is None:
            self.request = self.reset()
        for _ in range(self.steps_per_call):
            if self.stopped:
                break
            t0 = time.perf_counter()
            actions = self.link.request(self.request, self.timings)
            t1 = time.perf_counter()
            if actions is None:  # the server is gone
                self.stopped = True
                break
            self.request = self.advance(actions)
            self.timings[0] = t1 - t0
            self.timings[1] = time.perf_counter() - t1
        return {}

    def finish(self) -> None:
        """Retired (autoscaling): send the outcome of the last step, the reward and the observation that complete its
        unroll on the server (a ``final`` request, which begins no new step), so that none of the steps it made is
        lost."""
        if self.link is not None and self.request is not None and not self.stopped:
            self.link.request(dict(self.request, final=np.ones(1, bool)), self.timings)

    def close(self) -> None:
        if self.link is not None:
            self.link.close()
        self.env.close()
