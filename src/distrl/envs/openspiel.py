"""OpenSpiel's turn-based games of two or more players (``--env openspiel:kuhn_poker``, or with the game's parameters
``openspiel:kuhn_poker(players=3)``) in the part of PettingZoo's AEC API that ``multi_agent.SeatedGame`` plays:
agents, whose turn it is, observe, step, rewards, terminations.

Written here rather than taken from Shimmy's binding, whose sequential games (Kuhn poker on OpenSpiel 2.0) keep
the turn with the player who just moved. A player observes its **information state** (``information_state_tensor``,
where the game provides one: the player's card and the whole betting history in poker), so that a policy over
observations is a policy over information states, which is what exploitability (NashConv) is defined on; its legal
actions are the mask. Chance (the deal) is drawn from the episode's seed. Rewards are the game's returns, given
once, when it ends (Kuhn: the chips won or lost, 1 or 2).
"""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np

from distrl.errors import ConfigError


def load(name: str):
    """The OpenSpiel game ``name`` (with its parameters: ``kuhn_poker(players=3)``), checked: two or more players,
    turn-based; one line where it is not."""
    try:
        import pyspiel
    except ImportError:
        raise ConfigError(f"env 'openspiel:{name}' needs OpenSpiel: pip install -e '.[games]' (from a clone) or "
                          "pip install 'distrl[games]'") from None
    base = name.split("(", 1)[0]
    if base not in pyspiel.registered_names():
        raise ConfigError(f"env 'openspiel:{name}': OpenSpiel has no game {base!r} (e.g. kuhn_poker, leduc_poker)")
    checked = _check_parameters(name, next(t for t in pyspiel.registered_games() if t.short_name == base))
    try:
        game = pyspiel.load_game(checked)
    except pyspiel.SpielError as e:
        raise ConfigError(f"env 'openspiel:{name}': {str(e).strip().splitlines()[-1][:200]}") from None
    kind = game.get_type()
    if game.num_players() < 2 or kind.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ConfigError(f"env 'openspiel:{name}': {name} is not a turn-based game of two or more players")
    if not (kind.provides_information_state_tensor or kind.provides_observation_tensor):
        raise ConfigError(f"env 'openspiel:{name}': {name} gives no observation tensor to learn from")
    return game


def _check_parameters(name: str, kind) -> str:
    """``kuhn_poker(players=3)``'s parameters, checked against the game's own list before OpenSpiel sees them (its
    refusals print a line of their own); returns the game string OpenSpiel gets (spaces dropped). A parameter that is
    itself a game (``turn_based_simultaneous_game(game=...)``) is not taken."""
    match = re.fullmatch(r"([\w-]+)(?:\((.*)\))?", name)
    given = [p.strip() for p in (match.group(2) or "").split(",") if p.strip()] if match else None
    spec = kind.parameter_specification
    pairs = []
    for part in given if given is not None else [name]:
        key, eq, value = (x.strip() for x in part.partition("="))
        default = spec.get(key)
        if given is None or not eq or default is None or not _fits(value, default):
            valid = ", ".join(f"{k}={v}" for k, v in spec.items()) or "none"
            raise ConfigError(f"env 'openspiel:{name}': give the game's parameters as GAME(KEY=VALUE,...) with keys "
                              f"and value types of its own (its defaults: {valid}); got {part!r}")
        if key == "players" and not kind.min_num_players <= int(value) <= kind.max_num_players:
            raise ConfigError(f"env 'openspiel:{name}': {kind.short_name} seats {kind.min_num_players} to "
                              f"{kind.max_num_players} players; got {value}")
        pairs.append(f"{key}={value}")
    return f"{match.group(1)}({','.join(pairs)})" if pairs else match.group(1)


def _fits(value: str, default) -> bool:
    if isinstance(default, bool):
        return value in ("true", "false", "True", "False")
    if isinstance(default, int):
        return re.fullmatch(r"-?\d{1,9}", value) is not None
    if isinstance(default, float):  # with its point: OpenSpiel reads 1 as a whole number, which a real one is not
        return re.fullmatch(r"-?\d{1,9}\.\d{1,9}", value) is not None
    return bool(value) and "(" not in value and ")" not in value


def observation(game, state, player: int) -> np.ndarray:
    """What ``player`` sees: its information state where the game has one, else its observation."""
    if game.get_type().provides_information_state_tensor:
        return np.asarray(state.information_state_tensor(player), np.float32)
    return np.asarray(state.observation_tensor(player), np.float32)


class OpenSpielGame:
    def __init__(self, name: str):
        self.game = load(name)
        self.possible_agents = [f"player_{i}" for i in range(self.game.num_players())]
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
        agents, over = self.possible_agents, self.state.is_terminal()
        returns = self.state.returns() if over else [0.0] * len(agents)
        self.rewards = {a: float(r) for a, r in zip(agents, returns)}
        self.terminations = dict.fromkeys(agents, over)
        self.truncations = dict.fromkeys(agents, False)
        self.agents = [] if over else list(agents)
        self.agent_selection = agents[0] if over else agents[self.state.current_player()]

    def observe(self, agent: str) -> dict:
        player = self.possible_agents.index(agent)
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
