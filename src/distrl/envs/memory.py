"""Memory tasks: envs a memoryless policy cannot solve, because the observation hides part of the state.

``distrl/CartPoleNoVelocity-v1`` is CartPole-v1 observing only the cart position and the pole angle: the two
velocities (state indices 1 and 3) are hidden, as in the recurrent-agent benchmarks of RL-Zoo
("CartPoleNoVel"). A recurrent policy can recover the velocities from consecutive positions; a
feed-forward one sees the same observation whether the pole is falling or rising. Registered when
``distrl.envs`` is imported, so every system, ``distrl eval`` and ``load_policy`` can use the id.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

CARTPOLE_NO_VELOCITY = "distrl/CartPoleNoVelocity-v1"
KEPT = np.array([0, 2])  # cart position, pole angle


class HideVelocity(gym.ObservationWrapper):
    def __init__(self, env: gym.Env):
        super().__init__(env)
        box = env.observation_space
        self.observation_space = gym.spaces.Box(box.low[KEPT], box.high[KEPT], dtype=box.dtype)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return observation[KEPT]


def make_cartpole_no_velocity(**kwargs) -> gym.Env:
    return HideVelocity(gym.make("CartPole-v1", **kwargs))


def register() -> None:
    if CARTPOLE_NO_VELOCITY not in gym.registry:
        # CartPole-v1 brings its own 500-step limit; a string entry point, so the spec serialises (Minari's metadata)
        gym.register(CARTPOLE_NO_VELOCITY, entry_point="distrl.envs.memory:make_cartpole_no_velocity",
                     disable_env_checker=True)


register()
