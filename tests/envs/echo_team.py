"""A cooperative game in PettingZoo's parallel API for teams (``?team=``): ``pettingzoo:tests.envs.echo_team``.

Each of four rounds shows every agent a bit of its own; an agent that shows its bit back earns +1 for itself, else 0.
``p2`` leaves after round 2 (PettingZoo removes it from ``agents``), so a team's slots see one agent leave early.
Random play earns 0.5 a round; a policy that reads its bit earns 1."""

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv


class EchoTeam(ParallelEnv):
    metadata = {"name": "echo_team", "render_modes": []}
    ROUNDS = 4
    LEAVES = {"p2": 2}  # agent -> the round after which it leaves

    def __init__(self):
        self.possible_agents, self.render_mode = ["p0", "p1", "p2"], None
        self.agents = list(self.possible_agents)
        self.rng = np.random.default_rng(0)

    def observation_space(self, agent):
        return gym.spaces.Box(0.0, float(self.ROUNDS), (2,), np.float32)

    def action_space(self, agent):
        return gym.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.agents, self.round = list(self.possible_agents), 0
        self.bits = {a: int(self.rng.integers(2)) for a in self.agents}
        return {a: self._observe(a) for a in self.agents}, {a: {} for a in self.agents}

    def _observe(self, agent):
        return np.array([self.round, self.bits[agent]], np.float32)

    def step(self, actions):
        rewards = {a: float(actions[a] == self.bits[a]) for a in self.agents}
        self.round += 1
        over = self.round >= self.ROUNDS
        leaving = {a for a in self.agents if over or self.LEAVES.get(a) == self.round}
        terminations = {a: a in leaving for a in self.agents}
        truncations = {a: False for a in self.agents}
        infos = {a: {} for a in self.agents}
        self.bits = {a: int(self.rng.integers(2)) for a in self.agents}
        observations = {a: self._observe(a) for a in self.agents}  # every agent that acted, the leaving too
        self.agents = [a for a in self.agents if a not in leaving]
        return observations, rewards, terminations, truncations, infos


class TimedEchoTeam(EchoTeam):
    """The same game cut at its round limit (truncated, as a time limit cuts an episode), ``p2`` still leaving by
    termination after round 2."""

    def step(self, actions):
        observations, rewards, terminations, truncations, infos = super().step(actions)
        if self.round >= self.ROUNDS:
            truncations = {a: terminations[a] and a not in self.LEAVES for a in terminations}
            terminations = {a: terminations[a] and not truncations[a] for a in terminations}
        return observations, rewards, terminations, truncations, infos


parallel_env = EchoTeam
