"""CartPole behind a simulator that takes its time: ``distrl/SlowCartPole-v0`` waits ``latency_s`` (1 ms) in every
step, sleeping, as an env whose physics runs in another program (a robot simulator, a game server) keeps its caller
waiting without using its CPU. Such an env needs many more actors than cores to keep a learner fed, which is what an
autoscaled run (``--set autoscale=on``) finds by itself; its tests and benchmark use this env. Registered when
``distrl.envs`` is imported."""

from __future__ import annotations

import time

import gymnasium as gym
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

SLOW_CARTPOLE = "distrl/SlowCartPole-v0"


class SlowCartPole(CartPoleEnv):
    def __init__(self, latency_s: float = 0.001, render_mode: str | None = None):
        super().__init__(render_mode=render_mode)
        self.latency_s = latency_s

    def step(self, action):
        time.sleep(self.latency_s)
        return super().step(action)


def register() -> None:
    if SLOW_CARTPOLE not in gym.registry:
        gym.register(SLOW_CARTPOLE, entry_point="distrl.envs.latency:SlowCartPole", max_episode_steps=500,
                     reward_threshold=475.0)


register()
