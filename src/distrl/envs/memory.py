"""Memory tasks: envs a memoryless policy cannot solve, because the observation hides part of the state.

``distrl/CartPoleNoVelocity-v1`` is CartPole-v1 observing only the cart position and the pole angle: the two
velocities (state indices 1 and 3) are hidden, as in the recurrent-agent benchmarks of RL-Zoo
("CartPoleNoVel"). A recurrent policy can recover the velocities from consecutive positions; a
feed-forward one sees the same observation whether the pole is falling or rising.

``distrl/MountainCarNoVelocity-v0`` is MountainCar-v0 observing only the car's position: a sparse-reward,
hard-exploration task where memory matters too (R2D3's setting: the paper's tasks are partially observed and
need exploration), since whether to push left or right depends on which way the car is moving.

Both are registered when ``distrl.envs`` is imported, so every system, ``distrl eval`` and ``load_policy`` can
use the ids.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

CARTPOLE_NO_VELOCITY = "distrl/CartPoleNoVelocity-v1"
MOUNTAIN_CAR_NO_VELOCITY = "distrl/MountainCarNoVelocity-v0"


class HideVelocity(gym.ObservationWrapper):
    """Keep only the observation entries ``kept`` (the positions)."""

    def __init__(self, env: gym.Env, kept: list[int]):
        super().__init__(env)
        self.kept = np.array(kept)
        box = env.observation_space
        self.observation_space = gym.spaces.Box(box.low[self.kept], box.high[self.kept], dtype=box.dtype)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return observation[self.kept]


def make_cartpole_no_velocity(**kwargs) -> gym.Env:
    return HideVelocity(gym.make("CartPole-v1", **kwargs), [0, 2])  # cart position, pole angle


def make_mountain_car_no_velocity(**kwargs) -> gym.Env:
    return HideVelocity(gym.make("MountainCar-v0", **kwargs), [0])  # the car's position


def register() -> None:
    # the wrapped envs bring their own step limits (500, 200); string entry points, so the specs serialise
    # (Minari's metadata)
    for env_id, make in [(CARTPOLE_NO_VELOCITY, "make_cartpole_no_velocity"),
                         (MOUNTAIN_CAR_NO_VELOCITY, "make_mountain_car_no_velocity")]:
        if env_id not in gym.registry:
            gym.register(env_id, entry_point=f"distrl.envs.memory:{make}", disable_env_checker=True)


register()
