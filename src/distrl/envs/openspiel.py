"""OpenSpiel's two-player turn-based games (``--env openspiel:kuhn_poker``) in the part of PettingZoo's AEC API that
``multi_agent.TwoPlayerSelfPlay`` plays: agents, whose turn it is, observe, step, rewards, terminations.

Written here rather than taken from Shimmy's binding, whose sequential games (Kuhn poker on OpenSpiel 2.0) keep
the turn with the player who just moved. A player observes its **information state** (``information_state_tensor``,
where the game provides one: the player's card and the whole betting history in poker), so that a policy over
observations is a policy over information states, which is what exploitability (NashConv) is defined on; its legal
actions are the mask. Chance (the deal) is drawn from the episode's seed. Rewards are the game's returns, given
once, when it ends (Kuhn: the chips won or lost, 1 or 2).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from distrl.errors import ConfigError

AGENTS = ("player_0", "player_1")


def load(name: str):
    """The OpenSpiel game ``name``, checked: two players, turn-based; one line where it is not."""
    try:
        import pyspiel
    except ImportError:
        raise ConfigError(f"env 'openspiel:{name}' needs OpenSpiel: pip install -e '.[games]' (from a clone) or "
                          "pip install 'distrl[games]'") from None
    if name not in pyspiel.registered_names():
        raise ConfigError(f"env 'openspiel:{name}': OpenSpiel has no game {name!r} (e.g. kuhn_poker, leduc_poker)")
    game = pyspiel.load_game(name)
    kind = game.get_type()
    if game.num_players() != 2 or kind.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ConfigError(f"env 'openspiel:{name}': {name} is not a two-player turn-based game")
    if not (kind.provides_information_state_tensor or kind.provides_observation_tensor):
        raise ConfigError(f"env 'openspiel:{name}': {name} gives no observation tensor to learn from")
    return game


def observation(game, state, player: int) -> np.ndarray:
    """What ``player`` sees: its information state where the game has one, else its observation."""
    if game.get_type().provides_information_state_tensor:
        return np.asarray(state.information_state_tensor(player), np.float32)
    return np.asarray(state.observation_tensor(player), np.float32)


class OpenSpielGame:
    def __init__(self, name: str):
        self.game = load(name)
        self.possible_agents = list(AGENTS)
        self.num_actions = self.game.num_distinct_actions()
        state = self.game.new_initial_state()
        size = len(observation(self.game, state, 0))
        self._observation_space = gym.spaces.Box(-np.inf, np.inf, (size,), np.float32)
        self._action_space = gym.spaces.Discrete(self.num_actions)
        self.rng = np.random.default_rng()
        self.reset()

    def observation_space(self, agent: str) -> gym.Space:
        return self._observation_space

    def action_space(self, agent: str) -> gym.Space:
        return self._action_space

    def reset(self, seed: int | None = None, options=None) -> None:
        if seed is not None:  # a stream of its own: the env's random opponent draws from default_rng(seed)
            self.rng = np.random.default_rng([int(seed), 1])
        self.state = self.game.new_initial_state()
        self._chance()
        self._sync()

    def _chance(self) -> None:
        while self.state.is_chance_node():
            outcomes, probs = zip(*self.state.chance_outcomes())
            self.state.apply_action(int(self.rng.choice(outcomes, p=np.asarray(probs) / np.sum(probs))))

    def _sync(self) -> None:
        over = self.state.is_terminal()
        returns = self.state.returns() if over else (0.0, 0.0)
        self.rewards = {a: float(r) for a, r in zip(AGENTS, returns)}
        self.terminations = dict.fromkeys(AGENTS, over)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.agents = [] if over else list(AGENTS)
        self.agent_selection = AGENTS[0] if over else AGENTS[self.state.current_player()]

    def observe(self, agent: str) -> dict:
        player = AGENTS.index(agent)
        mask = np.zeros(self.num_actions, np.int8)
        if not self.state.is_terminal() and self.state.current_player() == player:
            mask[self.state.legal_actions()] = 1
        return {"observation": observation(self.game, self.state, player), "action_mask": mask}

    def step(self, action) -> None:
        if self.state.is_terminal():
            return
        self.state.apply_action(int(action))
        self._chance()
        self._sync()

    def close(self) -> None: ...
