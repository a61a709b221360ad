"""Create Gymnasium environments by id, validated up front.

Any registered id works, including a user's own env in Gymnasium's ``module:EnvId`` form (the
module is imported first so its ``register`` call runs). ``ALE/...`` ids get the standard DQN/IMPALA
preprocessing. Vector envs use an env's own numpy-vectorised implementation when it has one
(CartPole does: one numpy call steps every copy) and Gymnasium's ``SyncVectorEnv`` otherwise;
both use next-step autoreset, which the actors account for.
"""

from __future__ import annotations

import difflib
import importlib
import math
from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from distrl.envs import multi_agent, teams
from distrl.errors import ConfigError

ATARI_HINT = "Atari needs the atari extra: pip install -e '.[atari]' (from a clone) or pip install 'distrl[atari]'"
# what to install when Gymnasium says an env's dependency is missing (its own hint names pip install gymnasium[...])
EXTRA_HINTS = {"box2d": "box2d", "mujoco": "mujoco"}


def missing_dependency(env_id: str, error: Exception) -> ConfigError:
    """One line naming the extra to install, for Gymnasium's DependencyNotInstalled."""
    text = str(error).lower()
    extra = next((e for key, e in EXTRA_HINTS.items() if key in text), None)
    if extra is None:
        return ConfigError(f"env '{env_id}' needs a package that is not installed: {str(error).splitlines()[0]}")
    return ConfigError(f"env '{env_id}' needs the {extra} extra: pip install -e '.[{extra}]' (from a clone) "
                       f"or pip install 'distrl[{extra}]'")


def _register_atari() -> None:
    try:
        import ale_py  # noqa: F401  (registers the ALE/ namespace on import)
    except ImportError:
        raise ConfigError(f"env ids starting with 'ALE/' need ale-py, which is not installed; {ATARI_HINT}") from None
    gym.register_envs(ale_py)
    try:
        import cv2  # noqa: F401  (AtariPreprocessing resizes with OpenCV)
    except ImportError:
        raise ConfigError(f"Atari preprocessing needs OpenCV, which is not installed; {ATARI_HINT}") from None


def is_atari(env_id: str) -> bool:
    return env_id.split(":")[-1].startswith("ALE/")


