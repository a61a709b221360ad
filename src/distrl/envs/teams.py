"""One policy playing several agents of a game at once: parameter sharing over a team (Gupta et al. 2017; Terry et
al. 2020, "Revisiting parameter sharing in multi-agent deep RL").

``pettingzoo:mpe2.simple_spread_v3?team=all`` (or ``?team=agent_0,agent_1``) names the agents the learning policy
plays. Each is a slot of the vector env the actors step, so every agent's experience is a trajectory of its own (its
own observations and its own reward) and one network learns from all of them, as SuperSuit's vector-env conversion
gives Stable-Baselines3. ``num_envs`` slots hold ``num_envs / len(team)`` games, the team's agents of a game in
consecutive slots; the game's other agents play the id's ``?opponent=`` (uniformly random legal moves by default).

The agents of a team act at once, so the game is one of PettingZoo's parallel API (a module with ``parallel_env()``);
a turn-based game has one agent to move at a time, and is refused in one line. An agent that leaves its game before
the others (PettingZoo removes it from ``agents``) sees zeros and earns nothing until its game ends (SuperSuit's
"black death"), so every slot of a game ends on the same step; the step after, its game starts again (Gymnasium's
next-step autoreset, as ``make_vec_env``'s other envs do). Observations are each agent's own, flattened, followed by
its legal-action mask (all ones where the game gives none), as ``multi_agent.SeatedGame`` gives them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import gymnasium as gym
import numpy as np

from distrl.envs.multi_agent import game_module, split_id
from distrl.errors import ConfigError


def team_of(env_id: str) -> str | None:
    """The id's ``?team=`` (``all`` or comma-separated agents), or None."""
    return split_id(env_id)[1].get("team")


def parallel_factory(env_id: str) -> Callable:
    """The game's ``parallel_env`` factory; one line where the game has none (a turn-based game)."""
    game = split_id(env_id)[0]
    if not game.startswith("pettingzoo:"):
        raise ConfigError(f"env '{env_id}': team= plays PettingZoo games whose agents act at once (parallel_env()); "
                          "OpenSpiel's games are turn-based")
    module = game_module(game[len("pettingzoo:"):])
    factory = getattr(module, "parallel_env", None)
    if not callable(factory):
        raise ConfigError(f"env '{env_id}': team= plays games whose agents act at once (PettingZoo's parallel API, "
                          f"parallel_env()); {module.__name__} has none, one agent moving at a time (play it with "
                          "seat= or in a league)")
    return factory


def team_agents(env_id: str, agents: list[str]) -> list[str]:
    team = team_of(env_id)
    chosen = list(agents) if team == "all" else [a.strip() for a in team.split(",")]
    unknown = [a for a in chosen if a not in agents]
    if unknown or len(set(chosen)) != len(chosen) or not chosen:
        raise ConfigError(f"env '{env_id}': team= is all or agents of the game, each once ({', '.join(agents)}); got "
                          f"{team!r}")
    return chosen


def check_team(env_id: str, num_envs: int | None = None) -> int:
    """One line for a team the game cannot seat, or ``num_envs`` that do not hold whole games; the team's size."""
    game = parallel_factory(env_id)()
    try:
        game.reset(seed=0)
        team = team_agents(env_id, list(game.possible_agents))
        _spaces(env_id, game, team)
    finally:
        game.close()
    if num_envs is not None:
        _whole_games(env_id, len(team), num_envs)
    return len(team)


def _whole_games(env_id: str, size: int, num_envs: int) -> None:
    if num_envs % size:
        raise ConfigError(f"env '{env_id}': its team of {size} agents fills {size} env slots per game, so num_envs is "
                          f"a multiple of {size}; got {num_envs}")


def _inner(space: gym.Space) -> gym.Space:
    return space["observation"] if isinstance(space, gym.spaces.Dict) else space


def _spaces(env_id: str, game, team: list[str]) -> tuple[gym.Space, gym.spaces.Discrete]:
    specs = {(repr(_inner(game.observation_space(a))), repr(game.action_space(a))) for a in team}
    if len(specs) > 1:
        raise ConfigError(f"env '{env_id}': the team's agents observe or act in different spaces, so one policy "
                          "cannot play them all; name a team whose agents are alike")
    acting = [game.action_space(a) for a in game.possible_agents]
    if not all(isinstance(space, gym.spaces.Discrete) for space in acting):
        raise ConfigError(f"env '{env_id}': an agent's actions are not Discrete; games need Discrete ones")
    return _inner(game.observation_space(team[0])), game.action_space(team[0])


