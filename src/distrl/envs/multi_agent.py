"""PettingZoo's games as Gymnasium envs: one seat learns, the others play opponents.

``--env pettingzoo:classic.tictactoe_v3`` (any module under ``pettingzoo.``, or a user's own module with an ``env()``
factory in PettingZoo's AEC API, or a ``parallel_env()`` one in its parallel API, played through PettingZoo's own
``parallel_to_aec``: every agent's action of a cycle is taken in turn, then applied together) becomes the Gymnasium env
``PettingZoo/classic.tictactoe_v3``. A game of N agents (two or more) seats the learner in seat ``k mod N`` in its k-th
episode (so it learns every seat; a seeded reset takes the seed's remainder), or always in the agent that
``?seat=AGENT`` names (the setting that maps agents to the learning policy; the others play opponents). The other
seats' turns are played inside ``step``, and the reward is the learner's own over their moves too (+1 / 0 / -1 in the
classic games).

Observations are the game's own observation, flattened to float32, followed by its legal-action mask (1 legal, 0 not):
the last ``action_mask_size`` entries, which the actor-critic networks read to give illegal actions no probability
(``models/actor_critic.py``), in acting, in learning and in evaluation alike. An illegal action ends the episode as a
loss (-1), as PettingZoo's classic games score one.

The opponent is uniformly random over its legal actions by default. The id may name another after a ``?``:
``pettingzoo:classic.tictactoe_v3?opponent=minimax`` (any of ``envs/opponents.py``'s players, or ``module:function``)
trains against a fixed player, and ``?league=DIR&player=ID`` against the opponents a running league's coordinator
chooses for that player, one per episode (``distrl league``; ``league/opponent.py``). Evaluation (``training=False``)
keeps a fixed ``opponent`` and plays random in place of a league's, which it cannot rely on being up. An opponent with
an ``episode_starts(result)`` method hears, at each reset, how the episode before ended for the learner (``win``,
``draw``, ``loss``, or None where it was cut short); one with ``game_restarts()``, that a game it has played moves in
was started again (an opening drawn again). An opponent that plays each seat as a player of its own (a league's, in a
game of three or more, and in a game of two alike) has ``play_seat(agent, observation, mask)`` in place of being
called, and ``game_starts(others, outcomes)`` in place of ``episode_starts``: the agents it plays this episode, and
the learner's result against each agent of the episode before whose game had ended too (its return above, equal to
or below that agent's: a game of N players is up to N - 1 results, one per other seat), or None.

``opening=N`` (alone or beside the others: ``?opening=2&opponent=minimax``) starts each training episode after a
number of uniformly random plies, drawn uniformly from 0 to N, every seat's (the random openings of game-playing
programs' training and testing): a player and its opponents then meet every opening, not only the one they prefer,
so a policy learns the replies to openings it never plays itself. Evaluation starts from the game's own start.
"""

from __future__ import annotations

import hashlib
import importlib
import re
from collections.abc import Callable
from functools import partial
from urllib.parse import unquote

import gymnasium as gym
import numpy as np

from distrl.errors import ConfigError

PREFIX = "pettingzoo:"
OPENSPIEL = "openspiel:"  # OpenSpiel's turn-based games (envs/openspiel.py)
PREFIXES = (PREFIX, OPENSPIEL)
NAMESPACES = {PREFIX: "PettingZoo/", OPENSPIEL: "OpenSpiel/"}


def is_game(env_id: str) -> bool:
    return env_id.startswith(PREFIXES)


def _prefix(env_id: str) -> str:
    return next(p for p in PREFIXES if env_id.startswith(p))
QUERY = ("opponent", "league", "player", "opening", "seat", "team")
MAX_OPENING = 64
OPENING_TRIES = 16


def split_id(env_id: str) -> tuple[str, dict[str, str]]:
    """``pettingzoo:classic.tictactoe_v3?opponent=minimax&opening=2`` -> (the game's id, {"opponent": "minimax",
    "opening": "2"})."""
    game, marked, query = env_id.partition("?")
    params: dict[str, str] = {}
    for part in query.split("&") if marked else ():
        key, eq, value = part.partition("=")
        if not eq or key not in QUERY or not value or key in params:
            raise ConfigError(f"env '{env_id}': after '?' give opponent=NAME, or league=DIR&player=ID, and "
                              f"opening=N and seat=AGENT (or team=AGENTS) if you will, each once (got {part!r})")
        params[key] = unquote(value)
    if "opening" in params and not (params["opening"].isdigit() and int(params["opening"]) <= MAX_OPENING):
        raise ConfigError(f"env '{env_id}': opening= is a number of random plies from 0 to {MAX_OPENING}; "
                          f"got {params['opening']!r}")
    if "team" in params and ({"seat", "league", "opening"} & set(params)):
        raise ConfigError(f"env '{env_id}': team= (the agents one policy plays at once) goes with opponent= only, "
                          "not with seat=, a league or opening=")
    if ("league" in params) != ("player" in params) or ("league" in params and "opponent" in params):
        raise ConfigError(f"env '{env_id}': a league's opponents need league=DIR&player=ID together, and no opponent=")
    return game, params