def check_env_id(env_id: str) -> None:
    """Raise ConfigError (with a did-you-mean) unless ``env_id`` names a registered env."""
    if multi_agent.is_game(env_id):  # a PettingZoo or OpenSpiel game, registered as a Gymnasium env here
        multi_agent.register(env_id)
        if teams.team_of(env_id) is not None:
            teams.check_team(env_id)
        return
    if ":" in env_id:
        module, _, name = env_id.partition(":")
        try:
            importlib.import_module(module)
        except Exception as e:  # not only ImportError: the user's module may raise anything while it loads
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            hint = (" (a module of your own: run distrl from the folder that holds it, or put that folder on "
                    "PYTHONPATH)") if isinstance(e, ModuleNotFoundError) and e.name == module.split(".")[0] else ""
            raise ConfigError(f"env '{env_id}': importing module '{module}' failed: {type(e).__name__}"
                              + (f": {first}" if first else "") + hint) from None
        env_id = name
    if is_atari(env_id):
        _register_atari()
    if env_id not in gym.registry:
        close = difflib.get_close_matches(env_id, list(gym.registry), n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else "; see gymnasium.pprint_registry() for valid ids"
        raise ConfigError(f"unknown env id '{env_id}'{hint}")


def _strip(env_id: str) -> str:
    if multi_agent.is_game(env_id):
        return multi_agent.gym_id(env_id)
    return env_id.split(":", 1)[1] if ":" in env_id else env_id


def _kwargs(env_id: str, training: bool) -> dict:
    """What ``gym.make`` passes the env: a game's opponent and seat, from its id's ``?`` part."""
    return multi_agent.game_kwargs(env_id, training) if multi_agent.is_game(env_id) else {}


def _atari_env(env_id: str, life_loss_ends: bool, render_mode: str | None = None) -> gym.Env:
    """Nature-DQN preprocessing: no-op starts, frame skip 4 (max-pooled), 84x84 grey, frame stack 4,
    a life loss ends the episode where ``life_loss_ends`` (a training episode's, but R2D2's). Rewards are clipped by
    the learner, not here, so an evaluation's returns are real game scores."""
    env = gym.make(env_id, frameskip=1, full_action_space=False, render_mode=render_mode)
    env = gym.wrappers.AtariPreprocessing(env, noop_max=30, frame_skip=4, screen_size=84,
                                          terminal_on_life_loss=life_loss_ends, grayscale_obs=True)
    return gym.wrappers.FrameStackObservation(env, 4)


def _atari_vec_env(env_id: str, num_envs: int, life_loss_ends: bool, num_threads: int = 1) -> gym.vector.VectorEnv:
    """ALE's own vector env where ale-py has one (0.10+): the same preprocessing as :func:`_atari_env`, done in C++
    (``benchmarks/atari_vector.py``: 1.2-1.4x the per-copy wrappers on one thread). One thread by default: each
    actor is a process of its own (``num_threads``: benchmarks/atari_vector.py's scale). Settings as the id's
    (sticky actions, episode length); rewards unclipped and no FIRE on reset, as the wrappers do; with
    ``life_loss_ends`` a lost life ends the episode and the next one starts a new game (checked on ale-py 0.12.1), as
    the wrappers' ``terminal_on_life_loss`` does. Without it (an older ale-py): one Gymnasium-wrapped env per copy.
    The resize may differ from OpenCV's by a grey level here and there; single envs (evaluation video, spaces) keep
    the wrappers."""
    try:
        from ale_py.vector_env import AtariVectorEnv
    except ImportError:
        return gym.vector.SyncVectorEnv([lambda: _atari_env(env_id, life_loss_ends) for _ in range(num_envs)])
    kwargs = gym.spec(env_id).kwargs
    return AtariVectorEnv(
        kwargs["game"],
        num_envs,
        num_threads=num_threads,
        noop_max=30,
        frameskip=4,
        img_height=84,
        img_width=84,
        grayscale=True,
        stack_num=4,
        maxpool=True,
        episodic_life=life_loss_ends,
        reward_clipping=False,
        use_fire_reset=False,
        full_action_space=kwargs.get("full_action_space", False),
        repeat_action_probability=kwargs.get("repeat_action_probability", 0.25),
        max_num_frames_per_episode=kwargs.get("max_num_frames_per_episode", 108_000),
    )


def make_env(
    env_id: str, seed: int | None = None, *, training: bool = False, render_mode: str | None = None
) -> gym.Env:
    """One environment (evaluation, video, spaces)."""
    check_env_id(env_id)
    name = _strip(env_id)
    try:
        if is_atari(name):
            env = _atari_env(name, training, render_mode)
        else:  # only pass render_mode when asked: a user's env need not accept it
            kwargs = _kwargs(env_id, training)
            env = gym.make(name, render_mode=render_mode, **kwargs) if render_mode else gym.make(name, **kwargs)
    except gym.error.DependencyNotInstalled as e:
        raise missing_dependency(env_id, e) from None
    env = flat_observations(env)
    if seed is not None:
        env.reset(seed=seed)
        env.action_space.seed(seed)
    return env


def _needs_flattening(space: gym.Space) -> bool:
    """Observations that are not one array (Dict, Tuple) or not real-valued (Discrete: FrozenLake, Taxi;
    MultiDiscrete, MultiBinary): gymnasium flattens them into one float32 vector, Discrete ones one-hot."""
    flattenable = (gym.spaces.Dict, gym.spaces.Tuple, gym.spaces.Discrete, gym.spaces.MultiDiscrete,
                   gym.spaces.MultiBinary)
    return isinstance(space, flattenable)


def _probe_needs_flattening(name: str, kwargs: dict) -> bool:
    probe = gym.make(name, **kwargs)
    try:
        return _needs_flattening(probe.observation_space)
    finally:
        probe.close()


def flat_observations(env: gym.Env) -> gym.Env:
    """``env`` with Box observations: as it is, or flattened (``_needs_flattening``) into float32."""
    if not _needs_flattening(env.observation_space):
        return env
    return gym.wrappers.DtypeObservation(gym.wrappers.FlattenObservation(env), np.float32)


def _team_opponent(env_id: str):
    """The fixed player of a team game's other agents, by the id's ``?opponent=`` (None: random legal moves)."""
    from distrl.envs.opponents import opponent

    name = multi_agent.split_id(env_id)[1].get("opponent", "random")
    return None if name == "random" else opponent(name, env_id)


def make_vec_env(env_id: str, num_envs: int, seed: int, *, training: bool = True,
                 life_loss_ends: bool | None = None) -> gym.vector.VectorEnv:
    """``num_envs`` copies stepped together, seeded ``seed, seed+1, ...``. A game's team (``?team=``,
    ``envs/teams.py``) fills ``num_envs`` slots with its agents, a multiple of its size; an evaluation's
    (``training=False``) rounds up to one. ``life_loss_ends``: on Atari, whether a lost life ends the episode (the
    Nature-DQN heuristic); by default a training env's do and an evaluation's play whole games. R2D2 trains on whole
    games (Kapturowski et al. 2019, section 2.3: the heuristic disabled)."""
    check_env_id(env_id)
    name = _strip(env_id)
    if multi_agent.is_game(env_id) and teams.team_of(env_id) is not None:
        if not training:  # an evaluation's episodes: whole games, each agent of the team one episode
            size = teams.check_team(env_id)
            num_envs = size * math.ceil(num_envs / size)
        env = teams.TeamGames(env_id, num_envs, _team_opponent(env_id))
    elif is_atari(name):
        env = _atari_vec_env(name, num_envs, training if life_loss_ends is None else life_loss_ends)
    elif _probe_needs_flattening(name, _kwargs(env_id, training)):  # each copy flattened as make_env flattens one
        env = gym.make_vec(name, num_envs=num_envs, vectorization_mode="sync", wrappers=[flat_observations])
    elif gym.spec(name).vector_entry_point is not None:
        env = gym.make_vec(name, num_envs=num_envs, vectorization_mode="vector_entry_point")
    else:
        env = gym.make_vec(name, num_envs=num_envs, vectorization_mode="sync", **_kwargs(env_id, training))
    env.reset(seed=seed)
    env.action_space.seed(seed)
    return env


@dataclass(frozen=True)
class EnvSpec:
    """What models and buffers need to know about an env, without holding one open."""

    observation_space: gym.Space
    action_space: gym.Space
    action_mask_size: int = 0  # the observation's last entries are the legal-action mask (games)

    @property
    def discrete(self) -> bool:
        """One categorical action (``Discrete``)."""
        return isinstance(self.action_space, gym.spaces.Discrete)

    @property
    def continuous(self) -> bool:
        """Real-valued actions (``Box``)."""
        return isinstance(self.action_space, gym.spaces.Box)

    @property
    def action_nvec(self) -> tuple[int, ...] | None:
        """The options of each of several categorical actions (``MultiDiscrete``'s nvec; ``MultiBinary(n)``: n
        times 2), else None."""
        space = self.action_space
        if isinstance(space, gym.spaces.MultiDiscrete):
            return tuple(int(n) for n in space.nvec)
        if isinstance(space, gym.spaces.MultiBinary):
            return (2,) * int(space.n if isinstance(space.n, (int, np.integer)) else np.prod(space.n))
        return None

    @property
    def obs_shape(self) -> tuple[int, ...]:
        return tuple(self.observation_space.shape)

    @property
    def obs_dtype(self) -> np.dtype:
        return np.dtype(self.observation_space.dtype)

    @property
    def pixel_stacks(self) -> bool:
        """Stacked 8-bit frames (Atari): replays keep each frame once (``FrameStackStorage``)."""
        return len(self.obs_shape) == 3 and self.obs_dtype == np.uint8

    @property
    def action_shape(self) -> tuple[int, ...]:
        return () if self.discrete else tuple(self.action_space.shape)

    @property
    def action_dtype(self) -> np.dtype:
        return np.dtype(np.float32) if self.continuous else np.dtype(np.int64)


def env_spec(env_id: str) -> EnvSpec:
    env = make_env(env_id)
    try:
        action_space, obs_space = env.action_space, env.observation_space
        multi = (gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)
        if not isinstance(action_space, (gym.spaces.Discrete, gym.spaces.Box, *multi)) or \
                (isinstance(action_space, multi) and len(action_space.shape) != 1):
            raise ConfigError(f"env '{env_id}' has action space {action_space}; distrl supports Discrete, Box, and "
                              "1-d MultiDiscrete and MultiBinary (the actor-critic systems)")
        starts = getattr(action_space, "start", 0)
        if isinstance(action_space, (gym.spaces.Discrete, gym.spaces.MultiDiscrete)) and np.any(starts != 0):
            raise ConfigError(f"env '{env_id}' has action space {action_space}, whose actions start at {starts}; "
                              "distrl's policies give 0..n-1: wrap the env to shift them")
        if not isinstance(obs_space, gym.spaces.Box):  # flattened by make_env: only a space gymnasium cannot flatten
            raise ConfigError(f"env '{env_id}' has observation space {obs_space}, which gymnasium cannot flatten "
                              "into a vector; wrap the env to give Box observations")
        game = env.unwrapped
        masked = game.action_mask_size if isinstance(game, multi_agent.SeatedGame) else 0
        return EnvSpec(obs_space, action_space, masked)
    finally:
        env.close()