class TeamGames(gym.vector.VectorEnv):
    """``num_envs`` slots: a team agent of one of ``num_envs / len(team)`` parallel games in each."""

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}

    def __init__(self, env_id: str, num_envs: int, opponent: Callable | None = None):
        factory = parallel_factory(env_id)
        first = factory()
        first.reset(seed=0)
        self.agents = list(first.possible_agents)
        self.team = team_agents(env_id, self.agents)
        self.games = [first] + [factory() for _ in range(max(1, math.ceil(num_envs / len(self.team))) - 1)]
        _whole_games(env_id, len(self.team), num_envs)
        inner, action = _spaces(env_id, first, self.team)
        self.others = [a for a in self.agents if a not in self.team]
        self.size, self.n_actions = int(np.prod(inner.shape)), int(action.n)
        self.num_envs = num_envs
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (self.size + self.n_actions,), np.float32)
        self.single_action_space = action
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self.opponent = opponent
        self._rng = np.random.default_rng(0)
        self._obs = np.zeros((num_envs, self.size + self.n_actions), np.float32)
        self._latest: list[dict] = [{} for _ in self.games]  # each game's observations of every agent
        self._over = np.zeros(len(self.games), bool)
        self._left: list[dict[str, str]] = [{} for _ in self.games]  # how each team agent left its game, if it has

    def _slots(self, g: int) -> range:
        return range(g * len(self.team), (g + 1) * len(self.team))

    def _view(self, observation) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(observation, dict):
            return (np.asarray(observation["observation"], np.float32).ravel(),
                    np.asarray(observation["action_mask"], np.float32))
        return np.asarray(observation, np.float32).ravel(), np.ones(self.n_actions, np.float32)

    def _observe(self, g: int) -> None:
        for slot, agent in zip(self._slots(g), self.team):
            if agent in self._latest[g]:
                self._obs[slot] = np.concatenate(self._view(self._latest[g][agent]))
            else:  # gone from the game before its end: zeros, every action alike
                self._obs[slot] = 0.0
                self._obs[slot, self.size:] = 1.0

    def _start(self, g: int, seed: int | None) -> None:
        self._latest[g], _ = self.games[g].reset(seed=seed)
        self._left[g] = {}
        self._over[g] = False
        self._observe(g)

    def reset(self, *, seed: int | None = None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        for g in range(len(self.games)):
            self._start(g, None if seed is None else int(seed) + g)
        return self._obs.copy(), {}

    def _other(self, agent: str, observation) -> int:
        view, mask = self._view(observation)
        if self.opponent is None:
            return int(self._rng.choice(np.flatnonzero(mask)))
        return int(self.opponent(view, mask))

    def step(self, actions):
        actions = np.asarray(actions).reshape(self.num_envs)
        rewards = np.zeros(self.num_envs)
        terminated = np.zeros(self.num_envs, bool)
        truncated = np.zeros(self.num_envs, bool)
        for g, game in enumerate(self.games):
            slots = self._slots(g)
            if self._over[g]:  # the step after a game's end starts it again (next-step autoreset)
                self._start(g, None)
                continue
            live = set(game.agents)
            joint = {agent: int(actions[slot]) for slot, agent in zip(slots, self.team) if agent in live}
            joint.update({a: self._other(a, self._latest[g][a]) for a in self.others if a in live})
            observations, reward, ended, cut, _ = game.step(joint)
            for agent in self.team:  # how each agent left, when it did: its slot ends that way with the game
                if agent in live and (ended.get(agent) or cut.get(agent)):
                    self._left[g][agent] = "terminated" if ended.get(agent) else "truncated"
            over = not game.agents or not any(a in game.agents for a in self.team)
            # at the game's end each agent's last observation (a truncated episode bootstraps from it); before it,
            # an agent gone from the game sees zeros
            self._latest[g] = {a: o for a, o in observations.items() if over or a in game.agents}
            for slot, agent in zip(slots, self.team):
                rewards[slot] = float(reward.get(agent, 0.0))
                if over:  # an agent still in a game cut short (every team mate gone) ends as truncated
                    truncated[slot] = self._left[g].get(agent, "truncated") == "truncated"
                    terminated[slot] = not truncated[slot]
            self._over[g] = over
            self._observe(g)
        return self._obs.copy(), rewards, terminated, truncated, {}

    def close_extras(self, **kwargs):
        for game in self.games:
            game.close()


def play_team(env_id: str, model, episodes: int, seed: int, opponent: Callable | None = None) -> list[float]:
    """``episodes`` games from seeds ``seed, seed+1, ...``, every agent of the team played greedily by ``model`` at
    once (as the run's evaluations play it); each game's return is its team's agents' returns averaged."""
    import torch

    env = TeamGames(env_id, check_team(env_id), opponent)
    returns = []
    try:
        for episode in range(episodes):
            obs, _ = env.reset(seed=seed + episode)
            if hasattr(model, "reset_state"):  # a recurrent policy starts every game from zeros
                model.reset_state()
            total, done = np.zeros(env.num_envs), False
            with torch.inference_mode():
                while not done:
                    obs, reward, terminated, truncated, _ = env.step(model.greedy(torch.from_numpy(obs)).numpy())
                    total, done = total + reward, bool((terminated | truncated).all())
            returns.append(float(total.mean()))
    finally:
        env.close()
    return returns
