"""An actor that only steps environments (SEED RL): no model, no weights, no unroll buffer.

The policy runs on the inference server; this actor turns each batch of actions it gets back into
the next request (observations, rewards, episode-end flags of its vector env). Continuous actions
are clipped to the action bounds here, as the other actors do. ``make_vec_env`` autoresets on the
step after an episode ends; the server marks that step invalid, exactly as an unroll actor does.
"""

from __future__ import annotations

import numpy as np

from distrl.envs import make_vec_env


class EnvActor:
    def __init__(self, env_id: str, num_envs: int, seed: int):
        self.env = make_vec_env(env_id, num_envs, seed)
        self.seed = seed
        space = self.env.single_action_space
        self.clip = (space.low, space.high) if hasattr(space, "low") else None
        self.num_envs = num_envs

    def reset(self) -> dict[str, np.ndarray]:
        obs, _ = self.env.reset(seed=self.seed)
        E = self.num_envs
        return {"obs": obs, "rewards": np.zeros(E, np.float32), "terminated": np.zeros(E, bool),
                "truncated": np.zeros(E, bool)}

    def step(self, actions: np.ndarray) -> dict[str, np.ndarray]:
        if self.clip is not None:
            actions = np.clip(actions, *self.clip)
        obs, rewards, terminated, truncated, _ = self.env.step(actions)
        return {"obs": obs, "rewards": rewards, "terminated": terminated, "truncated": truncated}

    def close(self) -> None:
        self.env.close()