def identity(env_id: str) -> str:
    """The env a checkpoint's weights fit: a game's id without its ``?`` part (who sits in the other seat is how the
    run trained, like a seed, not what its policy takes and gives: a league moved elsewhere still resumes)."""
    return split_id(env_id)[0] if is_game(env_id) else env_id


def gym_id(env_id: str) -> str:
    """``pettingzoo:classic.tictactoe_v3`` (with or without a ``?`` part) -> ``PettingZoo/classic.tictactoe_v3``;
    ``openspiel:kuhn_poker`` -> ``OpenSpiel/kuhn_poker``; an OpenSpiel game's parameters in a name Gymnasium takes,
    told apart from any other by a hash of the game string (``openspiel:kuhn_poker(players=3)`` ->
    ``OpenSpiel/kuhn_poker_players_3__`` and 8 hex digits)."""
    prefix = _prefix(env_id)
    game = split_id(env_id)[0][len(prefix):]
    name = re.sub(r"[^\w.-]", "_", game)
    if name != game:
        name += "_" + hashlib.sha256(game.encode()).hexdigest()[:8]
    return NAMESPACES[prefix] + name


def game_kwargs(env_id: str, training: bool) -> dict:
    """What ``gym.make`` passes the game for the id's ``?`` part: the opponent's name and its arguments."""
    game, params = split_id(env_id)
    kwargs = {"game_id": game, "opening": int(params.get("opening", 0))} if training else {"game_id": game}
    if "seat" in params:  # the learner's agent, in training and evaluation alike
        kwargs["seat"] = params["seat"]
    if "team" in params:  # one env alone is the team's first agent (spaces, a video); envs/teams.py plays them all
        kwargs["team"] = params["team"]
    if "league" in params:
        return {"opponent": "league", "opponent_args": {"league": params["league"], "player": params["player"]},
                **kwargs} if training else kwargs
    return {"opponent": params["opponent"], **kwargs} if "opponent" in params else kwargs


def game_module(path: str):
    """The game's module: ``pettingzoo.<path>`` where that exists, else ``<path>`` (a user's own)."""
    errors = []
    for name in (f"pettingzoo.{path}", path):
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as e:
            errors.append(e)
            if e.name is not None and not name.startswith(e.name):  # the module exists, one of its imports is missing
                raise ConfigError(f"env 'pettingzoo:{path}': importing {name} failed: {e}") from None
    raise ConfigError(f"env 'pettingzoo:{path}': no module pettingzoo.{path} or {path} (pip install pettingzoo; "
                      "a game of your own: run distrl from its folder)")


def register(env_id: str) -> str:
    """Register the Gymnasium env for a ``pettingzoo:`` or ``openspiel:`` id (once per process); returns its
    Gymnasium id."""
    name = gym_id(env_id)
    if name not in gym.registry and env_id.startswith(OPENSPIEL):
        from distrl.envs import openspiel

        game = split_id(env_id)[0][len(OPENSPIEL):]
        openspiel.load(game)  # one line now, where it is not a game we can play
        gym.register(name, entry_point=SeatedGame, kwargs={"make_game": partial(openspiel.OpenSpielGame, game)})
    if name not in gym.registry:
        module = game_module(split_id(env_id)[0][len(PREFIX):])
        if callable(getattr(module, "env", None)):
            make_game = module.env
        elif callable(getattr(module, "parallel_env", None)):
            make_game = partial(_turn_based, module.parallel_env)
        else:
            raise ConfigError(f"env '{env_id}': {module.__name__} has no env() or parallel_env() (PettingZoo's AEC or "
                              "parallel factory)")
        gym.register(name, entry_point=SeatedGame, kwargs={"make_game": make_game})
    return name


def _turn_based(parallel_env: Callable):
    """A game in PettingZoo's parallel API, in its AEC API (PettingZoo's own conversion)."""
    from pettingzoo.utils.conversions import parallel_to_aec

    return parallel_to_aec(parallel_env())


def players(env_id: str) -> int:
    """How many agents the game of ``env_id`` seats."""
    env = gym.make(register(env_id))
    try:
        return len(env.unwrapped.game.possible_agents)
    finally:
        env.close()


def random_legal(rng: np.random.Generator) -> Callable[[np.ndarray, np.ndarray], int]:
    def act(observation: np.ndarray, mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    return act


class SeatedGame(gym.Env):
    """A game of two or more agents as a Gymnasium env: the learner in one seat, an opponent in each other."""

    metadata = {"render_modes": []}

    def __init__(self, make_game: Callable, opponent: Callable | str | None = None, opponent_args: dict | None = None,
                 game_id: str = "", opening: int = 0, seat: str | None = None, team: str | None = None):
        self.opening = int(opening)
        self.game = make_game()
        self.game.reset(seed=0)
        agents = list(self.game.possible_agents)
        if team is not None:  # alone, a team's env is its first agent's seat, the others played as opponents
            seat = agents[0] if team == "all" else team.split(",")[0].strip()
        if len(agents) < 2:
            raise ConfigError(f"env '{game_id}' seats {len(agents)} agent: a game here has two or more")
        if seat is not None and seat not in agents:
            raise ConfigError(f"env '{game_id}': seat={seat} is not one of its agents ({', '.join(agents)})")
        self.seat = seat
        seats = [seat] if seat is not None else agents  # the agents the learner plays: one spec must fit them all
        specs = {(repr(self._inner(a)), repr(self.game.action_space(a))) for a in seats}
        if len(specs) > 1:
            raise ConfigError(f"env '{game_id}': its agents observe or act in different spaces, so one policy cannot "
                              f"play every seat; give ?seat=AGENT (one of {', '.join(agents)})")
        inner = self._inner(seats[0])
        self.action_space = self.game.action_space(seats[0])
        other = [self.game.action_space(a) for a in agents if not isinstance(self.game.action_space(a),
                                                                            gym.spaces.Discrete)]
        if other:  # every seat's moves are drawn from a mask over them, the learner's and the opponents' alike
            raise ConfigError(f"env '{game_id}': an agent's actions are {other[0]}; games need Discrete ones")
        self.action_mask_size = int(self.action_space.n)
        size = int(np.prod(inner.shape)) + self.action_mask_size
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (size,), np.float32)
        self._named = None  # a named fixed player's (name, game id): made again from each seeded reset's seed
        if opponent == "random":  # the env's own stream, reseeded by a seeded reset (each env copy its own)
            opponent = None
        elif isinstance(opponent, str):
            from distrl.envs.opponents import NAMED
            from distrl.envs.opponents import opponent as named

            self._named = (opponent, game_id) if opponent in NAMED else None
            opponent = named(opponent, game_id, 0, **(opponent_args or {}))
        self.opponent = opponent
        self.episodes = 0
        self._rng = np.random.default_rng(0)
        self._return, self._ended, self._played, self._illegal = 0.0, False, False, False
        self.returns: dict[str, float] = {}
        self._finished: set[str] = set()  # the agents whose game had ended when the learner's episode did

    def _inner(self, agent: str) -> gym.Space:
        space = self.game.observation_space(agent)
        return space["observation"] if isinstance(space, gym.spaces.Dict) else space

    def _observe(self, agent: str) -> tuple[np.ndarray, np.ndarray]:
        obs = self.game.observe(agent)
        if isinstance(obs, dict):
            return np.asarray(obs["observation"], np.float32).ravel(), np.asarray(obs["action_mask"], np.float32)
        return np.asarray(obs, np.float32).ravel(), np.ones(int(self.game.action_space(agent).n), np.float32)

    def _obs(self) -> np.ndarray:
        return np.concatenate(self._observe(self.me))

    def _done(self) -> bool:
        return not self.game.agents or self.game.terminations[self.me] or self.game.truncations[self.me]

    def _opponent_moves(self) -> float:
        """Play the opponent's turns until it is the learner's; the learner's reward meanwhile."""
        gained = 0.0
        while not self._done() and self.game.agent_selection != self.me:
            agent = self.game.agent_selection
            if self.game.terminations[agent] or self.game.truncations[agent]:
                self.game.step(None)
                continue
            observation, mask = self._observe(agent)
            seated = getattr(self.opponent, "play_seat", None)
            if seated is not None:
                action = seated(agent, observation, mask)
            else:
                action = (self.opponent or random_legal(self._rng))(observation, mask)
            self.game.step(int(action))
            self._count_rewards()
            gained += float(self.game.rewards.get(self.me, 0.0))
        return gained

    def _count_rewards(self) -> None:
        """Every agent's return this episode, for the learner's result against each (``game_starts``)."""
        for agent, reward in self.game.rewards.items():
            self.returns[agent] = self.returns.get(agent, 0.0) + float(reward)

    def _outcomes(self) -> dict[str, str] | None:
        """The learner's result against each other agent of the episode that ended, or None (cut short, none yet)."""
        if not (self._ended and self._played):
            return None
        if self._illegal:  # an illegal move loses to everyone, whatever the game's own rewards said
            return {a: "loss" for a in self.returns if a != self.me}
        mine = self.returns.get(self.me, 0.0)
        # only against agents whose game had ended too: one still playing when the learner was out has no result yet
        return {a: "win" if mine > r else "loss" if mine < r else "draw"
                for a, r in self.returns.items() if a != self.me and a in self._finished}

    def _finished_agents(self) -> set[str]:
        game = self.game
        return {a for a in game.possible_agents
                if a not in game.agents or game.terminations.get(a, False) or game.truncations.get(a, False)}

    def _over(self) -> bool:
        return not self.game.agents or any(self.game.terminations.values()) or any(self.game.truncations.values())

    def _start(self, seed: int | None) -> None:
        """The game from its start, or, with ``opening``, after 0 to ``opening`` uniformly random plies, then the
        opponent's moves up to the learner's turn. An opening after which the game is over before the learner's first
        move is drawn again (at most ``OPENING_TRIES`` times, then none)."""
        restarts = getattr(self.opponent, "game_restarts", None)
        for attempt in range(OPENING_TRIES + 1):
            self.game.reset(seed=seed)
            self.returns = {a: 0.0 for a in self.game.possible_agents}
            if attempt and restarts is not None:  # an opening drawn again: an opponent's memory of the last one goes
                restarts()
            plies = int(self._rng.integers(0, self.opening + 1)) if self.opening and attempt < OPENING_TRIES else 0
            for _ in range(plies):
                if self._over():
                    break
                self.game.step(int(self._rng.choice(np.flatnonzero(self._observe(self.game.agent_selection)[1]))))
                self._count_rewards()
            if not self._over():
                self._return = self._opponent_moves()
                if not self._done() or not plies:
                    return

    def reset(self, *, seed: int | None = None, options=None):
        super().reset(seed=seed)
        agents = self.game.possible_agents
        if seed is not None:  # a seeded episode's seat is its seed's remainder (evaluation's seeds s, s+1, ... rotate)
            self._rng = np.random.default_rng(seed)
            self.episodes = int(seed) % len(agents)
            if self._named is not None:  # its tie-breaks from the seed too: env copies seeded apart play apart
                from distrl.envs.opponents import opponent as named

                self.opponent = named(*self._named, int(seed))
        me = self.seat if self.seat is not None else agents[self.episodes % len(agents)]  # every seat in turn
        seated, starts = getattr(self.opponent, "game_starts", None), getattr(self.opponent, "episode_starts", None)
        if seated is not None:
            seated([a for a in agents if a != me], self._outcomes())
        elif starts is not None:
            ended = self._ended and self._played
            starts(None if not ended else "win" if self._return > 0 else "loss" if self._return < 0 else "draw")
        self._played, self._illegal = True, False
        self.me = me
        self.episodes += 1
        self._start(None if seed is None else int(seed))
        self._ended = self._done()
        self._finished = self._finished_agents() if self._ended else set()
        return self._obs(), {"seat": agents.index(self.me), **self._opponent_info()}

    def step(self, action):
        _, mask = self._observe(self.me)
        action = int(action)
        if not 0 <= action < self.action_mask_size or mask[action] < 0.5:  # an illegal move loses
            self._return, self._ended, self._illegal = -1.0, True, True
            self._finished = set(self.game.possible_agents)
            return self._obs(), -1.0, True, False, {"illegal": True, **self._opponent_info()}
        self.game.step(action)
        self._count_rewards()
        reward = float(self.game.rewards.get(self.me, 0.0)) + self._opponent_moves()
        terminated = bool(not self.game.agents or self.game.terminations.get(self.me, True))
        truncated = bool(self.game.agents and self.game.truncations.get(self.me, False)) and not terminated
        self._return += reward
        self._ended = terminated
        if terminated or truncated:
            self._finished = self._finished_agents()
        return self._obs(), reward, terminated, truncated, self._opponent_info()

    def _opponent_info(self) -> dict:
        """Whether this episode's opponents are all fixed players (``versus_fixed``, which a transition actor may keep
        with each transition): a league's game asks the league's choice (``league/opponent.py``); any other game's
        opponent is a fixed one."""
        return {"versus_fixed": bool(getattr(self.opponent, "versus_fixed", True))}

    def close(self):
        self.game.close()
